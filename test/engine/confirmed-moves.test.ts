import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/engine.ts';
import { StoreError } from '../../src/store/errors.ts';
import type { Journal } from '../../src/store/journal.ts';
import { DEMO_FLEX_PLAN_ID } from '../../src/sim/seed.ts';
import { flexSweep } from '../../strategies/flex-sweep.ts';
import { type EngineWorld, engineWorld, runtimeOf, transferThenBuy } from './harness.ts';

const SLOT = Date.UTC(2026, 10, 22, 9, 0, 0);

/** The real journal, refusing (a full disk) the record that a move is done while `full()` says so. */
function journalFullAtDone(journal: Journal, full: () => boolean): Journal {
  const refused = () => new StoreError('unwritable', 'the journal cannot be written: database or disk is full', { retryable: true });
  return new Proxy(journal, {
    get(target, property) {
      if (property === 'recordTransfer' || property === 'recordFlexOperation') {
        return async (record: { status: string }) => {
          if (full() && record.status === 'done') throw refused();
          return (target[property] as (record: unknown) => Promise<unknown>).call(target, record);
        };
      }
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe('a move the exchange confirmed whose journal record failed (a full disk at that moment)', () => {
  let world: EngineWorld;
  let full: boolean;
  beforeEach(async () => {
    world = await engineWorld();
    full = true;
  });
  afterEach(async () => {
    await world.close();
  });
  const engineOf = (instance: Parameters<typeof runtimeOf>[0]) => new Engine({ ...world.deps(), journal: journalFullAtDone(world.journal, () => full) }, [runtimeOf(instance)], { runId: null, onFatal: () => undefined });

  it('a transfer: is said at error, and journalled done once the journal takes writes again, not left unknown for a human', async () => {
    const engine = engineOf({ instance: 'tb', strategy: transferThenBuy, env: { MARKET: 'BTC_USDT' } });
    await engine.runSlot('tb', SLOT);
    const [transfer] = (await world.journal.listIntents({ instance: 'tb' })).filter((record) => record.intent.kind === 'transfer');
    expect(transfer?.status).toBe('sent');
    expect(world.logs.find((line) => line.fields['event'] === 'move-record-failed')?.message).toMatch(
      /^the exchange confirmed the transfer of 10 USDT from main to spot \(tb-\S+\), but journalling it failed: .*; it is journalled done as soon as the journal takes writes again/,
    );
    full = false;
    await engine.track();
    const after = (await world.journal.listIntents({ instance: 'tb' })).find((record) => record.intentId === transfer?.intentId);
    expect(after).toMatchObject({ status: 'done', result: { confirmedBy: 'answer' } });
    expect(world.notifications.map((event) => event.kind)).not.toContain('intent-unknown');
  });

  it('a flex withdrawal: never journalled failed (it happened), and journalled done with its transaction once the journal takes writes again', async () => {
    const engine = engineOf({ instance: 'sweep', strategy: flexSweep, env: { STRATEGY: 'flex-sweep', SCHEDULE: '0 9 * * *', PLAN: DEMO_FLEX_PLAN_ID, MODE: 'all' } });
    await engine.runSlot('sweep', SLOT);
    const [withdrawal] = await world.journal.listIntents({ instance: 'sweep' });
    expect(withdrawal?.status).toBe('sent');
    full = false;
    await engine.track();
    const [after] = await world.journal.listIntents({ instance: 'sweep' });
    expect(after).toMatchObject({ status: 'done', result: { plan: DEMO_FLEX_PLAN_ID, transactionId: expect.any(String) } });
  });
});

describe('a move whose own record fails before it is sent (a privilege taken on the transfers table)', () => {
  let world: EngineWorld;
  beforeEach(async () => {
    world = await engineWorld();
  });
  afterEach(async () => {
    await world.close();
  });

  it('is journalled failed, not sent, so nothing is left unknown for a person to resolve, and nothing moves', async () => {
    const refusing = new Proxy(world.journal, {
      get(target, property) {
        if (property === 'recordTransfer') {
          return async () => {
            throw new StoreError('no-privilege', 'recording transfer: permission denied for table transfers');
          };
        }
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const mainBefore = [...world.sandbox.exchange.mainBalances()].map(([ticker, amount]) => [ticker, amount.toString()]);
    const engine = new Engine({ ...world.deps(), journal: refusing as Journal }, [runtimeOf({ instance: 'tb', strategy: transferThenBuy, env: { MARKET: 'BTC_USDT' } })], { runId: null, onFatal: () => undefined });
    await engine.runSlot('tb', SLOT);
    const [transfer] = (await world.journal.listIntents({ instance: 'tb' })).filter((record) => record.intent.kind === 'transfer');
    expect(transfer).toMatchObject({ status: 'failed', sentAtMs: null });
    await engine.track();
    expect(world.notifications.map((event) => event.kind)).not.toContain('intent-unknown');
    expect([...world.sandbox.exchange.mainBalances()].map(([ticker, amount]) => [ticker, amount.toString()])).toEqual(mainBefore);
  });
});
