import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Engine, ScheduledRuntime } from '../../src/engine/engine.ts';
import type { CatchUpPolicy } from '../../src/engine/schedule/catch-up.ts';
import { nextAttemptAt } from '../../src/engine/slot-retry.ts';
import { dca } from '../../strategies/dca.ts';
import { type EngineWorld, engineWorld, runtimeOf } from './harness.ts';

// A scheduled slot whose snapshot fails for now (the exchange in maintenance at the slot's
// time), against the real sandbox and a real journal. TEST_TIMING's backoff: 50 ms doubling to 200 ms.
const BALANCE_PATH = '/api/v4/trade-account/balance';
const MAINTENANCE = { path: BALANCE_PATH, kind: 'status', status: 503, body: '<html>maintenance</html>' } as const;

let world: EngineWorld;
beforeEach(async () => {
  world = await engineWorld();
});
afterEach(async () => {
  await world.close();
});

function dcaAt(schedule: string, catchUp: CatchUpPolicy): ScheduledRuntime {
  return { ...runtimeOf({ instance: 'dca-btc', strategy: dca, schedule, env: { STRATEGY: 'dca', SCHEDULE: schedule, MARKET: 'BTC_USDT', AMOUNT: '0.001' } }), catchUp };
}

/** The current second: the slot the scheduler would have just fired. */
const nowSlot = (): number => Math.floor(Date.now() / 1000) * 1000;
const YEARLY = '0 0 1 1 *';
const retries = (): Record<string, unknown>[] => world.logs.filter((line) => line.fields.event === 'slot-retry').map((line) => line.fields);

