import type { DatabaseSync } from 'node:sqlite';
import { SchemaOutdatedError, SchemaTooNewError, StoreError } from './errors.ts';
import { transaction } from './sqlite-db.ts';

/**
 * Numbered schema migrations. A shipped migration is never edited: a change is a new number.
 * Each runs in its own transaction together with its row in `schema_migrations`, so a crash
 * mid-migration leaves the previous schema intact and the next open applies it again.
 *
 * Conventions (so a plain `sqlite3` shell reads the file without stacker):
 * - money is TEXT in plain decimal notation, written by formatDecimal, never REAL; the CHECK
 *   keeps a hand-edited float or exponent out;
 * - times are INTEGER Unix milliseconds, in columns named `…_ms`;
 * - ids are TEXT (exchange order ids exceed 2^53 in principle);
 * - our own enums are CHECKed; exchange-defined values (order status, side, type) are not, so a
 *   new exchange value never needs a table rebuild.
 */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
  /**
   * The migration rebuilds a table that others reference (SQLite cannot change a constraint in
   * place). SQLite's procedure for that: foreign keys off around the transaction, and
   * `foreign_key_check` clean before it commits.
   */
  readonly rebuildsReferencedTable?: boolean;
}

const decimal = (column: string, nullable = false): string =>
  `${column} TEXT${nullable ? '' : ' NOT NULL'} CHECK (${column} IS NULL OR (${column} <> '' AND ${column} NOT GLOB '*[^0-9.-]*'))`;

