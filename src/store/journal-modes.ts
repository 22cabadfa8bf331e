import { chmodSync, lstatSync } from 'node:fs';
import { markerPath } from './journal-identity.ts';

/** A journal file whose mode was narrowed: what it was. */
export interface NarrowedFile {
  readonly path: string;
  readonly was: number;
}

/**
 * Orders, budgets and P&L are this user's: a journal's files (the file, its -wal and -shm, its
 * identity file) that others may read or write are made 0600. The first builds made them 0644
 * (newer ones make them 0600), and an upgrade kept them so. Only files this user owns, and
 * never through a symbolic link; what cannot be changed is left as it is. Before SQLite opens
 * the journal, so -wal and -shm files it makes afresh take the narrowed mode.
 */
export function narrowJournalModes(journalPath: string): NarrowedFile[] {
  const uid = typeof process.getuid === 'function' ? process.getuid() : null;
  const narrowed: NarrowedFile[] = [];
  for (const path of [journalPath, `${journalPath}-wal`, `${journalPath}-shm`, markerPath(journalPath)]) {
    try {
      const stat = lstatSync(path);
      if (!stat.isFile() || (uid !== null && stat.uid !== uid) || (stat.mode & 0o077) === 0) continue;
      chmodSync(path, 0o600);
      narrowed.push({ path, was: stat.mode & 0o777 });
    } catch {
      // Missing, or not ours to change: the journal opens as it is.
    }
  }
  return narrowed;
}
