import type { Journal } from './journal.ts';
import type { NarrowedFile } from './journal-modes.ts';
import type { JournalMigration } from './migrations.ts';

/** A journal a store opened: SQLite's file or PostgreSQL's schema, named by `path` in messages. */
export type StoredJournal = Journal & {
  /** The file, or the database (password shown as ***) and schema. */
  readonly path: string;
  journalId(): Promise<string>;
  /** What opening it migrated (a daemon's open, or `journal upgrade`); null when nothing. */
  readonly migrated?: JournalMigration | null;
};

/** Why a rebuilt journal may lack the newest orders. */
export const REBUILT = "the journal was rebuilt from the exchange's order history";

/** Since when and why a journal may lack its newest orders; `everyBuy`: every buy waits, not only those under a budget (JournalBehind). */
export interface BehindMark {
  readonly sinceMs: number;
  readonly reason: string;
  readonly everyBuy?: boolean;
}

export interface OpenedStore {
  readonly journal: StoredJournal;
  /** What this start migrated, from which schema and the copy kept of the file as it was: one-way, so the log says so. Null when nothing. */
  readonly migrated: JournalMigration | null;
  /** The journal's files that others could read or write, made this user's alone at this open (a file of an older build's); empty when none. */
  readonly narrowed: readonly NarrowedFile[];
  /** Set when a lost journal was replaced by a new, empty one (onLostJournal: 'rebuild'). */
  readonly rebuilt: { readonly reason: string; readonly movedAside: readonly string[] } | null;
  /** Why the journal is older than the last run its data dir saw (a backup put back); null when it is not, or cannot be told. */
  readonly olderCopy: string | null;
  /**
   * Since when, and why, the journal may lack the newest orders: found this start (rebuilt, an
   * older copy) or by a start before it; the caller decides for how long that still matters (its
   * settle window). Null when it never was.
   */
  readonly behind: BehindMark | null;
  /** A daemon run started on the journal: remembered beside it, so that an older copy put back later is told (SQLite; nothing for PostgreSQL). */
  noteRun(run: { readonly startedAtMs: number }): void;
  /** The journal found behind after it opened (a new one the history shows was lost): remembered beside it, so a restart within the settle window still knows (`behind`). */
  noteBehind(behind: BehindMark): void;
  /** Closes the journal, then releases the locks. */
  close(): Promise<void>;
}

/** The opened store a daemon holds: closing it closes the journal first and releases its locks even when that fails. */
export function openedStore<J extends StoredJournal>(
  journal: J,
  rebuilt: OpenedStore['rebuilt'],
  release: () => unknown,
  copies: {
    readonly olderCopy: string | null;
    readonly behind?: OpenedStore['behind'];
    readonly narrowed?: readonly NarrowedFile[];
    noteRun(run: { readonly startedAtMs: number }): void;
    noteBehind?(behind: BehindMark): void;
  } = { olderCopy: null, noteRun: () => undefined },
): OpenedStore & { readonly journal: J } {
  return {
    journal,
    migrated: journal.migrated ?? null,
    narrowed: copies.narrowed ?? [],
    rebuilt,
    olderCopy: copies.olderCopy,
    behind: copies.behind ?? (rebuilt === null ? null : { sinceMs: Date.now(), reason: REBUILT }),
    noteRun: (run) => copies.noteRun(run),
    noteBehind: (behind) => copies.noteBehind?.(behind),
    async close() {
      try {
        await journal.close();
      } finally {
        await release();
      }
    },
  };
}
