import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.ts';
import { PgJournal } from '../../src/store/pg-journal.ts';
import type { PgClusterInfo } from '../support/pg-cluster.ts';
import { createDatabase, dropDatabase } from '../support/pg-databases.ts';
import { type DaemonDir, type RunningDaemon, daemonDir, liveEnv, startDaemon } from './daemon-process.ts';

/** What a test file of real daemons on a PostgreSQL journal works with. */
export interface PgSandbox {
  readonly sandbox: Sandbox;
  readonly dir: DaemonDir;
  /** The file's own database (no password: the test cluster trusts loopback). */
  readonly url: string;
  /**
   * `stacker run --live --standby` as a host of its own runs it: the file's instance files and
   * database, the host's HOME (its API-key lock) and data dir; starting on a host again reuses them.
   */
  standbyOn(host: string, env?: Record<string, string>): RunningDaemon;
  /** The live journal in the database, opened read-only as `stacker orders` reads it, for the time of `read`. */
  readJournal<T>(read: (journal: PgJournal) => Promise<T>): Promise<T>;
  /** The pid the journal's lease names as its owner (`stacker pid N on HOST`), as a takeover wrote it. */
  leaseHolderPid(): Promise<number | null>;
}

/**
 * A sandbox exchange, a daemon folder and an empty database for a test file, removed after it.
 * With no cluster (PostgreSQL not installed) nothing is set up: the file's tests skip.
 */
export function pgSandboxPerFile(cluster: PgClusterInfo | null): PgSandbox {
  let state: { readonly sandbox: Sandbox; readonly dir: DaemonDir; readonly url: string } | null = null;
  beforeAll(async () => {
    if (cluster === null) return;
    state = { sandbox: await startSandbox(), dir: daemonDir(), url: await createDatabase(cluster) };
  });
  afterAll(async () => {
    if (cluster === null || state === null) return;
    await state.sandbox.stop();
    state.dir.remove();
    await dropDatabase(cluster, state.url);
  });
  const current = (): NonNullable<typeof state> => {
    if (state === null) throw new Error('pgSandboxPerFile: used outside a test, or without PostgreSQL');
    return state;
  };
  return {
    get sandbox() {
      return current().sandbox;
    },
    get dir() {
      return current().dir;
    },
    get url() {
      return current().url;
    },
    standbyOn(host, env = {}) {
      const { sandbox, dir, url } = current();
      return startDaemon(['--live', '--standby', '--strategies', dir.strategies, '--data-dir', join(dir.root, host, 'data')], {
        ...liveEnv(sandbox, dir),
        HOME: join(dir.root, host),
        STACKER_DATABASE_URL: url,
        ...env,
      });
    },
    async leaseHolderPid() {
      const client = new pg.Client({ connectionString: current().url });
      await client.connect();
      try {
        const found = await client.query('SELECT holder FROM stacker_live.journal_lease WHERE id = 1');
        const match = /^stacker pid (\d+) on /.exec(String(found.rows[0]?.['holder'] ?? ''));
        return match === null ? null : Number(match[1]);
      } finally {
        await client.end();
      }
    },
    async readJournal(read) {
      const journal = new PgJournal({ url: current().url, schema: 'stacker_live', readOnly: true });
      await journal.open();
      try {
        return await read(journal);
      } finally {
        await journal.close();
      }
    },
  };
}
