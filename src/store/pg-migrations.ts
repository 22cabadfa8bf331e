import type pg from 'pg';
import { SchemaOutdatedError, SchemaTooNewError, StoreError } from './errors.ts';
import { MIGRATIONS as SQLITE_MIGRATIONS } from './migrations.ts';
import { type PgPool, asStoreError, checkOut, rollBack } from './pg-db.ts';

/**
 * The PostgreSQL journal's schema, numbered and named as the SQLite journal's (migrations.ts):
 * version N is the same schema on both stores, so `journal migrate` can tell a copy is complete
 * and a test keeps the two lists in step. A shipped migration is never edited: a change is a
 * new number. Each runs in its own transaction with its row in `schema_migrations`, under a
 * transaction-level advisory lock, so two daemons starting together migrate once.
 *
 * Conventions: money is `numeric` (exact; never float), written from Decimal text and read back
 * as text; times are `bigint` Unix milliseconds in `…_ms` columns; ids and names are text
 * sorted byte-wise (COLLATE "C", as SQLite sorts), so lists come out in the same order on both
 * stores; our own enums are CHECKed, exchange-defined values are not.
 */
export interface PgMigration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

const TEXT = 'text COLLATE "C"';
const money = (column: string, nullable = false): string =>
  `${column} numeric${nullable ? '' : ' NOT NULL'} CHECK (${column} IS NULL OR ${column} NOT IN ('NaN', 'Infinity', '-Infinity'))`;
const json = (column: string, nullable = false): string => `${column} text${nullable ? '' : ' NOT NULL'} CHECK (${column} IS NULL OR ${column}::json IS NOT NULL)`;

