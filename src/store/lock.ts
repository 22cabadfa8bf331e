import { createHash, randomUUID } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { homedir, hostname as osHostname } from 'node:os';
import { dirname, join } from 'node:path';
import { type LockOwner, type LockScope, LockedError, StoreError } from './errors.ts';

export interface LockOptions {
  readonly pid?: number;
  readonly hostname?: string;
  readonly clock?: () => number;
  /** Whether a process of this host is alive; `kill(pid, 0)` by default. */
  readonly isAlive?: (pid: number) => boolean;
  /** Shown to whoever finds the lock taken (the API-key lock names the holder's data dir). */
  readonly dataDir?: string;
}

interface LockFileContent extends LockOwner {
  readonly scope: LockScope;
  /** Tells our lock file from a successor's with the same pid. */
  readonly token: string;
}

const CREATE_ATTEMPTS = 5;

/**
 * An exclusive lock held as a file, for as long as the process keeps it. The file is written
 * completely under a temporary name and then hard-linked into place: link(2) fails when the
 * name exists, exactly like O_CREAT|O_EXCL, but no reader can ever see a half-written lock.
 * (Filesystems without hard links fall back to O_EXCL.)
 *
 * A lock whose pid is dead on this host is stale and taken over; a live one, or one from
 * another host (whose pids we cannot check), is a LockedError naming its holder. The file
 * holds pid, hostname and start time, never a secret.
 *
 * The constructor does no I/O; acquire() and release() do. release() also runs on process
 * exit, and removes the file only if it is still ours.
 */
export class FileLock {
  readonly path: string;
  readonly scope: LockScope;
  readonly #pid: number;
  readonly #hostname: string;
  readonly #now: () => number;
  readonly #isAlive: (pid: number) => boolean;
  readonly #dataDir: string | undefined;
  #content: string | null = null;
  readonly #onExit = (): void => this.release();

  constructor(path: string, scope: LockScope, options: LockOptions = {}) {
    this.path = path;
    this.scope = scope;
    this.#pid = options.pid ?? process.pid;
    this.#hostname = options.hostname ?? osHostname();
    this.#now = options.clock ?? Date.now;
    this.#isAlive = options.isAlive ?? isProcessAlive;
    this.#dataDir = options.dataDir;
  }

  get held(): boolean {
    return this.#content !== null;
  }

  /** Take the lock or throw LockedError. Acquiring a lock already held by this object does nothing. */
  acquire(): void {
    if (this.#content !== null) return;
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    const mine: LockFileContent = {
      pid: this.#pid,
      hostname: this.#hostname,
      startedAtMs: this.#now(),
      ...(this.#dataDir === undefined ? {} : { dataDir: this.#dataDir }),
      scope: this.scope,
      token: randomUUID(),
    };
    const content = `${JSON.stringify(mine)}\n`;
    for (let attempt = 0; attempt < CREATE_ATTEMPTS; attempt += 1) {
      if (createExclusive(this.path, content, mine.token)) {
        this.#content = content;
        process.once('exit', this.#onExit);
        return;
      }
      const raw = readIfExists(this.path);
      if (raw === null) continue; // released between our attempt and the read: try again
      const owner = parseOwner(raw);
      if (owner === null || !this.#isStale(owner)) throw new LockedError(this.scope, this.path, owner);
      takeOverStale(this.path, raw, mine.token);
    }
    throw new LockedError(this.scope, this.path, parseOwner(readIfExists(this.path) ?? ''));
  }

  release(): void {
    const content = this.#content;
    if (content === null) return;
    this.#content = null;
    process.removeListener('exit', this.#onExit);
    // Only our own file: after a takeover (we were presumed dead) the file belongs to the successor.
    if (readIfExists(this.path) === content) {
      try {
        unlinkSync(this.path);
      } catch (error) {
        if (codeOf(error) !== 'ENOENT') throw error;
      }
    }
  }

  #isStale(owner: LockOwner): boolean {
    return owner.hostname === this.#hostname && !this.#isAlive(owner.pid);
  }
}

/** The lock that keeps two daemons off one journal: `<dataDir>/<name>`. */
export function dataDirLock(dataDir: string, options: LockOptions & { readonly name?: string } = {}): FileLock {
  return new FileLock(join(dataDir, options.name ?? 'stacker.lock'), 'data-dir', { ...options, dataDir });
}

/**
 * The lock that keeps two daemons (with different data dirs) off one API key: their nonces
 * and orders would interleave. Kept in a per-user directory, named by a hash of the key; the
 * key itself is never written.
 */
export function apiKeyLock(apiKey: string, lockDir: string, options: LockOptions = {}): FileLock {
  if (apiKey === '') throw new StoreError('invalid-argument', 'an API-key lock needs a key');
  return new FileLock(join(lockDir, `api-key-${apiKeyDigest(apiKey)}.lock`), 'api-key', options);
}

/** Where per-user locks live by default: ~/.stacker/locks. */
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

const LINK_UNSUPPORTED = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV']);

/** true when the lock file was created with our content; false when it already exists. */
function createExclusive(path: string, content: string, token: string): boolean {
  const temporary = `${path}.${token}.tmp`;
  writeSynced(temporary, content, 'wx');
  try {
    linkSync(temporary, path);
    return true;
  } catch (error) {
    if (codeOf(error) === 'EEXIST') return false;
    if (!LINK_UNSUPPORTED.has(codeOf(error))) throw error;
    try {
      writeSynced(path, content, 'wx');
      return true;
    } catch (fallbackError) {
      if (codeOf(fallbackError) === 'EEXIST') return false;
      throw fallbackError;
    }
  } finally {
    unlinkSync(temporary);
  }
}

/**
 * Remove a stale lock without ever removing a live one: move it aside atomically, check that
 * what was moved is the stale file we judged, and put it back if a successor had replaced it
 * in the meantime.
 */
function takeOverStale(path: string, staleRaw: string, token: string): void {
  const aside = `${path}.${token}.stale`;
  try {
    renameSync(path, aside);
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return;
    throw error;
  }
  try {
    if (readIfExists(aside) !== staleRaw) {
      try {
        linkSync(aside, path);
      } catch (error) {
        if (codeOf(error) !== 'EEXIST') throw error;
      }
    }
  } finally {
    unlinkSync(aside);
  }
}

function writeSynced(path: string, content: string, flag: 'wx'): void {
  const fd = openSync(path, flag, 0o600);
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
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

function codeOf(error: unknown): string {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
}
