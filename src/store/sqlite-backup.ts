import { closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import { StoreError, folderProblem } from './errors.ts';

/**
 * Keep a copy of a journal file before a migration changes it: a migration is one-way, and the
 * stacker that wrote the file refuses it afterwards (schema-too-new), so this copy is the way
 * back. SQLite makes it itself (VACUUM INTO: one read transaction, so the copy is consistent
 * whatever the WAL holds), as `<file>.schema-N.bak` beside the journal, readable by this user
 * alone like the journal, synced before the migration starts. A copy of that name already there
 * is an earlier upgrade's, of an older state of this journal: it is kept, and this one is dated.
 * A copy that cannot be made (a full disk) stops the migration: nothing is changed.
 */
export function keepCopyBeforeMigrating(db: DatabaseSync, path: string, version: number, nowMs: number): string {
  const plain = `${path}.schema-${version}.bak`;
  const target = existsSync(plain) ? `${path}.schema-${version}.${new Date(nowMs).toISOString().replace(/[-:.TZ]/g, '').slice(0, 14)}.bak` : plain;
  const partial = `${target}.partial`;
  try {
    rmSync(partial, { force: true });
    copyInto(db, partial);
    syncFile(partial);
    renameSync(partial, target);
    syncFile(dirname(target));
  } catch (error) {
    rmSync(partial, { force: true });
    throw new StoreError(
      'unwritable',
      `could not keep a copy of the journal ${path} (schema ${version}) as ${target} before migrating it: ${error instanceof Error ? error.message : String(error)}${folderProblem(dirname(path))}; nothing was changed (free space beside the journal, then start again)`,
      { retryable: true, cause: error },
    );
  }
  return target;
}

/**
 * A consistent copy of the open database in a new file (SQLite's VACUUM INTO: one read
 * transaction, whatever the WAL holds), readable by this user alone: SQLite writes into an
 * empty file as it finds it, so it is made here first, with the journal's mode.
 */
export function copyInto(db: DatabaseSync, target: string): void {
  closeSync(openSync(target, 'wx', 0o600));
  db.prepare('VACUUM INTO ?').run(target);
}

function syncFile(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
