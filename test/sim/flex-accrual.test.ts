import { describe, expect, it } from 'vitest';
import { Decimal } from '../../src/domain/money.ts';
import { BacktestExchange } from '../../src/sim/backtest-exchange.ts';
import { SimCore } from '../../src/sim/core.ts';
import { DAY_MS } from '../../src/sim/flex.ts';
import { d, manualClock, text } from './helpers.ts';

const MIDNIGHT = Date.UTC(2024, 0, 1);
const PLAN = '00000000-0000-4000-8000-0000000000a1';
const plan = (ticker = 'USDT') => ({ planId: PLAN, ticker, minInvestment: d('0'), maxInvestment: d('1000000'), maxRatePct: d('10') });

/** A sim with one investment of `amount` USDT at `aprPct`, opened at `startMs`. */
function earning(aprPct: string | null, amount: string, startMs = MIDNIGHT, autoReinvest = false) {
  const clock = manualClock(startMs);
  const sim = new SimCore({ clock });
  if (aprPct === null) sim.addFlexPlan(plan());
  else sim.addFlexPlan(plan(), { aprPct: d(aprPct) });
  sim.seedFlexInvestment(PLAN, d(amount), autoReinvest);
  const invested = () => text(sim.flexInvestments({ active: true })[0]?.invested ?? d('0'));
  const interest = () => sim.ledger().filter((e) => e.reason === 'flex-interest');
  return { clock, sim, invested, interest };
}

describe('flex interest (simple daily, paid at 00:00 UTC)', () => {
  it('pays 1000 USDT at 3.65 % for 10 days exactly 1.00000000 USDT to the main balance', () => {
    const { clock, sim, invested, interest } = earning('3.65', '1000');
    clock.advance(10 * DAY_MS);
    // By hand: 1000 × 3.65 / 100 / 365 = 0.1 a day; 10 days = 1.
    expect(text(sim.mainBalance('USDT'))).toBe('1');
    expect(invested()).toBe('1000');
    expect(interest().map((e) => [e.timeMs, e.account, text(e.delta)])).toEqual(
      Array.from({ length: 10 }, (_, i) => [MIDNIGHT + (i + 1) * DAY_MS, 'main', '0.1']),
    );
    expect(sim.verifyLedger()).toBe(true);
  });

  it('does not compound without auto-reinvest: the interest stays on main', () => {
    const { clock, sim } = earning('36.5', '1000');
    clock.advance(3 * DAY_MS);
    // 1000 × 0.001 = 1 a day, on the same 1000 every day.
    expect(text(sim.mainBalance('USDT'))).toBe('3');
  });

  it('compounds with auto-reinvest: each day earns on the amount invested at that 00:00', () => {
    const { clock, sim, invested } = earning('3.65', '1000', MIDNIGHT, true);
    clock.advance(3 * DAY_MS);
    // By hand: day 1: 1000 × 0.0001 = 0.1; day 2: 1000.1 × 0.0001 = 0.10001;
    // day 3: 1000.20001 × 0.0001 = 0.100020001 → 0.10002000 (down to 8 decimals). Total 1000.30003.
    expect(invested()).toBe('1000.30003');
    expect(text(sim.mainBalance('USDT'))).toBe('0');
    expect(sim.verifyLedger()).toBe(true);
  });

  it('rounds each day down to 8 decimals', () => {
    const { clock, sim } = earning('5', '333.33');
    clock.advance(DAY_MS);
    // 333.33 × 5 / 36 500 = 0.045661643835… → 0.04566164.
    expect(text(sim.mainBalance('USDT'))).toBe('0.04566164');
  });

  it('pays nothing before the first 00:00 after the investment opened, and pays that one whole', () => {
    const { clock, sim } = earning('3.65', '1000', MIDNIGHT + 23 * 3600_000);
    clock.advance(3600_000 - 1);
    expect(text(sim.mainBalance('USDT'))).toBe('0');
    clock.advance(1);
    expect(text(sim.mainBalance('USDT'))).toBe('0.1');
  });

  it('pays a day for every 00:00 passed, however long the clock jumped, in time order', () => {
    const { clock, sim, interest } = earning('3.65', '1000');
    clock.advance(365 * DAY_MS + 5);
    expect(text(sim.mainBalance('USDT'))).toBe('36.5');
    const times = interest().map((e) => e.timeMs);
    expect(times).toEqual(times.slice().sort((a, b) => a - b));
  });

  it('earns on what is left after a withdrawal, and nothing once the investment is closed', () => {
    const { clock, sim } = earning('36.5', '1000');
    clock.advance(DAY_MS + 1);
    sim.flexWithdraw(PLAN, d('400'));
    clock.advance(DAY_MS);
    // Day 1 on 1000 = 1; day 2 on 600 = 0.6; plus the 400 withdrawn to main.
    expect(text(sim.mainBalance('USDT'))).toBe('401.6');
    sim.flexWithdraw(PLAN, d('600'));
    clock.advance(5 * DAY_MS);
    expect(text(sim.mainBalance('USDT'))).toBe('1001.6');
    expect(sim.verifyLedger()).toBe(true);
  });

  it('pays nothing on a plan without an APR, or at 0 %', () => {
    for (const apr of [null, '0']) {
      const { clock, sim } = earning(apr, '1000');
      clock.advance(30 * DAY_MS);
      expect(text(sim.mainBalance('USDT'))).toBe('0');
      expect(sim.ledger().some((e) => e.reason === 'flex-interest')).toBe(false);
    }
  });

  it('refuses a negative APR', () => {
    const sim = new SimCore({ clock: manualClock(MIDNIGHT) });
    expect(() => sim.addFlexPlan(plan(), { aprPct: d('-1') })).toThrow(RangeError);
  });
});

describe('flex interest in a backtest (virtual time)', () => {
  it('pays the seeded investment its APR daily as the virtual clock passes 00:00 UTC', async () => {
    const clock = manualClock(MIDNIGHT + 9 * 3600_000);
    const exchange = new BacktestExchange({
      clock,
      candles: { market: 'BTC_USDT', priceAt: () => new Decimal('40000'), priceKnownAt: () => new Decimal('40000') },
      wallet: new Map(),
      flex: [{ planId: PLAN, ticker: 'USDT', amount: d('1000'), aprPct: d('3.65') }],
    });
    clock.advance(10 * DAY_MS);
    expect(text((await exchange.mainBalances()).get('USDT') ?? d('0'))).toBe('1');
    expect((await exchange.flexInvestments()).map((i) => text(i.invested))).toEqual(['1000']);
  });

  it('compounds an investment seeded with auto-reinvest', async () => {
    const clock = manualClock(MIDNIGHT);
    const exchange = new BacktestExchange({
      clock,
      candles: { market: 'BTC_USDT', priceAt: () => new Decimal('40000'), priceKnownAt: () => new Decimal('40000') },
      wallet: new Map(),
      flex: [{ planId: PLAN, ticker: 'USDT', amount: d('1000'), aprPct: d('3.65'), autoReinvest: true }],
    });
    clock.advance(3 * DAY_MS);
    expect((await exchange.flexInvestments()).map((i) => text(i.invested))).toEqual(['1000.30003']);
  });
});
