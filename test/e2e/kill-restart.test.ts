import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.ts';
import { SqliteJournal } from '../../src/store/sqlite-journal.ts';
import { type DaemonDir, daemonDir, liveEnv, startDaemon } from './daemon-process.ts';
import { expectAgreementAfterKills, killMoments } from './kill-agreement.ts';

// kill -9 at random moments, then restart, again and again: the journal and the exchange must
// agree at the end: no order twice, no intent left unresolved, every order the sandbox placed
// known to the journal. A latency fault on the order path makes many kills land mid-request.
const RUNS = 20;
let sandbox: Sandbox;
let dir: DaemonDir;

beforeAll(async () => {
  sandbox = await startSandbox();
  dir = daemonDir();
});
afterAll(async () => {
  await sandbox.stop();
  dir.remove();
});

const env = (): Record<string, string> => liveEnv(sandbox, dir);

describe('kill -9 and restart', () => {
  it(`${RUNS} kills at random moments: 0 double orders, 0 lost intents`, async () => {
    dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '* * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.0001', CATCH_UP: 'last', CATCH_UP_WINDOW: '1m' });
    sandbox.faults.inject({ path: '/api/v4/order/stock_market', kind: 'latency', latencyMs: 400, times: Number.POSITIVE_INFINITY });
    const args = ['--live', '--strategies', dir.strategies, '--data-dir', dir.data];
    let reconciledRuns = 0;
    for (const waitMs of killMoments(20261122, RUNS)) {
      const daemon = startDaemon(args, env());
      await daemon.waitFor('"event":"scheduled"', 20_000);
      if (daemon.output().includes('"event":"reconciled"')) reconciledRuns += 1;
      await new Promise((resolve) => setTimeout(resolve, waitMs));
      daemon.child.kill('SIGKILL');
      expect(await daemon.exited).toBe('SIGKILL');
    }
    // A last clean run reconciles what the last kill left, then stops on SIGTERM. It starts once
    // an order the last kill cut off in its 400 ms at the exchange has landed: started sooner, its
    // one lookup at start can come first, and the order stays `unknown` to be looked up again
    // later (right, but this run stops before then).
    sandbox.faults.clear();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const last = startDaemon(args, env());
    await last.waitFor('"event":"scheduled"', 20_000);
    last.child.kill('SIGTERM');
    expect(await last.exited).toBe(0);

    const journal = new SqliteJournal({ path: join(dir.data, 'stacker.db'), readOnly: true });
    await journal.open();
    let cutBeforeSending = 0;
    try {
      await expectAgreementAfterKills(sandbox, journal, RUNS);
      cutBeforeSending = (await journal.unresolvedIntents()).length;
    } finally {
      await journal.close();
    }
    // Timing-dependent, shown, not asserted: starts that found a slot or a send the previous kill
    // interrupted, and buys a kill cut short before they left (unknown until their settle window ends).
    console.info(
      `kill -9 runs: ${RUNS}; starts that reconciled an interrupted slot: ${reconciledRuns}; orders: ${sandbox.exchange.orderHistory({}).length}; buys cut before sending, still looked up: ${cutBeforeSending}`,
    );
  }, 240_000);
});
