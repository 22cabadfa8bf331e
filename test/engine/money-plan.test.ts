import { describe, expect, it } from 'vitest';
import { Decimal } from '../../src/domain/money.ts';
import type { Intent } from '../../src/engine/contract.ts';
import { planMoney } from '../../src/engine/money-plan.ts';
import { btcUsdt, investment, plan, slotView } from '../strategies/view.ts';

const PLAN = '11111111-2222-4333-8444-555555555555';
const view = (overrides: Parameters<typeof slotView>[0] = {}) =>
  slotView({
    markets: [btcUsdt()],
    prices: { BTC_USDT: '65000' },
    main: { USDT: '100' },
    trade: { USDT: { available: '0' } },
    flex: [investment(PLAN, 'USDT', '50')],
    reads: ['balances', 'markets', 'prices', 'flex'],
    ...overrides,
  });
const transfer = (amount: string, group?: string): Intent => ({ kind: 'transfer', ticker: 'USDT', amount: new Decimal(amount), from: 'main', to: 'spot', ...(group === undefined ? {} : { group }) });
const buy = (amount: string, group?: string): Intent => ({ kind: 'buy-stock-market', market: 'BTC_USDT', amount: new Decimal(amount), ...(group === undefined ? {} : { group }) });
const withdraw = (amount: string, group?: string): Intent => ({ kind: 'flex-withdraw', plan: PLAN, amount: new Decimal(amount), ...(group === undefined ? {} : { group }) });
const codes = (refusals: ReturnType<typeof planMoney>) => refusals.map((r) => r?.code ?? null);
const limits = { maxOrderQuote: null, killed: null };

describe('a slot\'s money intents are all or nothing, checked before anything is sent', () => {
  it('refuses the transfer that was to fund a buy above MAX_ORDER_QUOTE, and says which refusal caused it', () => {
    const refusals = planMoney([transfer('10'), buy('0.0001')], view(), { maxOrderQuote: new Decimal(1), killed: null });
    expect(codes(refusals)).toEqual(['group-refused', 'above-max-order']);
    expect(refusals[0]?.message).toMatch(/intent #1 \(buy-stock-market\) of the same group was refused \(above-max-order/);
  });

  it('sends a funded buy: the transfer counts toward the trade balance the buy needs (6.5 + fee 0.0065 <= 10)', () => {
    expect(codes(planMoney([transfer('10'), buy('0.0001')], view(), limits))).toEqual([null, null]);
  });

  it('refuses a buy the trade balance cannot pay after the transfers before it, and the transfer with it', () => {
    // 0.0002 BTC at 65000 = 13 USDT + 0.013 fee > 10 transferred.
    expect(codes(planMoney([transfer('10'), buy('0.0002')], view(), limits))).toEqual(['group-refused', 'insufficient-funds']);
  });

  it('refuses a transfer larger than the main balance', () => {
    const refusals = planMoney([transfer('100.01')], view(), limits);
    expect(codes(refusals)).toEqual(['insufficient-funds']);
    expect(refusals[0]?.message).toMatch(/main balance has 100 USDT/);
  });

  it('carries a flex withdrawal into the main balance a transfer then moves', () => {
    expect(codes(planMoney([withdraw('30'), transfer('120'), buy('0.0001')], view(), limits))).toEqual([null, null, null]);
    expect(codes(planMoney([withdraw('60'), transfer('10')], view(), limits))).toEqual(['amount-exceeds-investment', 'group-refused']);
  });

  it('refuses, before sending, a withdrawal that would leave less than the plan\'s minimum investment and more than nothing (the exchange refuses it)', () => {
    const minimum = view({ flexPlans: [plan(PLAN, 'USDT', '10')] });
    const refusals = planMoney([withdraw('45')], minimum, limits);
    expect(codes(refusals)).toEqual(['min-investment-left']);
    expect(refusals[0]?.message).toMatch(/leaves 5, less than its minimum investment 10/);
    expect(codes(planMoney([withdraw('40')], minimum, limits))).toEqual([null]);
    expect(codes(planMoney([withdraw('50')], minimum, limits))).toEqual([null]);
  });

  it('counts every buy of the slot against the budget left', () => {
    const refusals = planMoney([buy('0.0001'), buy('0.0001')], view({ trade: { USDT: { available: '100' } }, remainingQuote: '10' }), limits);
    expect(codes(refusals)).toEqual(['group-refused', 'over-budget']);
  });

  it('keeps groups apart: a refusal holds back its own group only', () => {
    const refusals = planMoney([withdraw('60', 'a'), withdraw('10', 'b')], view(), limits);
    expect(codes(refusals)).toEqual(['amount-exceeds-investment', null]);
  });

  it('refuses every money intent while the kill switch is on, and passes notes and refusals through', () => {
    const note: Intent = { kind: 'note', level: 'info', message: 'hello' };
    expect(codes(planMoney([note, transfer('1'), buy('0.0001')], view(), { maxOrderQuote: null, killed: 'STOP file present' }))).toEqual([null, 'kill-switch', 'kill-switch']);
  });

  it('leaves to the exchange what the strategy did not read (no balances: no balance check)', () => {
    expect(codes(planMoney([buy('0.0001')], view({ reads: ['markets', 'prices'] }), limits))).toEqual([null]);
  });
});
