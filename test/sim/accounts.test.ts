import { describe, expect, it } from 'vitest';
import { ZERO } from '../../src/domain/money.ts';
import type { LedgerEntry } from '../../src/sim/ledger.ts';
import { DEMO_EMPTY_FLEX_PLAN_ID, DEMO_FLEX_PLAN_ID } from '../../src/sim/seed.ts';
import { d, demoSim, rejectionOf, text } from './helpers.ts';

function ledgerSum(entries: readonly LedgerEntry[], account: string, asset: string): string {
  return text(entries.filter((e) => e.account === account && e.asset === asset).reduce((sum, e) => sum.add(e.delta), ZERO));
}

describe('the demo seed', () => {
  it('holds the demo balances, markets, flex plans and codes', () => {
    const sim = demoSim();
    expect(text(sim.mainBalance('USDT'))).toBe('10000');
    expect(text(sim.mainBalance('BTC'))).toBe('0.05');
    expect(text(sim.mainBalance('ETH'))).toBe('1.2');
    expect(text(sim.tradeBalance('USDT').available)).toBe('1000');
    expect(sim.markets().map((m) => m.name)).toEqual(['BTC_USDT', 'ETH_USDT']);
    expect(sim.flexPlans().map((p) => p.planId)).toEqual([DEMO_FLEX_PLAN_ID, DEMO_EMPTY_FLEX_PLAN_ID]);
    expect(sim.flexInvestments({ active: true }).map((i) => [i.planId, text(i.invested)])).toEqual([[DEMO_FLEX_PLAN_ID, '1500']]);
    expect(sim.codes().total).toBe(5);
    expect(sim.ledgerMismatches()).toEqual([]);
    expect(sim.verifyLedger()).toBe(true);
  });
});

describe('transfers between main and spot', () => {
  it('moves the amount both ways with one ledger pair per transfer', () => {
    const sim = demoSim();
    const { transactionId } = sim.transfer({ ticker: 'USDT', amount: d('500.25'), from: 'main', to: 'spot' });
    expect(text(sim.mainBalance('USDT'))).toBe('9499.75');
    expect(text(sim.tradeBalance('USDT').available)).toBe('1500.25');
    expect(sim.ledger().filter((e) => e.ref === transactionId).map((e) => [e.account, text(e.delta), e.reason])).toEqual([
      ['main', '-500.25', 'transfer'],
      ['spot', '500.25', 'transfer'],
    ]);
    sim.transfer({ ticker: 'USDT', amount: d('0.25'), from: 'spot', to: 'main' });
    expect(text(sim.mainBalance('USDT'))).toBe('9500');
  });

  it('refuses more than is available with code 3 and the exchange wording', () => {
    const r = rejectionOf(() => demoSim().transfer({ ticker: 'USDT', amount: d('2000'), from: 'spot', to: 'main' }));
    expect([r.kind, r.exchangeCode, r.field, r.message]).toEqual([
      'business',
      3,
      'amount',
      "You don't have such amount for transfer (available 1000, in amount: 2000)",
    ]);
  });

  it('refuses same accounts, unknown tickers and amounts below one satoshi as validation (code 0)', () => {
    const sim = demoSim();
    const same = rejectionOf(() => sim.transfer({ ticker: 'USDT', amount: d('1'), from: 'main', to: 'main' }));
    expect([same.kind, same.exchangeCode, same.field, same.message]).toEqual(['validation', 0, 'to', 'The to and from must be different.']);
    expect(rejectionOf(() => sim.transfer({ ticker: 'DOGE', amount: d('1'), from: 'main', to: 'spot' })).message).toBe('The selected ticker is invalid.');
    expect(rejectionOf(() => sim.transfer({ ticker: 'BTC', amount: d('0'), from: 'main', to: 'spot' })).message).toBe('The amount must be at least 0.00000001.');
    expect(rejectionOf(() => sim.transfer({ ticker: 'BTC', amount: d('0.000000001'), from: 'main', to: 'spot' })).field).toBe('amount');
  });
});

