import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PAUSED_REASON } from '../../src/engine/engine.ts';
import { type EngineWorld, dcaBtc, engineWorld } from './harness.ts';

// A paused instance (the status API's pause) against the real sandbox and a real journal.
const SLOT = Date.UTC(2026, 10, 22, 9, 0, 0);

let world: EngineWorld;
beforeEach(async () => {
  world = await engineWorld();
});
afterEach(async () => {
  await world.close();
});


describe('a paused instance', () => {
  it('journals its slot as skipped with reason "paused" and sends the exchange nothing', async () => {
    const paused = new Set(['dca-btc']);
    const engine = world.engine([dcaBtc()], { paused: (instance) => paused.has(instance) });
    expect(await engine.runSlot('dca-btc', SLOT)).toBe('skipped');
    expect(await world.journal.getSlot({ instance: 'dca-btc', slotTimeMs: SLOT })).toMatchObject({ status: 'skipped', reason: PAUSED_REASON });
    expect(await world.journal.listIntents({ instance: 'dca-btc' })).toEqual([]);
    expect(world.sandbox.exchange.orderHistory({})).toHaveLength(0);

    // Resumed: the next slot runs as usual; the skipped one stays skipped.
    paused.clear();
    expect(await engine.runSlot('dca-btc', SLOT)).toBe('already');
    expect(await engine.runSlot('dca-btc', SLOT + 86_400_000)).toBe('done');
    expect(world.sandbox.exchange.orderHistory({})).toHaveLength(1);
  });

  it('knows while a slot of an instance is running', async () => {
    const engine = world.engine([dcaBtc()]);
    expect(engine.isRunning('dca-btc')).toBe(false);
    const running = engine.runSlot('dca-btc', SLOT);
    expect(engine.isRunning('dca-btc')).toBe(true);
    expect(engine.isRunning('dca')).toBe(false);
    await running;
    expect(engine.isRunning('dca-btc')).toBe(false);
  });
});
