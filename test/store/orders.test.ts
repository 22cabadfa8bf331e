import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deriveClientOrderId } from '../../src/domain/client-order-id.ts';
import { Decimal, formatDecimal } from '../../src/domain/money.ts';
import type { OrderTransition } from '../../src/store/journal.ts';
import { JOURNAL_KINDS, SLOT, TempWorld, claimWithBuy, order } from './helpers.ts';

let world: TempWorld;
beforeEach(() => {
  world = new TempWorld();
});
afterEach(async () => {
  await world.cleanup();
});

const CLIENT_ID = deriveClientOrderId(SLOT.instance, SLOT.slotTimeMs, 0);
const snapshots = {
  new: order({ clientOrderId: CLIENT_ID }),
  partial: order({
    clientOrderId: CLIENT_ID,
    status: 'PARTIAL_FILLED',
    left: new Decimal('0.0003'),
    filledBase: new Decimal('0.0002'),
    filledQuote: new Decimal('19.4000002'),
    fee: new Decimal('0.0194000002'),
    feeAsset: 'USDT',
  }),
  filled: order({
    clientOrderId: CLIENT_ID,
    status: 'FILLED',
    left: new Decimal('0'),
    filledBase: new Decimal('0.0005'),
    filledQuote: new Decimal('48.50000055'),
    fee: new Decimal('0.04850000055'),
    feeAsset: 'USDT',
  }),
};

function summary(t: OrderTransition | null | undefined): string | null {
  if (t === null || t === undefined) return null;
  return `#${t.seq} ${t.fromStatus ?? '∅'}→${t.toStatus} base=${formatDecimal(t.filledBase)} quote=${formatDecimal(t.filledQuote)} fee=${formatDecimal(t.fee)}`;
}