const V1_INITIAL = `
CREATE TABLE journal_meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

CREATE TABLE runs (
  run_id TEXT PRIMARY KEY,
  mode TEXT NOT NULL CHECK (mode IN ('live', 'dry-run', 'backtest')),
  started_at_ms INTEGER NOT NULL,
  ended_at_ms INTEGER,
  pid INTEGER NOT NULL,
  version TEXT NOT NULL,
  exit_reason TEXT
);

CREATE TABLE slots (
  instance TEXT NOT NULL,
  slot_time_ms INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('claimed', 'done', 'failed', 'skipped', 'missed')),
  reason TEXT,
  run_id TEXT REFERENCES runs (run_id),
  claimed_at_ms INTEGER NOT NULL,
  finished_at_ms INTEGER,
  PRIMARY KEY (instance, slot_time_ms)
);
CREATE INDEX slots_by_status ON slots (status, instance, slot_time_ms);

CREATE TABLE intents (
  intent_id TEXT PRIMARY KEY,
  instance TEXT NOT NULL,
  slot_time_ms INTEGER NOT NULL,
  idx INTEGER NOT NULL CHECK (idx >= 0),
  kind TEXT NOT NULL CHECK (kind IN ('buy-stock-market', 'flex-withdraw', 'transfer', 'note', 'refusal', 'set-state')),
  params TEXT NOT NULL CHECK (json_valid(params)),
  client_order_id TEXT UNIQUE,
  status TEXT NOT NULL CHECK (status IN ('pending', 'sent', 'done', 'refused', 'failed', 'unknown')),
  attempts INTEGER NOT NULL DEFAULT 0,
  result TEXT CHECK (result IS NULL OR json_valid(result)),
  error_code TEXT,
  error_message TEXT,
  created_at_ms INTEGER NOT NULL,
  updated_at_ms INTEGER NOT NULL,
  UNIQUE (instance, slot_time_ms, idx),
  FOREIGN KEY (instance, slot_time_ms) REFERENCES slots (instance, slot_time_ms)
);
CREATE INDEX intents_by_status ON intents (status, created_at_ms);

CREATE TABLE orders (
  order_id TEXT PRIMARY KEY,
  client_order_id TEXT NOT NULL,
  intent_id TEXT REFERENCES intents (intent_id),
  market TEXT NOT NULL,
  side TEXT NOT NULL,
  type TEXT NOT NULL,
  ${decimal('amount')},
  ${decimal('left_amount')},
  ${decimal('price', true)},
  ${decimal('filled_base')},
  ${decimal('filled_quote')},
  ${decimal('fee')},
  fee_asset TEXT,
  status TEXT NOT NULL,
  status_derived INTEGER NOT NULL CHECK (status_derived IN (0, 1)),
  stp TEXT NOT NULL,
  stop_activated INTEGER CHECK (stop_activated IS NULL OR stop_activated IN (0, 1)),
  exchange_created_at_sec REAL NOT NULL,
  first_seen_at_ms INTEGER NOT NULL,
  updated_at_ms INTEGER NOT NULL
);
CREATE INDEX orders_by_intent ON orders (intent_id);
CREATE INDEX orders_by_client_order_id ON orders (client_order_id);
CREATE INDEX orders_by_status ON orders (status);

CREATE TABLE order_transitions (
  order_id TEXT NOT NULL REFERENCES orders (order_id),
  seq INTEGER NOT NULL CHECK (seq >= 1),
  from_status TEXT,
  to_status TEXT NOT NULL,
  ${decimal('filled_base')},
  ${decimal('filled_quote')},
  ${decimal('fee')},
  at_ms INTEGER NOT NULL,
  PRIMARY KEY (order_id, seq),
  -- A state (status and fills) is reached once: a replayed snapshot cannot log it twice.
  UNIQUE (order_id, to_status, filled_base, filled_quote, fee)
);

CREATE TABLE flex_operations (
  intent_id TEXT PRIMARY KEY REFERENCES intents (intent_id),
  plan TEXT NOT NULL,
  ${decimal('amount')},
  transaction_id TEXT,
  status TEXT NOT NULL CHECK (status IN ('sent', 'done', 'failed', 'unknown')),
  created_at_ms INTEGER NOT NULL,
  updated_at_ms INTEGER NOT NULL
);

CREATE TABLE transfers (
  intent_id TEXT PRIMARY KEY REFERENCES intents (intent_id),
  ticker TEXT NOT NULL,
  ${decimal('amount')},
  from_account TEXT NOT NULL,
  to_account TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('sent', 'done', 'failed', 'unknown')),
  created_at_ms INTEGER NOT NULL,
  updated_at_ms INTEGER NOT NULL
);

CREATE TABLE strategy_state (
  instance TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  updated_at_ms INTEGER NOT NULL,
  PRIMARY KEY (instance, key)
);

CREATE TABLE budgets (
  instance TEXT NOT NULL,
  asset TEXT NOT NULL,
  period TEXT NOT NULL CHECK (period IN ('day', 'week', 'month')),
  period_start_ms INTEGER NOT NULL,
  ${decimal('spent_quote')},
  updated_at_ms INTEGER NOT NULL,
  PRIMARY KEY (instance, asset, period, period_start_ms)
);

CREATE TABLE budget_reservations (
  reservation_id TEXT PRIMARY KEY,
  instance TEXT NOT NULL,
  asset TEXT NOT NULL,
  time_zone TEXT NOT NULL,
  at_ms INTEGER NOT NULL,
  ${decimal('amount_quote')},
  day_start_ms INTEGER NOT NULL,
  week_start_ms INTEGER NOT NULL,
  month_start_ms INTEGER NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('held', 'released', 'settled')),
  created_at_ms INTEGER NOT NULL,
  updated_at_ms INTEGER NOT NULL
);
CREATE INDEX budget_reservations_by_state ON budget_reservations (state, instance);
`;

/**
 * v2: a stop order's activation (0 → 1) is a transition of its own even when its status and
 * fills stay the same, so the "reached once" key of a transition includes it. SQLite cannot
 * change a table's constraints in place: the table is rebuilt, rows kept (earlier transitions
 * were none of them activations).
 */
const V2_STOP_ACTIVATION = `
CREATE TABLE order_transitions_v2 (
  order_id TEXT NOT NULL REFERENCES orders (order_id),
  seq INTEGER NOT NULL CHECK (seq >= 1),
  from_status TEXT,
  to_status TEXT NOT NULL,
  ${decimal('filled_base')},
  ${decimal('filled_quote')},
  ${decimal('fee')},
  at_ms INTEGER NOT NULL,
  stop_activated INTEGER NOT NULL DEFAULT 0 CHECK (stop_activated IN (0, 1)),
  PRIMARY KEY (order_id, seq),
  UNIQUE (order_id, to_status, filled_base, filled_quote, fee, stop_activated)
);
INSERT INTO order_transitions_v2 (order_id, seq, from_status, to_status, filled_base, filled_quote, fee, at_ms, stop_activated)
  SELECT order_id, seq, from_status, to_status, filled_base, filled_quote, fee, at_ms, 0 FROM order_transitions;
DROP TABLE order_transitions;
ALTER TABLE order_transitions_v2 RENAME TO order_transitions;
`;

