import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreError } from '../../src/store/errors.ts';
import { PgAdvisoryLock } from '../../src/store/pg-lock.ts';
import { openPgStore } from '../../src/store/pg-store.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type PgCluster, clusterUrl, findBinDir, startCluster } from '../support/pg-cluster.ts';

/**
 * A hot standby waits out a database restart (or a database not up yet when the containers
 * start) instead of dying with it: the daemon that is meant to take over must still be there
 * when the database comes back. A cluster of this file's own, since it is restarted.
 */
const binDir = findBinDir();
let cluster: PgCluster;

beforeAll(async () => {
  if (binDir !== null) cluster = await startCluster(binDir);
}, 60_000);
afterAll(() => {
  cluster?.stop();
});

describe.skipIf(binDir === null)('a hot standby and an unreachable database', () => {
  it('keeps waiting through a restart of the database, says so at each try, and takes the lock when it is free', async () => {
    const url = clusterUrl(cluster, 'postgres');
    const owner = new PgAdvisoryLock(url, 'journal', 'outage-test', { pid: 1111, hostname: 'host-a' });
    await owner.acquire();
    const told: string[] = [];
    const standbyLock = new PgAdvisoryLock(url, 'journal', 'outage-test', { pid: 2222, hostname: 'host-b' });
    const standby = standbyLock.acquire({
      pollMs: 100,
      onWaiting: () => told.push('waiting'),
      onUnreachable: (problem) => told.push(`unreachable: ${problem instanceof StoreError ? problem.reason : 'other'}`),
      onReachable: () => told.push('reachable'),
    });
    await expect.poll(() => told).toEqual(['waiting']);
    // Every session ends with the server, the owner's lock with it; the server is back 1.5 s later.
    await cluster.restart(1_500);
    await standby;
    // Told at each try while the server is down (every 100 ms here), then once that it answers again.
    expect(told.length).toBeGreaterThan(3);
    expect(new Set(told.slice(1, -1))).toEqual(new Set(['unreachable: unwritable']));
    expect([told[0], told.at(-1)]).toEqual(['waiting', 'reachable']);
    await standbyLock.release();
    await owner.release();
  }, 60_000);

  it("waits on when a database restart lets it take the journal's lock from an owner that lives on this host: the key stays the owner's, and it takes over only when the owner ends", async () => {
    const url = clusterUrl(cluster, 'postgres');
    const dir = mkdtempSync(join(tmpdir(), 'stacker-standby-key-'));
    const lockDir = join(dir, 'locks');
    const retaken: string[] = [];
    const owner = await openPgStore({ url, mode: 'live', dataDir: join(dir, 'a'), apiKeys: ['shared-key'], userLockDir: lockDir, pid: 1111, hostname: 'host', keep: { pollMs: 3_000, onRetaken: () => retaken.push('retaken') } });
    const told: string[] = [];
    let settled: string | null = null;
    const standby = openPgStore({ url, mode: 'live', dataDir: join(dir, 'b'), apiKeys: ['shared-key'], userLockDir: lockDir, pid: 2222, hostname: 'host', standby: { pollMs: 100, onWaiting: (held) => told.push(held.scope) } });
    standby.then(
      () => (settled = 'took over'),
      (error: unknown) => (settled = error instanceof Error ? error.message : String(error)),
    );
    try {
      await expect.poll(() => told).toContain('journal');
      await cluster.restart(500);
      // The standby's session came back first and took the journal's lock; the key told it the owner lives.
      await expect.poll(() => told, { timeout: 15_000 }).toContain('api-key');
      await expect.poll(() => retaken, { timeout: 15_000 }).toEqual(['retaken']);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(settled).toBeNull();
      await owner.close();
      await expect.poll(() => settled, { timeout: 15_000 }).toBe('took over');
      await (await standby).close();
    } finally {
      if (settled === null) await owner.close().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('without waiting, an unreachable database is an error at once', async () => {
    const lock = new PgAdvisoryLock(`postgres://postgres@127.0.0.1:1/postgres`, 'journal', 'outage-test');
    await expect(lock.acquire()).rejects.toMatchObject({ reason: 'unwritable', retryable: true });
  });

  it('a standby told to stop while the database is unreachable gives up', async () => {
    const stop = new AbortController();
    const lock = new PgAdvisoryLock(`postgres://postgres@127.0.0.1:1/postgres`, 'journal', 'outage-test');
    const waiting = lock.acquire({ pollMs: 100, signal: stop.signal, onUnreachable: () => stop.abort() });
    await expect(waiting).rejects.toMatchObject({ reason: 'unwritable' });
  });
});
