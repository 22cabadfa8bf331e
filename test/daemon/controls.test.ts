import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OperatorControls, type OperatorControlsOptions } from '../../src/daemon/controls.ts';
import { Engine } from '../../src/engine/engine.ts';
import { StoreError } from '../../src/store/errors.ts';
import { silentLogger } from '../../src/engine/observer.ts';
import { type HealthServer, startHealthServer } from '../../src/observability/health-server.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { type EngineWorld, dcaBtc, engineWorld } from '../engine/harness.ts';

// The daemon's side of the controls, on a real engine against the real sandbox and a real journal.
let world: EngineWorld;
beforeEach(async () => {
  world = await engineWorld();
});
afterEach(async () => {
  await world.close();
});

const NOW = Date.UTC(2026, 10, 22, 9, 0, 0, 400);

async function controls(overrides: Partial<OperatorControlsOptions> = {}): Promise<{ controls: OperatorControls; engine: Engine }> {
  let loaded: OperatorControls | null = null;
  const engine = world.engine([dcaBtc()], { paused: (instance) => loaded?.isPaused(instance) ?? false });
  loaded = await OperatorControls.load({
    journal: world.journal,
    instances: [
      { instance: 'dca-btc', enabled: true },
      { instance: 'off', enabled: false },
    ],
    accounts: ['default'],
    engine: () => engine,
    stopping: () => false,
    nowMs: () => NOW,
    logger: silentLogger,
    ...overrides,
  });
  return { controls: loaded, engine };
}