/**
 * v3, exactly once against a real exchange (docs/exactly-once.md):
 * - intents: the terminal-until-proven status `not-found`, the time an intent was sent (a lost
 *   answer's settle window counts from it, not from a restart), and its origin (`adopted` for an
 *   order found in the exchange's history that this journal never sent). The table is rebuilt
 *   because its status CHECK changes; rows are kept, and intents sent before v3 take their last
 *   update as their send time, which only lengthens their window;
 * - ledger_findings: what reconciliation found at the exchange (adopted, foreign, cleared),
 *   reported by /healthz until a human acknowledges it;
 * - journal_meta `journal_id`: this journal's identity, also kept beside the file, so a journal
 *   that vanished or was replaced is noticed instead of silently started afresh.
 */
const V3_EXACTLY_ONCE = `
CREATE TABLE intents_v3 (
  intent_id TEXT PRIMARY KEY,
  instance TEXT NOT NULL,
  slot_time_ms INTEGER NOT NULL,
  idx INTEGER NOT NULL CHECK (idx >= 0),
  kind TEXT NOT NULL CHECK (kind IN ('buy-stock-market', 'flex-withdraw', 'transfer', 'note', 'refusal', 'set-state')),
  params TEXT NOT NULL CHECK (json_valid(params)),
  client_order_id TEXT UNIQUE,
  status TEXT NOT NULL CHECK (status IN ('pending', 'sent', 'done', 'refused', 'failed', 'unknown', 'not-found')),
  attempts INTEGER NOT NULL DEFAULT 0,
  result TEXT CHECK (result IS NULL OR json_valid(result)),
  error_code TEXT,
  error_message TEXT,
  created_at_ms INTEGER NOT NULL,
  updated_at_ms INTEGER NOT NULL,
  sent_at_ms INTEGER,
  origin TEXT NOT NULL DEFAULT 'engine' CHECK (origin IN ('engine', 'adopted')),
  UNIQUE (instance, slot_time_ms, idx),
  FOREIGN KEY (instance, slot_time_ms) REFERENCES slots (instance, slot_time_ms)
);
INSERT INTO intents_v3 (intent_id, instance, slot_time_ms, idx, kind, params, client_order_id, status, attempts, result, error_code,
    error_message, created_at_ms, updated_at_ms, sent_at_ms, origin)
  SELECT intent_id, instance, slot_time_ms, idx, kind, params, client_order_id, status, attempts, result, error_code,
    error_message, created_at_ms, updated_at_ms, CASE WHEN attempts > 0 THEN updated_at_ms END, 'engine' FROM intents;
DROP TABLE intents;
ALTER TABLE intents_v3 RENAME TO intents;
CREATE INDEX intents_by_status ON intents (status, created_at_ms);

CREATE TABLE ledger_findings (
  finding_id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('adopted', 'foreign', 'cleared')),
  instance TEXT,
  client_order_id TEXT NOT NULL,
  order_id TEXT,
  market TEXT,
  detail TEXT NOT NULL,
  found_at_ms INTEGER NOT NULL,
  acknowledged_at_ms INTEGER
);
CREATE INDEX ledger_findings_open ON ledger_findings (acknowledged_at_ms, kind);

INSERT OR IGNORE INTO journal_meta (key, value) VALUES ('journal_id', lower(hex(randomblob(16))));
`;

/**
 * v4, operator controls: what an operator switched from the status API (an instance paused, the
 * kill switch on), kept in the journal so a restart keeps it. `target` is the instance for a
 * pause and '' for the kill switch; a row exists while the control is on.
 */
const V4_OPERATOR_CONTROLS = `
CREATE TABLE operator_controls (
  control TEXT NOT NULL CHECK (control IN ('pause', 'kill-switch')),
  target TEXT NOT NULL CHECK ((control = 'kill-switch') = (target = '')),
  since_ms INTEGER NOT NULL,
  PRIMARY KEY (control, target)
);
`;

/**
 * v5, several accounts in one daemon: the account (API key) an intent was sent on, so reports
 * and lookups follow the account the order really went to, whatever the config says later.
 * NULL for intents journalled before accounts: they were all sent on the one key of their time.
 */
const V5_ACCOUNTS = `
ALTER TABLE intents ADD COLUMN account TEXT CHECK (account IS NULL OR account <> '');
`;

