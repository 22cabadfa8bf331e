import type { Journal } from './journal.ts';

/** A journal a store opened: SQLite's file or PostgreSQL's schema, named by `path` in messages. */
export type StoredJournal = Journal & {
  /** The file, or the database (password shown as ***) and schema. */
  readonly path: string;
  journalId(): Promise<string>;
};

export interface OpenedStore {
  readonly journal: StoredJournal;
  /** Set when a lost journal was replaced by a new, empty one (onLostJournal: 'rebuild'). */
  readonly rebuilt: { readonly reason: string; readonly movedAside: readonly string[] } | null;
  /** Closes the journal, then releases the locks. */
  close(): Promise<void>;
}

/** The opened store a daemon holds: closing it closes the journal first and releases its locks even when that fails. */
export function openedStore<J extends StoredJournal>(journal: J, rebuilt: OpenedStore['rebuilt'], release: () => unknown): OpenedStore & { readonly journal: J } {
  return {
    journal,
    rebuilt,
    async close() {
      try {
        await journal.close();
      } finally {
        await release();
      }
    },
  };
}
