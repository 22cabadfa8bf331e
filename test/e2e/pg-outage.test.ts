import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.ts';
import { PgJournal } from '../../src/store/pg-journal.ts';
import { type PgCluster, clusterUrl, findBinDir, startCluster } from '../support/pg-cluster.ts';
import { type DaemonDir, type RunningDaemon, daemonDir, liveEnv, startDaemon } from './daemon-process.ts';
import { metricsUrl } from './exactly-once/agreement.ts';
import { expectAgreementAfterKills } from './kill-agreement.ts';

/**
 * The real daemon trading every second while its PostgreSQL server stops and starts again
 * under it (a restart, a failover): while the database is down `/healthz` says so, nothing
 * leaves that the journal does not hold, and once it is back the daemon trades on, still the
 * journal's only owner (the advisory lock, lost with its session, is taken again). A cluster of
 * this file's own, since it is stopped.
 */
const binDir = findBinDir();
let cluster: PgCluster;
let sandbox: Sandbox;
let dir: DaemonDir;
const started: RunningDaemon[] = [];

beforeAll(async () => {
  if (binDir === null) return;
  cluster = await startCluster(binDir);
  sandbox = await startSandbox();
  dir = daemonDir();
}, 60_000);
afterAll(async () => {
  if (binDir === null) return;
  for (const daemon of started) {
    if (daemon.child.exitCode === null && daemon.child.signalCode === null) daemon.child.kill('SIGKILL');
    await daemon.exited;
  }
  await sandbox.stop();
  dir.remove();
  cluster.stop();
});

const PASSWORD = 'pw-never-shown';

function daemonOn(host: string): RunningDaemon {
  const daemon = startDaemon(['--live', '--strategies', dir.strategies, '--data-dir', join(dir.root, host, 'data')], {
    ...liveEnv(sandbox, dir),
    HOME: join(dir.root, host),
    // The test cluster trusts loopback and never asks for it: a password that must never be shown.
    STACKER_DATABASE_URL: clusterUrl(cluster, 'postgres').replace('postgres@', `postgres:${PASSWORD}@`),
    STACKER_METRICS_PORT: '0',
  });
  started.push(daemon);
  return daemon;
}

async function healthStatus(base: string): Promise<number> {
  return (await fetch(`${base}/healthz`)).status;
}

describe.skipIf(binDir === null)('the daemon while its PostgreSQL server restarts', () => {
  it('answers 503 while the database is down (/api/status with what it knows and why, logged once), sends nothing unjournalled, then trades on and still refuses a second daemon', async () => {
    dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '* * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.0001', CATCH_UP: 'last', CATCH_UP_WINDOW: '1m' });
    const owner = daemonOn('host-a');
    await owner.waitFor('"event":"slot-finished"', 20_000);
    const health = metricsUrl(owner.output());
    expect(await healthStatus(health)).toBe(200);

    // Slots read the journal before they write it: the outage must show at once, not at the next heartbeat a minute later.
    const back = cluster.restart(8_000);
    try {
      await expect.poll(() => healthStatus(health), { timeout: 5_000, interval: 200 }).toBe(503);
      const healthz = await (await fetch(`${health}/healthz`)).text();
      expect(healthz).toMatch(/the journal cannot be written since .*nothing is sent until it can/);
      // Why, not where: the database's address is for the daemon's log, not for whoever reads the page.
      expect(healthz).not.toContain(`:${cluster.port}`);
      // The status page's JSON answers too, with what the daemon knows without its journal, not a bare 500.
      for (let asked = 0; asked < 3; asked += 1) {
        const status = await fetch(`${health}/api/status`);
        expect(status.status).toBe(503);
        const body = (await status.json()) as Record<string, unknown>;
        expect(body).toMatchObject({
          error: 'journal-unreadable',
          message: expect.stringMatching(/^the journal cannot be read, so instances, budgets, orders and positions are left out until it can: /),
          mode: 'live',
          health: { status: 'unhealthy', problems: [expect.stringMatching(/^the journal cannot be written since /)] },
          killSwitch: { on: false },
        });
        expect(JSON.stringify(body)).not.toContain(PASSWORD);
        expect(JSON.stringify(body)).not.toContain(`:${cluster.port}`);
      }
    } finally {
      await back;
    }
    // Logged, once for the three answers (a page asks every 5 s: a line a minute at most).
    expect(owner.output().match(/"event":"status-journal-unreadable"/g)).toHaveLength(1);
    expect(owner.output()).toMatch(/"event":"status-journal-unreadable","error":"[^"]+","answered":1,/);
    expect(owner.output()).not.toContain(PASSWORD);
    // Where the database is, the page leaves to the log.
    expect(owner.output()).toContain(`:${cluster.port}`);

    await owner.waitFor('"event":"journal-lock-retaken"', 10_000);
    await expect.poll(() => healthStatus(health), { timeout: 10_000, interval: 200 }).toBe(200);
    const finishedBefore = owner.output().split('"event":"slot-finished"').length;
    await expect.poll(() => owner.output().split('"event":"slot-finished"').length, { timeout: 10_000 }).toBeGreaterThan(finishedBefore);

    // The owner's lock ended with the server's sessions; a daemon started now is refused as before the restart.
    const second = daemonOn('host-b');
    expect(await second.exited).toBe(3);
    expect(second.output()).toMatch(/E_LOCKED.*the journal is in use by stacker pid \d+/);

    owner.child.kill('SIGTERM');
    expect(await owner.exited).toBe(0);
    const journal = new PgJournal({ url: clusterUrl(cluster, 'postgres'), schema: 'stacker_live', readOnly: true });
    await journal.open();
    try {
      await expectAgreementAfterKills(sandbox, journal, 0);
    } finally {
      await journal.close();
    }
  }, 90_000);
});
