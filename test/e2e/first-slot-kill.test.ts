import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.ts';
import { SqliteJournal } from '../../src/store/sqlite-journal.ts';
import { type DaemonDir, daemonDir, liveEnv, startDaemon } from './daemon-process.ts';

// A new instance's very first slot, its daemon killed -9 while the slot's snapshot waits for a
// balance the exchange never answers: the slot is claimed only after the snapshot, so nothing of
// it is journalled. The next start (CATCH_UP=last) must still see it as missed and buy it once.
const BALANCE_PATH = '/api/v4/trade-account/balance';
let sandbox: Sandbox;
let dir: DaemonDir;
let balanceRequests = 0;

beforeAll(async () => {
  sandbox = await startSandbox({
    onRequest: (request) => {
      if (request.path === BALANCE_PATH) balanceRequests += 1;
    },
  });
  dir = daemonDir();
});
afterAll(async () => {
  await sandbox.stop();
  dir.remove();
});

/** A SCHEDULE (UTC, with seconds) whose one slot a year is `ms`. */
function onceAt(ms: number): string {
  const at = new Date(ms);
  return `${at.getUTCSeconds()} ${at.getUTCMinutes()} ${at.getUTCHours()} ${at.getUTCDate()} ${at.getUTCMonth() + 1} *`;
}

async function until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`no ${what} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function readJournal<T>(read: (journal: SqliteJournal) => Promise<T>): Promise<T> {
  const journal = new SqliteJournal({ path: join(dir.data, 'stacker.db'), readOnly: true });
  await journal.open();
  try {
    return await read(journal);
  } finally {
    await journal.close();
  }
}

describe('kill -9 during a new instance first slot', () => {
  it('leaves the slot to the next start, which buys it exactly once (CATCH_UP=last)', async () => {
    // Far enough ahead that the daemon is scheduling before it (a start takes 1–3 s here).
    const slot = Math.ceil((Date.now() + 7_000) / 1000) * 1000;
    dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: onceAt(slot), MARKET: 'BTC_USDT', AMOUNT: '0.0001', CATCH_UP: 'last', CATCH_UP_WINDOW: '1m' });
    const args = ['--live', '--strategies', dir.strategies, '--data-dir', dir.data];

    const first = startDaemon(args, liveEnv(sandbox, dir));
    await first.waitFor('"event":"scheduled"', 15_000);
    expect(Date.now(), 'the daemon started too slowly to schedule the slot').toBeLessThan(slot - 500);
    // Every balance read from now on hangs: the slot's snapshot never gets its answer.
    sandbox.faults.inject({ path: BALANCE_PATH, kind: 'latency', latencyMs: 120_000, times: Number.POSITIVE_INFINITY });
    const before = balanceRequests;
    await until(() => balanceRequests > before, slot - Date.now() + 5_000, 'balance request of the slot');
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');

    // What the kill left: the instance's anchor, and no trace of the slot.
    expect(await readJournal(async (journal) => [await journal.getSlot({ instance: 'dca-btc', slotTimeMs: slot }), (await journal.scheduledSince('dca-btc')) ?? 0])).toEqual([
      null,
      expect.toSatisfy((since: number) => since > 0 && since < slot),
    ]);
    expect(sandbox.exchange.orderHistory({})).toHaveLength(0);

    sandbox.faults.clear();
    const second = startDaemon(args, liveEnv(sandbox, dir));
    // Catch-up runs before the scheduler starts.
    await second.waitFor('"event":"scheduled"', 15_000);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);

    expect(second.output()).toContain('"event":"catch-up"');
    const orders = sandbox.exchange.orderHistory({});
    expect(orders).toHaveLength(1);
    const journalled = await readJournal(async (journal) => ({ slot: await journal.getSlot({ instance: 'dca-btc', slotTimeMs: slot }), intents: await journal.listIntents({ instance: 'dca-btc' }) }));
    expect(journalled.slot).toMatchObject({ status: 'done' });
    expect(journalled.intents.map((intent) => intent.clientOrderId)).toEqual([orders[0]?.clientOrderId]);
  }, 30_000);
});