describe.each(JOURNAL_KINDS)('order tracking (%s journal)', (kind) => {
  beforeEach(() => {
    world.kind = kind;
  });

  it('refuses a snapshot of another order under a journalled order id (another clientOrderId or market), naming both, and keeps the stored one', async () => {
    const journal = await world.openJournal();
    await claimWithBuy(journal);
    await journal.recordOrderSnapshot(snapshots.filled);
    const other = order({ ...snapshots.filled, clientOrderId: deriveClientOrderId('other-instance', SLOT.slotTimeMs, 0) });
    await expect(journal.recordOrderSnapshot(other)).rejects.toMatchObject({ code: 'E_STORE', reason: 'order-id-clash', message: expect.stringContaining(`order id ${snapshots.filled.orderId} is journalled for`) });
    await expect(journal.recordOrderSnapshot({ ...snapshots.filled, market: 'ETH_USDT' })).rejects.toMatchObject({ reason: 'order-id-clash' });
    expect((await journal.getOrder(snapshots.filled.orderId))?.clientOrderId).toBe(CLIENT_ID);
    expect(await journal.orderTransitions(snapshots.filled.orderId)).toHaveLength(1);
  });

  it('logs each transition once with from, to, filled base and quote and fee', async () => {
    const journal = await world.openJournal();
    await claimWithBuy(journal);
    expect(summary(await journal.recordOrderSnapshot(snapshots.new))).toBe('#1 ∅→NEW base=0 quote=0 fee=0');
    expect(summary(await journal.recordOrderSnapshot(snapshots.partial))).toBe('#2 NEW→PARTIAL_FILLED base=0.0002 quote=19.4000002 fee=0.0194000002');
    world.nowMs += 500;
    expect(summary(await journal.recordOrderSnapshot(snapshots.filled))).toBe('#3 PARTIAL_FILLED→FILLED base=0.0005 quote=48.50000055 fee=0.04850000055');
    const stored = await journal.orderTransitions(snapshots.new.orderId);
    expect(stored.map(summary)).toEqual([
      '#1 ∅→NEW base=0 quote=0 fee=0',
      '#2 NEW→PARTIAL_FILLED base=0.0002 quote=19.4000002 fee=0.0194000002',
      '#3 PARTIAL_FILLED→FILLED base=0.0005 quote=48.50000055 fee=0.04850000055',
    ]);
    expect(stored[2]?.atMs).toBe(world.nowMs);
  });

  it('records nothing when the same snapshots are replayed, also after a reopen', async () => {
    const first = await world.openJournal();
    await claimWithBuy(first);
    for (const snapshot of [snapshots.new, snapshots.new, snapshots.partial, snapshots.partial]) await first.recordOrderSnapshot(snapshot);
    await first.close();
    const second = await world.openJournal();
    const replayed = [];
    for (const snapshot of [snapshots.new, snapshots.partial, snapshots.partial]) replayed.push(await second.recordOrderSnapshot(snapshot));
    expect(replayed).toEqual([null, null, null]);
    expect(await second.orderTransitions(snapshots.new.orderId)).toHaveLength(2);
  });

  it('records a further fill in the same status as a new transition', async () => {
    const journal = await world.openJournal();
    await journal.recordOrderSnapshot(snapshots.partial);
    const more = order({ ...snapshots.partial, filledBase: new Decimal('0.0003'), filledQuote: new Decimal('29.1'), fee: new Decimal('0.0291') });
    expect(summary(await journal.recordOrderSnapshot(more))).toBe('#2 PARTIAL_FILLED→PARTIAL_FILLED base=0.0003 quote=29.1 fee=0.0291');
  });

  it('ignores a snapshot older than the stored one: status never goes back, fills never shrink', async () => {
    const journal = await world.openJournal();
    await journal.recordOrderSnapshot(snapshots.partial);
    expect(await journal.recordOrderSnapshot(snapshots.new)).toBeNull();
    expect(await journal.recordOrderSnapshot(order({ ...snapshots.partial, filledBase: new Decimal('0.0001') }))).toBeNull();
    expect((await journal.getOrder(snapshots.new.orderId))?.status).toBe('PARTIAL_FILLED');
    expect(await journal.orderTransitions(snapshots.new.orderId)).toHaveLength(1);
  });

  it('freezes an order once terminal and drops it from the open orders', async () => {
    const journal = await world.openJournal();
    await journal.recordOrderSnapshot(snapshots.new);
    world.nowMs += 1;
    await journal.recordOrderSnapshot(order({ orderId: '2', status: 'PARTIAL_FILLED', filledBase: new Decimal('0.1') }));
    expect((await journal.openOrders()).map((o) => o.orderId)).toEqual(['5123456789', '2']);
    await journal.recordOrderSnapshot(snapshots.filled);
    expect(await journal.recordOrderSnapshot(order({ ...snapshots.filled, status: 'CANCELED' }))).toBeNull();
    expect((await journal.getOrder(snapshots.new.orderId))?.status).toBe('FILLED');
    expect((await journal.openOrders()).map((o) => o.orderId)).toEqual(['2']);
  });

  it("moves a final order again only when the exchange shows it spent more (its history correcting the answer), never back", async () => {
    const journal = await world.openJournal();
    // Answered without a status and nothing filled: taken as cancelled.
    const answered = order({ orderId: '7', status: 'CANCELED', filledBase: new Decimal('0'), filledQuote: new Decimal('0'), fee: new Decimal('0'), left: new Decimal('0') });
    await journal.recordOrderSnapshot(answered);
    world.nowMs += 1;
    const shown = order({ orderId: '7', status: 'FILLED', filledBase: new Decimal('0.001'), filledQuote: new Decimal('65'), fee: new Decimal('0.065'), feeAsset: 'USDT', left: new Decimal('0') });
    expect(await journal.recordOrderSnapshot(shown)).toMatchObject({ fromStatus: 'CANCELED', toStatus: 'FILLED' });
    // A fee the history corrects upwards moves it again; a lagging read showing less does not.
    expect(await journal.recordOrderSnapshot(order({ ...shown, fee: new Decimal('0.0651') }))).toMatchObject({ fromStatus: 'FILLED', toStatus: 'FILLED' });
    expect(await journal.recordOrderSnapshot(answered)).toBeNull();
    expect(await journal.getOrder('7')).toMatchObject({ status: 'FILLED' });
    expect(formatDecimal((await journal.getOrder('7'))?.fee ?? new Decimal(0))).toBe('0.0651');
    expect(await journal.openOrders()).toEqual([]);
  });

  it('updates the stored snapshot without a transition when only other fields changed', async () => {
    const journal = await world.openJournal();
    await journal.recordOrderSnapshot(snapshots.new);
    world.nowMs += 1;
    expect(await journal.recordOrderSnapshot(order({ ...snapshots.new, feeAsset: 'USDT' }))).toBeNull();
    expect(await journal.getOrder(snapshots.new.orderId)).toMatchObject({ feeAsset: 'USDT', updatedAtMs: world.nowMs });
  });

  it('links an order to the intent that sent its clientOrderId, or to the intent named', async () => {
    const journal = await world.openJournal();
    const intentId = await claimWithBuy(journal);
    await journal.recordOrderSnapshot(snapshots.new);
    expect((await journal.getOrder(snapshots.new.orderId))?.intentId).toBe(intentId);
    await journal.recordOrderSnapshot(order({ orderId: '77', clientOrderId: 'manual' }));
    expect((await journal.getOrder('77'))?.intentId).toBeNull();
    await journal.recordOrderSnapshot(order({ orderId: '78', clientOrderId: CLIENT_ID }), { intentId: null });
    expect((await journal.getOrder('78'))?.intentId).toBeNull();
    await expect(journal.recordOrderSnapshot(order({ orderId: '79' }), { intentId: 'no-such-intent' })).rejects.toMatchObject({ reason: 'not-found' });
    expect((await journal.listOrders({ instance: SLOT.instance })).map((o) => o.orderId)).toEqual([snapshots.new.orderId]);
    expect((await journal.listOrders({ market: 'ETH_USDT' }))).toEqual([]);
  });

  it('lists the orders first seen from a moment on, all of them when asked', async () => {
    const journal = await world.openJournal();
    await journal.recordOrderSnapshot(order({ orderId: '81', clientOrderId: 'a' }));
    world.nowMs += 1_000;
    const from = world.nowMs;
    await journal.recordOrderSnapshot(order({ orderId: '82', clientOrderId: 'b' }));
    await journal.recordOrderSnapshot(order({ orderId: '83', clientOrderId: 'c' }));
    expect((await journal.listOrders({ firstSeenFromMs: from, limit: -1 })).map((o) => o.orderId)).toEqual(['83', '82']);
    expect((await journal.listOrders({ firstSeenFromMs: from - 1_000 })).map((o) => o.orderId)).toEqual(['83', '82', '81']);
  });

  it('reads back every field of the order exactly', async () => {
    const journal = await world.openJournal();
    const full = order({
      orderId: '18446744073709551615',
      type: 'limit',
      side: 'sell',
      price: new Decimal('123456789.123456789'),
      statusDerived: true,
      stp: 'cb',
      stopActivated: 1,
      createdAtSec: 1_669_333_716.366427,
    });
    await journal.recordOrderSnapshot(full);
    expect(await journal.getOrder(full.orderId)).toEqual({ ...full, intentId: null, firstSeenAtMs: world.nowMs, updatedAtMs: world.nowMs });
  });

  it('refuses an order whose money is not a finite Decimal', async () => {
    const journal = await world.openJournal();
    await expect(journal.recordOrderSnapshot(order({ fee: new Decimal(NaN) }))).rejects.toMatchObject({ reason: 'invalid-argument' });
  });
});

