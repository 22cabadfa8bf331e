import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LockedError, StoreError } from '../../src/store/errors.ts';
import { inTransaction, openPool } from '../../src/store/pg-db.ts';
import { PgJournal } from '../../src/store/pg-journal.ts';
import { PgAdvisoryLock } from '../../src/store/pg-lock.ts';
import { boundedClient, endSession } from '../../src/store/pg-session.ts';
import { type PgCluster, clusterUrl, findBinDir, startCluster } from '../support/pg-cluster.ts';

/**
 * A PostgreSQL server that stops answering without closing anything (its processes stopped, as
 * when its VM pauses or a partition drops packets): every wait on it is bounded, so the journal
 * fails as unwritable in time instead of hanging, drops the connection that hung, closes, and
 * answers again once the server runs. The advisory lock, which fences nothing by itself (the
 * lease does), neither hangs nor believes it lost a lock the server still holds. A cluster of
 * this file's own, since it is frozen; every test thaws it, whatever happens.
 */
const binDir = findBinDir();
let cluster: PgCluster;
/** The bound of this file's sessions: short, so a test takes seconds. */
const TIMEOUT_MS = 1_000;
/** A failure must come within the bound plus this: not after two bounds (a ROLLBACK waiting behind the query that hung). */
const LATE_MS = 600;

beforeAll(async () => {
  if (binDir !== null) cluster = await startCluster(binDir);
}, 60_000);
afterEach(() => {
  cluster?.thaw();
});
afterAll(() => {
  cluster?.stop();
});

const url = (): string => clusterUrl(cluster, 'postgres');

/** What a promise ended with: its error, or undefined when it succeeded. */
async function errorOf(work: Promise<unknown>): Promise<unknown> {
  try {
    await work;
    return undefined;
  } catch (error) {
    return error;
  }
}

/** How long `work` took, and its error (undefined when it succeeded). */
async function timed(work: Promise<unknown>): Promise<{ readonly ms: number; readonly outcome: unknown }> {
  const started = Date.now();
  const outcome = await errorOf(work);
  return { ms: Date.now() - started, outcome };
}

