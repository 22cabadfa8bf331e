import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ScheduledRuntime } from '../../src/engine/engine.ts';
import type { CatchUpPolicy } from '../../src/engine/schedule/catch-up.ts';
import { dca } from '../../strategies/dca.ts';
import { deriveClientOrderId } from '../../src/domain/client-order-id.ts';
import { Decimal } from '../../src/domain/money.ts';
import { type EngineWorld, engineWorld, runtimeOf } from './harness.ts';

// Catch-up of a new instance, against the real sandbox and a real journal: its first slot, cut
// off before it was journalled (kill -9, OOM during the snapshot, or a stop during the retry
// backoff), is due at the next start like any missed slot, and the slots from before the
// instance was first scheduled never are. Each start is a new engine on the same journal with
// the `now` it starts at; the kill is the slot never being journalled between two starts.

let world: EngineWorld;
beforeEach(async () => {
  world = await engineWorld();
});
afterEach(async () => {
  await world.close();
});

const INSTANCE = 'dca-btc';

function dcaEvery10s(catchUp: CatchUpPolicy): ScheduledRuntime {
  const schedule = '*/10 * * * * *';
  return { ...runtimeOf({ instance: INSTANCE, strategy: dca, schedule, env: { STRATEGY: 'dca', SCHEDULE: schedule, MARKET: 'BTC_USDT', AMOUNT: '0.001' } }), catchUp };
}

/** Two slots of the schedule a minute ago and 50 s ago: every start's `now` is then chosen, not waited for. */
function pastSlots(): { s1: number; s2: number } {
  const s1 = Math.floor(Date.now() / 10_000) * 10_000 - 60_000;
  return { s1, s2: s1 + 10_000 };
}

const LAST: CatchUpPolicy = { policy: 'last', windowMs: 3_600_000 };
/** An order at the exchange with the instance's id for a slot, as a lost part of the journal placed it. */
const placeAt = (slotTimeMs: number) => world.sandbox.exchange.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.001'), clientOrderId: deriveClientOrderId(INSTANCE, slotTimeMs, 0) });
const slotsJournalled = async (): Promise<string[]> => (await world.journal.listSlots({ instance: INSTANCE })).map((slot) => `${slot.slotTimeMs}:${slot.status}`);

