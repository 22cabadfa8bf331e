import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deriveClientOrderId } from '../../src/domain/client-order-id.ts';
import { Decimal } from '../../src/domain/money.ts';
import type { NotifyEvent } from '../../src/domain/notification.ts';
import { killSwitch } from '../../src/engine/kill-switch.ts';
import { type EngineWorld, dcaBtc, engineWorld, runtimeOf, transferThenBuy } from './harness.ts';

// What the engine tells its notifier, against the real sandbox over HTTP and a real journal:
// one event per moment the logs carry (a fill, a refusal, a lost answer, a stop), never twice.
const SLOT = Date.UTC(2026, 10, 22, 9, 0, 0);
const ORDER_PATH = '/api/v4/order/stock_market';

let world: EngineWorld;
beforeEach(async () => {
  world = await engineWorld();
});
afterEach(async () => {
  await world.close();
});

const kinds = (events: readonly NotifyEvent[]) => events.map((event) => event.kind);

describe('the engine notifies', () => {
  it('order-filled once per filled order, with the journal\'s figures, however often the order is seen again', async () => {
    const engine = world.engine([dcaBtc()]);
    expect(await engine.runSlot('dca-btc', SLOT)).toBe('done');
    await engine.track();
    await engine.track();
    const [order] = world.sandbox.exchange.orderHistory({});
    expect(kinds(world.notifications)).toEqual(['order-filled']);
    const event = world.notifications[0];
    expect(event).toMatchObject({ kind: 'order-filled', mode: 'live', instance: 'dca-btc', clientOrderId: deriveClientOrderId('dca-btc', SLOT, 0), orderId: order?.orderId, market: 'BTC_USDT', status: 'FILLED' });
    if (event?.kind !== 'order-filled') throw new Error('not a fill');
    expect([event.filledBase, event.filledQuote, event.fee, event.averagePrice].map((d) => d.toFixed())).toEqual(['0.001', '65', order?.fee.toFixed(), '65000']);
  });

  it('order-refused (unfilled), once, with a warning, when the exchange takes a buy and ends it with nothing filled: nothing was bought', async () => {
    // Slippage past the taker band: the walk stops before its first level (an empty or thin book).
    const thin = await engineWorld({ fills: { slippagePct: '1', takerBandPct: '0.5' } });
    try {
      const engine = thin.engine([dcaBtc()]);
      expect(await engine.runSlot('dca-btc', SLOT)).toBe('done');
      await engine.track();
      const [order] = thin.sandbox.exchange.orderHistory({});
      expect(order).toMatchObject({ status: 'CANCELED' });
      expect(order?.filledBase.isZero()).toBe(true);
      expect(thin.notifications).toEqual([expect.objectContaining({ kind: 'order-refused', instance: 'dca-btc', intent: 'buy-stock-market', reason: 'unfilled', clientOrderId: deriveClientOrderId('dca-btc', SLOT, 0) })]);
      const warned = thin.logs.filter((line) => line.fields['event'] === 'order-unfilled');
      expect(warned).toHaveLength(1);
      expect(warned[0]?.level).toBe('warn');
      expect(warned[0]?.message).toMatch(/ended CANCELED with nothing filled: the book had nothing to fill it at.*nothing was bought for this slot/);
    } finally {
      await thin.close();
    }
  });

  it('order-refused when a guard stops a buy (the kill switch), with its reason', async () => {
    const file = join(world.dir, 'STOP');
    writeFileSync(file, '');
    expect(await world.engine([dcaBtc()], { killSwitch: killSwitch({ file, env: false }) }).runSlot('dca-btc', SLOT)).toBe('done');
    expect(world.notifications).toEqual([expect.objectContaining({ kind: 'order-refused', instance: 'dca-btc', intent: 'buy-stock-market', reason: 'kill-switch' })]);
  });

  it('order-refused when the budget planned before sending refuses it', async () => {
    const budgeted = { ...dcaBtc(), budgets: { day: new Decimal('10') } };
    await world.engine([budgeted]).runSlot('dca-btc', SLOT);
    expect(kinds(world.notifications)).toEqual(['order-refused']);
    expect(world.sandbox.exchange.orderHistory({})).toHaveLength(0);
  });

  it('one order-refused for a group refused all or nothing: the refusal that stopped it, not its followers', async () => {
    await world.engine([runtimeOf({ instance: 'tb', strategy: transferThenBuy, env: { MARKET: 'BTC_USDT' }, maxOrderQuote: new Decimal('1') })]).runSlot('tb', SLOT);
    expect(world.notifications).toEqual([expect.objectContaining({ kind: 'order-refused', instance: 'tb', intent: 'buy-stock-market', reason: 'above-max-order' })]);
  });

  it('intent-unknown when an answer is lost, then order-filled when the lookup finds the order', async () => {
    world.sandbox.faults.inject({ path: ORDER_PATH, kind: 'status', status: 502, body: { message: 'bad gateway' }, commit: true });
    world.sandbox.faults.historyLagMs = 600;
    const engine = world.engine([dcaBtc()]);
    expect(await engine.runSlot('dca-btc', SLOT)).toBe('failed');
    expect(world.notifications).toEqual([expect.objectContaining({ kind: 'intent-unknown', instance: 'dca-btc', code: 'E_UNAVAILABLE', clientOrderId: deriveClientOrderId('dca-btc', SLOT, 0) })]);
    await new Promise((resolve) => setTimeout(resolve, 700));
    world.advance(60_000);
    await engine.track();
    expect(kinds(world.notifications)).toEqual(['intent-unknown', 'order-filled']);
  });

  it('trading-stopped once when the exchange refuses the key', async () => {
    const engine = world.engine([dcaBtc()], { credentials: { apiKey: world.sandbox.apiKey, apiSecret: 'not-the-secret' } });
    await engine.runSlot('dca-btc', SLOT);
    await engine.runSlot('dca-btc', SLOT + 1000);
    expect(world.notifications).toEqual([expect.objectContaining({ kind: 'trading-stopped', code: 'E_AUTH' })]);
    expect(JSON.stringify(world.notifications)).not.toContain('not-the-secret');
  });

  it('a notifier that throws fails no slot: a warning instead', async () => {
    const engine = world.engine([dcaBtc()]);
    world.notifications.push = () => {
      throw new Error('notifier broke');
    };
    expect(await engine.runSlot('dca-btc', SLOT)).toBe('done');
    expect(world.logs.filter((line) => line.fields['event'] === 'notifier-threw').map((line) => line.fields['kind'])).toEqual(['order-filled']);
  });
});
