import { existsSync } from 'node:fs';
import type { DatabaseSync } from 'node:sqlite';
import { type Decimal, ZERO, formatDecimal, parseDecimalStrict } from '../domain/money.ts';
import { StoreError } from './errors.ts';
import type { RunMode } from './journal.ts';
import { dataDirLock } from './lock.ts';
import { verifySchema } from './migrations.ts';
import { JOURNAL_FILES, journalPath } from './open-store.ts';
import { markerPath, pgMarkerBase, readMarker, writeMarker } from './journal-identity.ts';
import { type Tx, asStoreError, describeLocation, inTransaction, openPool } from './pg-db.ts';
import { PgJournal } from './pg-journal.ts';
import { PgAdvisoryLock } from './pg-lock.ts';
import { JOURNAL_SCHEMAS, inspectPgJournal } from './pg-store.ts';
import { openDatabase } from './sqlite-db.ts';

/**
 * `stacker journal migrate --to postgres://…`: a data dir's SQLite journal copied into
 * PostgreSQL, every table, in one transaction that also verifies the copy (rows per table, and
 * the sum of every money column) before it commits: a copy that does not match is never kept.
 * Idempotent: rows already there are left alone, so a second run copies nothing and says so.
 * Both journals are locked meanwhile (the data dir's run-lock and the database's advisory lock),
 * so neither daemon can write while it runs.
 */

interface TableSpec {
  readonly table: string;
  /** Money columns, summed to verify the copy. */
  readonly money: readonly string[];
}

/** In the order foreign keys need. journal_meta is handled apart (the identity of the journal). */
const TABLES: readonly TableSpec[] = [
  { table: 'runs', money: [] },
  { table: 'slots', money: [] },
  { table: 'intents', money: [] },
  { table: 'orders', money: ['amount', 'left_amount', 'price', 'filled_base', 'filled_quote', 'fee'] },
  { table: 'order_transitions', money: ['filled_base', 'filled_quote', 'fee'] },
  { table: 'flex_operations', money: ['amount'] },
  { table: 'transfers', money: ['amount'] },
  { table: 'strategy_state', money: [] },
  { table: 'budgets', money: ['spent_quote'] },
  { table: 'budget_reservations', money: ['amount_quote'] },
  { table: 'ledger_findings', money: [] },
  { table: 'operator_controls', money: [] },
  { table: 'scheduled_instances', money: [] },
];

export interface CopiedTable {
  readonly table: string;
  /** Rows in the SQLite journal. */
  readonly source: number;
  /** Rows this run added to PostgreSQL. */
  readonly copied: number;
  /** Rows in PostgreSQL after the copy. */
  readonly target: number;
}

export interface CopiedSum {
  /** table.column */
  readonly column: string;
  readonly source: Decimal;
  readonly target: Decimal;
}

export interface JournalCopy {
  /** The SQLite file read. */
  readonly from: string;
  /** The database and schema written, password shown as ***. */
  readonly to: string;
  readonly journalId: string;
  readonly tables: readonly CopiedTable[];
  readonly sums: readonly CopiedSum[];
  /** Rows added by this run, all tables together (0: the database already held the journal). */
  readonly copied: number;
  /**
   * The database held every row of the file already, and more: the journal moved there before,
   * and a daemon has written it since (rows and sums are then the database's, not compared).
   */
  readonly writtenSince: boolean;
}

export interface CopyOptions {
  readonly dataDir: string;
  readonly mode: RunMode;
  readonly url: string;
  readonly clock?: () => number;
  /** STACKER_DATABASE_TIMEOUT: how long connecting, or any one query, may go unanswered (pg-session.ts). */
  readonly timeoutMs?: number;
}