const V1_INITIAL = `
CREATE TABLE journal_meta (
  key ${TEXT} PRIMARY KEY,
  value text NOT NULL
);

CREATE TABLE runs (
  run_id ${TEXT} PRIMARY KEY,
  mode ${TEXT} NOT NULL CHECK (mode IN ('live', 'dry-run', 'backtest')),
  started_at_ms bigint NOT NULL,
  ended_at_ms bigint,
  pid integer NOT NULL,
  version text NOT NULL,
  exit_reason text
);

CREATE TABLE slots (
  instance ${TEXT} NOT NULL,
  slot_time_ms bigint NOT NULL,
  status ${TEXT} NOT NULL CHECK (status IN ('claimed', 'done', 'failed', 'skipped', 'missed')),
  reason text,
  run_id ${TEXT} REFERENCES runs (run_id),
  claimed_at_ms bigint NOT NULL,
  finished_at_ms bigint,
  PRIMARY KEY (instance, slot_time_ms)
);
CREATE INDEX slots_by_status ON slots (status, instance, slot_time_ms);

CREATE TABLE intents (
  intent_id ${TEXT} PRIMARY KEY,
  instance ${TEXT} NOT NULL,
  slot_time_ms bigint NOT NULL,
  idx integer NOT NULL CHECK (idx >= 0),
  kind ${TEXT} NOT NULL CHECK (kind IN ('buy-stock-market', 'flex-withdraw', 'transfer', 'note', 'refusal', 'set-state')),
  ${json('params')},
  client_order_id ${TEXT} UNIQUE,
  status ${TEXT} NOT NULL CONSTRAINT intents_status_check CHECK (status IN ('pending', 'sent', 'done', 'refused', 'failed', 'unknown')),
  attempts integer NOT NULL DEFAULT 0,
  ${json('result', true)},
  error_code text,
  error_message text,
  created_at_ms bigint NOT NULL,
  updated_at_ms bigint NOT NULL,
  UNIQUE (instance, slot_time_ms, idx),
  FOREIGN KEY (instance, slot_time_ms) REFERENCES slots (instance, slot_time_ms)
);
CREATE INDEX intents_by_status ON intents (status, created_at_ms);

CREATE TABLE orders (
  order_id ${TEXT} PRIMARY KEY,
  client_order_id ${TEXT} NOT NULL,
  intent_id ${TEXT} REFERENCES intents (intent_id),
  market ${TEXT} NOT NULL,
  side ${TEXT} NOT NULL,
  type ${TEXT} NOT NULL,
  ${money('amount')},
  ${money('left_amount')},
  ${money('price', true)},
  ${money('filled_base')},
  ${money('filled_quote')},
  ${money('fee')},
  fee_asset ${TEXT},
  status ${TEXT} NOT NULL,
  status_derived integer NOT NULL CHECK (status_derived IN (0, 1)),
  stp ${TEXT} NOT NULL,
  stop_activated integer CHECK (stop_activated IS NULL OR stop_activated IN (0, 1)),
  exchange_created_at_sec double precision NOT NULL,
  first_seen_at_ms bigint NOT NULL,
  updated_at_ms bigint NOT NULL
);
CREATE INDEX orders_by_intent ON orders (intent_id);
CREATE INDEX orders_by_client_order_id ON orders (client_order_id);
CREATE INDEX orders_by_status ON orders (status);

CREATE TABLE order_transitions (
  order_id ${TEXT} NOT NULL REFERENCES orders (order_id),
  seq integer NOT NULL CHECK (seq >= 1),
  from_status ${TEXT},
  to_status ${TEXT} NOT NULL,
  ${money('filled_base')},
  ${money('filled_quote')},
  ${money('fee')},
  at_ms bigint NOT NULL,
  PRIMARY KEY (order_id, seq),
  -- A state (status and fills) is reached once: a replayed snapshot cannot log it twice.
  CONSTRAINT order_transitions_reached_once UNIQUE (order_id, to_status, filled_base, filled_quote, fee)
);

CREATE TABLE flex_operations (
  intent_id ${TEXT} PRIMARY KEY REFERENCES intents (intent_id),
  plan ${TEXT} NOT NULL,
  ${money('amount')},
  transaction_id ${TEXT},
  status ${TEXT} NOT NULL CHECK (status IN ('sent', 'done', 'failed', 'unknown')),
  created_at_ms bigint NOT NULL,
  updated_at_ms bigint NOT NULL
);

CREATE TABLE transfers (
  intent_id ${TEXT} PRIMARY KEY REFERENCES intents (intent_id),
  ticker ${TEXT} NOT NULL,
  ${money('amount')},
  from_account ${TEXT} NOT NULL,
  to_account ${TEXT} NOT NULL,
  status ${TEXT} NOT NULL CHECK (status IN ('sent', 'done', 'failed', 'unknown')),
  created_at_ms bigint NOT NULL,
  updated_at_ms bigint NOT NULL
);

CREATE TABLE strategy_state (
  instance ${TEXT} NOT NULL,
  key ${TEXT} NOT NULL,
  value text NOT NULL,
  updated_at_ms bigint NOT NULL,
  PRIMARY KEY (instance, key)
);

CREATE TABLE budgets (
  instance ${TEXT} NOT NULL,
  asset ${TEXT} NOT NULL,
  period ${TEXT} NOT NULL CHECK (period IN ('day', 'week', 'month')),
  period_start_ms bigint NOT NULL,
  ${money('spent_quote')},
  updated_at_ms bigint NOT NULL,
  PRIMARY KEY (instance, asset, period, period_start_ms)
);

CREATE TABLE budget_reservations (
  reservation_id ${TEXT} PRIMARY KEY,
  instance ${TEXT} NOT NULL,
  asset ${TEXT} NOT NULL,
  time_zone text NOT NULL,
  at_ms bigint NOT NULL,
  ${money('amount_quote')},
  day_start_ms bigint NOT NULL,
  week_start_ms bigint NOT NULL,
  month_start_ms bigint NOT NULL,
  state ${TEXT} NOT NULL CHECK (state IN ('held', 'released', 'settled')),
  created_at_ms bigint NOT NULL,
  updated_at_ms bigint NOT NULL
);
CREATE INDEX budget_reservations_by_state ON budget_reservations (state, instance);
`;

/** v2: a stop order's activation is a transition of its own, so the "reached once" key includes it (changed in place). */
const V2_STOP_ACTIVATION = `
ALTER TABLE order_transitions ADD COLUMN stop_activated integer NOT NULL DEFAULT 0 CHECK (stop_activated IN (0, 1));
ALTER TABLE order_transitions DROP CONSTRAINT order_transitions_reached_once;
ALTER TABLE order_transitions ADD CONSTRAINT order_transitions_reached_once UNIQUE (order_id, to_status, filled_base, filled_quote, fee, stop_activated);
`;

