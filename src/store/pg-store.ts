import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import type pg from 'pg';
import { LockedError, StoreError } from './errors.ts';
import { abortableSleep } from '../domain/abortable-sleep.ts';
import type { RunMode } from './journal.ts';
import { type JournalFileState, REBUILD_COMMAND, lostJournalForReading, lostJournalProblem, markedBehind, pgMarkerBase, readMarker, writeMarker } from './journal-identity.ts';
import { type FileLock, apiKeyLock, defaultUserLockDir, releaseEach } from './lock.ts';
import { asStoreError, checkSchemaName, describeLocation } from './pg-db.ts';
import { PgJournal } from './pg-journal.ts';
import { accessRefused, schemaAccessProblem } from './pg-migrations.ts';
import { JOURNAL_SCHEMAS } from './pg-schemas.ts';
import { PulseWatch, lapseMs, pulseIntervalMs, readPulse } from './pg-lease-pulse.ts';
import { type LockKeep, type LockWait, PgAdvisoryLock } from './pg-lock.ts';
import { boundedClient, endSession } from './pg-session.ts';
import { DATABASE_TIMEOUT } from './pg-timeout.ts';
import { type OpenedStore, REBUILT, openedStore } from './opened-store.ts';

/**
 * Opening a PostgreSQL journal for a daemon (STACKER_DATABASE_URL): the counterpart of
 * open-store.ts for a database. Each mode has its own schema (JOURNAL_SCHEMAS), as it has its own SQLite file.
 */
export { JOURNAL_SCHEMAS };

export interface PgStoreOptions {
  readonly url: string;
  readonly mode: RunMode;
  /** Remembers which journal this data dir's daemon used (`stacker-pg-<mode>.id`), so a database emptied or swapped under it is noticed. */
  readonly dataDir: string;
  /** Every account key of the daemon: each is locked, all before anything is opened. */
  readonly apiKeys?: readonly string[];
  readonly userLockDir?: string;
  readonly onLostJournal?: 'refuse' | 'rebuild';
  /** false: a schema with no journal in it is not started (OpenStoreOptions.create). */
  readonly create?: boolean;
  readonly clock?: () => number;
  readonly newId?: () => string;
  readonly pid?: number;
  readonly hostname?: string;
  /**
   * Hot standby: when another daemon holds the journal, wait (instead of refusing) until its
   * session ends — stopped, killed, its host gone — then take the journal over. The one that
   * was replaced can then journal nothing and send nothing (PgJournal.takeOwnership).
   */
  readonly standby?: LockWait;
  /** Told when the journal's lock is lost under the daemon (its session ended) and when it is taken again. */
  readonly keep?: LockKeep;
  /** A standby told that it ended the session of an owner whose pulse stood still for the lapse (pg-lease-pulse.ts). */
  readonly onOwnerLapsed?: (holder: LockedError, stillForMs: number) => void;
  /** STACKER_DATABASE_TIMEOUT: how long connecting, or any one query, may go unanswered (pg-session.ts). */
  readonly timeoutMs?: number;
}

export type OpenedPgStore = OpenedStore & { readonly journal: PgJournal };

/**
 * Lock the journal (an advisory lock; the API key by its file lock), check the database still
 * holds the journal this data dir used, open and migrate, and take ownership (the lease). A lock
 * another daemon holds is a LockedError naming it and nothing is opened — or, as a standby, a wait.
 */
