import { randomUUID } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, statSync, writeSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { StoreError, failedForFullDisk, fileProblem, fullDiskHint } from './errors.ts';

/**
 * A journal's identity, kept in the journal (journal_meta `journal_id`) and beside it
 * (`<journal>.id`), so a data dir that had a journal can tell when the journal is gone: a file
 * deleted, truncated to nothing, or swapped for another journal. Starting afresh on an empty
 * journal would forget every budget and every order in flight, so that is refused until a
 * human restores the file or asks for a rebuild from the exchange's history.
 */

export interface JournalMarker {
  readonly journalId: string;
  readonly createdAtMs: number;
  readonly file: string;
  /**
   * When the newest daemon run of this data dir started on the journal (SQLite), written at each
   * start: a journal whose own newest run is older is a copy from before it, a backup put back.
   */
  readonly lastRunStartedAtMs?: number;
  /**
   * Since when, and why, the journal may lack the newest orders (rebuilt from the exchange's
   * history, an older copy put back): kept for the starts that follow within the settle window,
   * as a second start seconds after the first bought the slot the first one withheld.
   */
  readonly behindSinceMs?: number;
  readonly behindReason?: string;
  /** Every buy waits while behind, not only those under a budget (orders of its instances placed moments before it was found). */
  readonly behindEveryBuy?: boolean;
}

export type JournalFileState =
  | { readonly state: 'missing' }
  | { readonly state: 'empty' }
  /** SQLite finds the file damaged (a disk fault, a write over it): what it held cannot be trusted. */
  | { readonly state: 'damaged'; readonly message: string }
  | { readonly state: 'journal'; readonly journalId: string | null };

/** SQLite's result codes for a file that is not (or no longer) a sound database: SQLITE_CORRUPT, SQLITE_NOTADB. */
const DAMAGED_CODES: ReadonlySet<number> = new Set([11, 26]);

/** Whether an error of SQLite's says the file itself is damaged. */
export function isDamagedDatabase(error: unknown): boolean {
  const code = typeof error === 'object' && error !== null ? (error as { errcode?: unknown }).errcode : undefined;
  if (typeof code === 'number' && DAMAGED_CODES.has(code & 0xff)) return true;
  // Wrapped by the journal (StoreError keeps SQLite's error as its cause).
  const cause = error instanceof Error ? error.cause : undefined;
  return cause !== undefined && cause !== error && isDamagedDatabase(cause);
}

/** The marker noting the journal behind since `sinceMs` for `reason` (and whether every buy waits), whatever it noted before. */
export function markedBehind(marker: JournalMarker, behind: { readonly sinceMs: number; readonly reason: string; readonly everyBuy?: boolean }): JournalMarker {
  const { behindEveryBuy: _before, ...rest } = marker;
  return { ...rest, behindSinceMs: behind.sinceMs, behindReason: behind.reason, ...(behind.everyBuy === true ? { behindEveryBuy: true } : {}) };
}

export function markerPath(journalPath: string): string {
  return `${journalPath}.id`;
}

export function readMarker(journalPath: string): JournalMarker | null {
  let raw: string;
  try {
    raw = readFileSync(markerPath(journalPath), 'utf8');
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return null;
    throw new StoreError('open-failed', `cannot read ${markerPath(journalPath)}: ${messageOf(error)}${fileProblem(markerPath(journalPath), 'read')}`, { cause: error });
  }
  try {
    const value = JSON.parse(raw) as Partial<JournalMarker>;
    if (typeof value.journalId === 'string' && value.journalId !== '' && typeof value.createdAtMs === 'number') {
      return {
        journalId: value.journalId,
        createdAtMs: value.createdAtMs,
        file: typeof value.file === 'string' ? value.file : basename(journalPath),
        ...(typeof value.lastRunStartedAtMs === 'number' && Number.isFinite(value.lastRunStartedAtMs) ? { lastRunStartedAtMs: value.lastRunStartedAtMs } : {}),
        ...(typeof value.behindSinceMs === 'number' && Number.isFinite(value.behindSinceMs) && typeof value.behindReason === 'string' ? { behindSinceMs: value.behindSinceMs, behindReason: value.behindReason } : {}),
        ...(value.behindEveryBuy === true ? { behindEveryBuy: true } : {}),
      };
    }
  } catch {
    // fall through: an unreadable marker is reported below
  }
  throw new StoreError('corrupt', `${markerPath(journalPath)} is not stacker's journal identity file; restore it or remove it only if ${journalPath} is the right journal`);
}

