import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { pgCluster } from '../support/pg-databases.ts';
import { liveEnv, startDaemon } from './daemon-process.ts';
import { pgSandboxPerFile } from './pg-sandbox.ts';

/**
 * A PostgreSQL journal's schema dropped under a running daemon (an operator's mistake, a restore
 * gone wrong): every slot then fails before its send, where a lost SQLite file is told, so the
 * daemon's own check of the journal must tell it. A database of this file's own.
 */
const cluster = pgCluster();
const t = pgSandboxPerFile(cluster);

describe.skipIf(cluster === null)('a PostgreSQL journal dropped under a running daemon', () => {
  it('stops trading within seconds, exits non-zero naming the lost journal and the way on, and sends nothing after', async () => {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '* * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.0001' });
    const daemon = startDaemon(['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data], { ...liveEnv(t.sandbox, t.dir), STACKER_DATABASE_URL: t.url });
    await daemon.waitFor('"to":"FILLED"', 20_000);
    const client = new pg.Client({ connectionString: t.url });
    await client.connect();
    try {
      await client.query('DROP SCHEMA stacker_live CASCADE');
    } finally {
      await client.end();
    }
    const droppedAtSec = Date.now() / 1000;
    const exit = await Promise.race([daemon.exited, new Promise((resolve) => setTimeout(() => resolve('still running'), 20_000))]);
    expect(exit).not.toBe('still running');
    expect(exit).not.toBe(0);
    expect(daemon.output()).toMatch(/"event":"trading-stopped".*was dropped while stacker was running/);
    expect(daemon.output()).toContain('--rebuild-journal');
    // Nothing sent once the journal was gone (an order already in flight may land just after).
    expect(t.sandbox.exchange.orderHistory({}).filter((order) => order.createdAtSec > droppedAtSec + 1)).toEqual([]);
  }, 60_000);
});
