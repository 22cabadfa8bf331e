import { describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/engine.ts';
import { StoreError } from '../../src/store/errors.ts';
import type { Journal } from '../../src/store/journal.ts';
import { dca } from '../../strategies/dca.ts';
import { dcaBtc, eachEngineWorld, runtimeOf } from './harness.ts';

const world = eachEngineWorld();

/** The world's journal, whose slot claims fail as a full disk fails them, naming the slot as the journals do, with what `why()` says. */
function fullJournal(journal: Journal, why: () => string): Journal {
  return new Proxy(journal, {
    get(target, key, receiver) {
      if (key === 'claimSlot') {
        return async (claim: { instance: string; slotTimeMs: number }) => Promise.reject(new StoreError('unwritable', `claiming slot ${claim.instance}@${claim.slotTimeMs}: the journal cannot be written: ${why()}`, { retryable: true }));
      }
      const value = Reflect.get(target, key, receiver) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe('engine errors during a journal outage', () => {
  it('are logged at most once a minute per instance and error, each line saying how many came since; the first, another instance and another error at once', async () => {
    const w = world();
    let why = 'database or disk is full';
    const other = runtimeOf({ instance: 'dca-two', strategy: dca, env: { STRATEGY: 'dca', SCHEDULE: '* * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001' } });
    const engine = new Engine({ ...w.deps(), journal: fullJournal(w.journal, () => why) }, [dcaBtc(), other], { runId: null });
    const errors = (): Array<Record<string, unknown>> => w.logs.filter((line) => line.fields['event'] === 'engine-error').map((line) => ({ ...line.fields, message: line.message }));
    const start = Math.floor(Date.now() / 1000) * 1000;

    for (let slot = 0; slot < 5; slot += 1) await engine.runSlot('dca-btc', start + slot * 1000);
    expect(errors()).toEqual([
      { event: 'engine-error', instance: 'dca-btc', code: 'E_STORE', error: `claiming slot dca-btc@${start}: the journal cannot be written: ${why}`, count: 1, message: `engine error (dca-btc): claiming slot dca-btc@${start}: the journal cannot be written: ${why}` },
    ]);

    await engine.runSlot('dca-two', start);
    why = 'disk I/O error';
    await engine.runSlot('dca-btc', start + 5000);
    expect(errors().map((line) => [line['instance'], line['error'], line['count']])).toEqual([
      ['dca-btc', `claiming slot dca-btc@${start}: the journal cannot be written: database or disk is full`, 1],
      ['dca-two', `claiming slot dca-two@${start}: the journal cannot be written: database or disk is full`, 1],
      ['dca-btc', `claiming slot dca-btc@${start + 5000}: the journal cannot be written: disk I/O error`, 1],
    ]);

    why = 'database or disk is full';
    w.advance(60_000);
    await engine.runSlot('dca-btc', start + 61_000);
    expect(errors().at(-1)).toMatchObject({
      instance: 'dca-btc',
      count: 5,
      message: `engine error (dca-btc): claiming slot dca-btc@${start + 61_000}: the journal cannot be written: database or disk is full; 5 such errors since the last such line (one a minute at most)`,
    });
    expect(errors()).toHaveLength(4);
    expect(w.sandbox.exchange.orderHistory({})).toHaveLength(0);
  });
});
