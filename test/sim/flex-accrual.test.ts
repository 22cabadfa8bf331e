import { describe, expect, it } from 'vitest';
import { Decimal, formatDecimal } from '../../src/domain/money.ts';
import { VirtualClock } from '../../src/engine/schedule/clock.ts';
import { BacktestExchange } from '../../src/sim/backtest-exchange.ts';

const DAY = 86_400_000;
const START = Date.UTC(2024, 0, 1);

function exchange(clock: VirtualClock, aprPct: string) {
  return new BacktestExchange({
    clock,
    market: 'BTC_USDT',
    candles: { market: 'BTC_USDT', priceAt: () => new Decimal('40000') },
    wallet: new Map(),
    slippagePct: new Decimal(0),
    flex: [{ planId: '00000000-0000-4000-8000-000000000001', ticker: 'USDT', amount: new Decimal('1000'), aprPct: new Decimal(aprPct) }],
  });
}

describe('flex interest in a backtest', () => {
  it('credits APR/365 of the invested amount each UTC day, compounding, rounded down to 8 decimals', async () => {
    const clock = new VirtualClock(START + 9 * 3600_000);
    const flex = exchange(clock, '3.65');
    clock.set(START + 3 * DAY + 1);
    const [investment] = await flex.flexInvestments();
    // By hand: day 1: 1000 × 0.0001 = 0.1; day 2: 1000.1 × 0.0001 = 0.10001;
    // day 3: 1000.20001 × 0.0001 = 0.100020001 → 0.10002000. Total 1000.30003.
    expect(formatDecimal(investment?.invested ?? new Decimal(0))).toBe('1000.30003');
    expect(flex.sim.verifyLedger()).toBe(true);
  });

  it('credits nothing within the first day and nothing at 0 % APR', async () => {
    const clock = new VirtualClock(START);
    const flex = exchange(clock, '0');
    clock.set(START + 10 * DAY);
    expect(formatDecimal((await flex.flexInvestments())[0]?.invested ?? new Decimal(0))).toBe('1000');
    const early = new VirtualClock(START);
    const other = exchange(early, '5');
    early.set(START + DAY - 1);
    expect(formatDecimal((await other.flexInvestments())[0]?.invested ?? new Decimal(0))).toBe('1000');
  });
});
