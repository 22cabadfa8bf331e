import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { StackerError } from '../domain/errors.ts';
import { StoreError, failedForFullDisk, fileProblem, folderProblem, fullDiskHint } from './errors.ts';
import type { FailureKinds } from './write-failure.ts';

export interface SqliteOpenOptions {
  /** A file path, or ':memory:' for a journal that lives as long as the process (tests, throwaway backtests). */
  readonly path: string;
  readonly readOnly?: boolean;
  /** How long a statement waits for another connection's write lock before failing. */
  readonly busyTimeoutMs?: number;
  /**
   * The page cache's limit in KiB (SQLite's own default is 2000). Pages it evicts are read back
   * from the file, usually from the OS cache; a smaller cache trades those reads for memory the
   * process keeps.
   */
  readonly cacheKiB?: number;
  /**
   * SQLite's `synchronous` under WAL: FULL (the default, and what a money journal runs) syncs
   * the WAL at every commit; NORMAL only at checkpoints and may lose the last commits on power
   * loss. NORMAL exists for `npm run bench` to show what FULL costs. OFF never syncs: for a
   * backtest's journal file, a record of a replay that running it again rebuilds.
   */
  readonly synchronous?: 'FULL' | 'NORMAL' | 'OFF';
}

export const DEFAULT_BUSY_TIMEOUT_MS = 5_000;

/** SQLite primary result codes we branch on (https://sqlite.org/rescode.html). */
const SQLITE_BUSY = 5;
const SQLITE_LOCKED = 6;
const SQLITE_IOERR = 10;
const SQLITE_FULL = 13;
const SQLITE_CANTOPEN = 14;
const SQLITE_CONSTRAINT = 19;
const SQLITE_READONLY = 8;
/** The file system said no: these pass when space or write access comes back. */
const UNWRITABLE: ReadonlySet<number> = new Set([SQLITE_READONLY, SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN]);

/**
 * Open a connection the way money needs it:
 * - WAL: readers (a `sqlite3` shell, `stacker orders`) never block the daemon's writes;
 * - synchronous=FULL: in WAL mode NORMAL may lose the last commits on power loss; FULL syncs the
 *   WAL on every commit, so an intent journalled before its order was sent is on disk when the
 *   order leaves;
 * - foreign_keys=ON: SQLite's default is off;
 * - busy_timeout: a reader checkpointing or a second connection waits instead of failing at once.
 */
export function openDatabase(options: SqliteOpenOptions): DatabaseSync {
  const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  if (options.readOnly !== true && options.path !== ':memory:') {
    // SQLite opens a file it may not write read-only, and the first write then fails as if the
    // disk were full for now: a journal of another user would be retried for ever.
    const problem = [options.path, `${options.path}-wal`, `${options.path}-shm`].map((path) => fileProblem(path)).find((text) => text !== '');
    if (problem !== undefined) throw new StoreError('open-failed', `cannot write the journal ${options.path}${problem}`);
  }
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(options.path, {
      readOnly: options.readOnly === true,
      enableForeignKeyConstraints: true,
      timeout: busyTimeoutMs,
    });
  } catch (error) {
    const folder = options.path === ':memory:' ? '' : folderProblem(dirname(options.path));
    throw new StoreError('open-failed', `cannot open the journal ${options.path}: ${messageOf(error)}${fullDiskHint(error, options.path) || folder}`, { cause: error, retryable: failedForFullDisk(error, options.path) });
  }
  try {
    db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
    db.exec('PRAGMA foreign_keys = ON');
    if (options.cacheKiB !== undefined) db.exec(`PRAGMA cache_size = -${Math.max(64, Math.floor(options.cacheKiB))}`);
    if (options.readOnly !== true) {
      const row = db.prepare('PRAGMA journal_mode = WAL').get();
      const mode = String(row?.['journal_mode'] ?? '');
      if (mode !== 'wal' && options.path !== ':memory:') {
        throw new StoreError('open-failed', `${options.path} cannot use WAL mode (got ${JSON.stringify(mode)}); keep the data dir on a local disk, not a network share`);
      }
      db.exec(`PRAGMA synchronous = ${options.synchronous === 'NORMAL' || options.synchronous === 'OFF' ? options.synchronous : 'FULL'}`);
    }
    // A quick read proves the file is a database before anything relies on it.
    db.prepare('SELECT count(*) AS n FROM sqlite_master').get();
    cacheStatements(db);
  } catch (error) {
    db.close();
    if (error instanceof StoreError) throw error;
    throw new StoreError('open-failed', `cannot open the journal ${options.path}: ${messageOf(error)}${fullDiskHint(error, options.path) || (options.path === ':memory:' ? '' : readProblem(options.path))}`, { cause: error, retryable: failedForFullDisk(error, options.path) });
  }
  return db;
}

