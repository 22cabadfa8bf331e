import { accessSync, constants, statSync, statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import { StackerError } from '../domain/errors.ts';

/**
 * Why the journal refused or failed. Callers branch on `reason`; the message is for humans.
 * - `open-failed`: the file could not be opened as an SQLite database (path, permissions, not a database).
 * - `schema-too-new`: the file was written by a newer stacker (SchemaTooNewError). Upgrade, never downgrade.
 * - `schema-mismatch`: a migration recorded under a known number has another name: a file from a diverging build.
 * - `schema-outdated`: a reader found migrations still to apply (SchemaOutdatedError): a start, or `journal upgrade`, migrates it.
 * - `mode-mismatch`: a run of one mode on the journal of another (a dry-run on the live file would consume live slots).
 * - `not-found`: the intent, slot, run or reservation named does not exist.
 * - `illegal-transition`: a status change the exactly-once rules forbid (a finished slot finished again, a done intent sent again).
 * - `conflict`: a repeated operation that disagrees with what was recorded.
 * - `invalid-argument`: a caller passed a value the journal cannot store (a negative amount, a non-integer time).
 * - `corrupt`: a stored value does not read back (edited by hand?).
 * - `closed`: the journal is not open.
 * - `journal-lost`: the journal that was there is missing, empty, or another file now (deleted
 *   or replaced under a running daemon, or between runs): nothing may be sent until it is
 *   restored or rebuilt from the exchange's history.
 * - `unwritable`: the file system refuses writes (disk full, read-only, I/O error): nothing can
 *   be journalled, so nothing is sent; retried at the next slot.
 * - `sqlite`: any other SQLite failure (busy beyond the timeout, …).
 * - `order-id-clash`: an exchange answered an order under an id the journal already holds for
 *   another order (accounts on two exchanges whose ids met): the journal keys orders by that id
 *   and cannot keep both, so trading stops until a human splits the accounts.
 * - `not-owner`: a PostgreSQL journal another daemon has taken over (a standby, after this one
 *   lost its lock): this daemon journals and sends nothing more.
 * - `no-privilege`: the PostgreSQL role may not create or migrate the journal's schema (the message
 *   names what to grant): a setting for the database's administrator, not a passing failure.
 * - `postgres`: any other PostgreSQL failure (a serialization conflict that kept failing after retries, …).
 */
export type StoreErrorReason =
  | 'open-failed'
  | 'schema-too-new'
  | 'schema-mismatch'
  | 'schema-outdated'
  | 'mode-mismatch'
  | 'not-found'
  | 'illegal-transition'
  | 'conflict'
  | 'invalid-argument'
  | 'corrupt'
  | 'closed'
  | 'journal-lost'
  | 'unwritable'
  | 'sqlite'
  | 'not-owner'
  | 'order-id-clash'
  | 'no-privilege'
  | 'postgres';

/**
 * Why a file in `dir` could not be created or opened, when the folder is the reason: a
 * read-only file system, missing permissions, or no such folder. Empty when the folder is fine.
 */
export function folderProblem(dir: string): string {
  try {
    accessSync(dir, constants.W_OK);
    return '';
  } catch (error) {
    const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
    if (code === 'EROFS') return ` (the folder ${dir} is on a read-only file system)`;
    if (code === 'ENOENT') return ` (the folder ${dir} does not exist)`;
    return ` (the folder ${dir} cannot be written: ${code || 'no permission'}; give the user stacker runs as write access, or choose another folder)`;
  }
}

/**
 * Why an existing file cannot be written (or read), when this user lacks the right (a journal made by root,
 * then run as the image's user): a setting to fix, not a passing failure. Empty when it can be.
 */
export function fileProblem(path: string, access: 'read' | 'write' = 'write'): string {
  try {
    accessSync(path, access === 'read' ? constants.R_OK : constants.W_OK);
    return '';
  } catch (error) {
    const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
    if (code === 'ENOENT') return '';
    if (code === 'EROFS') return ` (${path} is on a read-only file system)`;
    let owner = '';
    try {
      owner = `; it belongs to uid ${statSync(path).uid}`;
    } catch {
      // Unreadable too: the uid is not needed to say what to do.
    }
    const self = typeof process.getuid === 'function' ? ` (uid ${process.getuid()})` : '';
    return ` (${path} cannot be ${access === 'read' ? 'read' : 'written'} by this user${self}${owner}: give the user stacker runs ${access} access, e.g. with chown, or run stacker as that user)`;
  }
}

export class StoreError extends StackerError {
  readonly code = 'E_STORE' as const;
  readonly retryable: boolean;
  readonly reason: StoreErrorReason;
  constructor(reason: StoreErrorReason, message: string, options: { retryable?: boolean; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'StoreError';
    this.reason = reason;
    this.retryable = options.retryable ?? false;
  }
}

/** The database was written by a newer stacker. Opening it with older code could corrupt it. */
export class SchemaTooNewError extends StoreError {
  readonly databaseVersion: number;
  readonly knownVersion: number;
  constructor(path: string, databaseVersion: number, knownVersion: number) {
    super(
      'schema-too-new',
      `${path} has schema version ${databaseVersion}, but this stacker knows versions up to ${knownVersion}: it was written by a newer stacker. Run that version (or newer); never downgrade over a journal.`,
    );
    this.name = 'SchemaTooNewError';
    this.databaseVersion = databaseVersion;
    this.knownVersion = knownVersion;
  }
}

/**
 * A reader found a journal of an older schema than this stacker's: an older build wrote it and
 * no start of this one has migrated it yet. Not lost, nor a reason `stacker run` would refuse:
 * a start migrates it (`database`: the copy to go back to is the operator's pg_dump, not a file stacker keeps).
 */
export class SchemaOutdatedError extends StoreError {
  readonly databaseVersion: number;
  readonly knownVersion: number;
  constructor(where: string, databaseVersion: number, knownVersion: number, missing: readonly number[], store: 'file' | 'database') {
    super(
      'schema-outdated',
      databaseVersion === 0
        ? `${where} lacks schema version(s) ${missing.join(', ')}; start the daemon once (stacker run), which migrates it; readers never change a journal`
        : `${where} is of schema version ${databaseVersion}, older than this stacker's ${knownVersion} (an older stacker wrote it): \`stacker run\` migrates it at its start` +
            (store === 'file' ? ', keeping a copy of the file as it was' : ' (take a pg_dump first: a migration is one-way)') +
            ', and `stacker journal upgrade` migrates it now without trading (README "Upgrading"); readers never change a journal',
    );
    this.name = 'SchemaOutdatedError';
    this.databaseVersion = databaseVersion;
    this.knownVersion = knownVersion;
  }
}

/** What a lock file says about its holder. */
export interface LockOwner {
  readonly pid: number;
  readonly hostname: string;
  readonly startedAtMs: number;
  /** For an API-key lock: the data dir of the holder, to tell the user which daemon it is. */
  readonly dataDir?: string;
}

export type LockScope = 'data-dir' | 'api-key' | 'journal';

/**
 * Another live stacker holds the data dir or the API key. Not retryable: two daemons on one
 * journal or one key would each believe they own the slots and the nonces.
 */
export class LockedError extends StackerError {
  readonly code = 'E_LOCKED' as const;
  readonly retryable = false;
  readonly scope: LockScope;
  readonly lockPath: string;
  /** null when the holder could not be named (its name file is missing or unreadable). */
  readonly owner: LockOwner | null;
  /** `release`: how the holder lets go, when not by ending (a lock of another kind than the kernel's). */
  constructor(scope: LockScope, lockPath: string, owner: LockOwner | null, release?: string) {
    super(describeLock(scope, lockPath, owner, release));
    this.name = 'LockedError';
    this.scope = scope;
    this.lockPath = lockPath;
    this.owner = owner;
  }
}

function describeLock(scope: LockScope, lockPath: string, owner: LockOwner | null, how: string | undefined): string {
  const what = scope === 'data-dir' ? 'the data dir' : scope === 'journal' ? 'the journal' : 'the API key';
  // A .run-lock is held by the kernel for a live process only; a .lock is stacker 0.1's pid file.
  const legacy = !lockPath.endsWith('.run-lock');
  const release = how ?? (legacy
    ? 'stop it first, or if that process is gone and was not stacker, delete that file'
    : 'stop it first (the operating system releases this lock the moment that process ends: there is no file to delete)');
  if (owner === null) return `${what} is in use by another running stacker (lock ${lockPath}); ${release}`;
  const where = owner.dataDir === undefined ? '' : ` with data dir ${owner.dataDir}`;
  return `${what} is in use by stacker pid ${owner.pid} on ${owner.hostname}${where}, started ${new Date(owner.startedAtMs).toISOString()} (lock ${lockPath}); ${release}`;
}

/**
 * A full disk (ENOSPC, SQLite's SQLITE_FULL): it passes once space is freed, as the journal's own
 * "database or disk is full" does, so a start refused for it exits 4 whichever write met it first.
 */
export function isDiskFull(error: unknown): boolean {
  return (typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'ENOSPC') || sqlitePrimaryCode(error) === 13;
}

/** SQLite's primary result code of an error of node:sqlite (its extended code's low byte); null for any other error. */
function sqlitePrimaryCode(error: unknown): number | null {
  const errcode = typeof error === 'object' && error !== null ? (error as { errcode?: unknown }).errcode : undefined;
  return typeof errcode === 'number' ? errcode & 0xff : null;
}

/**
 * SQLite's "disk I/O error" on a file system with next to no room left: a write of its WAL or
 * shared-memory file meeting ENOSPC, which SQLite reports as an I/O error. A disk full, not a
 * failing one, when the folder's file system has less than a few blocks free.
 */
export function isIoErrorOnFullDisk(error: unknown, dir: string): boolean {
  if (sqlitePrimaryCode(error) !== 10) return false;
  try {
    const fs = statfsSync(dir);
    return Number(fs.bavail) * Number(fs.bsize) < NEARLY_FULL_BYTES;
  } catch {
    return false;
  }
}

/** Less room than this left on a file system is a full disk to SQLite (its WAL grows in pages of 4 KiB, its shared memory in 32 KiB). */
const NEARLY_FULL_BYTES = 256 * 1024;

/** Whether opening or reading the SQLite file at `path` failed for a full disk (exit 4: it passes once space is freed). */
export function failedForFullDisk(error: unknown, path: string): boolean {
  return isDiskFull(error) || (path !== ':memory:' && isIoErrorOnFullDisk(error, dirname(path)));
}

/** What to add to SQLite's "disk I/O error" when it is a full disk: said as such. */
export function fullDiskHint(error: unknown, path: string): string {
  return path !== ':memory:' && !isDiskFull(error) && isIoErrorOnFullDisk(error, dirname(path)) ? ` (its file system has no room left: ENOSPC; free some and start again)` : '';
}