export async function copySqliteJournalToPg(options: CopyOptions): Promise<JournalCopy> {
  const from = journalPath(options.dataDir, options.mode);
  if (!existsSync(from)) throw new StoreError('not-found', `no ${options.mode} journal at ${from}: there is nothing to copy`);
  const schema = JOURNAL_SCHEMAS[options.mode];
  const to = describeLocation(options.url, schema);
  const moved = await movedElsewhere(options, from, to);
  if (moved !== null) throw moved;
  const sourceLock = dataDirLock(options.dataDir, { name: JOURNAL_FILES[options.mode] });
  const bound = options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs };
  const targetLock = new PgAdvisoryLock(options.url, 'journal', `journal:${schema}`, bound);
  sourceLock.acquire();
  try {
    await targetLock.acquire();
    try {
      // Creates or migrates the target schema to this stacker's version, the version verifySchema requires of the source.
      const target = new PgJournal({ url: options.url, schema, ...bound, ...(options.clock === undefined ? {} : { clock: options.clock }) });
      await target.open();
      await target.close();
      const db = openDatabase({ path: from, readOnly: true });
      try {
        verifySchema(db, from);
        const copy = await copyInto(db, { url: options.url, schema, ...bound }, from, to);
        // The data dir's journal lives in PostgreSQL from now on: a start on the SQLite file is refused (movedToPostgres).
        writeMarker(pgMarkerBase(options.dataDir, options.mode), { journalId: copy.journalId, createdAtMs: (options.clock ?? Date.now)(), file: to });
        return copy;
      } finally {
        db.close();
      }
    } finally {
      await targetLock.release();
    }
  } finally {
    sourceLock.release();
  }
}

/**
 * The data dir's journal moved to another PostgreSQL database already (its marker names it): the
 * SQLite file is the copy from before that move, and copying it again would start the new
 * database from that old state, without the kill switch, pauses, transfers and budgets since
 * (a second migrate, to a mistyped database or a new server, did, and trading resumed). Copying
 * again into the database the marker names adds only what is missing, and is allowed; so is that
 * database at another address (a pooler in between, a host name for an IP), known by the journal
 * id it holds, as the daemon knows it.
 */
async function movedElsewhere(options: CopyOptions, from: string, to: string): Promise<StoreError | null> {
  const { dataDir, mode } = options;
  const base = pgMarkerBase(dataDir, mode);
  const marker = readMarker(base);
  if (marker === null || marker.file === to) return null;
  const target = await inspectPgJournal(options.url, JOURNAL_SCHEMAS[mode], options.timeoutMs);
  if (target.state === 'journal' && target.journalId === marker.journalId) return null;
  return new StoreError(
    'conflict',
    `the ${mode} journal of this data dir moved to PostgreSQL already (${marker.file}, journal ${marker.journalId}, since ${new Date(marker.createdAtMs).toISOString()}): ` +
      `${from} is its copy from before, and copying it into ${to} would start that database from the old state, without what was journalled since (the kill switch, pauses, transfers, budgets). ` +
      `Nothing was changed. To move the journal to another database, copy that database (pg_dump, then psql into the new one) and point STACKER_DATABASE_URL at it; to copy the SQLite file anyway, move ${markerPath(base)} aside first`,
  );
}

async function copyInto(db: DatabaseSync, target: { readonly url: string; readonly schema: string; readonly timeoutMs?: number }, from: string, to: string): Promise<JournalCopy> {
  const meta = new Map(db.prepare('SELECT key, value FROM journal_meta').all().map((row) => [String(row['key']), String(row['value'])]));
  const journalId = meta.get('journal_id');
  if (journalId === undefined) throw new StoreError('corrupt', `${from} has no journal id`);
  const pool = openPool({ ...target, applicationName: 'stacker journal migrate' });
  try {
    return await inTransaction(pool, 'write', async (tx) => {
      const movedBefore = await adoptIdentity(tx, meta, journalId, to);
      const tables: CopiedTable[] = [];
      const sums: CopiedSum[] = [];
      for (const spec of TABLES) {
        // Row by row from SQLite, a batch at a time into PostgreSQL, the money summed on the
        // way: a per-minute year's journal read whole held some 3 GB.
        const moneySums = new Map<string, Decimal>(spec.money.map((column) => [column, ZERO]));
        let source = 0;
        let copied = 0;
        let batch: Record<string, unknown>[] = [];
        for (const row of db.prepare(`SELECT * FROM ${spec.table}`).iterate()) {
          source += 1;
          for (const column of spec.money) {
            if (row[column] !== null) moneySums.set(column, (moneySums.get(column) ?? ZERO).plus(parseDecimalStrict(String(row[column]), `${spec.table}.${column}`)));
          }
          batch.push(row);
          if (batch.length >= rowsPerInsert(batch)) {
            copied += await insertBatch(tx, spec.table, batch);
            batch = [];
          }
        }
        copied += await insertBatch(tx, spec.table, batch);
        const target = Number((await tx.one(`SELECT count(*) AS n FROM ${spec.table}`))?.['n']);
        tables.push({ table: spec.table, source, copied, target });
        for (const [column, sum] of moneySums) {
          const total = (await tx.one(`SELECT coalesce(sum(${column}), 0)::text AS total FROM ${spec.table}`))?.['total'];
          sums.push({ column: `${spec.table}.${column}`, source: sum, target: parseDecimalStrict(String(total), `${spec.table}.${column}`) });
        }
      }
      // Findings keep their numbers; the next one PostgreSQL numbers comes after them.
      await tx.one("SELECT setval(pg_get_serial_sequence('ledger_findings', 'finding_id'), greatest((SELECT max(finding_id) FROM ledger_findings), 1))");
      const copied = tables.reduce((n, t) => n + t.copied, 0);
      // Run again after the daemon has written there: every row of the file was there already,
      // and the database holds more. Nothing to copy; the counts differ because it is newer.
      const writtenSince = movedBefore && copied === 0 && tables.every((t) => t.target >= t.source) && tables.some((t) => t.target > t.source);
      if (!writtenSince) verify(tables, sums, to);
      return { from, to, journalId, tables, sums, copied, writtenSince };
    });
  } catch (error) {
    throw asStoreError(error, `copying ${from} into ${to}`);
  } finally {
    await pool.end();
  }
}

