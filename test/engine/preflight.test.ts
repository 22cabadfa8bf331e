import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { preflight } from '../../src/engine/preflight.ts';
import { defineStrategy, intent, param } from '../../strategies/sdk.ts';
import { type EngineWorld, engineWorld, runtimeOf } from './harness.ts';

// The view a strategy decides on, against the real sandbox: in a slot and in `stacker check`'s
// pre-flight, where the instances decide side by side, so a strategy that hangs is waited out
// for its time limit once, not once per instance.

let world: EngineWorld;
beforeEach(async () => {
  world = await engineWorld();
});
afterEach(async () => {
  await world.close();
});

describe('the pre-flight of several instances', () => {
  it('asks their strategies side by side: each has started before either answers', async () => {
    let started = 0;
    let release: () => void = () => undefined;
    const bothStarted = new Promise<void>((resolve) => (release = resolve));
    const waiting = defineStrategy({
      name: 'waiting',
      describe: 'Answers once the other instance has started too, or says it was alone.',
      params: { MARKET: param.market({ description: 'Unused.', example: 'BTC_USDT' }) },
      reads: () => ['markets'],
      async decide() {
        started += 1;
        if (started === 2) release();
        const together = await Promise.race([bothStarted.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 2_000))]);
        return [intent.refuse(together ? 'side-by-side' : 'alone', together ? 'both instances were deciding at once' : 'the other instance had not started')];
      },
    });
    const instances = ['first', 'second'].map((name) => ({ ...runtimeOf({ instance: name, strategy: waiting, env: { MARKET: 'BTC_USDT' } }), enabled: true }));
    const results = await preflight({ mode: 'live', instances }, world.deps().exchange, Date.now());
    expect(results.map((result) => [result.instance, result.intents.map((i) => i.reason)])).toEqual([
      ['first', ['side-by-side']],
      ['second', ['side-by-side']],
    ]);
  });
});

describe('the view of a slot', () => {
  it("names the instance, the slot's time and the instance's TIMEZONE, in a slot and in the pre-flight alike", async () => {
    const telling = defineStrategy({
      name: 'telling',
      describe: 'Notes what its view says of the slot.',
      params: {},
      reads: () => [],
      async decide(view) {
        return [intent.refuse('told', `${view.instance} ${new Date(view.slotTimeMs).toISOString()} ${view.timezone}`)];
      },
    });
    const instance = { ...runtimeOf({ instance: 'berlin', strategy: telling, env: {} }), timezone: 'Europe/Berlin' };
    const slot = Date.UTC(2026, 10, 27, 8);
    expect(await world.engine([instance]).runSlot('berlin', slot)).toBe('done');
    const [journalled] = await world.journal.listIntents({ instance: 'berlin' });
    expect(journalled?.intent).toMatchObject({ kind: 'refusal', message: 'berlin 2026-11-27T08:00:00.000Z Europe/Berlin' });
    const [checked] = await preflight({ mode: 'live', instances: [{ ...instance, enabled: true }] }, world.deps().exchange, slot);
    expect(checked?.intents).toEqual([expect.objectContaining({ summary: 'berlin 2026-11-27T08:00:00.000Z Europe/Berlin' })]);
  });
});