/**
 * v6, a kill switch per account: the operator's kill switch may name an account (`target` its
 * name) beside the one for every account (`target` ''). SQLite cannot change a CHECK, so the
 * table is rebuilt with its rows; nothing refers to it.
 */
const V6_ACCOUNT_KILL_SWITCH = `
CREATE TABLE operator_controls_v6 (
  control TEXT NOT NULL CHECK (control IN ('pause', 'kill-switch')),
  target TEXT NOT NULL CHECK (control = 'kill-switch' OR target <> ''),
  since_ms INTEGER NOT NULL,
  PRIMARY KEY (control, target)
);
INSERT INTO operator_controls_v6 (control, target, since_ms) SELECT control, target, since_ms FROM operator_controls;
DROP TABLE operator_controls;
ALTER TABLE operator_controls_v6 RENAME TO operator_controls;
`;

/**
 * v7, catch-up for a new instance: when the daemon first scheduled each instance. Catch-up counts
 * missed slots from an instance's last journalled slot; one that has none yet counts from here,
 * so its first slot, killed before it was journalled, is caught up or journalled missed instead
 * of lost. Empty after the migration: the instances a journal already had are anchored by their
 * slots, and which instances a config held before cannot be known from the journal.
 */
const V7_SCHEDULED_INSTANCES = `
CREATE TABLE scheduled_instances (
  instance TEXT PRIMARY KEY CHECK (instance <> ''),
  since_ms INTEGER NOT NULL CHECK (since_ms >= 0)
);
`;

/**
 * v8, budgets across a time-zone change: a budget read looks for reservations made under another
 * zone within the periods it counts (an instance whose TIMEZONE changed), by instant. The index
 * keeps that look a range read of the periods, not a scan of the instance's history.
 */
const V8_BUDGETS_BY_TIME = `
CREATE INDEX budget_reservations_by_time ON budget_reservations (instance, asset, at_ms, time_zone);
`;

/**
 * v9, orders by change: the status page reads every order once, then only those recorded or
 * updated since its last read, in pages (`changedOrders`); `stacker orders` lists the newest
 * first. Without these indexes each of those reads every order ever placed: at a year of a
 * per-minute schedule, seconds on the daemon's thread at every refresh of an open page.
 */
const V9_ORDERS_BY_CHANGE = `
CREATE INDEX orders_by_update ON orders (updated_at_ms, order_id);
CREATE INDEX orders_by_first_seen ON orders (first_seen_at_ms, order_id);
`;

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'initial journal', sql: V1_INITIAL },
  { version: 2, name: 'stop activation transitions', sql: V2_STOP_ACTIVATION },
  { version: 3, name: 'exactly once against a real exchange', sql: V3_EXACTLY_ONCE, rebuildsReferencedTable: true },
  { version: 4, name: 'operator controls', sql: V4_OPERATOR_CONTROLS },
  { version: 5, name: 'accounts', sql: V5_ACCOUNTS },
  { version: 6, name: 'account kill switch', sql: V6_ACCOUNT_KILL_SWITCH },
  { version: 7, name: 'scheduled instances', sql: V7_SCHEDULED_INSTANCES },
  { version: 8, name: 'budgets by time', sql: V8_BUDGETS_BY_TIME },
  { version: 9, name: 'orders by change', sql: V9_ORDERS_BY_CHANGE },
];

/** The schema version this code writes. */
export const SCHEMA_VERSION: number = MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0);