describe.skipIf(binDir === null)('the journal while its PostgreSQL server is frozen', () => {
  it('fails a read and a write within the timeout as unwritable, reports it, and answers again once the server runs', async () => {
    const journal = new PgJournal({ url: url(), schema: 'frozen_journal', timeoutMs: TIMEOUT_MS });
    await journal.open();
    try {
      await journal.recordHeartbeat();
      cluster.freeze();
      const read = await timed(journal.getSlot({ instance: 'dca', slotTimeMs: 60_000 }));
      expect(read.outcome).toBeInstanceOf(StoreError);
      expect(read.outcome).toMatchObject({ reason: 'unwritable', retryable: true, message: expect.stringMatching(/^reading a slot: the journal's database did not answer in time/) });
      expect(read.ms).toBeLessThan(TIMEOUT_MS + LATE_MS);
      expect(journal.writeFailure()?.message).toMatch(/did not answer in time/);

      const write = await timed(journal.recordHeartbeat());
      expect(write.outcome).toMatchObject({ reason: 'unwritable', retryable: true });
      expect(write.ms).toBeLessThan(TIMEOUT_MS + LATE_MS);

      cluster.thaw();
      await journal.recordHeartbeat();
      expect(journal.writeFailure()).toBeNull();
      expect(await journal.getSlot({ instance: 'dca', slotTimeMs: 60_000 })).toBeNull();
    } finally {
      cluster.thaw();
      await journal.close();
    }
  });

  it('drops the connection whose query hung instead of pooling it again, without waiting for a rollback', async () => {
    const pool = openPool({ url: url(), schema: 'frozen_pool', timeoutMs: TIMEOUT_MS });
    try {
      await inTransaction(pool, 'read', (tx) => tx.rows('SELECT 1'));
      expect(pool.totalCount).toBe(1);
      cluster.freeze();
      const hung = await timed(inTransaction(pool, 'read', (tx) => tx.rows('SELECT 1')));
      expect(hung.outcome).toMatchObject({ message: 'Query read timeout' });
      expect(hung.ms).toBeLessThan(TIMEOUT_MS + LATE_MS);
      // Gone from the pool, not idle in it: the next operation gets a new connection, not one stuck behind the hung query.
      expect(pool.totalCount).toBe(0);
      cluster.thaw();
      expect(await inTransaction(pool, 'read', (tx) => tx.rows('SELECT 2 AS two'))).toEqual([{ two: 2 }]);
    } finally {
      cluster.thaw();
      await pool.end();
    }
  });

  it('closes within the timeout while an operation hangs on the frozen server', async () => {
    const journal = new PgJournal({ url: url(), schema: 'frozen_close', timeoutMs: TIMEOUT_MS });
    await journal.open();
    try {
      cluster.freeze();
      const hanging = errorOf(journal.listSlots());
      // Until it has its connection and has sent its first statement, which the frozen server never answers.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const closing = await timed(journal.close());
      expect(closing.outcome).toBeUndefined();
      expect(closing.ms).toBeLessThan(TIMEOUT_MS + LATE_MS);
      expect(await hanging).toMatchObject({ reason: 'unwritable' });
    } finally {
      cluster.thaw();
      await journal.close();
    }
  });
});

describe.skipIf(binDir === null)('a session of its own while its PostgreSQL server is frozen', () => {
  it('is cut when the server does not close it within the timeout: ending it never waits for the thaw', async () => {
    const client = boundedClient(url(), 'frozen-session', TIMEOUT_MS);
    await client.connect();
    await client.query('SELECT 1');
    cluster.freeze();
    try {
      // Nothing in flight: a graceful end sends its goodbye and waits for the server's side of the close.
      const ending = await timed(endSession(client, TIMEOUT_MS));
      expect(ending.outcome).toBeUndefined();
      expect(ending.ms).toBeLessThan(TIMEOUT_MS + LATE_MS);
    } finally {
      cluster.thaw();
    }
  });
});

describe.skipIf(binDir === null)("the journal's advisory lock while its PostgreSQL server is frozen", () => {
  it('is not taken from a frozen server: a standby says the database is unreachable, keeps waiting, and takes the lock once it runs', async () => {
    const told: string[] = [];
    const standby = new PgAdvisoryLock(url(), 'journal', 'frozen-standby', { pid: 2222, hostname: 'host-b', timeoutMs: TIMEOUT_MS });
    cluster.freeze();
    try {
      const waiting = standby.acquire({
        pollMs: 100,
        onUnreachable: (problem) => told.push(`unreachable: ${problem instanceof StoreError ? problem.reason : problem.message}`),
        onReachable: () => told.push('reachable'),
      });
      await expect.poll(() => told, { timeout: TIMEOUT_MS * 3 }).toEqual(['unreachable: unwritable']);
      cluster.thaw();
      await waiting;
      expect(told).toEqual(['unreachable: unwritable', 'reachable']);
    } finally {
      cluster.thaw();
      await standby.release();
    }
  });

  it('without waiting, taking it from a frozen server fails within the timeout as unwritable', async () => {
    const lock = new PgAdvisoryLock(url(), 'journal', 'frozen-once', { timeoutMs: TIMEOUT_MS });
    cluster.freeze();
    try {
      const taking = await timed(lock.acquire());
      expect(taking.outcome).toMatchObject({ reason: 'unwritable', retryable: true, message: expect.stringMatching(/did not answer in time/) });
      expect(taking.ms).toBeLessThan(TIMEOUT_MS + LATE_MS);
    } finally {
      cluster.thaw();
      await lock.release();
    }
  });

  it('is still held through a freeze longer than the timeout (the server kept its session), and is released within the timeout during one', async () => {
    const events: string[] = [];
    const owner = new PgAdvisoryLock(url(), 'journal', 'frozen-held', {
      pid: 1111,
      hostname: 'host-a',
      timeoutMs: TIMEOUT_MS,
      keep: { pollMs: 100, onLost: () => events.push('lost'), onRetaken: () => events.push('retaken') },
    });
    await owner.acquire();
    const second = new PgAdvisoryLock(url(), 'journal', 'frozen-held', { pid: 2222, hostname: 'host-b', timeoutMs: TIMEOUT_MS });
    try {
      cluster.freeze();
      await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS * 2.5));
      cluster.thaw();
      expect(await errorOf(second.acquire())).toBeInstanceOf(LockedError);
      expect(events).toEqual([]);

      cluster.freeze();
      const releasing = await timed(owner.release());
      expect(releasing.ms).toBeLessThan(TIMEOUT_MS * 2 + LATE_MS);
      cluster.thaw();
      // The server ends the session it was cut from as soon as it runs again, and the lock frees with it.
      await expect.poll(async () => errorOf(second.acquire()), { timeout: 5_000 }).toBeUndefined();
      expect(events).toEqual([]);
    } finally {
      cluster.thaw();
      await owner.release();
      await second.release();
    }
  });
});

describe.skipIf(binDir === null)('a journal session whose client froze inside a transaction', () => {
  it('is ended by the server after twice the timeout, so the rows it held no longer stall the daemon that takes its place', async () => {
    const frozen = boundedClient(url(), 'stacker journal', TIMEOUT_MS);
    const next = boundedClient(url(), 'stacker journal', 10_000);
    await frozen.connect();
    await next.connect();
    try {
      await frozen.query('CREATE TABLE IF NOT EXISTS held_rows (id int PRIMARY KEY, v int)');
      await frozen.query('INSERT INTO held_rows VALUES (1, 0) ON CONFLICT (id) DO NOTHING');
      await frozen.query('BEGIN');
      await frozen.query('UPDATE held_rows SET v = v + 1 WHERE id = 1');
      // The frozen client's process sends nothing more. Another session's write of the row waits for it, then goes through.
      const started = Date.now();
      await next.query('UPDATE held_rows SET v = 10 WHERE id = 1');
      expect(Date.now() - started).toBeGreaterThanOrEqual(2 * TIMEOUT_MS - 100);
      expect(await errorOf(frozen.query('SELECT 1'))).toBeInstanceOf(Error);
      expect((await next.query('SELECT v FROM held_rows WHERE id = 1')).rows[0]?.['v']).toBe(10);
    } finally {
      await endSession(frozen, 1_000);
      await endSession(next, 1_000);
    }
  });
});