/** v3, exactly once against a real exchange: see migrations.ts V3 for what each part is for. */
const V3_EXACTLY_ONCE = `
ALTER TABLE intents DROP CONSTRAINT intents_status_check;
ALTER TABLE intents ADD CONSTRAINT intents_status_check CHECK (status IN ('pending', 'sent', 'done', 'refused', 'failed', 'unknown', 'not-found'));
ALTER TABLE intents ADD COLUMN sent_at_ms bigint;
ALTER TABLE intents ADD COLUMN origin ${TEXT} NOT NULL DEFAULT 'engine' CHECK (origin IN ('engine', 'adopted'));
UPDATE intents SET sent_at_ms = updated_at_ms WHERE attempts > 0;

CREATE TABLE ledger_findings (
  finding_id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  kind ${TEXT} NOT NULL CHECK (kind IN ('adopted', 'foreign', 'cleared')),
  instance ${TEXT},
  client_order_id ${TEXT} NOT NULL,
  order_id ${TEXT},
  market ${TEXT},
  detail text NOT NULL,
  found_at_ms bigint NOT NULL,
  acknowledged_at_ms bigint
);
CREATE INDEX ledger_findings_open ON ledger_findings (acknowledged_at_ms, kind);

INSERT INTO journal_meta (key, value) VALUES ('journal_id', md5(random()::text || clock_timestamp()::text)) ON CONFLICT (key) DO NOTHING;
`;

/** Paused instances and the operator's kill switch (the status page's controls), kept across restarts. */
const V4_OPERATOR_CONTROLS = `
CREATE TABLE operator_controls (
  control ${TEXT} NOT NULL CHECK (control IN ('pause', 'kill-switch')),
  target ${TEXT} NOT NULL CHECK ((control = 'kill-switch') = (target = '')),
  since_ms bigint NOT NULL,
  PRIMARY KEY (control, target)
);
`;

/** The account an intent was sent on (migrations.ts v5); NULL before accounts. */
const V5_ACCOUNTS = `
ALTER TABLE intents ADD COLUMN account ${TEXT} CHECK (account IS NULL OR account <> '');
`;

/** The kill switch may name an account (migrations.ts v6). v4's check of two columns is named after the table by PostgreSQL. */
const V6_ACCOUNT_KILL_SWITCH = `
ALTER TABLE operator_controls DROP CONSTRAINT operator_controls_check;
ALTER TABLE operator_controls ADD CONSTRAINT operator_controls_target_check CHECK (control = 'kill-switch' OR target <> '');
`;

/** When the daemon first scheduled each instance: catch-up's anchor before its first journalled slot (migrations.ts v7). */
const V7_SCHEDULED_INSTANCES = `
CREATE TABLE scheduled_instances (
  instance ${TEXT} PRIMARY KEY CHECK (instance <> ''),
  since_ms bigint NOT NULL CHECK (since_ms >= 0)
);
`;

/** Reservations by instant, for budget reads across a time-zone change (migrations.ts v8). */
const V8_BUDGETS_BY_TIME = `
CREATE INDEX budget_reservations_by_time ON budget_reservations (instance, asset, at_ms, time_zone);
`;

/** Orders by when they changed, and newest first (migrations.ts v9). */
const V9_ORDERS_BY_CHANGE = `
CREATE INDEX orders_by_update ON orders (updated_at_ms, order_id);
CREATE INDEX orders_by_first_seen ON orders (first_seen_at_ms, order_id);
`;

export const PG_MIGRATIONS: readonly PgMigration[] = [
  { version: 1, name: 'initial journal', sql: V1_INITIAL },
  { version: 2, name: 'stop activation transitions', sql: V2_STOP_ACTIVATION },
  { version: 3, name: 'exactly once against a real exchange', sql: V3_EXACTLY_ONCE },
  { version: 4, name: 'operator controls', sql: V4_OPERATOR_CONTROLS },
  { version: 5, name: 'accounts', sql: V5_ACCOUNTS },
  { version: 6, name: 'account kill switch', sql: V6_ACCOUNT_KILL_SWITCH },
  { version: 7, name: 'scheduled instances', sql: V7_SCHEDULED_INSTANCES },
  { version: 8, name: 'budgets by time', sql: V8_BUDGETS_BY_TIME },
  { version: 9, name: 'orders by change', sql: V9_ORDERS_BY_CHANGE },
];

