import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { check } from '../../src/cli/commands/check.ts';
import { CommandContext } from '../../src/cli/context.ts';
import { EXIT, exitCodeFor } from '../../src/domain/errors.ts';
import { openStore } from '../../src/store/open-store.ts';
import { pgJournalAccessProblem } from '../../src/store/pg-store.ts';
import { clusterUrl } from '../support/pg-cluster.ts';
import { createDatabase, dropDatabase, pgCluster } from '../support/pg-databases.ts';
import { failure } from '../support/thrown.ts';
import { ConfigWorld, DCA } from '../config/helpers.ts';
import { SLOT, TempWorld } from './helpers.ts';

/**
 * A least-privilege role, as a managed database hands out: it may connect, but not create
 * schemas in the database (no CREATE on it). Given a schema of its own, made by the database's
 * owner, the daemon starts; without one, the start and `stacker check` say what to grant.
 */

const cluster = pgCluster();
let world: TempWorld;
let adminUrl: string;
let role: string;

beforeEach(async () => {
  world = new TempWorld();
  if (cluster === null) return;
  adminUrl = await createDatabase(cluster);
  role = `r_${randomBytes(6).toString('hex')}`;
  const database = new URL(adminUrl).pathname.slice(1);
  await sql(clusterUrl(cluster, 'postgres'), `CREATE ROLE ${role} LOGIN`);
  await sql(adminUrl, `REVOKE CREATE ON DATABASE ${database} FROM PUBLIC; GRANT CONNECT ON DATABASE ${database} TO ${role}`);
});
afterEach(async () => {
  if (cluster !== null) {
    await dropDatabase(cluster, adminUrl);
    await sql(clusterUrl(cluster, 'postgres'), `DROP ROLE IF EXISTS ${role}`);
  }
  await world.cleanup();
});