describe('flex withdrawals', () => {
  it('moves the amount from the investment back to main under a transaction id', () => {
    const sim = demoSim();
    const { transactionId } = sim.flexWithdraw(DEMO_FLEX_PLAN_ID, d('200.5'));
    expect(transactionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(text(sim.mainBalance('USDT'))).toBe('10200.5');
    expect(text(sim.flexInvestments({ planId: DEMO_FLEX_PLAN_ID })[0]!.invested)).toBe('1299.5');
    expect(sim.ledger().filter((e) => e.ref === transactionId).map((e) => [e.account, text(e.delta), e.reason])).toEqual([
      ['flex', '-200.5', 'flex-withdraw'],
      ['main', '200.5', 'flex-withdraw'],
    ]);
  });

  it('refuses an amount above the invested amount as a business rule under `amount` (code 2)', () => {
    const r = rejectionOf(() => demoSim().flexWithdraw(DEMO_FLEX_PLAN_ID, d('1500.01')));
    expect([r.kind, r.exchangeCode, r.field, r.message]).toEqual(['business', 2, 'amount', 'Withdraw amount exceeds total invested']);
  });

  it('refuses a plan without an active investment as a business rule under `plan` (code 2)', () => {
    const r = rejectionOf(() => demoSim().flexWithdraw(DEMO_EMPTY_FLEX_PLAN_ID, d('1')));
    expect([r.kind, r.exchangeCode, r.field]).toEqual(['business', 2, 'plan']);
  });

  it('refuses an unknown plan as validation under `plan`', () => {
    const r = rejectionOf(() => demoSim().flexWithdraw('00000000-0000-4000-8000-000000000000', d('1')));
    expect([r.kind, r.exchangeCode, r.field, r.message]).toEqual(['validation', 0, 'plan', 'The selected plan is invalid.']);
  });

  it('refuses to leave less than the plan minimum, and closes the investment when all is withdrawn', () => {
    const sim = demoSim();
    expect(rejectionOf(() => sim.flexWithdraw(DEMO_FLEX_PLAN_ID, d('1495'))).field).toBe('minAmountLeft');
    sim.flexWithdraw(DEMO_FLEX_PLAN_ID, d('1500'));
    expect(sim.flexInvestments({ planId: DEMO_FLEX_PLAN_ID })[0]!.active).toBe(false);
    expect(rejectionOf(() => sim.flexWithdraw(DEMO_FLEX_PLAN_ID, d('1'))).field).toBe('plan');
  });
});

describe('codes', () => {
  it('pages newest first with default limit 30 and offset 0', () => {
    const sim = demoSim();
    const page = sim.codes();
    expect([page.total, page.limit, page.offset, page.codes.length]).toEqual([5, 30, 0, 5]);
    const dates = page.codes.map((c) => c.dateSec);
    expect(dates).toEqual([...dates].sort((a, b) => b - a));
    expect(sim.codes({ limit: 2, offset: 1 }).codes.map((c) => c.dateSec)).toEqual(dates.slice(1, 3));
    expect(page.codes.map((c) => c.status)).toEqual(expect.arrayContaining(['Activated', 'New']));
  });

  it('refuses limit and offset out of bounds, naming every bad field', () => {
    const sim = demoSim();
    expect(rejectionOf(() => sim.codes({ limit: 101 })).fieldErrors()).toEqual({ limit: ['The limit may not be greater than 100.'] });
    expect(rejectionOf(() => sim.codes({ limit: 0 })).fieldErrors()).toEqual({ limit: ['The limit must be at least 1.'] });
    expect(rejectionOf(() => sim.codes({ limit: 1.5 })).fieldErrors()).toEqual({ limit: ['The limit must be an integer.'] });
    expect(rejectionOf(() => sim.codes({ offset: 10_001, limit: 0 })).fieldErrors()).toEqual({
      limit: ['The limit must be at least 1.'],
      offset: ['The offset may not be greater than 10000.'],
    });
    expect(rejectionOf(() => sim.codes({ offset: 9_950, limit: 100 })).field).toBe('offset');
    expect(sim.codes({ offset: 9_900, limit: 100 }).codes).toEqual([]);
  });
});

describe('the ledger', () => {
  it('explains every balance exactly after a mixed sequence of operations', () => {
    const sim = demoSim();
    sim.transfer({ ticker: 'USDT', amount: d('1234.56789'), from: 'main', to: 'spot' });
    sim.buyStockMarket({ market: 'BTC_USDT', baseAmount: d('0.000123') });
    sim.buyMarket({ market: 'ETH_USDT', quoteAmount: d('333.33') });
    sim.buyStockMarket({ market: 'ETH_USDT', baseAmount: d('0.0777') });
    sim.flexWithdraw(DEMO_FLEX_PLAN_ID, d('99.99'));
    sim.transfer({ ticker: 'ETH', amount: d('0.05'), from: 'spot', to: 'main' });
    expect(sim.ledgerMismatches()).toEqual([]);
    expect(sim.verifyLedger()).toBe(true);
    const entries = sim.ledger();
    expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => i + 1));
    for (const asset of sim.assets()) {
      expect(ledgerSum(entries, 'main', asset)).toBe(text(sim.mainBalance(asset)));
      expect(ledgerSum(entries, 'spot', asset)).toBe(text(sim.tradeBalance(asset).available));
      expect(ledgerSum(entries, 'spot-freeze', asset)).toBe(text(sim.tradeBalance(asset).freeze));
    }
    expect(ledgerSum(entries, 'flex', 'USDT')).toBe('1400.01');
  });

  it('is append-only: callers get a copy', () => {
    const sim = demoSim();
    const before = sim.ledger().length;
    (sim.ledger() as LedgerEntry[]).pop();
    expect(sim.ledger()).toHaveLength(before);
  });
});
