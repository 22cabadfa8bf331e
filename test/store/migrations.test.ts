import { writeFileSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SchemaTooNewError, StoreError } from '../../src/store/errors.ts';
import { MIGRATIONS, type Migration, SCHEMA_VERSION, migrate } from '../../src/store/migrations.ts';
import { openDatabase } from '../../src/store/sqlite-db.ts';
import { TempWorld } from './helpers.ts';

let world: TempWorld;
beforeEach(() => {
  world = new TempWorld();
});
afterEach(async () => {
  await world.cleanup();
});

function ledger(path: string): { version: number; name: string; applied_at_ms: number }[] {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return db.prepare('SELECT version, name, applied_at_ms FROM schema_migrations ORDER BY version').all() as never;
  } finally {
    db.close();
  }
}

describe('schema migrations', () => {
  it('applies every migration once on a new file and nothing on reopen', async () => {
    world.nowMs = 111;
    const first = await world.opened();
    await first.close();
    world.nowMs = 222;
    const second = await world.opened();
    await second.close();
    expect(ledger(world.path())).toEqual(MIGRATIONS.map((m) => ({ version: m.version, name: m.name, applied_at_ms: 111 })));
  });

  it('returns the versions it applied, and none the second time', () => {
    const db = openDatabase({ path: world.path() });
    try {
      expect(migrate(db, world.path(), () => 1)).toEqual(MIGRATIONS.map((m) => m.version));
      expect(migrate(db, world.path(), () => 2)).toEqual([]);
    } finally {
      db.close();
    }
  });

  it('opens in WAL mode with synchronous=FULL, foreign keys on and a busy timeout', () => {
    const db = openDatabase({ path: world.path(), busyTimeoutMs: 1234 });
    try {
      expect(db.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' });
      expect(db.prepare('PRAGMA synchronous').get()).toEqual({ synchronous: 2 });
      expect(db.prepare('PRAGMA foreign_keys').get()).toEqual({ foreign_keys: 1 });
      expect(db.prepare('PRAGMA busy_timeout').get()).toEqual({ timeout: 1234 });
    } finally {
      db.close();
    }
  });

  it('keeps SQLite\'s page cache default unless told, and caps it at the KiB it is given', () => {
    const plain = openDatabase({ path: world.path() });
    const capped = openDatabase({ path: world.path(), cacheKiB: 512 });
    try {
      expect(plain.prepare('PRAGMA cache_size').get()).toEqual({ cache_size: -2000 });
      expect(capped.prepare('PRAGMA cache_size').get()).toEqual({ cache_size: -512 });
    } finally {
      plain.close();
      capped.close();
    }
  });

  it('applies a migration added later on the next open, leaving earlier ones alone', () => {
    const later: Migration = { version: SCHEMA_VERSION + 1, name: 'add notes', sql: 'CREATE TABLE notes (id INTEGER PRIMARY KEY)' };
    const db = openDatabase({ path: world.path() });
    try {
      migrate(db, world.path(), () => 1);
      expect(migrate(db, world.path(), () => 2, [...MIGRATIONS, later])).toEqual([later.version]);
      expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'notes'").get()).toEqual({ name: 'notes' });
    } finally {
      db.close();
    }
  });

  it('rolls a failing migration back entirely: no half-made table, version unchanged', () => {
    const broken: Migration = { version: SCHEMA_VERSION + 1, name: 'broken', sql: 'CREATE TABLE half (x); SELECT nope FROM nowhere;' };
    const db = openDatabase({ path: world.path() });
    try {
      migrate(db, world.path(), () => 1);
      expect(() => migrate(db, world.path(), () => 2, [...MIGRATIONS, broken])).toThrow(/nowhere/);
      expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'half'").get()).toBeUndefined();
      expect(db.prepare('SELECT max(version) AS v FROM schema_migrations').get()).toEqual({ v: SCHEMA_VERSION });
    } finally {
      db.close();
    }
  });

  it('refuses a database whose schema is newer than the code, naming both versions, without touching it', async () => {
    await (await world.opened()).close();
    const raw = new DatabaseSync(world.path());
    raw.prepare('INSERT INTO schema_migrations (version, name, applied_at_ms) VALUES (?, ?, ?)').run(SCHEMA_VERSION + 7, 'from the future', 1);
    raw.close();

    const error = await world.journal().open().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SchemaTooNewError);
    expect(error).toMatchObject({ code: 'E_STORE', reason: 'schema-too-new', databaseVersion: SCHEMA_VERSION + 7, knownVersion: SCHEMA_VERSION });
    expect((error as Error).message).toContain(world.path());
    expect((error as Error).message).toMatch(/newer stacker/);
    expect(ledger(world.path()).map((row) => row.version)).toEqual([...MIGRATIONS.map((m) => m.version), SCHEMA_VERSION + 7]);
  });

  it('refuses a database whose recorded migration has another name (a diverging build)', async () => {
    await (await world.opened()).close();
    const raw = new DatabaseSync(world.path());
    raw.prepare("UPDATE schema_migrations SET name = 'something else' WHERE version = 1").run();
    raw.close();
    await expect(world.journal().open()).rejects.toMatchObject({ code: 'E_STORE', reason: 'schema-mismatch' });
  });

  it('opens read-only without migrating, and refuses a file that still needs migrations', async () => {
    await (await world.opened()).close();
    const reader = await world.opened({ readOnly: true });
    expect(await reader.listSlots()).toEqual([]);

    const emptyPath = world.path('empty.db');
    new DatabaseSync(emptyPath).close();
    await expect(world.journal({ path: emptyPath, readOnly: true }).open()).rejects.toMatchObject({ reason: 'schema-outdated', message: expect.stringMatching(/start the daemon once \(stacker run\), which migrates it; readers never change a journal$/) });
  });

  it('reports a file that is not a database as open-failed', async () => {
    writeFileSync(world.path(), 'this is not a database, it is a text file long enough to have a header........');
    const error = await world.journal().open().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ code: 'E_STORE', reason: 'open-failed' });
  });

  it('runs in memory for throwaway journals', async () => {
    const journal = await world.opened({ path: ':memory:' });
    expect(await journal.claimSlot({ instance: 'bt', slotTimeMs: 0, runId: null })).toBe(true);
    expect(await journal.claimSlot({ instance: 'bt', slotTimeMs: 0, runId: null })).toBe(false);
  });

  it('refuses every operation before open and after close', async () => {
    const journal = world.journal();
    await expect(journal.listSlots()).rejects.toMatchObject({ reason: 'closed' });
    await journal.open();
    await journal.close();
    await expect(journal.listSlots()).rejects.toMatchObject({ reason: 'closed' });
  });
});

