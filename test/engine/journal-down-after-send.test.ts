import { describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/engine.ts';
import type { Journal } from '../../src/store/journal.ts';
import { StoreError } from '../../src/store/errors.ts';
import { dcaBtc, eachEngineWorld } from './harness.ts';

const SLOT = Date.UTC(2026, 10, 22, 9, 0, 0);

const current = eachEngineWorld();

/** The real journal, which stops answering (a database stalled) from the moment it is asked to record the order. */
function journalDownAtRecord(journal: Journal): Journal {
  let down = false;
  const timedOut = (doing: string) => new StoreError('unwritable', `${doing}: the journal's database did not answer in time (Query read timeout): it may be stopped, overloaded or cut off`, { retryable: true });
  return new Proxy(journal, {
    get(target, property) {
      if (property === 'recordOrderSnapshot') {
        return async () => {
          down = true;
          throw timedOut('recording order 32720629554');
        };
      }
      const value = Reflect.get(target, property, target) as unknown;
      if (down && typeof value === 'function' && property !== 'writeFailure') {
        return async () => {
          throw timedOut(`${String(property)}`);
        };
      }
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe('an order placed whose journal record fails (the database stalls right after the send)', () => {

  it('is logged at error with the order and what becomes of it, and the slot fails with that error, not with the cleanup that failed after it', async () => {
    const world = current();
    const engine = new Engine({ ...world.deps(), journal: journalDownAtRecord(world.journal) }, [dcaBtc()], { runId: null, onFatal: () => undefined });
    await engine.runSlot('dca-btc', SLOT);
    const [placed] = world.sandbox.exchange.orderHistory({});
    const line = world.logs.find((entry) => entry.fields['event'] === 'order-record-failed');
    expect(line?.fields).toMatchObject({ instance: 'dca-btc', orderId: placed?.orderId, clientOrderId: placed?.clientOrderId, code: 'E_STORE' });
    expect(line?.message).toMatch(/^order \d+ \(dca-btc-\S+\) was placed at the exchange \(FILLED\), but journalling it failed: recording order 32720629554: .*; its intent stays sent, so reconciliation records the order from the exchange/);
    expect(world.logs.find((entry) => entry.fields['event'] === 'slot-close-failed')?.message).toMatch(/^could not journal the slot as failed \(listIntents: /);
    expect(world.logs.find((entry) => entry.fields['event'] === 'engine-error')?.fields['error']).toMatch(/^recording order 32720629554: /);
    // Once the journal answers again, the order is recorded once, from the exchange.
    const next = world.engine([dcaBtc()]);
    await next.reconcile();
    expect((await world.journal.listOrders({})).map((order) => order.orderId)).toEqual([placed?.orderId]);
    expect(world.sandbox.exchange.orderHistory({})).toHaveLength(1);
  });
});

describe('a journal reporting a lasting write failure (a privilege taken on one table, a full disk)', () => {
  it('still runs the slots that do not need that write: one that waited for the failed write to succeed would never send again, since only its own slots retry it', async () => {
    const world = current();
    const lasting = { atMs: Date.UTC(2026, 10, 22, 8, 0, 0), message: 'recording transfer tb-1: permission denied for table transfers', lasting: true } as const;
    const journal = new Proxy(world.journal, {
      get(target, property) {
        if (property === 'writeFailure') return () => lasting;
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const engine = new Engine({ ...world.deps(), journal }, [dcaBtc()], { runId: null, onFatal: () => undefined });
    expect(await engine.runSlot('dca-btc', SLOT)).toBe('done');
    expect(world.sandbox.exchange.orderHistory({})).toHaveLength(1);
  });
});