/** The versions and names both stores must share (tested). */
export const SHARED_SCHEMA_HISTORY = { sqlite: SQLITE_MIGRATIONS.map(({ version, name }) => ({ version, name })), postgres: PG_MIGRATIONS.map(({ version, name }) => ({ version, name })) };

const CREATE_LEDGER = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version integer PRIMARY KEY,
  name text NOT NULL,
  applied_at_ms bigint NOT NULL
)`;

/**
 * Who owns the journal (pg-store.ts): one row, its token raised by each daemon that takes the
 * journal over, and checked in every write transaction of the owner (a fence: a daemon that was
 * replaced writes nothing more). Not journal data, so not a numbered migration: like
 * schema_migrations it is the store's own, created when missing, and `journal migrate` leaves it alone.
 */
const CREATE_LEASE = `CREATE TABLE IF NOT EXISTS journal_lease (
  id integer PRIMARY KEY CHECK (id = 1),
  token bigint NOT NULL,
  holder text NOT NULL,
  acquired_at_ms bigint NOT NULL
)`;

interface Applied {
  readonly version: number;
  readonly name: string;
}

/**
 * Bring the schema to the latest version; idempotent. Refuses a schema written by newer code
 * (SchemaTooNewError) and one whose recorded migrations have other names, before changing anything.
 */
export async function migratePg(pool: PgPool, schema: string, where: string, nowMs: () => number, migrations: readonly PgMigration[] = PG_MIGRATIONS): Promise<number[]> {
  const client = await checkOut(pool);
  const applied: number[] = [];
  let broken: Error | undefined;
  try {
    for (const migration of [null, ...[...migrations].sort((a, b) => a.version - b.version)]) {
      await client.query('BEGIN');
      try {
        // One migrator at a time per schema, whichever daemon starts first.
        await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`stacker-migrate:${schema}`]);
        if (migration === null) {
          const problem = await schemaAccessProblem(client, schema, migrations);
          if (problem !== null) throw accessRefused(where, problem);
          await createMissing(client, schema);
        } else {
          const current = (await client.query('SELECT version, name FROM schema_migrations ORDER BY version')).rows as Applied[];
          checkApplied(current, migrations, where);
          if (!current.some((row) => row.version === migration.version)) {
            await client.query(migration.sql);
            await client.query('INSERT INTO schema_migrations (version, name, applied_at_ms) VALUES ($1, $2, $3)', [migration.version, migration.name, nowMs()]);
            applied.push(migration.version);
          }
        }
        await client.query('COMMIT');
      } catch (error) {
        broken = await rollBack(client, error);
        throw error;
      }
    }
  } catch (error) {
    throw asStoreError(error, `migrating the journal ${where}`);
  } finally {
    client.release(broken);
  }
  return applied;
}

/** What runs SQL: a pooled or a single session. */
type Queryable = Pick<pg.ClientBase, 'query'>;

/**
 * The schema, the migrations' ledger and the lease, each created only when it is missing:
 * `CREATE SCHEMA IF NOT EXISTS` needs CREATE on the database even when the schema exists, which a
 * role given a schema of its own (a managed database's application role) does not have.
 */
async function createMissing(client: Queryable, schema: string): Promise<void> {
  const found = (await client.query('SELECT to_regnamespace($1) IS NOT NULL AS schema, to_regclass($2) IS NOT NULL AS ledger, to_regclass($3) IS NOT NULL AS lease', [schema, `${schema}.schema_migrations`, `${schema}.journal_lease`])).rows[0] as { schema: boolean; ledger: boolean; lease: boolean };
  if (!found.schema) await client.query(`CREATE SCHEMA ${schema}`);
  if (!found.ledger) await client.query(CREATE_LEDGER);
  if (!found.lease) await client.query(CREATE_LEASE);
}

/**
 * Why this session's role could not create or migrate the journal's schema, naming what to
 * grant; null when it can, or when nothing is left to create. Asked before anything is created
 * (a daemon's start, `journal migrate`) and by `stacker check`, so that the check fails where the
 * start would. A schema already at the latest version needs only USAGE on it (and the rights on
 * its tables an owner has).
 */
export async function schemaAccessProblem(client: Queryable, schema: string, migrations: readonly PgMigration[] = PG_MIGRATIONS): Promise<string | null> {
  const who = (
    await client.query(
      `SELECT quote_ident(current_user) AS role, quote_ident(current_database()) AS database, to_regnamespace($1) IS NOT NULL AS present,
              has_database_privilege(current_database(), 'CREATE') AS create_database`,
      [schema],
    )
  ).rows[0] as { role: string; database: string; present: boolean; create_database: boolean };
  const grant = `give the role ${who.role} CREATE on the database (GRANT CREATE ON DATABASE ${who.database} TO ${who.role}), or have the database's owner create the schema for it (CREATE SCHEMA ${schema} AUTHORIZATION ${who.role}); README "PostgreSQL" lists what the role needs`;
  if (!who.present) return who.create_database ? null : `the role ${who.role} may not create the schema ${schema} in the database ${who.database} (it has no CREATE on the database): ${grant}`;
  const rights = (await client.query(`SELECT has_schema_privilege($1, 'USAGE') AS usage, has_schema_privilege($1, 'CREATE') AS "create"`, [schema])).rows[0] as { usage: boolean; create: boolean };
  const own = `make the role the schema's owner (ALTER SCHEMA ${schema} OWNER TO ${who.role}); README "PostgreSQL" lists what the role needs`;
  if (!rights.usage) return `the role ${who.role} may not use the schema ${schema} (it has no USAGE on it): ${own}`;
  if (rights.create) return null;
  const tables = (await client.query('SELECT to_regclass($1) IS NOT NULL AS ledger, to_regclass($2) IS NOT NULL AS lease', [`${schema}.schema_migrations`, `${schema}.journal_lease`])).rows[0] as { ledger: boolean; lease: boolean };
  const applied = tables.ledger ? ((await client.query(`SELECT version FROM ${schema}.schema_migrations`)).rows as { version: number }[]).map((row) => row.version) : [];
  const pending = migrations.filter((m) => !applied.includes(m.version));
  if (tables.ledger && tables.lease && pending.length === 0) return null;
  return `the role ${who.role} may not create the journal's tables in the schema ${schema} (it has no CREATE on it${pending.length === 0 ? '' : `; schema version(s) ${pending.map((m) => m.version).join(', ')} are still to apply`}): ${own}`;
}

