import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { StoreError } from './errors.ts';
import type { RunMode } from './journal.ts';
import { type FileLock, type LockOptions, apiKeyLock, dataDirLock, defaultUserLockDir } from './lock.ts';
import { SqliteJournal } from './sqlite-journal.ts';

/** Each mode has its own file, so a dry-run or a backtest can never consume a live slot. */
export const JOURNAL_FILES: Readonly<Record<RunMode, string>> = {
  live: 'stacker.db',
  'dry-run': 'stacker-dry-run.db',
  backtest: 'stacker-backtest.db',
};

export function journalPath(dataDir: string, mode: RunMode): string {
  return join(dataDir, JOURNAL_FILES[mode]);
}

export interface OpenStoreOptions extends Omit<LockOptions, 'dataDir'> {
  readonly dataDir: string;
  readonly mode: RunMode;
  /** Live only: also lock the key, so two data dirs cannot trade on one account key. */
  readonly apiKey?: string;
  /** Where the API-key locks live; ~/.stacker/locks by default. */
  readonly userLockDir?: string;
  readonly busyTimeoutMs?: number;
  readonly newId?: () => string;
}

export interface OpenedStore {
  readonly journal: SqliteJournal;
  /** Closes the journal, then releases the locks. */
  close(): Promise<void>;
}

/**
 * A daemon's journal is written a few rows per slot and read through indexes: 512 KiB of page
 * cache holds what a slot touches, where SQLite's default 2 MB would fill, over weeks, with
 * pages of old slots that stay resident for nothing.
 */
export const DAEMON_JOURNAL_CACHE_KIB = 512;

/**
 * Open the journal of a mode for a daemon: lock the journal (`<file>.lock` beside it) and the
 * API key first, then open and migrate. Either lock taken by a live stacker is a LockedError
 * and nothing is opened. The lock is per journal file, not per directory, so a dry-run may run
 * beside the live daemon in the same data dir while two daemons of one mode cannot.
 */
export async function openStore(options: OpenStoreOptions): Promise<OpenedStore> {
  const dataDir = resolve(options.dataDir);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = journalPath(dataDir, options.mode);
  const lockOptions: LockOptions = {
    ...(options.pid === undefined ? {} : { pid: options.pid }),
    ...(options.hostname === undefined ? {} : { hostname: options.hostname }),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.isAlive === undefined ? {} : { isAlive: options.isAlive }),
    dataDir,
  };
  const locks: FileLock[] = [dataDirLock(dataDir, { ...lockOptions, name: `${JOURNAL_FILES[options.mode]}.lock` })];
  if (options.apiKey !== undefined) locks.push(apiKeyLock(options.apiKey, options.userLockDir ?? defaultUserLockDir(), lockOptions));
  const releaseAll = (): void => {
    for (const lock of [...locks].reverse()) lock.release();
  };
  const journal = new SqliteJournal({
    path,
    cacheKiB: DAEMON_JOURNAL_CACHE_KIB,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.newId === undefined ? {} : { newId: options.newId }),
    ...(options.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: options.busyTimeoutMs }),
  });
  try {
    for (const lock of locks) lock.acquire();
    await journal.open();
  } catch (error) {
    releaseAll();
    throw error;
  }
  return {
    journal,
    async close() {
      try {
        await journal.close();
      } finally {
        releaseAll();
      }
    },
  };
}

/** Open a mode's journal to read beside a running daemon (`stacker orders`, `stacker journal`): no lock, no writes. */
export async function openStoreForReading(options: { readonly dataDir: string; readonly mode: RunMode; readonly busyTimeoutMs?: number }): Promise<SqliteJournal> {
  const path = journalPath(resolve(options.dataDir), options.mode);
  if (!existsSync(path)) throw new StoreError('not-found', `no ${options.mode} journal at ${path} yet: stacker has not run in this data dir`);
  const journal = new SqliteJournal({ path, readOnly: true, ...(options.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: options.busyTimeoutMs }) });
  await journal.open();
  return journal;
}
