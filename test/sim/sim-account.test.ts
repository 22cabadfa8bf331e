import { describe, expect, it } from 'vitest';
import { ExchangeRefusedError, ExchangeValidationError } from '../../src/domain/errors.ts';
import { SimCore } from '../../src/sim/core.ts';
import { DEMO_FLEX_PLAN_ID } from '../../src/sim/seed.ts';
import { SimAccount, seedSimAccount } from '../../src/sim/sim-account.ts';
import { d, demoSim, manualClock, text } from './helpers.ts';

const buy = (account: SimAccount, clientOrderId: string, baseAmount = '0.001') => account.buyStockMarket({ market: 'BTC_USDT', baseAmount: d(baseAmount), clientOrderId, stp: 'no' });

describe('the private half of the Exchange port over the sim (SimAccount)', () => {
  it('reads balances, active flex investments and every code of the account', async () => {
    const account = new SimAccount(demoSim());
    expect(text((await account.mainBalances()).get('USDT') ?? d('0'))).toBe('10000');
    expect(text((await account.tradeBalances()).get('USDT')?.available ?? d('0'))).toBe('1000');
    expect((await account.flexInvestments()).map((i) => [i.planId, text(i.invested), i.active])).toEqual([[DEMO_FLEX_PLAN_ID, '1500', true]]);
    expect((await account.codes()).length).toBe(5);
  });

  it('pages through all codes, however many', async () => {
    const sim = demoSim();
    for (let i = 0; i < 245; i += 1) sim.addCode({ code: `WB${i}USDT`, amount: d('1'), ticker: 'USDT', status: 'New', dateSec: 1_700_000_000 + i, externalId: `x-${i}` });
    const codes = await new SimAccount(sim).codes();
    expect(codes.length).toBe(250);
    expect(new Set(codes.map((c) => c.code)).size).toBe(250);
  });

  it('moves main to spot and withdraws from flex to main, naming the transaction', async () => {
    const account = new SimAccount(demoSim());
    await account.transferToSpot({ ticker: 'USDT', amount: d('250') });
    const { transactionId } = await account.flexWithdraw({ plan: DEMO_FLEX_PLAN_ID, amount: d('500') });
    expect(transactionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(text((await account.mainBalances()).get('USDT') ?? d('0'))).toBe('10250');
    expect(text((await account.tradeBalances()).get('USDT')?.available ?? d('0'))).toBe('1250');
  });

  it('raises refusals as the domain errors the live adapter raises, with no HTTP details', async () => {
    const account = new SimAccount(demoSim());
    await expect(account.transferToSpot({ ticker: 'USDT', amount: d('99999') })).rejects.toSatisfy(
      (e) => e instanceof ExchangeRefusedError && e.refusal === 'insufficient-funds' && e.httpStatus === null && e.path === null,
    );
    await expect(buy(account, 'tiny', '0.000001')).rejects.toSatisfy((e) => e instanceof ExchangeValidationError && e.path === null);
  });

  it('finds an order by clientOrderId in history, and while it is still filling among active orders', async () => {
    const clock = manualClock();
    const sim = demoSim({ clock, settlement: { steps: 2, stepMs: 1000 } });
    const account = new SimAccount(sim);
    const placed = await buy(account, 'slot-1');
    expect(placed.status).toBe('NEW');
    expect(await account.findOrder({ market: 'BTC_USDT', clientOrderId: 'slot-1' })).toMatchObject({ orderId: placed.orderId, status: 'NEW' });
    clock.advance(1000);
    expect(await account.orderStatus({ market: 'BTC_USDT', orderId: placed.orderId, clientOrderId: 'slot-1' })).toMatchObject({ status: 'PARTIAL_FILLED' });
    clock.advance(1000);
    expect(await account.findOrder({ market: 'BTC_USDT', clientOrderId: 'slot-1' })).toMatchObject({ orderId: placed.orderId, status: 'FILLED' });
  });

  it('says null for an order the exchange provably does not have', async () => {
    const account = new SimAccount(demoSim());
    const placed = await buy(account, 'slot-2');
    expect(await account.findOrder({ market: 'BTC_USDT', clientOrderId: 'slot-3' })).toBeNull();
    expect(await account.findOrder({ market: 'ETH_USDT', clientOrderId: 'slot-2' })).toBeNull();
    expect(await account.orderStatus({ market: 'BTC_USDT', orderId: '1', clientOrderId: 'slot-2' })).toBeNull();
    expect(await account.orderStatus({ market: 'ETH_USDT', orderId: placed.orderId, clientOrderId: 'slot-2' })).toBeNull();
  });

  it('answers the domain order without the sim’s bookkeeping', async () => {
    const order = await buy(new SimAccount(demoSim()), 'slot-4');
    expect(Object.keys(order).sort()).toEqual(
      ['amount', 'clientOrderId', 'createdAtSec', 'fee', 'feeAsset', 'filledBase', 'filledQuote', 'left', 'market', 'orderId', 'price', 'side', 'status', 'statusDerived', 'stopActivated', 'stp', 'type'],
    );
  });
});

describe('seeding a paper or backtest account', () => {
  it('puts the wallet on spot, main balances on main, and one open plan per flex investment', () => {
    const sim = new SimCore({ clock: manualClock() });
    seedSimAccount(sim, {
      wallet: new Map([['USDT', d('100')], ['BTC', d('0')]]),
      main: new Map([['ETH', d('2')]]),
      flex: [{ planId: 'p-1', ticker: 'USDT', amount: d('50'), aprPct: d('4') }],
    });
    expect([text(sim.tradeBalance('USDT').available), text(sim.mainBalance('ETH'))]).toEqual(['100', '2']);
    expect(sim.flexPlans().map((p) => [p.planId, text(p.minInvestment), text(p.maxRatePct)])).toEqual([['p-1', '0', '4']]);
    // A zero balance is not a posting.
    expect(sim.ledger().some((e) => e.asset === 'BTC')).toBe(false);
  });
});