describe('migration 2 (stop activation transitions)', () => {
  it('upgrades a version-1 journal and keeps every transition', async () => {
    const { DatabaseSync } = await import('node:sqlite');
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'stacker-mig2-'));
    try {
      const path = join(dir, 'old.db');
      const v1 = new DatabaseSync(path);
      migrate(v1, path, () => 1, MIGRATIONS.filter((m) => m.version === 1));
      v1.exec(`INSERT INTO orders (order_id, client_order_id, market, side, type, intent_id, amount, left_amount, price, filled_base, filled_quote, fee, fee_asset,
        status, status_derived, stp, stop_activated, exchange_created_at_sec, first_seen_at_ms, updated_at_ms)
        VALUES ('1', 'c-1', 'BTC_USDT', 'buy', 'stock market', NULL, '0.001', '0', NULL, '0.001', '65', '0.065', 'USDT', 'FILLED', 0, 'no', NULL, 1, 1, 1)`);
      v1.exec(`INSERT INTO order_transitions (order_id, seq, from_status, to_status, filled_base, filled_quote, fee, at_ms) VALUES ('1', 1, NULL, 'FILLED', '0.001', '65', '0.065', 5)`);
      expect(migrate(v1, path, () => 2, MIGRATIONS.filter((m) => m.version <= 2))).toEqual([2]);
      expect(v1.prepare('SELECT seq, to_status, filled_quote, stop_activated FROM order_transitions').all()).toEqual([{ seq: 1, to_status: 'FILLED', filled_quote: '65', stop_activated: 0 }]);
      v1.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('migration 3 (exactly once against a real exchange)', () => {
  it('rebuilds the intents table keeping every row and every reference, dates old sends, and gives the journal an id', async () => {
    const { DatabaseSync } = await import('node:sqlite');
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'stacker-mig3-'));
    try {
      const path = join(dir, 'old.db');
      const db = new DatabaseSync(path, { enableForeignKeyConstraints: true });
      migrate(db, path, () => 1, MIGRATIONS.filter((m) => m.version <= 2));
      db.exec(`INSERT INTO slots (instance, slot_time_ms, status, reason, run_id, claimed_at_ms, finished_at_ms) VALUES ('dca', 1000, 'done', NULL, NULL, 1000, 1001)`);
      db.exec(`INSERT INTO intents (intent_id, instance, slot_time_ms, idx, kind, params, client_order_id, status, attempts, result, error_code, error_message, created_at_ms, updated_at_ms)
        VALUES ('i-0', 'dca', 1000, 0, 'transfer', '{"ticker":"USDT","amount":"5","from":"main","to":"spot"}', NULL, 'done', 1, NULL, NULL, NULL, 1000, 1100),
               ('i-1', 'dca', 1000, 1, 'buy-stock-market', '{"market":"BTC_USDT","amount":"0.001"}', 'c-1', 'unknown', 1, NULL, 'E_TIMEOUT', 'lost', 1000, 1200),
               ('i-2', 'dca', 1000, 2, 'note', '{"level":"info","message":"hi"}', NULL, 'done', 0, NULL, NULL, NULL, 1000, 1000)`);
      db.exec(`INSERT INTO transfers (intent_id, ticker, amount, from_account, to_account, status, created_at_ms, updated_at_ms) VALUES ('i-0', 'USDT', '5', 'main', 'spot', 'done', 1, 1)`);
      db.exec(`INSERT INTO orders (order_id, client_order_id, market, side, type, intent_id, amount, left_amount, price, filled_base, filled_quote, fee, fee_asset,
        status, status_derived, stp, stop_activated, exchange_created_at_sec, first_seen_at_ms, updated_at_ms)
        VALUES ('9', 'c-1', 'BTC_USDT', 'buy', 'stock market', 'i-1', '0.001', '0', NULL, '0.001', '65', '0.065', 'USDT', 'FILLED', 0, 'no', NULL, 1, 1, 1)`);
      expect(migrate(db, path, () => 3, MIGRATIONS.filter((m) => m.version <= 3))).toEqual([3]);
      expect(db.prepare('SELECT intent_id, status, sent_at_ms, origin FROM intents ORDER BY idx').all()).toEqual([
        { intent_id: 'i-0', status: 'done', sent_at_ms: 1100, origin: 'engine' },
        { intent_id: 'i-1', status: 'unknown', sent_at_ms: 1200, origin: 'engine' },
        { intent_id: 'i-2', status: 'done', sent_at_ms: null, origin: 'engine' },
      ]);
      expect(db.prepare('PRAGMA foreign_key_check').all()).toEqual([]);
      expect(db.prepare("SELECT o.order_id FROM orders o JOIN intents i ON i.intent_id = o.intent_id WHERE i.client_order_id = 'c-1'").all()).toEqual([{ order_id: '9' }]);
      expect(String(db.prepare("SELECT value FROM journal_meta WHERE key = 'journal_id'").get()?.['value'])).toMatch(/^[0-9a-f]{32}$/);
      db.exec("UPDATE intents SET status = 'not-found' WHERE intent_id = 'i-1'");
      // Foreign keys are back on after the rebuild.
      expect(() => db.exec("INSERT INTO transfers (intent_id, ticker, amount, from_account, to_account, status, created_at_ms, updated_at_ms) VALUES ('nope', 'USDT', '5', 'main', 'spot', 'done', 1, 1)")).toThrow(/FOREIGN KEY/);
      db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('migration 4 (operator controls)', () => {
  it('adds the operator controls to a version-3 journal, keeping its slots, and allows one kill switch row only', async () => {
    const { DatabaseSync } = await import('node:sqlite');
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'stacker-mig4-'));
    try {
      const path = join(dir, 'old.db');
      const db = new DatabaseSync(path, { enableForeignKeyConstraints: true });
      migrate(db, path, () => 1, MIGRATIONS.filter((m) => m.version <= 3));
      db.exec(`INSERT INTO slots (instance, slot_time_ms, status, reason, run_id, claimed_at_ms, finished_at_ms) VALUES ('dca', 1000, 'done', NULL, NULL, 1000, 1001)`);
      expect(migrate(db, path, () => 4, MIGRATIONS.filter((m) => m.version <= 4))).toEqual([4]);
      expect(db.prepare('SELECT instance, status FROM slots').all()).toEqual([{ instance: 'dca', status: 'done' }]);
      expect(db.prepare('SELECT * FROM operator_controls').all()).toEqual([]);
      db.exec(`INSERT INTO operator_controls (control, target, since_ms) VALUES ('pause', 'dca', 5), ('kill-switch', '', 6)`);
      expect(() => db.exec(`INSERT INTO operator_controls (control, target, since_ms) VALUES ('kill-switch', '', 7)`)).toThrow(/UNIQUE/);
      expect(() => db.exec(`INSERT INTO operator_controls (control, target, since_ms) VALUES ('kill-switch', 'dca', 7)`)).toThrow(/CHECK/);
      expect(() => db.exec(`INSERT INTO operator_controls (control, target, since_ms) VALUES ('pause', '', 7)`)).toThrow(/CHECK/);
      expect(() => db.exec(`INSERT INTO operator_controls (control, target, since_ms) VALUES ('halt', 'dca', 7)`)).toThrow(/CHECK/);
      db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('migration 5 (accounts)', () => {
  it('adds the account of an intent to a version-4 journal: NULL for the intents it had, a name for new ones, never empty', async () => {
    await withJournalAt(4, (db, path) => {
      db.exec(`INSERT INTO slots (instance, slot_time_ms, status, reason, run_id, claimed_at_ms, finished_at_ms) VALUES ('dca', 1000, 'done', NULL, NULL, 1000, 1001)`);
      const insert = (id: string, idx: number, account: string | null): void => {
        db.prepare(`INSERT INTO intents (intent_id, instance, slot_time_ms, idx, kind, params, status, created_at_ms, updated_at_ms) VALUES (?, 'dca', 1000, ?, 'note', '{}', 'done', 1, 1)`).run(id, idx);
        if (account !== null) db.prepare('UPDATE intents SET account = ? WHERE intent_id = ?').run(account, id);
      };
      insert('old', 0, null);
      expect(migrate(db, path, () => 5, MIGRATIONS.filter((m) => m.version <= 5))).toEqual([5]);
      insert('new', 1, 'main');
      expect(db.prepare('SELECT intent_id, account FROM intents ORDER BY idx').all()).toEqual([
        { intent_id: 'old', account: null },
        { intent_id: 'new', account: 'main' },
      ]);
      expect(() => db.prepare("UPDATE intents SET account = '' WHERE intent_id = 'new'").run()).toThrow(/CHECK/);
    });
  });
});

describe('migration 6 (account kill switch)', () => {
  it("lets the kill switch name an account, keeping a version-5 journal's controls and the other rules", async () => {
    await withJournalAt(5, (db, path) => {
      db.exec(`INSERT INTO operator_controls (control, target, since_ms) VALUES ('pause', 'dca', 5), ('kill-switch', '', 6)`);
      expect(() => db.exec(`INSERT INTO operator_controls (control, target, since_ms) VALUES ('kill-switch', 'main', 7)`)).toThrow(/CHECK/);
      expect(migrate(db, path, () => 6, MIGRATIONS.filter((m) => m.version <= 6))).toEqual([6]);
      expect(db.prepare('SELECT control, target, since_ms FROM operator_controls ORDER BY control, target').all()).toEqual([
        { control: 'kill-switch', target: '', since_ms: 6 },
        { control: 'pause', target: 'dca', since_ms: 5 },
      ]);
      db.exec(`INSERT INTO operator_controls (control, target, since_ms) VALUES ('kill-switch', 'main', 7)`);
      expect(() => db.exec(`INSERT INTO operator_controls (control, target, since_ms) VALUES ('kill-switch', 'main', 8)`)).toThrow(/UNIQUE/);
      expect(() => db.exec(`INSERT INTO operator_controls (control, target, since_ms) VALUES ('pause', '', 8)`)).toThrow(/CHECK/);
      expect(() => db.exec(`INSERT INTO operator_controls (control, target, since_ms) VALUES ('halt', 'dca', 8)`)).toThrow(/CHECK/);
    });
  });
});

describe('migration 7 (scheduled instances)', () => {
  it('adds an empty table of when each instance was first scheduled to a version-6 journal, keeping its slots', async () => {
    await withJournalAt(6, (db, path) => {
      db.exec(`INSERT INTO slots (instance, slot_time_ms, status, reason, run_id, claimed_at_ms, finished_at_ms) VALUES ('dca', 1000, 'done', NULL, NULL, 1000, 1001)`);
      expect(migrate(db, path, () => 7, MIGRATIONS.filter((m) => m.version <= 7))).toEqual([7]);
      expect(db.prepare('SELECT instance, status FROM slots').all()).toEqual([{ instance: 'dca', status: 'done' }]);
      // Nothing is guessed for the instances the journal had: their slots anchor their catch-up.
      expect(db.prepare('SELECT * FROM scheduled_instances').all()).toEqual([]);
      db.exec(`INSERT INTO scheduled_instances (instance, since_ms) VALUES ('new', 5)`);
      expect(() => db.exec(`INSERT INTO scheduled_instances (instance, since_ms) VALUES ('new', 6)`)).toThrow(/UNIQUE/);
      expect(() => db.exec(`INSERT INTO scheduled_instances (instance, since_ms) VALUES ('', 6)`)).toThrow(/CHECK/);
    });
  });

  it('is applied when a version-6 file is opened, and the anchor written then survives reopen', async () => {
    const db = openDatabase({ path: world.path() });
    try {
      migrate(db, world.path(), () => 1, MIGRATIONS.filter((m) => m.version <= 6));
    } finally {
      db.close();
    }
    const journal = await world.opened();
    expect(await journal.scheduledSince('dca')).toBeNull();
    expect(await journal.markScheduled('dca', 42)).toBe(42);
    await journal.close();
    const again = await world.opened();
    expect(await again.scheduledSince('dca')).toBe(42);
  });
});

/** A journal file migrated up to `version`, handed to `body`, removed afterwards. */
async function withJournalAt(version: number, body: (db: import('node:sqlite').DatabaseSync, path: string) => void): Promise<void> {
  const { DatabaseSync } = await import('node:sqlite');
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { tmpdir } = await import('node:os');
  const dir = mkdtempSync(join(tmpdir(), `stacker-mig${version + 1}-`));
  const path = join(dir, 'old.db');
  const db = new DatabaseSync(path, { enableForeignKeyConstraints: true });
  try {
    migrate(db, path, () => 1, MIGRATIONS.filter((m) => m.version <= version));
    body(db, path);
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