export async function openPgStore(options: PgStoreOptions): Promise<OpenedPgStore> {
  const schema = JOURNAL_SCHEMAS[options.mode];
  const where = describeLocation(options.url, schema);
  const who = { ...(options.pid === undefined ? {} : { pid: options.pid }), ...(options.hostname === undefined ? {} : { hostname: options.hostname }) };
  const bound = options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs };
  const advisory = [new PgAdvisoryLock(options.url, 'journal', `journal:${schema}`, { ...who, ...bound, ...(options.keep === undefined ? {} : { keep: options.keep }) })];
  // Advisory locks are per database, and daemons sharing this database already meet at the
  // journal's lock; the key's file lock keeps out a daemon of this host on another journal.
  const files: FileLock[] = (options.apiKeys ?? []).map((apiKey) => apiKeyLock(apiKey, options.userLockDir ?? defaultUserLockDir(), { ...who, dataDir: where }));
  const releaseAll = async (): Promise<void> => {
    try {
      releaseEach([...files].reverse());
    } finally {
      for (const lock of [...advisory].reverse()) await lock.release();
    }
  };
  const journal = new PgJournal({
    url: options.url,
    schema,
    applicationName: 'stacker journal',
    ...bound,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.newId === undefined ? {} : { newId: options.newId }),
  });
  mkdirSync(resolve(options.dataDir), { recursive: true, mode: 0o700 });
  const base = pgMarkerBase(options.dataDir, options.mode);
  const now = options.clock ?? Date.now;
  let rebuilt: OpenedPgStore['rebuilt'] = null;
  let behind: OpenedPgStore['behind'] = null;
  const timeoutMs = options.timeoutMs ?? DATABASE_TIMEOUT.defaultMs;
  const standby: LockWait | undefined =
    options.standby === undefined
      ? undefined
      : {
          ...options.standby,
          lapse: {
            watch: new PulseWatch(lapseMs(timeoutMs)),
            read: (client) => readPulse(client, schema),
            ...(options.onOwnerLapsed === undefined ? {} : { onLapsed: options.onOwnerLapsed }),
          },
        };
  let pulses: NodeJS.Timeout | null = null;
  try {
    await acquireLocks(advisory, files, standby);
    const marker = readMarker(base);
    const found = await inspectPgJournal(options.url, schema, options.timeoutMs);
    const problem = lostJournalProblem(base, marker, found, where);
    if (problem !== null && options.onLostJournal !== 'rebuild') {
      throw new StoreError(
        'journal-lost',
        `${problem}. Starting a new journal would forget every budget spent and every order in flight, so stacker does not start. ` +
          `Restore the database from a backup, or rebuild the journal from the exchange's order history: ${REBUILD_COMMAND} (the lost schema is kept under a dated name).`,
      );
    }
    if (problem === null && options.onLostJournal === 'rebuild') {
      throw new StoreError('conflict', `the journal ${where} is intact: there is nothing to rebuild (drop --rebuild-journal)`);
    }
    if (problem !== null) rebuilt = { reason: problem, movedAside: await moveSchemaAside(options.url, schema, now(), options.timeoutMs) };
    if (options.create === false && found.state !== 'journal') throw noJournalYet(options.mode, where);
    await journal.open();
    await journal.takeOwnership(advisory[0]?.holder ?? 'stacker');
    pulses = pulseWhileOwner(journal, pulseIntervalMs(timeoutMs));
    const journalId = await journal.journalId();
    if (marker === null || rebuilt !== null || marker.journalId !== journalId) {
      const atMs = now();
      if (rebuilt !== null) behind = { sinceMs: atMs, reason: REBUILT };
      writeMarker(base, { journalId, createdAtMs: atMs, file: where, ...(rebuilt === null ? {} : { behindSinceMs: atMs, behindReason: REBUILT }) });
    } else if (marker.behindSinceMs !== undefined && marker.behindReason !== undefined) {
      // Found behind by a start before this one (rebuilt, or lost as the history showed): the caller weighs it against its settle window.
      behind = { sinceMs: marker.behindSinceMs, reason: marker.behindReason, ...(marker.behindEveryBuy === true ? { everyBuy: true } : {}) };
    }
  } catch (error) {
    if (pulses !== null) clearInterval(pulses);
    await journal.close().catch(() => undefined);
    await releaseAll();
    throw error;
  }
  const beating = pulses;
  return openedStore(
    journal,
    rebuilt,
    async () => {
      clearInterval(beating);
      await releaseAll();
    },
    {
      olderCopy: null,
      ...(behind === null ? {} : { behind }),
      noteRun: () => undefined,
      noteBehind({ sinceMs, reason, everyBuy }) {
        const current = readMarker(base);
        if (current !== null) writeMarker(base, markedBehind(current, { sinceMs, reason, ...(everyBuy === true ? { everyBuy } : {}) }));
      },
    },
  );
}

/**
 * The owner's pulse (pg-lease-pulse.ts), one at a time. A pulse that fails is the journal's
 * write failure, which the daemon already reports (health, the next slot's write); one refused
 * because a standby took over stops the daemon at its next write or lease check.
 */
function pulseWhileOwner(journal: PgJournal, intervalMs: number): NodeJS.Timeout {
  let inFlight = false;
  const timer = setInterval(() => {
    if (inFlight) return;
    inFlight = true;
    journal
      .renewLease(intervalMs)
      .catch(() => undefined)
      .finally(() => {
        inFlight = false;
      });
  }, intervalMs);
  timer.unref();
  return timer;
}

/**
 * The journal's lock, then the API keys' file locks. A standby can take the journal's lock while
 * its owner lives: a database restart ends the owner's session, and the standby's connects first.
 * The owner still holds the key's file lock on this host, and takes its journal lock again at
 * once; the standby gives the journal lock back and waits on (it exited E_LOCKED, leaving the
 * trader without a standby after every database restart).
 */
async function acquireLocks(advisory: readonly PgAdvisoryLock[], files: readonly FileLock[], standby: LockWait | undefined): Promise<void> {
  for (;;) {
    for (const lock of advisory) await lock.acquire(standby);
    const taken: FileLock[] = [];
    try {
      for (const lock of files) {
        lock.acquire();
        taken.push(lock);
      }
      return;
    } catch (error) {
      for (const lock of taken.reverse()) lock.release();
      if (standby === undefined || !(error instanceof LockedError)) throw error;
      for (const lock of [...advisory].reverse()) await lock.release();
      standby.onWaiting?.(error);
      await abortableSleep(standby.pollMs ?? 1_000, standby.signal);
      if (standby.signal?.aborted === true) throw error;
    }
  }
}