/** A schemaAccessProblem as the start reports it: not retryable, since waiting grants nothing. */
export function accessRefused(where: string, problem: string): StoreError {
  return new StoreError('no-privilege', `migrating the journal ${where}: ${problem}`);
}

/** For a read-only open: the schema must be exactly ours, since nothing may be migrated. */
export async function verifyPgSchema(pool: PgPool, schema: string, where: string, migrations: readonly PgMigration[] = PG_MIGRATIONS): Promise<void> {
  let current: Applied[];
  try {
    const ledger = await pool.query("SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'schema_migrations'", [schema]);
    current = ledger.rows.length === 0 ? [] : ((await pool.query('SELECT version, name FROM schema_migrations ORDER BY version')).rows as Applied[]);
  } catch (error) {
    throw asStoreError(error, `reading the journal ${where}`, 'read');
  }
  checkApplied(current, migrations, where);
  const missing = migrations.filter((m) => !current.some((row) => row.version === m.version));
  if (missing.length > 0) {
    const known = migrations.reduce((max, m) => Math.max(max, m.version), 0);
    throw new SchemaOutdatedError(where, current.reduce((max, row) => Math.max(max, row.version), 0), known, missing.map((m) => m.version), 'database');
  }
}

function checkApplied(applied: readonly Applied[], migrations: readonly PgMigration[], where: string): void {
  const known = migrations.reduce((max, m) => Math.max(max, m.version), 0);
  const newest = applied.reduce((max, row) => Math.max(max, row.version), 0);
  if (newest > known) throw new SchemaTooNewError(where, newest, known);
  for (const row of applied) {
    const ours = migrations.find((m) => m.version === row.version);
    if (ours === undefined || ours.name !== row.name) {
      throw new StoreError(
        'schema-mismatch',
        `${where} records migration ${row.version} as ${JSON.stringify(row.name)}, which this stacker ${ours === undefined ? 'does not know' : `calls ${JSON.stringify(ours.name)}`}: the database comes from another build`,
      );
    }
  }
}