/**
 * Why a journal whose file opened cannot be read: its folder. In WAL mode SQLite writes the
 * `-shm` file beside the journal even to read it, so a folder the kernel remounted read-only
 * takes the readers (orders, journal, report) with it, just when they are needed.
 */
function readProblem(path: string): string {
  const folder = folderProblem(dirname(path));
  if (!folder.includes('read-only')) return folder;
  return `${folder}: a journal in WAL mode is written beside (its -shm file) even to be read; copy the data dir to a writable folder and read the copy (--journal COPY/stacker.db, or --data-dir COPY)`;
}

/**
 * The journal's queries are a fixed set of texts run thousands of times in a backtest: compiling
 * each once and reusing the statement saves most of a query's cost. Statements are used
 * synchronously, one at a time, so sharing them is safe.
 */
function cacheStatements(db: DatabaseSync): void {
  const compile = db.prepare.bind(db);
  const cache = new Map<string, ReturnType<DatabaseSync['prepare']>>();
  db.prepare = (sql: string) => {
    let statement = cache.get(sql);
    if (statement === undefined) {
      statement = compile(sql);
      cache.set(sql, statement);
    }
    return statement;
  };
}

/**
 * Run `work` in one write transaction. BEGIN IMMEDIATE takes the write lock up front, so a
 * read-then-write (claim a slot, check a budget) cannot be interleaved by another connection
 * and never fails half-way with SQLITE_BUSY on the upgrade. No nesting: each journal operation
 * is one transaction.
 */
export function transaction<T>(db: DatabaseSync, work: () => T): T {
  if (db.isTransaction) throw new StoreError('illegal-transition', 'a journal transaction is already open on this connection');
  db.exec('BEGIN IMMEDIATE');
  try {
    const result = work();
    db.exec('COMMIT');
    return result;
  } catch (error) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw error;
  }
}

/**
 * What /healthz reports of the SQLite journal at `path`: a file system that refuses writes. A full
 * disk sticks past a heartbeat, whose update of an existing row a WAL with room left still takes
 * (write-failure.ts).
 */
export function sqliteFailureKinds(path: string): FailureKinds {
  return {
    counts: (error) => error instanceof StoreError && error.reason === 'unwritable',
    sticks: (error) => error instanceof StoreError && failedForFullDisk(error.cause, path),
  };
}

/** Our errors pass through; an SQLite failure becomes a StoreError that says what was being done. */
export function asStoreError(error: unknown, doing: string): StackerError {
  if (error instanceof StackerError) return error;
  const primary = sqliteCode(error) & 0xff;
  if (primary === SQLITE_CONSTRAINT) {
    return new StoreError('conflict', `${doing}: ${messageOf(error)}`, { cause: error });
  }
  if (UNWRITABLE.has(primary)) {
    return new StoreError('unwritable', `${doing}: the journal cannot be written: ${messageOf(error)}`, { retryable: true, cause: error });
  }
  const busy = primary === SQLITE_BUSY || primary === SQLITE_LOCKED;
  return new StoreError('sqlite', `${doing}: ${messageOf(error)}`, { retryable: busy, cause: error });
}

function sqliteCode(error: unknown): number {
  if (typeof error === 'object' && error !== null && 'errcode' in error && typeof error.errcode === 'number') return error.errcode;
  return -1;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

