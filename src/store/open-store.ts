import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type LockedError, StoreError } from './errors.ts';
import type { RunMode } from './journal.ts';
import { REBUILD_COMMAND, inspectJournalFile, lostJournalForReading, lostJournalProblem, markedBehind, moveAside, movedToPostgres, olderCopyProblem, readMarker, writeMarker } from './journal-identity.ts';
import { type FileLock, type LockOptions, apiKeyLock, dataDirLock, defaultUserLockDir, releaseEach } from './lock.ts';
import { type OpenedStore, REBUILT, type StoredJournal, openedStore } from './opened-store.ts';
import type { LockKeep, LockWait } from './pg-lock.ts';
import { recordedVersion } from './migrations.ts';
import { copyInto } from './sqlite-backup.ts';
import { asStoreError, openDatabase } from './sqlite-db.ts';
import { narrowJournalModes } from './journal-modes.ts';
import { SqliteJournal } from './sqlite-journal.ts';

export type { OpenedStore, StoredJournal };

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
  /** Live, several accounts: lock every key (with `apiKey` when both are given). */
  readonly apiKeys?: readonly string[];
  /** Where the API-key locks live; ~/.stacker/locks by default. */
  readonly userLockDir?: string;
  readonly busyTimeoutMs?: number;
  readonly newId?: () => string;
  /**
   * What to do when the data dir had a journal that is now missing, empty or another one:
   * `refuse` (the default: StoreError `journal-lost` naming what is missing and how to go on)
   * or `rebuild` (keep the old files under a dated name and start a new journal, which the
   * daemon fills from the exchange's order history). `rebuild` on an intact journal is refused.
   */
  readonly onLostJournal?: 'refuse' | 'rebuild';
  /** false: a journal that is not there is not started (`journal upgrade`: StoreError `not-found`), where a daemon starts a new one. */
  readonly create?: boolean;
  /** STACKER_DATABASE_URL: the journal is in this PostgreSQL database (pg-store.ts), locked by advisory locks. */
  readonly databaseUrl?: string;
  /** PostgreSQL only, STACKER_DATABASE_TIMEOUT: how long connecting, or any one query, may go unanswered (pg-session.ts). */
  readonly databaseTimeoutMs?: number;
  /** PostgreSQL only: wait as a hot standby while another daemon holds the journal (PgStoreOptions.standby). */
  readonly standby?: LockWait;
  /** PostgreSQL only: told when the journal's lock is lost under the daemon and taken again (PgStoreOptions.keep). */
  readonly keep?: LockKeep;
  /** PostgreSQL only: a standby told that it ended a frozen owner's session (PgStoreOptions.onOwnerLapsed). */
  readonly onOwnerLapsed?: (holder: LockedError, stillForMs: number) => void;
}

/**
 * A daemon's journal is written a few rows per slot and read through indexes: 512 KiB of page
 * cache holds what a slot touches, where SQLite's default 2 MB would fill, over weeks, with
 * pages of old slots that stay resident for nothing.
 */
export const DAEMON_JOURNAL_CACHE_KIB = 512;

/**
 * Open the journal of a mode for a daemon: lock the journal (`<file>.run-lock` beside it) and
 * the API key first, check that the journal this data dir had is still the one there (see
 * journal-identity.ts), then open and migrate. Either lock taken by a live stacker is a LockedError
 * and nothing is opened. The lock is per journal file, not per directory, so a dry-run may run
 * beside the live daemon in the same data dir while two daemons of one mode cannot.
 */