/** A mode's PostgreSQL journal beside a running daemon, without its lock: read-only, or with `write` for a human's small verdicts. */
export async function openPgStoreForReading(options: {
  readonly url: string;
  readonly mode: RunMode;
  readonly write?: boolean;
  readonly timeoutMs?: number;
  /** The data dir whose identity file says which journal its daemon used: a schema gone since is lost, not "not run yet". */
  readonly dataDir?: string;
}): Promise<PgJournal> {
  const schema = JOURNAL_SCHEMAS[options.mode];
  const where = describeLocation(options.url, schema);
  const found = await inspectPgJournal(options.url, schema, options.timeoutMs);
  // Checked as a start checks it: a database other than the one the data dir's daemon used (another
  // URL, a copy) was read and reported from as if it were that daemon's.
  const problem = options.dataDir === undefined ? null : lostJournalProblem(pgMarkerBase(options.dataDir, options.mode), readMarker(pgMarkerBase(options.dataDir, options.mode)), found, where);
  if (problem !== null) throw lostJournalForReading(problem, 'the database');
  if (found.state !== 'journal') throw noJournalYet(options.mode, where);
  const journal = new PgJournal({
    url: options.url,
    schema,
    readOnly: options.write !== true,
    // A reader never migrates: the daemon's start (or `journal upgrade`) does, under the journal's lock.
    migrate: false,
    applicationName: 'stacker reader',
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  });
  await journal.open();
  return journal;
}

function noJournalYet(mode: RunMode, where: string): StoreError {
  return new StoreError('not-found', `no ${mode} journal in ${where} yet: stacker has not run on this database in that mode`);
}

/** What the schema holds, without creating anything: nothing, an empty schema, or a journal and its id. */
export async function inspectPgJournal(url: string, schema: string, timeoutMs: number = DATABASE_TIMEOUT.defaultMs): Promise<JournalFileState> {
  checkSchemaName(schema);
  return withClient(url, timeoutMs, `looking for the journal ${describeLocation(url, schema)}`, async (client) => {
    const present = await client.query('SELECT 1 FROM information_schema.schemata WHERE schema_name = $1', [schema]);
    if (present.rows.length === 0) return { state: 'missing' };
    const meta = await client.query('SELECT to_regclass($1) IS NOT NULL AS found', [`${schema}.journal_meta`]);
    if (meta.rows[0]?.['found'] !== true) return { state: 'empty' };
    const id = await client.query(`SELECT value FROM ${schema}.journal_meta WHERE key = 'journal_id'`);
    const value: unknown = id.rows[0]?.['value'];
    return { state: 'journal', journalId: typeof value === 'string' ? value : null };
  });
}

/**
 * What would keep `stacker run` from creating or migrating a mode's journal in this database
 * with this URL's role (schemaAccessProblem): a StoreError as the start would throw it, or null.
 * Creates nothing; for `stacker check`.
 */
export async function pgJournalAccessProblem(url: string, mode: RunMode, timeoutMs: number = DATABASE_TIMEOUT.defaultMs): Promise<StoreError | null> {
  const schema = JOURNAL_SCHEMAS[mode];
  const where = describeLocation(url, schema);
  const problem = await withClient(url, timeoutMs, `looking at the role's privileges on ${where}`, (client) => schemaAccessProblem(client, schema));
  return problem === null ? null : accessRefused(where, problem);
}

/** Keep a lost or foreign journal's schema under a dated name instead of dropping it. */
async function moveSchemaAside(url: string, schema: string, nowMs: number, timeoutMs: number = DATABASE_TIMEOUT.defaultMs): Promise<string[]> {
  const aside = `${schema}_lost_${new Date(nowMs).toISOString().replace(/[-:.TZ]/g, '').slice(0, 14)}`;
  return withClient(url, timeoutMs, `keeping the lost journal ${schema} as ${aside}`, async (client) => {
    const present = await client.query('SELECT 1 FROM information_schema.schemata WHERE schema_name = $1', [schema]);
    if (present.rows.length === 0) return [];
    await client.query(`ALTER SCHEMA ${schema} RENAME TO ${checkSchemaName(aside)}`);
    return [describeLocation(url, aside)];
  }, 'write');
}

async function withClient<T>(url: string, timeoutMs: number, doing: string, work: (client: pg.Client) => Promise<T>, access: 'read' | 'write' = 'read'): Promise<T> {
  const client = boundedClient(url, 'stacker', timeoutMs);
  try {
    await client.connect();
    return await work(client);
  } catch (error) {
    throw asStoreError(error, doing, access);
  } finally {
    await endSession(client, timeoutMs);
  }
}
