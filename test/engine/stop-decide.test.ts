import { describe, expect, it } from 'vitest';
import { Decimal } from '../../src/domain/money.ts';
import { Engine, type ScheduledRuntime } from '../../src/engine/engine.ts';
import { defineStrategy, intent, param } from '../../strategies/sdk.ts';
import { TEST_TIMING, eachEngineWorld, runtimeOf } from './harness.ts';

// A stop (SIGTERM) does not wait for a strategy that has not answered: nothing is claimed or sent
// for a slot before its decide answers, so the slot is left unjournalled, as one whose snapshot
// waited to be tried again, and the next start decides it by CATCH_UP. A stop used to wait out
// the decide's time limit, 30 s, longer than Docker's default stop timeout.
const current = eachEngineWorld();

let hanging = true;
let decided = 0;
/** Buys 0.001 of MARKET; while `hanging`, its decide never answers. */
const slowToAnswer = defineStrategy({
  name: 'slow-to-answer',
  describe: 'Buys once it answers.',
  params: { MARKET: param.market({ description: 'Where to buy.', example: 'BTC_USDT' }) },
  budgetAsset: () => 'USDT',
  reads: () => ['markets', 'prices'],
  decide: (_view, params) => {
    decided += 1;
    return hanging ? new Promise<never>(() => {}) : Promise.resolve([intent.buy(params.MARKET, new Decimal('0.001'))]);
  },
});

describe('a stop while a strategy has not answered', () => {
  it('ends the slot at once, unjournalled and nothing sent; the next start catches it up once', async () => {
    hanging = true;
    decided = 0;
    const slot = Math.floor(Date.now() / 1000) * 1000;
    const base = runtimeOf({ instance: 'slow', strategy: slowToAnswer, env: { MARKET: 'BTC_USDT' }, schedule: '0 0 1 1 *' });
    const instance: ScheduledRuntime = { ...base, catchUp: { policy: 'last', windowMs: 3_600_000 }, schedule: { ...base.schedule, next: (after: number) => (after < slot ? slot : slot + 86_400_000) } };
    const stop = new AbortController();
    // The decide time limit the daemon runs with: what a stop used to wait out.
    const engine = new Engine({ ...current().deps(), timing: { ...TEST_TIMING, decideTimeLimitMs: 30_000 } }, [instance], { runId: null, stop: stop.signal });
    await engine.catchUp(slot - 1000);

    const running = engine.runScheduledSlot('slow', slot);
    await expect.poll(() => decided).toBe(1);
    const stoppedAt = Date.now();
    stop.abort();
    expect(await running).toBe('stopped');
    expect(Date.now() - stoppedAt).toBeLessThan(200);
    expect(engine.isRunning('slow')).toBe(false);
    expect(engine.isEnabled('slow')).toBe(true);
    expect(await current().journal.listSlots({ instance: 'slow' })).toEqual([]);
    expect(current().sandbox.exchange.orderHistory({})).toEqual([]);
    expect(current().logs.filter((line) => line.fields['event'] === 'slot-stopped').map((line) => line.fields['instance'])).toEqual(['slow']);

    // The next start: the strategy answers now, and CATCH_UP=last runs the slot once.
    hanging = false;
    await current().engine([instance]).catchUp(Date.now());
    expect(await current().journal.getSlot({ instance: 'slow', slotTimeMs: slot })).toMatchObject({ status: 'done' });
    expect(current().sandbox.exchange.orderHistory({})).toHaveLength(1);
  });

  it('still lets a strategy that answers at once send its slot, the stop already given', async () => {
    hanging = false;
    const stop = new AbortController();
    stop.abort();
    const engine = current().engine([runtimeOf({ instance: 'quick', strategy: slowToAnswer, env: { MARKET: 'BTC_USDT' } })], { stop: stop.signal });
    expect(await engine.runScheduledSlot('quick', Math.floor(Date.now() / 1000) * 1000)).toBe('done');
    expect(current().sandbox.exchange.orderHistory({})).toHaveLength(1);
  });
});