export async function openStore(options: OpenStoreOptions): Promise<OpenedStore> {
  if (options.databaseUrl !== undefined) {
    // Loaded only for a PostgreSQL journal: a daemon on SQLite never pays for the driver.
    const { openPgStore } = await import('./pg-store.ts');
    return openPgStore({
      url: options.databaseUrl,
      mode: options.mode,
      dataDir: options.dataDir,
      apiKeys: keysToLock(options),
      ...(options.userLockDir === undefined ? {} : { userLockDir: options.userLockDir }),
      ...(options.onLostJournal === undefined ? {} : { onLostJournal: options.onLostJournal }),
      ...(options.create === undefined ? {} : { create: options.create }),
      ...(options.clock === undefined ? {} : { clock: options.clock }),
      ...(options.newId === undefined ? {} : { newId: options.newId }),
      ...(options.pid === undefined ? {} : { pid: options.pid }),
      ...(options.hostname === undefined ? {} : { hostname: options.hostname }),
      ...(options.standby === undefined ? {} : { standby: options.standby }),
      ...(options.keep === undefined ? {} : { keep: options.keep }),
      ...(options.onOwnerLapsed === undefined ? {} : { onOwnerLapsed: options.onOwnerLapsed }),
      ...(options.databaseTimeoutMs === undefined ? {} : { timeoutMs: options.databaseTimeoutMs }),
    });
  }
  if (options.standby !== undefined) throw new StoreError('invalid-argument', 'a hot standby needs the journal in PostgreSQL (STACKER_DATABASE_URL): a SQLite file serves one host');
  const dataDir = resolve(options.dataDir);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = journalPath(dataDir, options.mode);
  const moved = movedToPostgres(dataDir, options.mode, path);
  if (moved !== null) throw moved;
  const lockOptions: LockOptions = {
    ...(options.pid === undefined ? {} : { pid: options.pid }),
    ...(options.hostname === undefined ? {} : { hostname: options.hostname }),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.isAlive === undefined ? {} : { isAlive: options.isAlive }),
    dataDir,
  };
  const locks: FileLock[] = [dataDirLock(dataDir, { ...lockOptions, name: JOURNAL_FILES[options.mode] })];
  for (const apiKey of keysToLock(options)) locks.push(apiKeyLock(apiKey, options.userLockDir ?? defaultUserLockDir(), lockOptions));
  const releaseAll = (): void => releaseEach([...locks].reverse());
  const journal = new SqliteJournal({
    path,
    cacheKiB: DAEMON_JOURNAL_CACHE_KIB,
    backupBeforeMigrating: true,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.newId === undefined ? {} : { newId: options.newId }),
    ...(options.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: options.busyTimeoutMs }),
  });
  let rebuilt: OpenedStore['rebuilt'] = null;
  let olderCopy: string | null = null;
  let behind: OpenedStore['behind'] = null;
  let narrowed: OpenedStore['narrowed'] = [];
  try {
    for (const lock of locks) lock.acquire();
    // An older build's journal others could read is made this user's alone (see below), before
    // anything opens it: SQLite makes the -wal and -shm files it opens with the journal's mode.
    narrowed = narrowJournalModes(path);
    // Checked under the lock: no other stacker can be creating or replacing the file meanwhile.
    const marker = readMarker(path);
    const problem = lostJournalProblem(path, marker, inspectJournalFile(path));
    if (problem !== null && options.onLostJournal !== 'rebuild') {
      throw new StoreError(
        'journal-lost',
        `${problem}. Starting a new journal would forget every budget spent and every order in flight, so stacker does not start. ` +
          `Restore ${path} from a backup, or rebuild it from the exchange's order history: ${REBUILD_COMMAND} (the lost files are kept under a dated name).`,
      );
    }
    if (problem === null && options.onLostJournal === 'rebuild') {
      throw new StoreError('conflict', `the journal ${path} is intact: there is nothing to rebuild (drop --rebuild-journal)`);
    }
    if (problem !== null) rebuilt = { reason: problem, movedAside: moveAside(path, (options.clock ?? Date.now)()) };
    if (options.create === false && !existsSync(path)) throw notRunYet(options.mode, path);
    // Orders and P&L are this user's: a new journal is made readable by it alone (SQLite gives its
    // -wal and -shm files the journal's mode), whatever the umask or the data dir's mode.
    if (!existsSync(path)) closeSync(openSync(path, 'wx', 0o600));
    await journal.open();
    const journalId = await journal.journalId();
    olderCopy = olderCopyProblem(marker, journalId, (await journal.listRuns(1))[0]?.startedAtMs ?? null);
    const nowMs = (options.clock ?? Date.now)();
    const found = rebuilt !== null ? REBUILT : olderCopy;
    if (marker === null || rebuilt !== null || marker.journalId !== journalId) {
      writeMarker(path, { journalId, createdAtMs: nowMs, file: JOURNAL_FILES[options.mode], ...(found === null ? {} : { behindSinceMs: nowMs, behindReason: found }) });
      behind = found === null ? null : { sinceMs: nowMs, reason: found };
    } else if (found !== null) {
      writeMarker(path, markedBehind(marker, { sinceMs: nowMs, reason: found }));
      behind = { sinceMs: nowMs, reason: found };
    } else if (marker.behindSinceMs !== undefined && marker.behindReason !== undefined) {
      behind = { sinceMs: marker.behindSinceMs, reason: marker.behindReason, ...(marker.behindEveryBuy === true ? { everyBuy: true } : {}) };
    }
  } catch (error) {
    await journal.close().catch(() => undefined);
    releaseAll();
    throw error;
  }
  return openedStore(journal, rebuilt, releaseAll, {
    olderCopy,
    behind,
    narrowed,
    noteRun(run) {
      const current = readMarker(path);
      if (current !== null) writeMarker(path, { ...current, lastRunStartedAtMs: run.startedAtMs });
    },
    noteBehind({ sinceMs, reason, everyBuy }) {
      const current = readMarker(path);
      if (current !== null) writeMarker(path, markedBehind(current, { sinceMs, reason, ...(everyBuy === true ? { everyBuy } : {}) }));
    },
  });
}