describe('catch-up of an instance whose first slot was never journalled', () => {
  it('runs the first slot late with CATCH_UP=last, once, and a later start does not move the anchor', async () => {
    const { s1 } = pastSlots();
    const instance = dcaEvery10s(LAST);

    // First start, 5 s before the first slot: nothing missed yet, the instance anchored.
    await world.engine([instance]).catchUp(s1 - 5_000);
    expect(await world.journal.scheduledSince(INSTANCE)).toBe(s1 - 5_000);
    expect(await slotsJournalled()).toEqual([]);
    // Killed and started again before the slot: the anchor stays where it was first written.
    await world.engine([instance]).catchUp(s1 - 2_000);
    expect(await world.journal.scheduledSince(INSTANCE)).toBe(s1 - 5_000);

    // Killed during the slot's snapshot (nothing journalled, nothing sent), started 3 s after it.
    await world.engine([instance]).catchUp(s1 + 3_000);
    expect(await slotsJournalled()).toEqual([`${s1}:done`]);
    expect(world.sandbox.exchange.orderHistory({})).toHaveLength(1);
    expect(world.logs.filter((line) => line.fields.event === 'catch-up')).toHaveLength(1);

    // Once journalled, the slot anchors the next start: it is not run again.
    await world.engine([instance]).catchUp(s1 + 6_000);
    expect(await slotsJournalled()).toEqual([`${s1}:done`]);
    expect(world.sandbox.exchange.orderHistory({})).toHaveLength(1);
  });

  it('journals the first slot missed with CATCH_UP=skip, nothing sent', async () => {
    const { s1 } = pastSlots();
    const instance = dcaEvery10s({ policy: 'skip' });
    await world.engine([instance]).catchUp(s1 - 5_000);
    await world.engine([instance]).catchUp(s1 + 3_000);
    const slot = await world.journal.getSlot({ instance: INSTANCE, slotTimeMs: s1 });
    expect(slot).toMatchObject({ status: 'missed' });
    expect(slot?.reason).toMatch(/CATCH_UP=skip/);
    // Not "stacker was not running": a daemon whose journal was out of reach was running.
    expect(slot?.reason).toBe('no stacker journalled it (stopped, or its journal out of reach); CATCH_UP=skip');
    expect(await slotsJournalled()).toEqual([`${s1}:missed`]);
    expect(world.sandbox.exchange.orderHistory({})).toHaveLength(0);
  });

  it('never runs or journals a slot from before the instance was first started, and still catches up the first one after', async () => {
    const { s1, s2 } = pastSlots();
    const instance = dcaEvery10s(LAST);
    // Added to the config and first started 5 s after s1: s1 is history, not a missed slot.
    await world.engine([instance]).catchUp(s1 + 5_000);
    expect(await slotsJournalled()).toEqual([]);
    expect(world.sandbox.exchange.orderHistory({})).toHaveLength(0);

    // Its first slot (s2) killed before it was journalled; started again 3 s after it.
    await world.engine([instance]).catchUp(s2 + 3_000);
    expect(await slotsJournalled()).toEqual([`${s2}:done`]);
    expect(await world.journal.getSlot({ instance: INSTANCE, slotTimeMs: s1 })).toBeNull();
    expect(world.sandbox.exchange.orderHistory({})).toHaveLength(1);
  });

  it('counts from the anchor when a slot older than it was journalled later (an order adopted from the history)', async () => {
    const { s1, s2 } = pastSlots();
    const instance = dcaEvery10s({ policy: 'skip' });
    await world.engine([instance]).catchUp(s1 + 5_000);
    // Journalled after the anchor, for a time before it: the slots between are not this instance's to miss.
    await world.journal.skipSlot({ instance: INSTANCE, slotTimeMs: s1 - 30_000, runId: null, status: 'skipped', reason: 'adopted' });
    await world.engine([instance]).catchUp(s2 + 3_000);
    expect(await slotsJournalled()).toEqual([`${s2}:missed`, `${s1 - 30_000}:skipped`]);
  });
});

describe('catch-up after a start that waited for the exchange', () => {
  it('journals the slots that fell during the wait as missed while stacker was starting, for an instance with slots and a new one alike, but for the newest, moments old, run as a late fire whatever CATCH_UP says', async () => {
    const { s1, s2 } = pastSlots();
    const old = dcaEvery10s({ policy: 'skip' });
    const added = { ...dcaEvery10s({ policy: 'skip' }), instance: 'dca-new' };
    // The older instance ran s1 - 10 s; the daemon stopped, then started again at s1 - 5 s and
    // waited for the exchange until 3 s after s2.
    await world.journal.skipSlot({ instance: INSTANCE, slotTimeMs: s1 - 10_000, runId: null, status: 'skipped', reason: 'an earlier run' });
    await world.engine([old, added]).catchUp(s2 + 3_000, s1 - 5_000);
    for (const name of [INSTANCE, 'dca-new']) {
      const slots = (await world.journal.listSlots({ instance: name })).filter((slot) => slot.slotTimeMs >= s1).map((slot) => [slot.slotTimeMs, slot.status, slot.reason]);
      expect(slots).toEqual([
        [s2, 'done', null],
        [s1, 'missed', 'stacker was starting (waiting for the exchange to check the configuration against); CATCH_UP=skip'],
      ]);
    }
    expect(world.logs.find((line) => line.fields.event === 'slots-missed')?.message).toBe('1 slot(s) of dca-btc fell while stacker was starting; journalled as missed');
    expect(world.logs.find((line) => line.fields.event === 'catch-up')?.message).toBe('running late the slot that fell while stacker was starting, moments ago, as node-cron runs a late fire');
    expect(world.sandbox.exchange.orderHistory({})).toHaveLength(2);
  });
});

