import { createHash, randomUUID } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { homedir, hostname as osHostname } from 'node:os';
import { dirname, join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { type LockOwner, type LockScope, LockedError, StoreError, fileProblem, folderProblem, isDiskFull } from './errors.ts';

export interface LockOptions {
  readonly pid?: number;
  readonly hostname?: string;
  readonly clock?: () => number;
  /** Whether a process of this host is alive; `kill(pid, 0)` by default. Only a legacy lock file is judged by it. */
  readonly isAlive?: (pid: number) => boolean;
  /** Shown to whoever finds the lock taken (the API-key lock names the holder's data dir). */
  readonly dataDir?: string;
}

interface OwnerFileContent extends LockOwner {
  readonly scope: LockScope;
  /** Tells our owner file from a successor's. */
  readonly token: string;
}

/**
 * An exclusive lock that lives exactly as long as the process holding it: an exclusive SQLite
 * lock (fcntl) on a small file of its own, which the kernel releases when the process ends,
 * however it ends (kill -9, OOM). Why not a lock file judged by its pid: in a container the
 * daemon is PID 1 in a PID namespace of its own, so after a restart the old lock names pid 1,
 * which is alive (it is the new process), or a hostname that no longer exists; such a lock can
 * never be told from a live one and keeps a restarted daemon out until a human deletes it.
 * The kernel's lock has no such question to answer, needs no clock and no heartbeat, and holds
 * across PID namespaces on one host (Docker volumes, bind mounts).
 *
 * Who holds it is written beside it (`<lock>.json`: pid, hostname, start, data dir; never a
 * secret) only to name the holder in the error; the lock never depends on that file. The lock
 * file itself is never deleted: deleting it while another process waits on it would let two
 * processes lock two different files.
 *
 * The constructor does no I/O; acquire() and release() do. The kernel releases the lock at
 * process exit; release() does it earlier.
 */
export class FileLock {
  readonly path: string;
  readonly scope: LockScope;
  /** The file stacker 0.1 used (pid-judged JSON); honoured while a live stacker of that kind may hold it. */
  readonly #legacyPath: string | null;
  readonly #pid: number;
  readonly #hostname: string;
  readonly #now: () => number;
  readonly #isAlive: (pid: number) => boolean;
  readonly #dataDir: string | undefined;
  #db: DatabaseSync | null = null;
  #owner: string | null = null;

  constructor(path: string, scope: LockScope, options: LockOptions & { readonly legacyPath?: string } = {}) {
    this.path = path;
    this.scope = scope;
    this.#legacyPath = options.legacyPath ?? null;
    this.#pid = options.pid ?? process.pid;
    this.#hostname = options.hostname ?? osHostname();
    this.#now = options.clock ?? Date.now;
    this.#isAlive = options.isAlive ?? isProcessAlive;
    this.#dataDir = options.dataDir;
  }

  get held(): boolean {
    return this.#db !== null;
  }

  /** Where the holder is named: `<lock>.json`. */
  get ownerPath(): string {
    return `${this.path}.json`;
  }

  /** Take the lock or throw LockedError. Acquiring a lock already held by this object does nothing. */
  acquire(): void {
    if (this.#db !== null) return;
    try {
      mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    } catch (error) {
      // An API-key lock lives in the user's home by default: a container user without one (HOME=/) cannot create it.
      const where = this.scope === 'api-key' ? '; set STACKER_LOCK_DIR to a folder this user can write (the Docker image uses /data/locks)' : '';
      throw new StoreError('open-failed', `cannot create the lock's folder ${dirname(this.path)}: ${messageOf(error)}${where}`, { cause: error });
    }
    this.#checkLegacy();
    let db: DatabaseSync;
    try {
      db = new DatabaseSync(this.path, { timeout: 0 });
    } catch (error) {
      throw new StoreError('open-failed', `cannot open the lock ${this.path}: ${messageOf(error)}${folderProblem(dirname(this.path))}`, { cause: error });
    }
    try {
      // EXCLUSIVE locking mode keeps the lock taken by the first write until the connection
      // closes; MEMORY keeps SQLite from creating a rollback file beside it.
      db.exec('PRAGMA locking_mode = EXCLUSIVE');
      db.exec('PRAGMA journal_mode = MEMORY');
      db.exec('BEGIN EXCLUSIVE');
      db.exec('CREATE TABLE IF NOT EXISTS held (at_ms INTEGER NOT NULL)');
      db.exec('DELETE FROM held');
      db.prepare('INSERT INTO held (at_ms) VALUES (?)').run(this.#now());
      db.exec('COMMIT');
    } catch (error) {
      db.close();
      if (isBusy(error)) throw new LockedError(this.scope, this.path, readOwner(this.ownerPath));
      throw new StoreError('open-failed', `cannot take the lock ${this.path}: ${messageOf(error)}${fileProblem(this.path) || folderProblem(dirname(this.path))}`, { cause: error, retryable: isDiskFull(error) });
    }
    this.#db = db;
    const owner: OwnerFileContent = {
      pid: this.#pid,
      hostname: this.#hostname,
      startedAtMs: this.#now(),
      ...(this.#dataDir === undefined ? {} : { dataDir: this.#dataDir }),
      scope: this.scope,
      token: randomUUID(),
    };
    this.#owner = `${JSON.stringify(owner)}\n`;
    try {
      writeAtomically(this.ownerPath, this.#owner);
    } catch (error) {
      // A full disk or a folder this user cannot write: a setting to fix, not an unexpected failure.
      this.#owner = null;
      this.#db = null;
      db.close();
      throw new StoreError('open-failed', `cannot write the lock's owner file ${this.ownerPath}: ${messageOf(error)}${fileProblem(this.ownerPath) || folderProblem(dirname(this.ownerPath))}`, { cause: error, retryable: isDiskFull(error) });
    }
  }

  /**
   * Frees the lock. Its owner file that cannot be removed (the file system remounted read-only
   * under the daemon) does not keep it: the lock is freed all the same, then a StoreError names
   * the file left behind, which only names the holder and which the next holder overwrites.
   */
  release(): void {
    const db = this.#db;
    if (db === null) return;
    this.#db = null;
    let leftBehind: unknown = null;
    // The name goes first: once the lock is free, a successor writes its own.
    try {
      if (this.#owner !== null && readIfExists(this.ownerPath) === this.#owner) unlinkSync(this.ownerPath);
    } catch (error) {
      if (codeOf(error) !== 'ENOENT') leftBehind = error;
    }
    this.#owner = null;
    db.close();
    if (leftBehind !== null) {
      throw new StoreError('unwritable', `released the lock ${this.path}, but could not remove its owner file ${this.ownerPath} (${messageOf(leftBehind)}): it names a stacker that has stopped until the next start writes its own`, { cause: leftBehind });
    }
  }

  /**
   * stacker 0.1 held a JSON file judged by its pid. Such a file left by a killed daemon is
   * stale when its process is gone, when it names this very process (a container restarted as
   * the same PID), or when it comes from another host (a container re-created under a new
   * name): all cases where only a dead process could have written it. A file naming another
   * live process on this host may be a running 0.1 daemon: refused, as 0.1 would have.
   */
  #checkLegacy(): void {
    const legacy = this.#legacyPath;
    if (legacy === null) return;
    const raw = readIfExists(legacy);
    if (raw === null) return;
    const owner = parseOwner(raw);
    const liveElsewhere = owner !== null && owner.hostname === this.#hostname && owner.pid !== this.#pid && this.#isAlive(owner.pid);
    if (liveElsewhere) throw new LockedError(this.scope, legacy, owner);
    try {
      unlinkSync(legacy);
    } catch (error) {
      if (codeOf(error) !== 'ENOENT') throw error;
    }
  }
}

/** Releases every lock, in the order given, even when one fails; then throws the first failure. */
export function releaseEach(locks: readonly FileLock[]): void {
  let failure: { readonly error: unknown } | null = null;
  for (const lock of locks) {
    try {
      lock.release();
    } catch (error) {
      failure ??= { error };
    }
  }
  if (failure !== null) throw failure.error;
}

/** The lock that keeps two daemons off one journal: `<dataDir>/<name>.run-lock`. */
export function dataDirLock(dataDir: string, options: LockOptions & { readonly name?: string } = {}): FileLock {
  const name = options.name ?? 'stacker';
  return new FileLock(join(dataDir, `${name}.run-lock`), 'data-dir', { ...options, dataDir, legacyPath: join(dataDir, `${name}.lock`) });
}

/**
 * The lock that keeps two daemons (with different data dirs) off one API key on one machine:
 * their nonces and orders would interleave. Kept in a per-user directory, named by a hash of
 * the key; the key itself is never written. Daemons on other machines (or in containers with
 * their own HOME) cannot see it: for them, the exchange's history is the check (another
 * daemon's orders carrying our id scheme stop trading; docs/exactly-once.md).
 */
export function apiKeyLock(apiKey: string, lockDir: string, options: LockOptions = {}): FileLock {
  if (apiKey === '') throw new StoreError('invalid-argument', 'an API-key lock needs a key');
  const name = `api-key-${apiKeyDigest(apiKey)}`;
  return new FileLock(join(lockDir, `${name}.run-lock`), 'api-key', { ...options, legacyPath: join(lockDir, `${name}.lock`) });
}

/** Where per-user locks live by default (STACKER_LOCK_DIR sets another): ~/.stacker/locks. */
export function defaultUserLockDir(): string {
  return join(homedir(), '.stacker', 'locks');
}

export function apiKeyDigest(apiKey: string): string {
  return createHash('sha256').update('stacker api-key lock\0').update(apiKey, 'utf8').digest('hex').slice(0, 32);
}

/** `kill(pid, 0)`: delivered (alive) or EPERM (alive, another user's); ESRCH means gone. */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return codeOf(error) === 'EPERM';
  }
}

/** SQLITE_BUSY (5) or SQLITE_LOCKED (6): another connection holds the lock. */
function isBusy(error: unknown): boolean {
  const code = typeof error === 'object' && error !== null && 'errcode' in error && typeof error.errcode === 'number' ? error.errcode & 0xff : -1;
  return code === 5 || code === 6;
}

function writeAtomically(path: string, content: string): void {
  const temporary = `${path}.${randomUUID()}.tmp`;
  const fd = openSync(temporary, 'wx', 0o600);
  try {
    try {
      writeSync(fd, content);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, path);
  } catch (error) {
    // A full disk: the empty temporary file would stay beside the lock for good, one per start.
    try {
      unlinkSync(temporary);
    } catch {
      // Gone already, or the file system refuses even that: the error below is what matters.
    }
    throw error;
  }
}

function readIfExists(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return null;
    throw error;
  }
}

function readOwner(path: string): LockOwner | null {
  const raw = readIfExists(path);
  return raw === null ? null : parseOwner(raw);
}

function parseOwner(raw: string): LockOwner | null {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const { pid, hostname, startedAtMs, dataDir } = value as Record<string, unknown>;
  if (typeof pid !== 'number' || !Number.isSafeInteger(pid) || pid <= 0) return null;
  if (typeof hostname !== 'string' || typeof startedAtMs !== 'number') return null;
  return { pid, hostname, startedAtMs, ...(typeof dataDir === 'string' ? { dataDir } : {}) };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function codeOf(error: unknown): string {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
}