/** Every API key to lock, each once. */
function keysToLock(options: Pick<OpenStoreOptions, 'apiKey' | 'apiKeys'>): string[] {
  return [...new Set([...(options.apiKey === undefined ? [] : [options.apiKey]), ...(options.apiKeys ?? [])])];
}

/**
 * Open a mode's journal beside a running daemon without its lock: read-only (`stacker orders`,
 * `stacker journal`), or with `write` for a human's small verdicts (`journal acknowledge`,
 * `journal resolve`), which SQLite serialises with the daemon's own writes.
 */
export async function openStoreForReading(options: {
  readonly dataDir: string;
  readonly mode: RunMode;
  readonly busyTimeoutMs?: number;
  readonly write?: boolean;
  readonly databaseUrl?: string;
  readonly databaseTimeoutMs?: number;
}): Promise<StoredJournal> {
  if (options.databaseUrl !== undefined) {
    const { openPgStoreForReading } = await import('./pg-store.ts');
    return openPgStoreForReading({
      url: options.databaseUrl,
      mode: options.mode,
      dataDir: options.dataDir,
      ...(options.write === undefined ? {} : { write: options.write }),
      ...(options.databaseTimeoutMs === undefined ? {} : { timeoutMs: options.databaseTimeoutMs }),
    });
  }
  const path = journalPath(resolve(options.dataDir), options.mode);
  const moved = movedToPostgres(options.dataDir, options.mode, path);
  if (moved !== null) throw moved;
  if (!existsSync(path)) {
    // Its identity file outlived it: the journal was here and is lost, which "not run yet" would hide.
    const problem = lostJournalProblem(path, readMarker(path), { state: 'missing' });
    if (problem !== null) throw lostJournalForReading(problem, path);
    throw notRunYet(options.mode, path);
  }
  return openJournalFile(path, options);
}

function notRunYet(mode: RunMode, path: string): StoreError {
  return new StoreError('not-found', `no ${mode} journal at ${path} yet: stacker has not run in this data dir`);
}

/**
 * A journal file of an older schema as this stacker will read it once migrated, without changing
 * it (`stacker check` before the first start of a new build): a copy taken by SQLite, migrated in
 * a temp folder of this user's alone, removed when closed. `olderSchema` is the file's own version.
 */
export async function openMigratedCopy(path: string): Promise<StoredJournal & { readonly olderSchema: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'stacker-copy-'));
  try {
    const source = openDatabase({ path, readOnly: true });
    let olderSchema: number;
    try {
      olderSchema = recordedVersion(source);
      copyInto(source, join(dir, JOURNAL_FILES.live));
    } finally {
      source.close();
    }
    const journal = new MigratedCopy(join(dir, JOURNAL_FILES.live), dir, olderSchema);
    await journal.open();
    return journal;
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw asStoreError(error, `reading a copy of the journal ${path}`);
  }
}

class MigratedCopy extends SqliteJournal {
  readonly #dir: string;
  readonly olderSchema: number;

  constructor(path: string, dir: string, olderSchema: number) {
    super({ path });
    this.#dir = dir;
    this.olderSchema = olderSchema;
  }

  override async close(): Promise<void> {
    try {
      await super.close();
    } finally {
      rmSync(this.#dir, { recursive: true, force: true });
    }
  }
}

/**
 * A SQLite journal file named by its path (the one `stacker backtest --journal FILE` kept), opened
 * as openStoreForReading opens a data dir's: read-only unless `write`. A file that is not a
 * journal is a StoreError (`open-failed`).
 */
export async function openJournalFile(path: string, options: { readonly busyTimeoutMs?: number; readonly write?: boolean } = {}): Promise<StoredJournal> {
  // A reader never migrates: the daemon's start (or `journal upgrade`) does, under the journal's lock.
  const journal = new SqliteJournal({ path, readOnly: options.write !== true, migrate: false, checkPages: true, ...(options.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: options.busyTimeoutMs }) });
  await journal.open();
  return journal;
}
