import { afterEach, describe, expect, it } from 'vitest';
import { Decimal } from '../../src/domain/money.ts';
import type { NotifyEvent } from '../../src/domain/notification.ts';
import type { Engine } from '../../src/engine/engine.ts';
import { parseFaultSpecs } from '../../src/sandbox/fault-spec.ts';
import type { SandboxOptions } from '../../src/sandbox/server.ts';
import { dca } from '../../strategies/dca.ts';
import { ENGINE_JOURNALS, type EngineJournalKind, type EngineWorld, TEST_TIMING, engineWorld, runtimeOf } from './harness.ts';

// A market order the exchange keeps open (or cannot show) long after a market order ends: the
// engine against the sandbox over HTTP on 127.0.0.1 and a real journal. Its operator must hear
// of it once (a warning, a notification, a /healthz problem until it is final), while stacker
// goes on following it, cancelling and resending nothing, its budget still counted. The engine's
// clock is moved past the (test) threshold; the sandbox settles orders on its own, real, clock.
const SLOT = Date.UTC(2026, 10, 22, 9);
const STUCK_MS = TEST_TIMING.stuckOrderMs ?? 0;
const HISTORY_PATH = '/api/v4/trade-account/order/history';
/** Long enough that an order placed now is still open when the test has looked at it. */
const FILLS_LATER_MS = 2500;
const NEVER_MS = 3_600_000;

const dcaBtc = () => ({
  ...runtimeOf({ instance: 'dca-btc', strategy: dca, env: { STRATEGY: 'dca', SCHEDULE: '0 9 * * *', MARKET: 'BTC_USDT', AMOUNT: '0.002' } }),
  budgets: { day: new Decimal('1000') },
});

const JOURNALS: readonly EngineJournalKind[] = ['memory', ...ENGINE_JOURNALS];