/**
 * The target must be empty (just migrated) or already this journal. An empty one takes the
 * source's identity and mode; one holding another journal is refused, nothing changed. True when
 * it is this journal already (copied before).
 */
async function adoptIdentity(tx: Tx, meta: ReadonlyMap<string, string>, journalId: string, to: string): Promise<boolean> {
  const targetId = (await tx.one("SELECT value FROM journal_meta WHERE key = 'journal_id'"))?.['value'];
  if (targetId === journalId) return true;
  const used = await tx.one('SELECT (SELECT count(*) FROM runs) + (SELECT count(*) FROM slots) + (SELECT count(*) FROM orders) + (SELECT count(*) FROM budgets) AS n');
  if (Number(used?.['n']) > 0) {
    throw new StoreError('conflict', `${to} already holds another journal (${String(targetId)}), not ${journalId}: copy into an empty database or schema; nothing was changed`);
  }
  await tx.run('DELETE FROM journal_meta');
  for (const [key, value] of meta) await tx.run('INSERT INTO journal_meta (key, value) VALUES ($1, $2)', [key, value]);
  return false;
}

/** How many rows like these go in one INSERT: a parameter list holds at most 65535 values. */
function rowsPerInsert(rows: readonly Record<string, unknown>[]): number {
  const first = rows[0];
  return first === undefined ? 1 : Math.max(1, Math.floor(60_000 / Object.keys(first).length));
}

/** Insert rows not already there (by any unique key), in one statement; how many were added. */
async function insertBatch(tx: Tx, table: string, rows: readonly Record<string, unknown>[]): Promise<number> {
  const first = rows[0];
  if (first === undefined) return 0;
  const columns = Object.keys(first);
  const values = rows.map((_, r) => `(${columns.map((_, c) => `$${r * columns.length + c + 1}`).join(', ')})`);
  return tx.run(
    `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${values.join(', ')} ON CONFLICT DO NOTHING`,
    rows.flatMap((row) => columns.map((column) => row[column] ?? null)),
  );
}

/** Inside the copy's transaction: a mismatch throws, and nothing of the copy is kept. */
function verify(tables: readonly CopiedTable[], sums: readonly CopiedSum[], to: string): void {
  const problems = [
    ...tables.filter((t) => t.source !== t.target).map((t) => `${t.table}: ${t.source} row(s) in SQLite, ${t.target} in PostgreSQL`),
    ...sums.filter((s) => !s.source.eq(s.target)).map((s) => `${s.column}: sums to ${formatDecimal(s.source)} in SQLite, ${formatDecimal(s.target)} in PostgreSQL`),
  ];
  if (problems.length > 0) {
    throw new StoreError(
      'conflict',
      `the copy in ${to} does not match the SQLite journal (${problems.join('; ')}): the database was written since an earlier copy, or holds other rows; nothing was changed`,
    );
  }
}
