import { hostname } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { pgCluster } from '../support/pg-databases.ts';
import { type RunningDaemon, liveEnv, startDaemon } from './daemon-process.ts';
import { metricsUrl } from './exactly-once/agreement.ts';
import { expectAgreementAfterKills, killMoments } from './kill-agreement.ts';
import { pgSandboxPerFile } from './pg-sandbox.ts';

/**
 * The real daemon (`stacker run`, a process of its own) trading on the sandbox with its journal
 * in PostgreSQL (STACKER_DATABASE_URL): killed -9 at random moments and restarted, the journal
 * and the exchange still agree, and a second daemon on the same database is refused.
 */
const RUNS = 8;
const PASSWORD = 'e2e-password-never-logged';
const cluster = pgCluster();
const t = pgSandboxPerFile(cluster);

const env = (): Record<string, string> => ({ ...liveEnv(t.sandbox, t.dir), STACKER_DATABASE_URL: t.url.replace('postgres@', `postgres:${PASSWORD}@`) });

/** The journal in the database, read as `stacker orders` would, agrees with the sandbox exchange. */
async function journalAgrees(kills: number): Promise<void> {
  await t.readJournal((journal) => expectAgreementAfterKills(t.sandbox, journal, kills));
}

describe.skipIf(cluster === null)('the daemon on a PostgreSQL journal', () => {
  it(`survives ${RUNS} kills at random moments: 0 double orders, 0 lost intents; a second daemon is refused; the password is never logged`, async () => {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '* * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.0001', CATCH_UP: 'last', CATCH_UP_WINDOW: '1m' });
    t.sandbox.faults.inject({ path: '/api/v4/order/stock_market', kind: 'latency', latencyMs: 400, times: Number.POSITIVE_INFINITY });
    const args = ['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data];
    const outputs: string[] = [];
    for (const [run, waitMs] of killMoments(20261125, RUNS).entries()) {
      const daemon = startDaemon(args, env());
      await daemon.waitFor('"event":"scheduled"', 20_000);
      if (run === 0) {
        // Another host (another data dir) on the same database and key: refused while this one runs.
        const second = startDaemon(['--live', '--strategies', t.dir.strategies, '--data-dir', join(t.dir.root, 'other-host')], env());
        expect(await second.exited).not.toBe(0);
        expect(second.output()).toMatch(/the journal is in use by stacker pid \d+/);
        outputs.push(second.output());
      }
      await new Promise((resolve) => setTimeout(resolve, waitMs));
      daemon.child.kill('SIGKILL');
      expect(await daemon.exited).toBe('SIGKILL');
      outputs.push(daemon.output());
    }
    // As in kill-restart.test.ts: the last run starts once an order cut off in its 400 ms at the exchange has landed.
    t.sandbox.faults.clear();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const last = startDaemon(args, env());
    await last.waitFor('"event":"scheduled"', 20_000);
    last.child.kill('SIGTERM');
    expect(await last.exited).toBe(0);
    outputs.push(last.output());
    expect(last.output()).toMatch(/"journal":"postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/t_[0-9a-f]+ \(schema stacker_live\)"/);
    for (const output of outputs) expect(output).not.toContain(PASSWORD);

    await journalAgrees(RUNS);
  }, 180_000);

  /** An owner and a standby (--standby both, as they would be deployed), each on a host (data dir, HOME) of its own. */
  async function ownerAndStandby(ownerHost: string, standbyHost: string, schedule = '* * * * * *'): Promise<{ owner: RunningDaemon; standby: RunningDaemon }> {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: schedule, MARKET: 'BTC_USDT', AMOUNT: '0.001', CATCH_UP: 'last', CATCH_UP_WINDOW: '1m' });
    // A metrics server on a free port: a waiting standby's /healthz is probed.
    const owner = t.standbyOn(ownerHost, { STACKER_METRICS_PORT: '0' });
    await owner.waitFor('"event":"scheduled"', 20_000);
    const standby = t.standbyOn(standbyHost, { STACKER_METRICS_PORT: '0' });
    await standby.waitFor('"event":"standby"', 20_000);
    expect(standby.output()).toMatch(/waiting as a hot standby: the journal is in use by stacker pid \d+/);
    return { owner, standby };
  }

  /** The daemon in charge runs slots, stops cleanly, and the journal agrees with the exchange. */
  async function tradesOnAndAgrees(daemon: RunningDaemon, kills: number): Promise<void> {
    await daemon.waitFor('"event":"scheduled"', 20_000);
    // It runs slots now (a standby logs none while it waits).
    await daemon.waitFor('"event":"slot-finished"', 10_000);
    daemon.child.kill('SIGTERM');
    expect(await daemon.exited).toBe(0);
    await journalAgrees(kills);
  }

  it('hot standby: a second daemon with --standby waits, takes over within 15 s of the owner\'s kill -9, and trades on; journal and exchange agree', async () => {
    const { owner, standby } = await ownerAndStandby('host-a', 'host-b');
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    owner.child.kill('SIGKILL');
    const killedAt = Date.now();
    expect(await owner.exited).toBe('SIGKILL');
    await standby.waitFor('"event":"took-over"', 15_000);
    const takeoverMs = Date.now() - killedAt;
    expect(takeoverMs).toBeLessThan(15_000);
    console.info(`hot standby took over ${takeoverMs} ms after the owner's kill -9`);
    await tradesOnAndAgrees(standby, 1);
  }, 120_000);

  it('a stale owner (its lock session gone, its process alive) is replaced, then journals nothing, sends nothing and exits non-zero even with no slot due', async () => {
    // A daily schedule: no slot is due, so what stops the stale owner is its own check of the lease.
    const { owner, standby } = await ownerAndStandby('host-c', 'host-d', '0 9 * * *');
    const admin = new pg.Client({ connectionString: t.url });
    await admin.connect();
    try {
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [`stacker pid ${owner.child.pid} on ${hostname()}`.slice(0, 63)]);
    } finally {
      await admin.end();
    }
    await standby.waitFor('"event":"took-over"', 15_000);
    const tookOverAt = Date.now();
    expect(await owner.exited).not.toBe(0);
    expect(Date.now() - tookOverAt).toBeLessThan(15_000);
    expect(owner.output()).toMatch(/was taken over by stacker pid \d+ on .*journals and sends nothing more/);
    // Said as every stop of trading is: logged as trading-stopped (and notified), not only as the stop's reason.
    expect(owner.output()).toMatch(/"event":"trading-stopped".*was taken over by stacker pid/);
    await standby.waitFor('"event":"scheduled"', 20_000);
    standby.child.kill('SIGTERM');
    expect(await standby.exited).toBe(0);
    await journalAgrees(0);
  }, 120_000);

  it('a standby stopped while it waits leaves cleanly (exit 0), having journalled and sent nothing; the owner trades on', async () => {
    const { owner, standby } = await ownerAndStandby('host-e', 'host-f');
    // While it waits, its /healthz (STACKER_METRICS_PORT) says healthy: waiting is its job.
    const probe = await fetch(`${metricsUrl(standby.output())}/healthz`);
    expect(probe.status).toBe(200);
    standby.child.kill('SIGTERM');
    expect(await standby.exited).toBe(0);
    expect(standby.output()).toMatch(/"event":"standby-stopped"/);
    expect(standby.output()).not.toMatch(/"event":"(took-over|slot-finished)"/);
    await tradesOnAndAgrees(owner, 0);
  }, 120_000);
});
