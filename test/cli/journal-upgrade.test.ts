import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acknowledge, journal, upgrade } from '../../src/cli/commands/journal.ts';
import { CommandContext, type GlobalFlags, type RunState } from '../../src/cli/context.ts';
import type { Io } from '../../src/cli/output.ts';
import { EXIT, exitCodeFor } from '../../src/domain/errors.ts';
import { SCHEMA_VERSION } from '../../src/store/migrations.ts';
import { openStore } from '../../src/store/open-store.ts';
import { openPool } from '../../src/store/pg-db.ts';
import { PG_MIGRATIONS, migratePg } from '../../src/store/pg-migrations.ts';
import { createDatabase, dropDatabase, pgCluster } from '../support/pg-databases.ts';
import { olderJournal, schemaOf } from '../support/older-journal.ts';

/**
 * `stacker journal upgrade`: the careful way to a new build. It migrates the journal an older
 * build left as a start would (its copy of the file, its lock), and trades nothing, so the journal
 * can be read with the new build first; the readers never migrate it themselves.
 */

let dataDir: string;
let root: string;
let captured: { out: string[]; err: string[] };

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'stacker-upgrade-'));
  dataDir = join(root, 'data');
  mkdirSync(dataDir);
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

function context(json = false): CommandContext {
  captured = { out: [], err: [] };
  const io: Io = { out: (text) => void captured.out.push(text), err: (text) => void captured.err.push(text) };
  const state: RunState = { json, verbose: false, lookupHint: undefined };
  return new CommandContext('journal upgrade', { json } satisfies GlobalFlags, io, state);
}

const stdout = (): string => captured.out.join('');
const NO_ENV = { env: {} };

describe('stacker journal upgrade', () => {
  it('migrates a journal an older build left, keeping the file as it was, starts no run and trades nothing; the readers then read it', async () => {
    const path = join(dataDir, 'stacker.db');
    olderJournal(path, 4);
    await upgrade(context(), { dataDir, mode: 'live' }, NO_ENV);
    expect(stdout()).toBe(
      `upgraded the live journal ${path} from schema 4 to ${SCHEMA_VERSION} (5 accounts, 6 account kill switch, 7 scheduled instances, 8 budgets by time, 9 orders by change); the file as it was is kept as ${path}.schema-4.bak ` +
        '(README "Upgrading" says how to go back: a stacker older than this one refuses the journal now). Nothing was traded: read it with `stacker journal`, `orders`, `report` or `check`, then start the daemon\n',
    );
    expect(schemaOf(path)).toBe(SCHEMA_VERSION);
    expect(schemaOf(`${path}.schema-4.bak`)).toBe(4);

    const store = await openStore({ dataDir, mode: 'live' });
    try {
      expect(await store.journal.listRuns()).toEqual([]);
      expect((await store.journal.operatorControls()).killSwitchSinceMs).toBe(5);
    } finally {
      await store.close();
    }
    await journal(context(), { dataDir, mode: 'live' }, NO_ENV);

    await upgrade(context(true), { dataDir, mode: 'live' }, NO_ENV);
    expect(JSON.parse(stdout())).toEqual({ journal: path, mode: 'live', schema: SCHEMA_VERSION, migrated: null });
    await upgrade(context(), { dataDir, mode: 'live' }, NO_ENV);
    expect(stdout()).toBe(`the live journal ${path} is of schema ${SCHEMA_VERSION} already, this stacker's: nothing to upgrade\n`);
  });

  it('is refused while a daemon holds the journal (E_LOCKED, exit 3), changing nothing', async () => {
    const path = join(dataDir, 'stacker.db');
    const daemon = await openStore({ dataDir, mode: 'live' });
    try {
      const error = await upgrade(context(), { dataDir, mode: 'live' }, NO_ENV).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'E_LOCKED' });
      expect(exitCodeFor(error)).toBe(EXIT.refused);
    } finally {
      await daemon.close();
    }
    expect(readdirSync(dataDir).filter((name) => name.endsWith('.bak'))).toEqual([]);
    expect(schemaOf(path)).toBe(SCHEMA_VERSION);
  });

  it('starts no journal where there is none (exit 2, naming the journals the data dir has)', async () => {
    olderJournal(join(dataDir, 'stacker-dry-run.db'), 6);
    const error = await upgrade(context(), { dataDir, mode: 'live' }, NO_ENV).catch((e: unknown) => e);
    expect(exitCodeFor(error)).toBe(EXIT.badInput);
    expect(String((error as Error).message)).toContain(`no live journal at ${join(dataDir, 'stacker.db')}: this data dir has a dry-run journal (--mode dry-run)`);
    expect(existsSync(join(dataDir, 'stacker.db'))).toBe(false);
    expect(schemaOf(join(dataDir, 'stacker-dry-run.db'))).toBe(6);
  });

  it('the readers refuse an older journal pointing to it, and journal acknowledge writes beside a daemon but never migrates', async () => {
    const path = join(dataDir, 'stacker.db');
    olderJournal(path, 4);
    const read = await journal(context(), { dataDir, mode: 'live' }, NO_ENV).catch((e: unknown) => e);
    expect(read).toMatchObject({ code: 'E_STORE', reason: 'schema-outdated' });
    expect(String((read as Error).message)).toContain(
      `${path} is of schema version 4, older than this stacker's ${SCHEMA_VERSION} (an older stacker wrote it): \`stacker run\` migrates it at its start, keeping a copy of the file as it was, and \`stacker journal upgrade\` migrates it now without trading`,
    );
    await expect(acknowledge(context(), { dataDir, mode: 'live' }, NO_ENV)).rejects.toMatchObject({ reason: 'schema-outdated' });
    expect(schemaOf(path)).toBe(4);
  });
});

const cluster = pgCluster();

describe.skipIf(cluster === null)('stacker journal upgrade on PostgreSQL', () => {
  let url: string;
  beforeEach(async () => {
    if (cluster !== null) url = await createDatabase(cluster);
  });
  afterEach(async () => {
    if (cluster !== null) await dropDatabase(cluster, url);
  });

  it('migrates an older schema without trading, and says the way back is the pg_dump taken before', async () => {
    const pool = openPool({ url, schema: 'stacker_live' });
    try {
      await migratePg(pool, 'stacker_live', 'test', () => 1, PG_MIGRATIONS.filter((m) => m.version <= 5));
    } finally {
      await pool.end();
    }
    const env = { env: { STACKER_DATABASE_URL: url } };
    await expect(journal(context(), { dataDir, mode: 'live' }, env)).rejects.toMatchObject({ reason: 'schema-outdated', message: expect.stringContaining('(take a pg_dump first: a migration is one-way)') });
    await upgrade(context(), { dataDir, mode: 'live' }, env);
    expect(stdout()).toContain(`from schema 5 to ${SCHEMA_VERSION} (6 account kill switch, 7 scheduled instances, 8 budgets by time, 9 orders by change); to go back, restore the pg_dump taken before it`);
    await journal(context(), { dataDir, mode: 'live' }, env);
  });

  it('starts no journal in a database that has none', async () => {
    const error = await upgrade(context(), { dataDir, mode: 'live' }, { env: { STACKER_DATABASE_URL: url } }).catch((e: unknown) => e);
    expect(exitCodeFor(error)).toBe(EXIT.badInput);
    expect(String((error as Error).message)).toMatch(/no live journal in .* yet/);
  });
});