const CREATE_LEDGER = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  applied_at_ms INTEGER NOT NULL
)`;

interface AppliedMigration {
  readonly version: number;
  readonly name: string;
}

/**
 * Bring the database to SCHEMA_VERSION. Idempotent: a reopen applies nothing. Refuses a
 * database written by newer code (SchemaTooNewError) and one whose recorded migrations have
 * other names than ours (a file from a diverging build) before touching anything.
 */
export function migrate(db: DatabaseSync, path: string, nowMs: () => number, migrations: readonly Migration[] = MIGRATIONS): number[] {
  const known = latestVersion(migrations);
  db.exec(CREATE_LEDGER);
  checkApplied(readApplied(db), migrations, path, known);
  const applied: number[] = [];
  for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
    if (readApplied(db).some((row) => row.version === migration.version)) continue;
    // PRAGMA foreign_keys is a no-op inside a transaction: it is switched around it.
    if (migration.rebuildsReferencedTable === true) db.exec('PRAGMA foreign_keys = OFF');
    try {
      const done = transaction(db, () => {
        // Read again under the write lock: another process may have migrated since.
        const current = readApplied(db);
        checkApplied(current, migrations, path, known);
        if (current.some((row) => row.version === migration.version)) return false;
        db.exec(migration.sql);
        if (migration.rebuildsReferencedTable === true) {
          const broken = db.prepare('PRAGMA foreign_key_check').all();
          if (broken.length > 0) {
            throw new StoreError('corrupt', `${path}: migration ${migration.version} would leave ${broken.length} row(s) whose references do not resolve (first in table ${String(broken[0]?.['table'])}); nothing was changed`);
          }
        }
        db.prepare('INSERT INTO schema_migrations (version, name, applied_at_ms) VALUES (?, ?, ?)').run(migration.version, migration.name, nowMs());
        return true;
      });
      if (done) applied.push(migration.version);
    } finally {
      if (migration.rebuildsReferencedTable === true) db.exec('PRAGMA foreign_keys = ON');
    }
  }
  return applied;
}

/** What a start's migration did to an existing journal, for its log line: migrations are one-way. */
export interface JournalMigration {
  /** The schema version the journal had. */
  readonly from: number;
  readonly to: number;
  /** Each migration applied, in order. */
  readonly applied: ReadonlyArray<{ readonly version: number; readonly name: string }>;
  /** A copy of the SQLite file as it was before (null for PostgreSQL, whose backup is the operator's pg_dump). */
  readonly backup: string | null;
}

/** The migrations applied to a journal that had a schema already; null for a new journal or one that needed none. */
export function journalMigration(applied: readonly number[], migrations: readonly { readonly version: number; readonly name: string }[], backup: string | null): JournalMigration | null {
  const first = applied[0];
  if (first === undefined || first <= 1) return null;
  return {
    from: first - 1,
    to: latestVersion(migrations),
    applied: applied.map((version) => ({ version, name: migrations.find((m) => m.version === version)?.name ?? '?' })),
    backup,
  };
}

/** `from schema 4 to 8 (5 accounts, 6 account kill switch, …)`. */
export function describeMigration(migration: JournalMigration): string {
  return `from schema ${migration.from} to ${migration.to} (${migration.applied.map((m) => `${m.version} ${m.name}`).join(', ')})`;
}

/** The newest schema version the file records; 0 for a file no migration has touched yet (a new journal). */
export function recordedVersion(db: DatabaseSync): number {
  const ledger = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
  if (ledger === undefined) return 0;
  return readApplied(db).reduce((max, row) => Math.max(max, row.version), 0);
}

/** For a read-only open: the schema must be exactly ours, since nothing may be migrated. */
export function verifySchema(db: DatabaseSync, path: string, migrations: readonly Migration[] = MIGRATIONS): void {
  const known = latestVersion(migrations);
  const ledger = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
  const applied = ledger === undefined ? [] : readApplied(db);
  checkApplied(applied, migrations, path, known);
  const missing = migrations.filter((m) => !applied.some((row) => row.version === m.version));
  if (missing.length > 0) throw new SchemaOutdatedError(path, applied.reduce((max, row) => Math.max(max, row.version), 0), known, missing.map((m) => m.version), 'file');
}

function readApplied(db: DatabaseSync): AppliedMigration[] {
  return db
    .prepare('SELECT version, name FROM schema_migrations ORDER BY version')
    .all()
    .map((row) => ({ version: Number(row['version']), name: String(row['name']) }));
}

function checkApplied(applied: readonly AppliedMigration[], migrations: readonly Migration[], path: string, known: number): void {
  const newest = applied.reduce((max, row) => Math.max(max, row.version), 0);
  if (newest > known) throw new SchemaTooNewError(path, newest, known);
  for (const row of applied) {
    const ours = migrations.find((m) => m.version === row.version);
    if (ours === undefined || ours.name !== row.name) {
      throw new StoreError(
        'schema-mismatch',
        `${path} records migration ${row.version} as ${JSON.stringify(row.name)}, which this stacker ${ours === undefined ? 'does not know' : `calls ${JSON.stringify(ours.name)}`}: the file comes from another build`,
      );
    }
  }
}

function latestVersion(migrations: readonly { readonly version: number }[]): number {
  return migrations.reduce((max, m) => Math.max(max, m.version), 0);
}