describe('catch-up after the journal was rebuilt from the exchange\'s history', () => {
  it('does not run late a missed slot whose order the lagging history may not show yet, and adopts that order once it shows: never bought twice, never called another client\'s', async () => {
    const { s1, s2 } = pastSlots();
    const instance = dcaEvery10s(LAST);
    // The lost journal's last two slots were bought; the history shows the first, not yet the second.
    placeAt(s1);
    const engine = world.engine([instance], { ledger: {} });
    expect((await engine.checkLedger())?.adopted).toHaveLength(1);
    placeAt(s2);
    world.sandbox.faults.historyLagMs = 60_000;

    await engine.catchUp(s2 + 3_000, s2 + 3_000, { journalBehind: { reason: 'the journal was rebuilt from the exchange\'s order history', sinceMs: s2 + 3_000 } });
    expect(world.sandbox.exchange.orderHistory({})).toHaveLength(2);
    // Withheld and left unjournalled: one journalled as missed would make its order look foreign.
    expect(await slotsJournalled()).toEqual([`${s1}:done`]);
    expect(world.logs.find((line) => line.fields.event === 'catch-up-withheld')?.message).toMatch(/^the missed slot is not run late: the journal was rebuilt from the exchange's order history, and the exchange's order history may not show an order of this slot yet/);
    expect(world.logs.filter((line) => line.fields.event === 'catch-up')).toEqual([]);
    // The history shows it now: adopted and counted, trading goes on.
    world.sandbox.faults.historyLagMs = 0;
    expect((await engine.checkLedger())?.adopted).toHaveLength(1);
    expect(world.fatal).toEqual([]);
    expect((await slotsJournalled()).sort()).toEqual([`${s1}:done`, `${s2}:done`]);
  });

  it('leaves unjournalled the older missed slots within the settle window too: their orders, shown late, are adopted, not taken for another client\'s', async () => {
    const { s1, s2 } = pastSlots();
    const s0 = s1 - 10_000;
    const instance = dcaEvery10s(LAST);
    // The journal knows s0; the lost part bought s1 and s2, which the history does not show yet.
    placeAt(s0);
    const engine = world.engine([instance], { ledger: {} });
    expect((await engine.checkLedger())?.adopted).toHaveLength(1);
    placeAt(s1);
    placeAt(s2);
    world.sandbox.faults.historyLagMs = 60_000;
    await engine.catchUp(s2 + 3_000, s2 + 3_000, { journalBehind: { reason: 'an older copy of the journal was put back', sinceMs: s2 + 3_000 } });
    expect(await slotsJournalled()).toEqual([`${s0}:done`]);
    world.sandbox.faults.historyLagMs = 0;
    expect((await engine.checkLedger())?.adopted).toHaveLength(2);
    expect(world.fatal).toEqual([]);
    expect(world.sandbox.exchange.orderHistory({})).toHaveLength(3);
  });

  it('after a pause, runs no missed slot late when a slot after them already fired (the wake came just after its time): as a restart then would run that one alone', async () => {
    const { s1, s2 } = pastSlots();
    const now = s2 + 10_000;
    const engine = world.engine([dcaEvery10s(LAST)]);
    // node-cron fired the slot due at the wake, whose order is on its way, and reported the two before it missed.
    world.sandbox.faults.inject({ path: '/api/v4/order/stock_market', kind: 'latency', latencyMs: 500, times: 1 });
    const fired = engine.runScheduledSlot(INSTANCE, now);
    await engine.catchUpMissed(INSTANCE, [s1, s2], now + 250);
    await fired;
    expect((await slotsJournalled()).sort()).toEqual([`${s1}:missed`, `${s2}:missed`, `${now}:done`]);
    expect(world.sandbox.exchange.orderHistory({})).toHaveLength(1);
    // Without a later slot, the newest missed one runs late (CATCH_UP=last).
    await engine.catchUpMissed(INSTANCE, [now + 10_000, now + 20_000], now + 20_250);
    expect(world.sandbox.exchange.orderHistory({})).toHaveLength(2);
  });

  it('is waited for by idle() while its late slot is in flight: a stop closes the journal only after the slot\'s answer is journalled', async () => {
    const { s2 } = pastSlots();
    const engine = world.engine([dcaEvery10s(LAST)]);
    world.sandbox.faults.inject({ path: '/api/v4/order/stock_market', kind: 'latency', latencyMs: 400, times: 1 });
    // Started as the daemon starts it, not awaited; then the stop waits for the engine's background work.
    void engine.catchUpMissed(INSTANCE, [s2], s2 + 2_000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await engine.idle();
    expect(await slotsJournalled()).toEqual([`${s2}:done`]);
    expect((await world.journal.listIntents({ instance: INSTANCE }))[0]?.status).toBe('done');
  });

  it('tells how each slot it runs late ended, at start and after a pause, as the scheduler tells of the slots it fires: /healthz and the metrics count them', async () => {
    const { s1, s2 } = pastSlots();
    const ended: string[] = [];
    const engine = world.engine([dcaEvery10s(LAST)], { onLateSlotEnded: (instance, slotTimeMs, outcome) => void ended.push(`${instance}@${slotTimeMs}:${outcome}`) });
    await world.journal.markScheduled(INSTANCE, s1 - 5_000);
    await engine.catchUp(s1 + 3_000);
    await engine.catchUpMissed(INSTANCE, [s2], s2 + 2_000);
    expect(ended).toEqual([`${INSTANCE}@${s1}:done`, `${INSTANCE}@${s2}:done`]);
    // A slot the journal already holds is not run again, and not told as ended again.
    await engine.catchUpMissed(INSTANCE, [s2], s2 + 3_000);
    expect(ended).toHaveLength(2);
  });

  it('runs late, as any missed slot, one that fell after the journal was found behind: what the journal lost cannot have bought it', async () => {
    const { s1, s2 } = pastSlots();
    const engine = world.engine([dcaEvery10s(LAST)], { ledger: {} });
    placeAt(s1);
    expect((await engine.checkLedger())?.adopted).toHaveLength(1);
    // Found behind at s1 + 1 s (a start then); s2 fell while that start was stopped again.
    await engine.catchUp(s2 + 3_000, s2 + 3_000, { journalBehind: { reason: 'an older copy of the journal was put back', sinceMs: s1 + 1_000 } });
    expect(world.logs.filter((line) => line.fields.event === 'catch-up-withheld')).toEqual([]);
    expect((await slotsJournalled()).sort()).toEqual([`${s1}:done`, `${s2}:done`]);
    expect(world.sandbox.exchange.orderHistory({})).toHaveLength(2);
  });
});


describe('catch-up after SCHEDULE changed', () => {
  it('runs no missed slot late while the last journalled slot is none of the current schedule: journals it missed and says why; once a slot of the new schedule is journalled, it catches up as before', async () => {
    const { s1 } = pastSlots();
    // Bought at s1 on "every 10 s from :00"; stopped, and moved 3 s later.
    await world.engine([dcaEvery10s(LAST)]).runSlot(INSTANCE, s1);
    const moved = { ...runtimeOf({ instance: INSTANCE, strategy: dca, schedule: '3,13,23,33,43,53 * * * * *', env: { STRATEGY: 'dca', SCHEDULE: '3,13,23,33,43,53 * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001' } }), catchUp: LAST };

    // Started again 8 s after s1: s1 + 3 s is "missed", but s1 bought for it under the old schedule.
    await world.engine([moved]).catchUp(s1 + 8_000);
    expect(world.sandbox.exchange.orderHistory({})).toHaveLength(1);
    expect(await slotsJournalled()).toEqual([`${s1 + 3_000}:missed`, `${s1}:done`]);
    const why = `SCHEDULE changed since the last slot (${new Date(s1).toISOString()} is not a slot of "3,13,23,33,43,53 * * * * *" in UTC, or it was run by hand): missed slots are not run late`;
    expect((await world.journal.getSlot({ instance: INSTANCE, slotTimeMs: s1 + 3_000 }))?.reason).toBe(why);
    expect(world.logs.filter((line) => line.fields.event === 'catch-up-schedule-changed').map((line) => [line.level, line.message])).toEqual([['warn', why]]);
    expect(world.logs.filter((line) => line.fields.event === 'catch-up')).toEqual([]);

    // The last slot is now one of the schedule: a slot missed after it runs late.
    await world.engine([moved]).catchUp(s1 + 15_000);
    expect(await slotsJournalled()).toEqual([`${s1 + 13_000}:done`, `${s1 + 3_000}:missed`, `${s1}:done`]);
    expect(world.sandbox.exchange.orderHistory({})).toHaveLength(2);
  });
});