async function sql(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** The test database, connecting as the least-privilege role. */
function roleUrl(): string {
  const url = new URL(adminUrl);
  url.username = role;
  return url.toString();
}

const open = (mode: 'live' | 'dry-run' = 'live') => openStore({ dataDir: join(world.dir, 'data'), mode, databaseUrl: roleUrl(), userLockDir: join(world.dir, 'locks') });

describe.skipIf(cluster === null)('a PostgreSQL role without CREATE on the database', () => {
  it('starts, and restarts, on a schema the database owner made for it', async () => {
    await sql(adminUrl, `CREATE SCHEMA stacker_live AUTHORIZATION ${role}`);
    expect(await pgJournalAccessProblem(roleUrl(), 'live')).toBeNull();
    const first = await open();
    await first.journal.claimSlot({ ...SLOT, runId: null });
    await first.close();
    // The second start finds the schema and its tables: nothing to create, nothing to ask for.
    const again = await open();
    expect((await again.journal.listSlots({ instance: SLOT.instance })).map((slot) => slot.slotTimeMs)).toEqual([SLOT.slotTimeMs]);
    await again.close();
  });

  it('is refused at start without its schema, with what to grant (exit 3), and `check` finds the same before any start', async () => {
    const foreseen = await pgJournalAccessProblem(roleUrl(), 'live');
    const error = await failure(open());
    expect(error).toMatchObject({ code: 'E_STORE', reason: 'no-privilege' });
    expect(exitCodeFor(error)).toBe(EXIT.refused);
    const message = (error as Error).message;
    expect(message).toContain(`the role ${role} may not create the schema stacker_live`);
    expect(message).toContain(`GRANT CREATE ON DATABASE ${new URL(adminUrl).pathname.slice(1)} TO ${role}`);
    expect(message).toContain(`CREATE SCHEMA stacker_live AUTHORIZATION ${role}`);
    expect(foreseen?.message).toBe(message);
  });

  it('a schema it may use but not create tables in is refused while the journal is still to be made, naming the owner change', async () => {
    await sql(adminUrl, `CREATE SCHEMA stacker_live; GRANT USAGE ON SCHEMA stacker_live TO ${role}`);
    const error = await failure(open());
    expect(error).toMatchObject({ reason: 'no-privilege', message: expect.stringContaining(`may not create the journal's tables in the schema stacker_live (it has no CREATE on it; schema version(s) 1, 2, 3, 4, 5, 6, 7, 8, 9 are still to apply): make the role the schema's owner (ALTER SCHEMA stacker_live OWNER TO ${role})`) });
  });

  it('`stacker check` fails as the start would, with its message, instead of saying ok', async () => {
    const config = new ConfigWorld();
    try {
      config.instance('dca-btc', DCA);
      const out: string[] = [];
      const ctx = new CommandContext('check', { json: false }, { out: (text) => void out.push(text), err: () => undefined }, { json: false, verbose: false, lookupHint: undefined });
      const error = await failure(check(ctx, { strategies: config.strategiesDir, dataDir: join(world.dir, 'data') }, { env: { STACKER_DATABASE_URL: roleUrl() }, configOnly: true }));
      expect(error).toMatchObject({ code: 'E_STORE', reason: 'no-privilege', message: expect.stringContaining(`CREATE SCHEMA stacker_dry_run AUTHORIZATION ${role}`) });
      expect(exitCodeFor(error)).toBe(EXIT.refused);
      expect(out.join('')).toContain('(schema stacker_dry_run): cannot be created or migrated by this role, `stacker run` will not start: migrating the journal');
    } finally {
      config.cleanup();
    }
  });
});

/** A journal of the role's, on a schema the owner made for it, with a slot claimed: a running daemon's. */
async function runningJournal(use: (store: Awaited<ReturnType<typeof open>>) => Promise<void>): Promise<void> {
  await sql(adminUrl, `CREATE SCHEMA stacker_live AUTHORIZATION ${role}`);
  const store = await open();
  try {
    await store.journal.claimSlot({ ...SLOT, runId: null });
    await use(store);
  } finally {
    await store.close();
  }
}

describe.skipIf(cluster === null)('a PostgreSQL role that loses a privilege while the daemon runs', () => {
  it('is a journal that cannot be written (/healthz), named as a privilege, until the operation that failed succeeds again: a heartbeat or a slot on other tables does not clear it', async () => {
    await runningJournal(async (store) => {
      // An administrator gives the intents table to another owner: the role may no longer touch it.
      await sql(adminUrl, 'ALTER TABLE stacker_live.intents OWNER TO postgres');
      const refused = await failure(store.journal.unresolvedIntents());
      expect(refused).toMatchObject({ code: 'E_STORE', reason: 'no-privilege', retryable: true });
      expect(String((refused as Error).message)).toMatch(/permission denied for table intents: the role in STACKER_DATABASE_URL lacks a privilege on the journal/);
      const since = store.journal.writeFailure()?.atMs;
      expect(store.journal.writeFailure()?.message).toMatch(/permission denied for table intents/);
      // The heartbeat writes journal_meta, which the role still owns.
      await store.journal.recordHeartbeat();
      expect(store.journal.writeFailure()?.atMs).toBe(since);
      await store.journal.finishSlot({ instance: SLOT.instance, slotTimeMs: SLOT.slotTimeMs, status: 'done' });
      expect(store.journal.writeFailure()).toMatchObject({ atMs: since, lasting: true });
      await sql(adminUrl, `ALTER TABLE stacker_live.intents OWNER TO ${role}`);
      await store.journal.unresolvedIntents();
      expect(store.journal.writeFailure()).toBeNull();
    });
  });
});

describe.skipIf(cluster === null)('a PostgreSQL role refused its login while the daemon runs (a password rotated, the role disabled)', () => {
  it('is a journal that cannot be written (/healthz) from the first refusal, not only after three failed slots, and clears once a login succeeds', async () => {
    const superuser = clusterUrl(cluster as NonNullable<typeof cluster>, 'postgres');
    await runningJournal(async (store) => {
      await sql(superuser, `ALTER ROLE ${role} NOLOGIN`);
      await sql(superuser, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '${role}'`);
      // The pool's connections are gone: the next operations connect again, and are refused.
      let refused: unknown;
      for (let attempt = 0; attempt < 3 && (refused as { reason?: string } | undefined)?.reason !== 'open-failed'; attempt += 1) refused = await failure(store.journal.listSlots({}));
      expect(refused).toMatchObject({ code: 'E_STORE', reason: 'open-failed', message: expect.stringMatching(/not permitted to log in.*check the user, password and database in STACKER_DATABASE_URL/) });
      expect(store.journal.writeFailure()?.message).toMatch(/not permitted to log in/);
      await sql(superuser, `ALTER ROLE ${role} LOGIN`);
      await store.journal.recordHeartbeat();
      expect(store.journal.writeFailure()).toBeNull();
    });
  });
});
