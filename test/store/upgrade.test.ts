import { chmodSync, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MIGRATIONS, SCHEMA_VERSION } from '../../src/store/migrations.ts';
import { openPool } from '../../src/store/pg-db.ts';
import { PG_MIGRATIONS, migratePg } from '../../src/store/pg-migrations.ts';
import { PgJournal } from '../../src/store/pg-journal.ts';
import { openStore } from '../../src/store/open-store.ts';
import { SqliteJournal } from '../../src/store/sqlite-journal.ts';
import { pgCluster } from '../support/pg-databases.ts';
import { olderJournal, schemaOf } from '../support/older-journal.ts';
import { TempWorld } from './helpers.ts';

/**
 * An upgrade in place: a newer stacker opening a journal an older build wrote migrates it, which
 * is one-way (the older build refuses it afterwards). The daemon's open says what it applied and
 * keeps a copy of the SQLite file as it was, to go back to.
 */

let world: TempWorld;
beforeEach(() => {
  world = new TempWorld();
});
afterEach(async () => {
  await world.cleanup();
});

describe('a daemon opening a journal of an older schema', () => {
  it('keeps a copy of the file as it was (0600, the old schema, its rows), migrates the journal and says from which schema to which', async () => {
    const dataDir = join(world.dir, 'data');
    mkdirSync(dataDir);
    const path = join(dataDir, 'stacker.db');
    olderJournal(path, 4);
    const store = await openStore({ dataDir, mode: 'live', clock: () => world.nowMs });
    try {
      const backup = `${path}.schema-4.bak`;
      expect(store.migrated).toEqual({
        from: 4,
        to: SCHEMA_VERSION,
        applied: MIGRATIONS.filter((m) => m.version > 4).map((m) => ({ version: m.version, name: m.name })),
        backup,
      });
      expect(statSync(backup).mode & 0o777).toBe(0o600);
      expect(schemaOf(backup)).toBe(4);
      const copy = new DatabaseSync(backup, { readOnly: true });
      try {
        expect(copy.prepare('SELECT control, target FROM operator_controls ORDER BY control').all()).toEqual([
          { control: 'kill-switch', target: '' },
          { control: 'pause', target: 'dca-btc' },
        ]);
      } finally {
        copy.close();
      }
      expect(await store.journal.operatorControls()).toMatchObject({ killSwitchSinceMs: 5 });
    } finally {
      await store.close();
    }
    expect(schemaOf(path)).toBe(SCHEMA_VERSION);
    expect(readdirSync(dataDir).filter((name) => name.includes('.partial'))).toEqual([]);

    // Migrated once: the next start has nothing to say and copies nothing.
    const again = await openStore({ dataDir, mode: 'live', clock: () => world.nowMs });
    try {
      expect(again.migrated).toBeNull();
    } finally {
      await again.close();
    }
    expect(readdirSync(dataDir).filter((name) => name.endsWith('.bak'))).toEqual(['stacker.db.schema-4.bak']);
  });

  it("keeps an earlier upgrade's copy of the same schema, and dates the new one", async () => {
    const dataDir = join(world.dir, 'data');
    mkdirSync(dataDir);
    const path = join(dataDir, 'stacker.db');
    olderJournal(`${path}.schema-6.bak`, 6);
    olderJournal(path, 6);
    world.nowMs = Date.UTC(2026, 0, 2, 3, 4, 5);
    const store = await openStore({ dataDir, mode: 'live', clock: () => world.nowMs });
    await store.close();
    expect(store.migrated?.backup).toBe(`${path}.schema-6.20260102030405.bak`);
    expect(schemaOf(`${path}.schema-6.20260102030405.bak`)).toBe(6);
    expect(existsSync(`${path}.schema-6.bak`)).toBe(true);
  });

  it('says nothing and copies nothing for a new journal', async () => {
    const dataDir = join(world.dir, 'data');
    const store = await openStore({ dataDir, mode: 'live', clock: () => world.nowMs });
    await store.close();
    expect(store.migrated).toBeNull();
    expect(readdirSync(dataDir).filter((name) => name.endsWith('.bak'))).toEqual([]);
  });

  it('leaves a file opened by other means (a backtest journal, a reader) without a copy', async () => {
    const path = world.path();
    olderJournal(path, 7);
    const journal = new SqliteJournal({ path });
    await journal.open();
    await journal.close();
    expect(journal.migrated).toMatchObject({ from: 7, to: SCHEMA_VERSION, backup: null });
    expect(readdirSync(world.dir).filter((name) => name.endsWith('.bak'))).toEqual([]);
  });
});

describe('the modes of a journal an older build made readable by others', () => {
  it("narrows the journal, its -wal, -shm and identity file to 0600 at the daemon's open, says which, and only once", async () => {
    const dataDir = join(world.dir, 'data');
    mkdirSync(dataDir);
    const path = join(dataDir, 'stacker.db');
    const first = await openStore({ dataDir, mode: 'live', clock: () => world.nowMs });
    await first.close();
    // As the first builds left them: the journal, its WAL files and its identity file 0644.
    const files = [path, `${path}-wal`, `${path}-shm`, `${path}.id`];
    for (const file of files) {
      if (!existsSync(file)) writeFileSync(file, '');
      chmodSync(file, 0o644);
    }
    const store = await openStore({ dataDir, mode: 'live', clock: () => world.nowMs });
    try {
      expect(store.narrowed).toEqual(files.map((file) => ({ path: file, was: 0o644 })));
    } finally {
      await store.close();
    }
    for (const file of files.filter((f) => existsSync(f))) expect(statSync(file).mode & 0o777).toBe(0o600);
    const again = await openStore({ dataDir, mode: 'live', clock: () => world.nowMs });
    await again.close();
    expect(again.narrowed).toEqual([]);
  });
});

describe.skipIf(pgCluster() === null)('a PostgreSQL journal of an older schema', () => {
  it('says from which schema to which it migrated (the copy to go back to is a pg_dump)', async () => {
    world.kind = 'pg';
    const url = await world.pgUrl();
    const pool = openPool({ url, schema: 'stacker_live' });
    try {
      await migratePg(pool, 'stacker_live', 'test', () => 1, PG_MIGRATIONS.filter((m) => m.version <= 5));
    } finally {
      await pool.end();
    }
    const journal = new PgJournal({ url, schema: 'stacker_live' });
    await journal.open();
    await journal.close();
    expect(journal.migrated).toEqual({ from: 5, to: SCHEMA_VERSION, applied: PG_MIGRATIONS.filter((m) => m.version > 5).map((m) => ({ version: m.version, name: m.name })), backup: null });
    const fresh = new PgJournal({ url, schema: 'stacker_live' });
    await fresh.open();
    await fresh.close();
    expect(fresh.migrated).toBeNull();
  });
});