describe('operator controls', () => {
  it('runs a slot now at the current whole second, journalled, and refuses a second run while the first is running', async () => {
    const slots: string[] = [];
    const { controls: c } = await controls({ onSlot: (instance, slotTimeMs, outcome) => void slots.push(`${instance}@${slotTimeMs}:${outcome}`) });
    const first = c.act({ kind: 'run', instance: 'dca-btc' });
    expect(await c.act({ kind: 'run', instance: 'dca-btc' })).toMatchObject({ outcome: 'conflict', message: expect.stringContaining('running') });
    expect(await first).toEqual({ outcome: 'ok', body: { instance: 'dca-btc', slotTime: '2026-11-22T09:00:00.000Z', outcome: 'done', notDone: [] } });
    expect(slots).toEqual([`dca-btc@${NOW - 400}:done`]);
    expect(await world.journal.getSlot({ instance: 'dca-btc', slotTimeMs: NOW - 400 })).toMatchObject({ status: 'done' });
    expect(world.sandbox.exchange.orderHistory({})).toHaveLength(1);
    // The same second again is the same slot: the journal has it, nothing is sent twice, and the
    // daemon's last slot (what /healthz shows) stays the one that ran.
    expect(await c.act({ kind: 'run', instance: 'dca-btc' })).toMatchObject({ outcome: 'ok', body: { outcome: 'already', reason: expect.stringContaining('nothing was sent again') } });
    expect(world.sandbox.exchange.orderHistory({})).toHaveLength(1);
    expect(slots).toEqual([`dca-btc@${NOW - 400}:done`]);
  });

  it("says why a slot asked for did not run when the journal cannot be written: nothing is journalled to say it", async () => {
    const full = 'database or disk is full';
    const unwritable = new Proxy(world.journal, {
      get(target, key, receiver) {
        if (key === 'claimSlot') return async () => Promise.reject(new StoreError('unwritable', `claiming the slot: the journal cannot be written: ${full}`, { retryable: true }));
        if (key === 'writeFailure') return () => ({ atMs: NOW, message: full });
        const value = Reflect.get(target, key, receiver) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const engine = new Engine({ ...world.deps(), journal: unwritable }, [dcaBtc()], { runId: null });
    const { controls: c } = await controls({ journal: unwritable, engine: () => engine });
    expect(await c.act({ kind: 'run', instance: 'dca-btc' })).toMatchObject({ outcome: 'ok', body: { outcome: 'failed', reason: `the journal cannot be written (${full}): nothing was sent` } });
    expect(world.sandbox.exchange.orderHistory({})).toHaveLength(0);
  });

  it('says why a slot asked for did not run: trading stopped (nothing journalled says so), or what the journal says', async () => {
    const refusedKey = world.engine([dcaBtc()], { credentials: { apiKey: world.sandbox.apiKey, apiSecret: 'not-the-secret' } });
    const { controls: c } = await controls({ engine: () => refusedKey });
    const first = await c.act({ kind: 'run', instance: 'dca-btc' });
    expect(first).toMatchObject({ outcome: 'ok', body: { outcome: 'failed' } });
    const second = await c.act({ kind: 'run', instance: 'dca-btc' });
    expect(second).toMatchObject({ outcome: 'ok', body: { outcome: 'skipped', reason: expect.stringMatching(/^trading stopped: .*401/) } });
    expect(JSON.stringify([first, second])).not.toContain('not-the-secret');
    expect(world.sandbox.exchange.orderHistory({})).toHaveLength(0);
  });

  it('waits for a slot asked for before the daemon closes the journal', async () => {
    const told: string[] = [];
    const { controls: c } = await controls({ onSlot: (_instance, _slotTimeMs, outcome) => void told.push(outcome) });
    const asked = c.act({ kind: 'run', instance: 'dca-btc' });
    await c.idle();
    expect(told).toEqual(['done']);
    expect(await world.journal.getSlot({ instance: 'dca-btc', slotTimeMs: NOW - 400 })).toMatchObject({ status: 'done' });
    await asked;
  });

  it('refuses a run for an unknown, disabled or paused instance, while starting and while stopping', async () => {
    const { controls: c } = await controls();
    expect(await c.act({ kind: 'run', instance: 'nope' })).toMatchObject({ outcome: 'unknown-instance', message: expect.stringContaining('dca-btc, off') });
    expect(await c.act({ kind: 'run', instance: 'off' })).toMatchObject({ outcome: 'conflict', message: expect.stringContaining('ENABLED=false') });
    await c.act({ kind: 'pause', instance: 'dca-btc' });
    expect(await c.act({ kind: 'run', instance: 'dca-btc' })).toMatchObject({ outcome: 'conflict', message: expect.stringContaining('paused') });
    const { controls: starting } = await controls({ engine: () => null });
    expect(await starting.act({ kind: 'run', instance: 'dca-btc' })).toMatchObject({ outcome: 'unavailable' });
    const { controls: stopping } = await controls({ stopping: () => true });
    expect(await stopping.act({ kind: 'run', instance: 'dca-btc' })).toMatchObject({ outcome: 'unavailable' });
    expect(world.sandbox.exchange.orderHistory({})).toHaveLength(0);
  });

  it('journals a pause and the kill switch before they take effect, so a new load (a restart) sees them', async () => {
    const { controls: c, engine } = await controls();
    expect(await c.act({ kind: 'pause', instance: 'off' })).toMatchObject({ outcome: 'ok', body: { instance: 'off', paused: true } });
    expect(await c.act({ kind: 'kill-switch', on: true })).toMatchObject({ outcome: 'ok', body: { killSwitch: { on: true } } });
    expect(c.killSwitch.active()).toMatch(/^the kill switch was turned on from the status API at /);
    // It outlives the daemon: a slot it refuses (run --once) says where it is turned off.
    expect(c.killSwitch.active()).toMatch(/; turn it off on the status page or with POST \/api\/kill-switch \{"on": false\} \(STACKER_CONTROL_TOKEN\) while the daemon runs$/);
    const { controls: again } = await controls();
    expect(again.isPaused('off')).toBe(true);
    expect(again.isPaused('dca-btc')).toBe(false);
    expect(again.killSwitch.active()).not.toBeNull();
    await again.act({ kind: 'kill-switch', on: false });
    expect(again.killSwitch.active()).toBeNull();
    expect(engine.isRunning('dca-btc')).toBe(false);
  });

  it('while the daemon stops, refuses pause, resume and turning a kill switch off (503, nothing journalled), and still turns a kill switch on', async () => {
    let stopping = false;
    const { controls: c } = await controls({ stopping: () => stopping });
    await c.act({ kind: 'pause', instance: 'off' });
    stopping = true;
    expect(await c.act({ kind: 'pause', instance: 'dca-btc' })).toEqual({ outcome: 'unavailable', message: 'stacker is stopping; pause is not taken while it stops (no new slot starts anyway): ask again once it has started' });
    expect(await c.act({ kind: 'resume', instance: 'off' })).toEqual({ outcome: 'unavailable', message: 'stacker is stopping; resume is not taken while it stops (no new slot starts anyway): ask again once it has started' });
    // Unknown names are still told apart from a daemon that is stopping.
    expect(await c.act({ kind: 'pause', instance: 'nope' })).toMatchObject({ outcome: 'unknown-instance' });
    expect(await c.act({ kind: 'kill-switch', on: true, account: 'nope' })).toMatchObject({ outcome: 'unknown-account' });

    // On: the slot still finishing may yet send, and the next start may catch a slot up; this stops both.
    expect(await c.act({ kind: 'kill-switch', on: true })).toMatchObject({ outcome: 'ok', body: { killSwitch: { on: true } } });
    expect(await c.act({ kind: 'kill-switch', on: true, account: 'default' })).toMatchObject({ outcome: 'ok', body: { account: 'default', killSwitch: { on: true } } });
    const offMessage = 'stacker is stopping; a kill switch is not turned off while it stops (turning one on is): turn it off once stacker has started again';
    expect(await c.act({ kind: 'kill-switch', on: false })).toEqual({ outcome: 'unavailable', message: offMessage });
    expect(await c.act({ kind: 'kill-switch', on: false, account: 'default' })).toEqual({ outcome: 'unavailable', message: offMessage });

    const journalled = await world.journal.operatorControls();
    expect([...journalled.paused.keys()]).toEqual(['off']);
    expect(journalled.killSwitchSinceMs).not.toBeNull();
    expect([...journalled.accountKillSwitches.keys()]).toEqual(['default']);

    // Over HTTP: 503 with the reason, as `run` is answered while stopping.
    let server: HealthServer | null = null;
    try {
      server = await startHealthServer({
        host: '127.0.0.1',
        port: 0,
        metrics: new Metrics({ mode: 'live' }),
        health: { status: () => ({ ok: true, mode: 'live', startedAtMs: 0, lastSlot: {}, stopping: true, problems: [] }) },
        controls: { token: { matches: (presented) => presented === 'controls-test-token-0123' }, controls: c },
      });
      const post = (path: string, body = '{}') => fetch(`${server?.url}${path}`, { method: 'POST', headers: { authorization: 'Bearer controls-test-token-0123' }, body });
      const paused = await post('/api/instances/dca-btc/pause');
      expect([paused.status, await paused.json()]).toEqual([503, { error: 'stacker is stopping; pause is not taken while it stops (no new slot starts anyway): ask again once it has started' }]);
      expect((await post('/api/instances/dca-btc/run')).status).toBe(503);
      expect((await post('/api/kill-switch', '{"on":false}')).status).toBe(503);
      expect((await post('/api/kill-switch', '{"on":true}')).status).toBe(200);
    } finally {
      await server?.stop();
    }
    expect(world.sandbox.exchange.orderHistory({})).toHaveLength(0);
  });
});