describe.each(JOURNALS)('a market order still open long after it should have ended (%s journal)', (kind) => {
  let world: EngineWorld;
  afterEach(async () => {
    await world.close();
  });

  /** One slot's order placed on a sandbox that settles it `stepMs` after it takes it, still open in the journal. */
  const placed = async (stepMs: number, options: SandboxOptions = {}, faults: readonly string[] = []) => {
    world = await engineWorld({ settlement: { steps: 1, stepMs }, ...options }, kind);
    const parsed = parseFaultSpecs(faults);
    if (!('ok' in parsed)) throw new Error(parsed.problems.join('; '));
    for (const fault of parsed.ok.faults) world.sandbox.faults.inject(fault);
    const engine = world.engine([dcaBtc()]);
    expect(await engine.runSlot('dca-btc', SLOT)).toBe('done');
    const [order] = await world.journal.openOrders();
    if (order === undefined) throw new Error('the order is not open');
    return { engine, order };
  };

  const stuckWarnings = () => world.logs.filter((line) => line.fields['event'] === 'order-stuck');
  const kinds = (events: readonly NotifyEvent[]) => events.map((event) => event.kind);
  const heldBudget = async () => (await world.journal.heldBudgetReservations('dca-btc')).length;

  /** Track until the journal has nothing open (or give up after 10 s). */
  const trackToTheEnd = async (engine: Engine) => {
    for (const until = Date.now() + 10_000; Date.now() < until && (await world.journal.openOrders()).length > 0; ) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      await engine.track();
    }
  };

  it('is told once (warning, notification, health problem) while the exchange keeps answering it open, and the problem clears once it fills', async () => {
    // A status word stacker does not know keeps it open by design, until the exchange fills it.
    const { engine, order } = await placed(FILLS_LATER_MS, {}, ['unknown-status=ACCEPTED', 'unknown-status=ACCEPTED,path=/api/v4/orders']);
    await engine.track();
    expect(stuckWarnings()).toEqual([]);
    expect(engine.health().stuckOrders).toEqual([]);

    world.advance(STUCK_MS);
    await engine.track();
    await engine.track();
    expect((await world.journal.getOrder(order.orderId))?.status).toBe('NEW');
    const warned = stuckWarnings();
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({
      level: 'warn',
      fields: { instance: 'dca-btc', orderId: order.orderId, clientOrderId: order.clientOrderId, market: 'BTC_USDT', status: 'NEW', why: expect.stringContaining('"ACCEPTED"') },
    });
    expect(warned[0]?.fields['since']).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(warned[0]?.message).toMatch(/check it at the exchange/);
    expect(world.notifications).toEqual([
      expect.objectContaining({ kind: 'order-stuck', mode: 'live', instance: 'dca-btc', orderId: order.orderId, clientOrderId: order.clientOrderId, market: 'BTC_USDT', status: 'NEW' }),
    ]);
    expect(engine.health().stuckOrders).toEqual([expect.objectContaining({ orderId: order.orderId, instance: 'dca-btc', status: 'NEW', why: expect.stringContaining('does not know') })]);
    // Still followed, nothing cancelled or resent, its budget still held.
    expect(world.sandbox.exchange.orderHistory({})).toHaveLength(0);
    expect(world.sandbox.exchange.activeOrders({})).toHaveLength(1);
    expect(await heldBudget()).toBe(1);

    await trackToTheEnd(engine);
    expect((await world.journal.getOrder(order.orderId))?.status).toBe('FILLED');
    expect(engine.health().stuckOrders).toEqual([]);
    expect(stuckWarnings()).toHaveLength(1);
    expect(kinds(world.notifications)).toEqual(['order-stuck', 'order-filled']);
    expect(JSON.stringify(world.logs)).not.toContain(world.sandbox.apiSecret);
    expect(world.fatal).toEqual([]);
  });

  it('is told when its status read keeps failing, with the error; a restart knows at once it is stuck and tells once more', async () => {
    const { engine, order } = await placed(NEVER_MS);
    world.sandbox.faults.inject({ path: HISTORY_PATH, kind: 'status', status: 503, body: { message: 'maintenance' }, times: Number.POSITIVE_INFINITY });
    world.advance(STUCK_MS);
    await engine.track();
    await engine.track();
    expect(stuckWarnings()).toHaveLength(1);
    expect(stuckWarnings()[0]?.fields).toMatchObject({ orderId: order.orderId, status: 'NEW', why: expect.stringMatching(/^its status could not be read: /) });
    expect(kinds(world.notifications)).toEqual(['order-stuck']);
    expect(engine.health().stuckOrders).toHaveLength(1);
    // The read's error is told as it is logged: never the key or the secret.
    for (const told of [JSON.stringify(world.logs), JSON.stringify(world.notifications)]) {
      expect(told).not.toContain(world.sandbox.apiSecret);
      expect(told).not.toContain(world.sandbox.apiKey);
    }

    // A new engine on the same journal (a restart): the age comes from what the journal stored.
    const restarted = world.engine([dcaBtc()]);
    await restarted.track();
    expect(restarted.health().stuckOrders).toEqual([expect.objectContaining({ orderId: order.orderId })]);
    expect(stuckWarnings()).toHaveLength(2);
    expect(await heldBudget()).toBe(1);
    expect(world.fatal).toEqual([]);
  });

  it('is told when the exchange keeps not finding it', async () => {
    const { engine, order } = await placed(NEVER_MS);
    world.sandbox.faults.historyLagMs = NEVER_MS;
    world.advance(STUCK_MS);
    await engine.track();
    expect(stuckWarnings()).toEqual([expect.objectContaining({ fields: expect.objectContaining({ orderId: order.orderId, why: expect.stringContaining('finds it neither in its order history nor among the active orders') }) })]);
    expect(world.notifications).toEqual([expect.objectContaining({ kind: 'order-stuck', orderId: order.orderId, why: expect.stringContaining('finds it neither') })]);
    expect(engine.health().stuckOrders).toHaveLength(1);
    expect(await heldBudget()).toBe(1);
  });

  it('is not told of an order that turned final before the threshold', async () => {
    const { engine, order } = await placed(200);
    await trackToTheEnd(engine);
    expect((await world.journal.getOrder(order.orderId))?.status).toBe('FILLED');
    world.advance(STUCK_MS);
    await engine.track();
    expect(stuckWarnings()).toEqual([]);
    expect(kinds(world.notifications)).toEqual(['order-filled']);
    expect(engine.health().stuckOrders).toEqual([]);
  });
});