describe.each(JOURNAL_KINDS)('stop orders (%s journal)', (kind) => {
  beforeEach(() => {
    world.kind = kind;
  });

  it('journals a stop activation 0 → 1 as a transition of its own, once, even though the status stays NEW', async () => {
    const journal = await world.openJournal();
    const stop = { clientOrderId: CLIENT_ID, type: 'stop market' as const };
    expect(summary(await journal.recordOrderSnapshot(order({ ...stop, stopActivated: 0 })))).toBe('#1 ∅→NEW base=0 quote=0 fee=0');
    expect(await journal.recordOrderSnapshot(order({ ...stop, stopActivated: 0 }))).toBeNull();
    const activation = await journal.recordOrderSnapshot(order({ ...stop, stopActivated: 1 }));
    expect([summary(activation), activation?.stopActivated]).toEqual(['#2 NEW→NEW base=0 quote=0 fee=0', true]);
    expect(await journal.recordOrderSnapshot(order({ ...stop, stopActivated: 1 }))).toBeNull();
    const transitions = await journal.orderTransitions(order(stop).orderId);
    expect(transitions.map((t) => t.stopActivated)).toEqual([false, true]);
  });
});

describe.each(JOURNAL_KINDS)('orders by change (%s journal)', (kind) => {
  beforeEach(() => {
    world.kind = kind;
  });

  it('pages through the orders recorded or updated from a time, oldest change first, each with its intent’s instance', async () => {
    const journal = await world.openJournal();
    const intentId = await claimWithBuy(journal);
    const start = world.nowMs;
    world.nowMs = start + 1;
    await journal.recordOrderSnapshot(order({ orderId: '30', clientOrderId: CLIENT_ID }), { intentId });
    world.nowMs = start + 2;
    await journal.recordOrderSnapshot(order({ orderId: '10', clientOrderId: 'someone-else' }), { intentId: null });
    await journal.recordOrderSnapshot(order({ orderId: '20', clientOrderId: 'someone-else-2' }), { intentId: null });
    world.nowMs = start + 3;
    // The first order fills: it moves to the end of the reading order.
    await journal.recordOrderSnapshot({ ...snapshots.filled, orderId: '30' });

    const all = await journal.changedOrders({ fromMs: 0, limit: 10 });
    expect(all.map((o) => [o.orderId, o.updatedAtMs - start, o.instance, o.status])).toEqual([
      ['10', 2, null, 'NEW'],
      ['20', 2, null, 'NEW'],
      ['30', 3, SLOT.instance, 'FILLED'],
    ]);
    const first = await journal.changedOrders({ fromMs: 0, limit: 1 });
    const second = await journal.changedOrders({ fromMs: 0, limit: 1, after: first[0] as (typeof first)[0] });
    const third = await journal.changedOrders({ fromMs: 0, limit: 5, after: second[0] as (typeof second)[0] });
    expect([...first, ...second, ...third].map((o) => o.orderId)).toEqual(['10', '20', '30']);
    expect((await journal.changedOrders({ fromMs: start + 3, limit: 5 })).map((o) => o.orderId)).toEqual(['30']);
    expect(await journal.changedOrders({ fromMs: start + 4, limit: 5 })).toEqual([]);
  });

  it('refuses a page of no orders, or one after an order it cannot name', async () => {
    const journal = await world.openJournal();
    await expect(journal.changedOrders({ fromMs: 0, limit: 0 })).rejects.toMatchObject({ code: 'E_STORE', reason: 'invalid-argument', message: expect.stringContaining('at least one order') });
    await expect(journal.changedOrders({ fromMs: 0.5, limit: 1 })).rejects.toMatchObject({ reason: 'invalid-argument', message: expect.stringContaining('whole milliseconds') });
    await expect(journal.changedOrders({ fromMs: 0, limit: 1, after: { updatedAtMs: 1, orderId: '' } })).rejects.toMatchObject({ reason: 'invalid-argument', message: expect.stringContaining('updatedAtMs and orderId') });
  });
});

describe.each(JOURNAL_KINDS)('orders listed by status (%s journal)', (kind) => {
  beforeEach(() => {
    world.kind = kind;
  });

  it('lists only the orders in the status asked, newest first, the limit counting those', async () => {
    const journal = await world.openJournal();
    for (const [orderId, status] of [['1', 'FILLED'], ['2', 'NEW'], ['3', 'FILLED'], ['4', 'CANCELED'], ['5', 'FILLED']] as const) {
      world.nowMs += 1;
      await journal.recordOrderSnapshot(order({ orderId, clientOrderId: `c${orderId}`, status }), { intentId: null });
    }
    expect((await journal.listOrders({ status: 'FILLED', limit: 2 })).map((o) => o.orderId)).toEqual(['5', '3']);
    expect((await journal.listOrders({ status: 'PARTIAL_FILLED', limit: -1 })).map((o) => o.orderId)).toEqual([]);
    expect((await journal.listOrders({ limit: 2 })).map((o) => o.orderId)).toEqual(['5', '4']);
  });
});
