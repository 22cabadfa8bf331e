import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.ts';
import { PgJournal } from '../../src/store/pg-journal.ts';
import { createDatabase, dropDatabase, pgCluster } from '../support/pg-databases.ts';
import { type DaemonDir, daemonDir, liveEnv, startDaemon } from './daemon-process.ts';
import { expectAgreementAfterKills } from './kill-agreement.ts';

/**
 * The real daemon (`stacker run`, a process of its own) trading on the sandbox with its journal
 * in PostgreSQL (STACKER_DATABASE_URL): killed -9 at random moments and restarted, the journal
 * and the exchange still agree, and a second daemon on the same database is refused.
 */
const RUNS = 8;
const PASSWORD = 'e2e-password-never-logged';
const cluster = pgCluster();
let sandbox: Sandbox;
let dir: DaemonDir;
let url: string;

beforeAll(async () => {
  if (cluster === null) return;
  sandbox = await startSandbox();
  dir = daemonDir();
  url = await createDatabase(cluster);
});
afterAll(async () => {
  if (cluster === null) return;
  await sandbox.stop();
  dir.remove();
  await dropDatabase(cluster, url);
});

const env = (): Record<string, string> => ({ ...liveEnv(sandbox, dir), STACKER_DATABASE_URL: url.replace('postgres@', `postgres:${PASSWORD}@`) });

function moments(seed: number, count: number): number[] {
  let state = seed;
  return Array.from({ length: count }, () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return 150 + (state % 1200);
  });
}

describe.skipIf(cluster === null)('the daemon on a PostgreSQL journal', () => {
  it(`survives ${RUNS} kills at random moments: 0 double orders, 0 lost intents; a second daemon is refused; the password is never logged`, async () => {
    dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '* * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001', CATCH_UP: 'last', CATCH_UP_WINDOW: '1m' });
    sandbox.faults.inject({ path: '/api/v4/order/stock_market', kind: 'latency', latencyMs: 400, times: Number.POSITIVE_INFINITY });
    const args = ['--live', '--strategies', dir.strategies, '--data-dir', dir.data];
    const outputs: string[] = [];
    for (const [run, waitMs] of moments(20261125, RUNS).entries()) {
      const daemon = startDaemon(args, env());
      await daemon.waitFor('"event":"scheduled"', 20_000);
      if (run === 0) {
        // Another host (another data dir) on the same database and key: refused while this one runs.
        const second = startDaemon(['--live', '--strategies', dir.strategies, '--data-dir', join(dir.root, 'other-host')], env());
        expect(await second.exited).not.toBe(0);
        expect(second.output()).toMatch(/the journal is in use by stacker pid \d+/);
        outputs.push(second.output());
      }
      await new Promise((resolve) => setTimeout(resolve, waitMs));
      daemon.child.kill('SIGKILL');
      expect(await daemon.exited).toBe('SIGKILL');
      outputs.push(daemon.output());
    }
    sandbox.faults.clear();
    const last = startDaemon(args, env());
    await last.waitFor('"event":"scheduled"', 20_000);
    last.child.kill('SIGTERM');
    expect(await last.exited).toBe(0);
    outputs.push(last.output());
    expect(last.output()).toMatch(/"journal":"postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/t_[0-9a-f]+ \(schema stacker_live\)"/);
    for (const output of outputs) expect(output).not.toContain(PASSWORD);

    const journal = new PgJournal({ url, schema: 'stacker_live', readOnly: true });
    await journal.open();
    try {
      await expectAgreementAfterKills(sandbox, journal, RUNS);
    } finally {
      await journal.close();
    }
  }, 180_000);
});