export function writeMarker(journalPath: string, marker: JournalMarker): void {
  const path = markerPath(journalPath);
  const temporary = `${path}.${randomUUID()}.tmp`;
  const fd = openSync(temporary, 'wx', 0o600);
  try {
    writeSync(fd, `${JSON.stringify(marker)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, path);
}

/**
 * What is at the journal's path, without creating or changing anything: no file, a file with
 * no journal in it (truncated, or created empty), or a journal and its id (null for a journal
 * from before ids existed).
 */
export function inspectJournalFile(journalPath: string): JournalFileState {
  if (!existsSync(journalPath)) return { state: 'missing' };
  if (statSync(journalPath).size === 0) return { state: 'empty' };
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(journalPath, { timeout: 5_000 });
  } catch (error) {
    if (isDamagedDatabase(error)) return { state: 'damaged', message: messageOf(error) };
    throw new StoreError('open-failed', `cannot open the journal ${journalPath}: ${messageOf(error)}${fullDiskHint(error, journalPath) || fileProblem(journalPath, 'read')}`, { cause: error, retryable: failedForFullDisk(error, journalPath) });
  }
  try {
    const meta = db.prepare("SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = 'journal_meta'").get();
    if (meta === undefined) return { state: 'empty' };
    const row = db.prepare("SELECT value FROM journal_meta WHERE key = 'journal_id'").get();
    // Every page, at start: damage where no start-up query looks would otherwise surface mid-slot.
    const damage = pageDamage(db);
    if (damage !== null) return { state: 'damaged', message: damage };
    return { state: 'journal', journalId: row === undefined ? null : String(row['value']) };
  } catch (error) {
    if (isDamagedDatabase(error)) return { state: 'damaged', message: messageOf(error) };
    throw new StoreError('open-failed', `cannot read the journal ${journalPath}: ${messageOf(error)}${fullDiskHint(error, journalPath)}`, { cause: error, retryable: failedForFullDisk(error, journalPath) });
  } finally {
    db.close();
  }
}

/**
 * Why the journal at `journalPath` may not be opened as it is; null when it may. `shown` names
 * the journal in the sentence (a PostgreSQL journal's marker sits in the data dir, the journal elsewhere).
 */
export function lostJournalProblem(journalPath: string, marker: JournalMarker | null, found: JournalFileState, shown: string = journalPath): string | null {
  // Whoever made it: a damaged file cannot be trusted for a budget or an order in flight.
  if (found.state === 'damaged') return damagedJournal(shown, found.message);
  if (marker === null) return null;
  const had = `${markerPath(journalPath)} says journal ${marker.journalId} was created here on ${new Date(marker.createdAtMs).toISOString()}`;
  if (found.state === 'missing') return `the journal ${shown} is missing, but ${had}`;
  if (found.state === 'empty') return `the journal ${shown} is empty (no journal in it), but ${had}`;
  if (found.journalId !== null && found.journalId !== marker.journalId) return `${shown} holds journal ${found.journalId}, not the one that was here: ${had}`;
  return null;
}

/** How to rebuild a lost journal, for both modes: run as printed without the live switches, the dry-run journal would be rebuilt. */
export const REBUILD_COMMAND = '`stacker run --rebuild-journal` (the live journal: `STACKER_MODE=live stacker run --live --rebuild-journal`)';

/** SQLite's check of every page (~40 ms for a 30 MB journal): null when they all read, else what it says of the first that does not. */
export function pageDamage(db: DatabaseSync): string | null {
  const check = String(db.prepare('PRAGMA quick_check(1)').get()?.['quick_check'] ?? 'ok');
  return check === 'ok' ? null : check;
}

/** How a damaged journal is named, at start and by a reader. */
export function damagedJournal(shown: string, message: string): string {
  return `the journal ${shown} is damaged (${message})`;
}

/**
 * What a command that only reads the journal (orders, journal, report, check) says of a lost one:
 * the loss, and the way on that the daemon's own refusal gives. `restore` names what to restore.
 */
export function lostJournalForReading(problem: string, restore: string): StoreError {
  return new StoreError('journal-lost', `${problem}. Restore ${restore} from a backup, or rebuild it from the exchange's order history: ${REBUILD_COMMAND}`);
}

/** Keep a lost or foreign journal's files under a dated name instead of deleting them. */
export function moveAside(journalPath: string, nowMs: number): string[] {
  const suffix = `.lost-${new Date(nowMs).toISOString().replace(/[:.]/g, '-')}`;
  const moved: string[] = [];
  for (const path of [journalPath, `${journalPath}-wal`, `${journalPath}-shm`]) {
    if (!existsSync(path)) continue;
    renameSync(path, `${path}${suffix}`);
    moved.push(`${path}${suffix}`);
  }
  return moved;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function codeOf(error: unknown): string {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
}

/** Where a data dir keeps the identity of the PostgreSQL journal of a mode (`stacker-pg-<mode>.id`): written when a journal moves there. */
export function pgMarkerBase(dataDir: string, mode: string): string {
  return join(resolve(dataDir), `stacker-pg-${mode}`);
}

/**
 * The data dir's journal of this mode moved to PostgreSQL (`journal migrate`, or a daemon that
 * ran there): its SQLite file is the copy from before, and a run on it would miss every budget
 * spent and every order placed since (a start without STACKER_DATABASE_URL bought over a budget
 * that way). A StoreError saying so, or null when the journal never moved.
 */
export function movedToPostgres(dataDir: string, mode: string, sqlitePath: string): StoreError | null {
  const base = pgMarkerBase(dataDir, mode);
  const marker = readMarker(base);
  if (marker === null) return null;
  return new StoreError(
    'conflict',
    `the ${mode} journal of the data dir ${resolve(dataDir)} lives in PostgreSQL (${marker.file}, journal ${marker.journalId}, since ${new Date(marker.createdAtMs).toISOString()}): ` +
      `${sqlitePath} is its copy from before it moved, and running on it would miss every budget spent and every order placed since. ` +
      `Set STACKER_DATABASE_URL to that database; to go back to the SQLite file on purpose, move ${markerPath(base)} aside first`,
  );
}

/**
 * The journal is an older copy than the one this data dir last ran (its identity file says when
 * the newest run started; the journal's own newest run is older): a backup put back. Its last
 * slots' orders are in no journal, and the exchange's history may not show them yet: a slot
 * missed then must not be run late (it was bought). Null when it is not, or cannot be told.
 */
export function olderCopyProblem(marker: JournalMarker | null, journalId: string, newestRunStartedAtMs: number | null): string | null {
  if (marker === null || marker.journalId !== journalId || marker.lastRunStartedAtMs === undefined) return null;
  if (newestRunStartedAtMs !== null && newestRunStartedAtMs >= marker.lastRunStartedAtMs) return null;
  const newest = newestRunStartedAtMs === null ? 'has no run' : `has its newest run from ${new Date(newestRunStartedAtMs).toISOString()}`;
  return `the journal ${newest}, but this data dir last started stacker on it at ${new Date(marker.lastRunStartedAtMs).toISOString()}: it is an older copy (a backup put back)`;
}

