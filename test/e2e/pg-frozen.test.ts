import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Journal } from '../../src/store/journal.ts';
import { PgJournal } from '../../src/store/pg-journal.ts';
import { type PgCluster, findBinDir, startCluster } from '../support/pg-cluster.ts';
import { createDatabase } from '../support/pg-databases.ts';
import { type RunningDaemon, sandboxPerTest, startDaemon } from './daemon-process.ts';
import { metricsUrl } from './exactly-once/agreement.ts';
import { expectAgreementAfterKills } from './kill-agreement.ts';

/**
 * The real daemon trading every second while its PostgreSQL server freezes under it: its
 * processes stopped (SIGSTOP), so connections stay open and nothing answers, as when the
 * database's VM pauses or a partition drops packets without a reset. With
 * STACKER_DATABASE_TIMEOUT=1s every journal operation fails within a second instead of hanging:
 * the daemon stays up, /healthz answers 503, a slot missed meanwhile that the journal cannot
 * record is logged (an unhandled rejection there once crashed the daemon), nothing is sent that
 * the journal could not record first, an order whose answer came during the freeze is looked up
 * and recorded afterwards (never sent again), and once the server runs again the daemon trades
 * on by itself, still holding the journal's lock. A stop during the freeze ends in seconds. A cluster of this file's own, since
 * it is frozen; it is thawed after every test, whatever happens.
 */
const binDir = findBinDir();
let cluster: PgCluster;
const world = sandboxPerTest();
const started: RunningDaemon[] = [];

beforeAll(async () => {
  if (binDir !== null) cluster = await startCluster(binDir);
}, 60_000);
afterEach(async () => {
  cluster?.thaw();
  for (const daemon of started.splice(0)) {
    if (daemon.child.exitCode === null && daemon.child.signalCode === null) daemon.child.kill('SIGKILL');
    await daemon.exited;
  }
});
afterAll(() => {
  cluster?.stop();
});

function daemonOn(url: string): RunningDaemon {
  const { dir } = world;
  dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '* * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.0001', CATCH_UP: 'last', CATCH_UP_WINDOW: '1m' });
  const daemon = startDaemon(['--live', '--strategies', dir.strategies, '--data-dir', dir.data], {
    ...world.live(),
    STACKER_DATABASE_URL: url,
    STACKER_DATABASE_TIMEOUT: '1s',
    STACKER_METRICS_PORT: '0',
  });
  started.push(daemon);
  return daemon;
}

async function health(base: string): Promise<{ readonly status: number; readonly text: string }> {
  const answer = await fetch(`${base}/healthz`);
  return { status: answer.status, text: await answer.text() };
}

const count = (output: string, event: string): number => output.split(`"event":"${event}"`).length - 1;

async function withJournal<T>(url: string, read: (journal: Journal) => Promise<T>): Promise<T> {
  const journal = new PgJournal({ url, schema: 'stacker_live', readOnly: true });
  await journal.open();
  try {
    return await read(journal);
  } finally {
    await journal.close();
  }
}

describe.skipIf(binDir === null)('the daemon while its PostgreSQL server is frozen', () => {
  it('stays up, answers 503, logs a missed slot it cannot journal, never sends an order twice nor loses one whose answer came meanwhile, and trades on by itself after the thaw', async () => {
    const url = await createDatabase(cluster);
    const owner = daemonOn(url);
    await owner.waitFor('"event":"slot-finished"', 20_000);
    const base = metricsUrl(owner.output());
    expect((await health(base)).status).toBe(200);

    // The next order is taken by the exchange but answered 1.5 s later: the freeze lands while it is in flight,
    // after the journal marked it sent and before it records the answer.
    const { sandbox } = world;
    sandbox.faults.inject({ path: '/api/v4/order/stock_market', kind: 'latency', latencyMs: 1_500, times: 1 });
    await expect.poll(() => sandbox.faults.pending().length, { timeout: 5_000, interval: 20 }).toBe(0);
    const ordersBefore = sandbox.exchange.orderHistory({}).length;
    cluster.freeze();
    const frozenAt = Date.now();
    try {
      // The first journal operation to run out says so: not at the next heartbeat, and not never.
      await expect.poll(async () => (await health(base)).status, { timeout: 5_000, interval: 200 }).toBe(503);
      expect((await health(base)).text).toMatch(/the journal cannot be written since .*did not answer in time.*nothing is sent until it can/);
      // A slot that waited on the journal overlaps the next second's: that one is missed, and the journal cannot record it either.
      await owner.waitFor('"event":"slot-missed-unjournalled"', 10_000);
      // Past the answer (1.5 s) and the journal's two tries to record it (1 s each): the slot gave up on it.
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, frozenAt + 4_500 - Date.now())));
      expect(owner.child.exitCode).toBeNull();
      expect((await health(base)).status).toBe(503);
      // The order in flight, at most: no slot that started during the freeze sent anything.
      expect(sandbox.exchange.orderHistory({}).length - ordersBefore).toBeLessThanOrEqual(1);
    } finally {
      cluster.thaw();
    }

    await expect.poll(async () => (await health(base)).status, { timeout: 10_000, interval: 200 }).toBe(200);
    const finished = count(owner.output(), 'slot-finished');
    await expect.poll(() => count(owner.output(), 'slot-finished'), { timeout: 10_000 }).toBeGreaterThan(finished);
    // Its answer was lost to the journal, not the order: it was looked up (never sent again) and recorded.
    await owner.waitFor('the order of a lost answer exists; recorded', 10_000);
    // The server kept the lock's session through the freeze: the lock was never lost, so never taken again.
    expect(owner.output()).not.toContain('journal-lock-lost');

    owner.child.kill('SIGTERM');
    expect(await owner.exited).toBe(0);
    // Every order at the exchange is journalled and done, none twice, nothing left open.
    await withJournal(url, (journal) => expectAgreementAfterKills(sandbox, journal, 0));
  }, 90_000);

  it('stops within seconds when told to while the server is frozen, and has journalled every order it sent', async () => {
    const url = await createDatabase(cluster);
    const owner = daemonOn(url);
    await owner.waitFor('"event":"slot-finished"', 20_000);
    const base = metricsUrl(owner.output());
    cluster.freeze();
    try {
      await expect.poll(async () => (await health(base)).status, { timeout: 5_000, interval: 200 }).toBe(503);
      const stopping = Date.now();
      owner.child.kill('SIGTERM');
      expect(await owner.exited).toBe(0);
      // Each step of the stop that needs the journal waits at most the timeout (1 s), then the process leaves.
      expect(Date.now() - stopping).toBeLessThan(15_000);
    } finally {
      cluster.thaw();
    }
    // What it sent, it had journalled first: every order at the exchange has its intent, marked at least `sent`.
    await withJournal(url, async (journal) => {
      for (const order of world.sandbox.exchange.orderHistory({})) {
        expect((await journal.findIntentByClientOrderId(order.clientOrderId))?.status, order.clientOrderId).toMatch(/^(sent|unknown|done)$/);
      }
    });
  }, 90_000);
});