describe('a scheduled slot whose snapshot fails for now', () => {
  it('is tried again after a short maintenance and buys once, journalled done', async () => {
    // The client itself tries each read twice: four 503s fail the first two attempts.
    world.sandbox.faults.inject({ ...MAINTENANCE, times: 4 });
    const engine = world.engine([dcaAt(YEARLY, { policy: 'last', windowMs: 60_000 })]);
    const slot = nowSlot();

    expect(await engine.runScheduledSlot('dca-btc', slot)).toBe('done');
    expect(await world.journal.getSlot({ instance: 'dca-btc', slotTimeMs: slot })).toMatchObject({ status: 'done' });
    expect(world.sandbox.exchange.orderHistory({})).toHaveLength(1);
    expect(await world.journal.listIntents({ instance: 'dca-btc' })).toHaveLength(1);
    expect(retries()).toEqual([
      expect.objectContaining({ attempt: 1, code: 'E_UNAVAILABLE', nextTry: expect.any(String) }),
      expect.objectContaining({ attempt: 2, code: 'E_UNAVAILABLE', nextTry: expect.any(String) }),
    ]);
    // The slot is in the journal: the scheduler firing it again (or catch-up) sends nothing more.
    expect(await engine.runScheduledSlot('dca-btc', slot)).toBe('already');
    expect(world.sandbox.exchange.orderHistory({})).toHaveLength(1);
  });

  it('is shown as retrying (slot, attempts, next try, the failure) while it waits, and no longer once it ran', async () => {
    world.sandbox.faults.inject({ ...MAINTENANCE, times: 4 });
    const engine = world.engine([dcaAt(YEARLY, { policy: 'last', windowMs: 60_000 })]);
    const slot = nowSlot();
    expect(engine.retryingSlot('dca-btc')).toBeNull();

    const ran = engine.runScheduledSlot('dca-btc', slot);
    const seen: NonNullable<ReturnType<Engine['retryingSlot']>>[] = [];
    let outcome: string | null = null;
    void ran.then((result) => (outcome = result));
    while (outcome === null) {
      const state = engine.retryingSlot('dca-btc');
      if (state !== null && seen.at(-1)?.attempts !== state.attempts) seen.push(state);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }

    expect(outcome).toBe('done');
    expect(seen).toEqual([
      { instance: 'dca-btc', slotTimeMs: slot, attempts: 1, nextTryMs: expect.any(Number), code: 'E_UNAVAILABLE', error: expect.stringContaining('503') },
      { instance: 'dca-btc', slotTimeMs: slot, attempts: 2, nextTryMs: expect.any(Number), code: 'E_UNAVAILABLE', error: expect.stringContaining('503') },
    ]);
    expect((seen[1] as { nextTryMs: number }).nextTryMs).toBeGreaterThan((seen[0] as { nextTryMs: number }).nextTryMs);
    expect(engine.retryingSlot('dca-btc')).toBeNull();
    expect(engine.retryingSlot('another')).toBeNull();
  });

  it('is journalled skipped with its attempts once the outage outlasts the window, nothing sent', async () => {
    world.sandbox.faults.inject({ ...MAINTENANCE, times: Number.POSITIVE_INFINITY });
    const engine = world.engine([dcaAt(YEARLY, { policy: 'last', windowMs: 2_000 })]);
    const slot = nowSlot();
    const started = Date.now();

    expect(await engine.runScheduledSlot('dca-btc', slot)).toBe('skipped');
    expect(Date.now() - started).toBeLessThan(4_000);
    const journalled = await world.journal.getSlot({ instance: 'dca-btc', slotTimeMs: slot });
    const attempts = retries().length + 1;
    expect(attempts).toBeGreaterThan(2);
    expect(journalled).toMatchObject({ status: 'skipped' });
    expect(journalled?.reason).toMatch(new RegExp(`^snapshot failed \\(E_UNAVAILABLE\\): .* \\(${attempts} attempts\\)$`));
    expect(await world.journal.listIntents({ instance: 'dca-btc' })).toEqual([]);
    expect(world.sandbox.exchange.orderHistory({})).toHaveLength(0);
    expect(engine.isRunning('dca-btc')).toBe(false);
  });

  it('gives way to the instance next slot even inside the window', async () => {
    world.sandbox.faults.inject({ ...MAINTENANCE, times: Number.POSITIVE_INFINITY });
    const everyTwoSeconds = '*/2 * * * * *';
    const engine = world.engine([dcaAt(everyTwoSeconds, { policy: 'last', windowMs: 3_600_000 })]);
    const slot = Math.floor(Date.now() / 2000) * 2000;

    expect(await engine.runScheduledSlot('dca-btc', slot)).toBe('skipped');
    // The last attempt started at least one first delay (50 ms) before the next slot.
    expect(Date.now()).toBeLessThan(slot + 2_000 + 1_000);
    for (const retry of retries()) expect(Date.parse(String(retry.nextTry))).toBeLessThanOrEqual(slot + 2_000 - 50);
    expect(await world.journal.getSlot({ instance: 'dca-btc', slotTimeMs: slot })).toMatchObject({ status: 'skipped' });
    expect(world.sandbox.exchange.orderHistory({})).toHaveLength(0);
  });

  it('is not tried again when the failure is not transient (the exchange refused the read)', async () => {
    world.sandbox.faults.inject({ path: BALANCE_PATH, kind: 'status', status: 422, body: { code: 32, message: 'Validation failed', errors: { ticker: ['invalid'] } }, times: 1 });
    const engine = world.engine([dcaAt(YEARLY, { policy: 'last', windowMs: 60_000 })]);
    const slot = nowSlot();

    expect(await engine.runScheduledSlot('dca-btc', slot)).toBe('skipped');
    expect(retries()).toEqual([]);
    expect((await world.journal.getSlot({ instance: 'dca-btc', slotTimeMs: slot }))?.reason).toMatch(/^snapshot failed \(E_EXCHANGE_VALIDATION\): .* \(1 attempt\)$/);
    expect(world.sandbox.exchange.orderHistory({})).toHaveLength(0);
  });

  it('gives up at once when stopped during a backoff, leaves the slot unjournalled, and the next start catches it up once', async () => {
    world.sandbox.faults.inject({ ...MAINTENANCE, times: Number.POSITIVE_INFINITY });
    const stop = new AbortController();
    const instance = dcaAt(YEARLY, { policy: 'last', windowMs: 3_600_000 });
    const engine = world.engine([instance], { stop: stop.signal });
    const slot = nowSlot();
    // Journalled before: what catch-up counts missed slots from.
    await world.journal.skipSlot({ instance: 'dca-btc', slotTimeMs: slot - 1000, runId: null, status: 'skipped', reason: 'earlier' });

    const running = engine.runScheduledSlot('dca-btc', slot);
    while (retries().length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(engine.isRunning('dca-btc')).toBe(true);
    const stoppedAt = Date.now();
    stop.abort();
    expect(await running).toBe('stopped');
    expect(Date.now() - stoppedAt).toBeLessThan(100);
    expect(engine.isRunning('dca-btc')).toBe(false);
    expect(await world.journal.getSlot({ instance: 'dca-btc', slotTimeMs: slot })).toBeNull();
    expect(world.sandbox.exchange.orderHistory({})).toHaveLength(0);

    // The next start, the exchange back: catch-up (CATCH_UP=last, within the window) runs it once.
    world.sandbox.faults.clear();
    // A schedule whose slots are the one journalled before, this one, and a day later.
    const schedule = { ...instance.schedule, next: (after: number) => (after < slot ? slot : slot + 86_400_000), matches: (at: number) => [slot - 1000, slot, slot + 86_400_000].includes(at) };
    const restarted = world.engine([{ ...instance, schedule }]);
    await restarted.catchUp(Date.now());
    expect(await world.journal.getSlot({ instance: 'dca-btc', slotTimeMs: slot })).toMatchObject({ status: 'done' });
    expect(world.sandbox.exchange.orderHistory({})).toHaveLength(1);
  });

  it("catches up a new instance's first slot that a stop during the backoff left unjournalled", async () => {
    world.sandbox.faults.inject({ ...MAINTENANCE, times: Number.POSITIVE_INFINITY });
    const stop = new AbortController();
    const slot = nowSlot();
    const instance = dcaAt(YEARLY, { policy: 'last', windowMs: 3_600_000 });
    // The schedule's one slot is this one: nothing journalled before it, the instance is new.
    const timed = { ...instance, schedule: { ...instance.schedule, next: (after: number) => (after < slot ? slot : slot + 86_400_000) } };
    const engine = world.engine([timed], { stop: stop.signal });
    // The daemon's start before the slot: nothing to catch up, the instance anchored.
    await engine.catchUp(slot - 1000);

    const running = engine.runScheduledSlot('dca-btc', slot);
    while (retries().length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    stop.abort();
    expect(await running).toBe('stopped');
    expect(await world.journal.listSlots({ instance: 'dca-btc' })).toEqual([]);

    world.sandbox.faults.clear();
    await world.engine([timed]).catchUp(Date.now());
    expect(await world.journal.getSlot({ instance: 'dca-btc', slotTimeMs: slot })).toMatchObject({ status: 'done' });
    expect(world.sandbox.exchange.orderHistory({})).toHaveLength(1);
  });

  /**
   * The exchange answers each read late (and 503), and the stop arrives while the first attempt
   * still waits for it: how the slot ended, with the engine and the slot's time.
   */
  async function stopDuringFirstAttempt(windowMs: number): Promise<{ outcome: string; engine: Engine; slot: number }> {
    world.sandbox.faults.inject({ ...MAINTENANCE, times: Number.POSITIVE_INFINITY });
    world.sandbox.faults.inject({ path: BALANCE_PATH, kind: 'latency', latencyMs: 300, times: Number.POSITIVE_INFINITY });
    const stop = new AbortController();
    const engine = world.engine([dcaAt(YEARLY, { policy: 'last', windowMs })], { stop: stop.signal });
    const slot = nowSlot();
    const running = engine.runScheduledSlot('dca-btc', slot);
    await new Promise((resolve) => setTimeout(resolve, 100));
    stop.abort();
    return { outcome: await running, engine, slot };
  }

  it('leaves the slot unjournalled, for the next start, when the stop comes while an attempt is under way', async () => {
    const { outcome, engine, slot } = await stopDuringFirstAttempt(3_600_000);
    expect(outcome).toBe('stopped');
    // Not journalled skipped: the slot would have been tried again, so the next start decides it by CATCH_UP.
    expect(await world.journal.getSlot({ instance: 'dca-btc', slotTimeMs: slot })).toBeNull();
    expect(retries()).toEqual([]);
    expect(world.logs.filter((line) => line.fields.event === 'slot-retry-abandoned')).toHaveLength(1);
    expect(engine.isRunning('dca-btc')).toBe(false);
    expect(world.sandbox.exchange.orderHistory({})).toHaveLength(0);
  });

  it('is journalled skipped when the stop comes during its last attempt (it would not have been tried again)', async () => {
    // A window shorter than the first delay: the first attempt is the last.
    const { outcome, slot } = await stopDuringFirstAttempt(10);
    expect(outcome).toBe('skipped');
    expect(await world.journal.getSlot({ instance: 'dca-btc', slotTimeMs: slot })).toMatchObject({ status: 'skipped' });
  });

  it('is journalled paused, not tried again, when the instance is paused meanwhile', async () => {
    world.sandbox.faults.inject({ ...MAINTENANCE, times: Number.POSITIVE_INFINITY });
    const paused = new Set<string>();
    const engine = world.engine([dcaAt(YEARLY, { policy: 'last', windowMs: 60_000 })], { paused: (name) => paused.has(name) });
    const slot = nowSlot();
    const running = engine.runScheduledSlot('dca-btc', slot);
    while (retries().length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    paused.add('dca-btc');
    expect(await running).toBe('skipped');
    expect(await world.journal.getSlot({ instance: 'dca-btc', slotTimeMs: slot })).toMatchObject({ status: 'skipped', reason: 'paused' });
    expect(world.sandbox.exchange.orderHistory({})).toHaveLength(0);
  });

  it('tries once from runSlot (catch-up, run --once, the API run now): their caller waits for the answer', async () => {
    world.sandbox.faults.inject({ ...MAINTENANCE, times: Number.POSITIVE_INFINITY });
    const engine = world.engine([dcaAt(YEARLY, { policy: 'last', windowMs: 60_000 })]);
    const slot = nowSlot();
    expect(await engine.runSlot('dca-btc', slot)).toBe('skipped');
    expect(retries()).toEqual([]);
    expect((await world.journal.getSlot({ instance: 'dca-btc', slotTimeMs: slot }))?.reason).toMatch(/^snapshot failed \(E_UNAVAILABLE\): [^(]*$/);
  });
});

describe('nextAttemptAt', () => {
  const timing = { firstDelayMs: 30_000, maxDelayMs: 240_000 };
  const base = { slotTimeMs: 0, nextSlotMs: 86_400_000, windowMs: 3_600_000, timing };
  it('backs off 30 s, 1 min, 2 min, 4 min, then every 4 min', () => {
    expect([1, 2, 3, 4, 5, 6].map((failed) => nextAttemptAt({ ...base, failed, nowMs: 0 }))).toEqual([30_000, 60_000, 120_000, 240_000, 240_000, 240_000]);
  });
  it('gives up past the window, and one first delay before the next slot', () => {
    expect(nextAttemptAt({ ...base, failed: 4, nowMs: 3_400_000 })).toBeNull();
    expect(nextAttemptAt({ ...base, nextSlotMs: 90_000, failed: 2, nowMs: 0 })).toBe(60_000);
    expect(nextAttemptAt({ ...base, nextSlotMs: 89_999, failed: 2, nowMs: 0 })).toBeNull();
  });
});
