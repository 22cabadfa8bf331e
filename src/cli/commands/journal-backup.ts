import { chmodSync, existsSync, statSync } from 'node:fs';
import { InputError } from '../../domain/errors.ts';
import { StoreError } from '../../store/errors.ts';
import type { CommandContext } from '../context.ts';
import { newFile } from '../file-flags.ts';
import { json } from '../output.ts';

export interface BackupFlags {
  readonly dataDir?: string;
  readonly mode?: string;
  readonly to?: string;
  readonly envFile?: string | undefined;
}

/**
 * `stacker journal backup --to FILE`: a consistent copy of a mode's SQLite journal, taken with
 * SQLite's online backup while the daemon runs (it waits out the daemon's writes; a `cp` of a
 * journal being written may be torn), readable by its owner only, and checked before it is
 * called done. The Docker image has no sqlite3 to run `.backup` with: `docker exec stacker
 * stacker journal backup --to /data/backup.db`. A PostgreSQL journal is backed up with pg_dump.
 */
export async function backup(ctx: CommandContext, flags: BackupFlags, deps: { readonly env?: Readonly<Record<string, string | undefined>> } = {}): Promise<void> {
  if (flags.to === undefined) throw InputError.one('--to', 'name the file to write the copy to (a new file, e.g. stacker-2026-11-28.db)');
  const to = newFile(flags.to, '--to', 'a backup is written to a new file only (one written over could be the journal itself, or an older backup still needed)');
  const { loadJournalLocation } = await import('../../config/journal-location.ts');
  const location = await loadJournalLocation({ envFile: flags.envFile, dataDir: flags.dataDir, mode: flags.mode }, deps.env === undefined ? {} : { env: deps.env });
  if (location.databaseUrl !== null) {
    throw InputError.one('--to', 'the journal of this configuration is in PostgreSQL (STACKER_DATABASE_URL): back it up with pg_dump (README "PostgreSQL"); this copies a SQLite journal');
  }
  const { journalPath } = await import('../../store/open-store.ts');
  const from = journalPath(location.dataDir, location.mode);
  if (!existsSync(from)) throw new StoreError('not-found', `no ${location.mode} journal at ${from}: nothing to back up`);
  const { DatabaseSync, backup: sqliteBackup } = await import('node:sqlite');
  const source = new DatabaseSync(from, { readOnly: true });
  try {
    await sqliteBackup(source, to);
  } finally {
    source.close();
  }
  chmodSync(to, 0o600);
  // The copy must open as a journal before it is called one.
  const copy = new DatabaseSync(to, { readOnly: true });
  let journalId: string;
  try {
    const check = copy.prepare('PRAGMA quick_check').all().map((row) => String(Object.values(row)[0]));
    if (check.join() !== 'ok') throw new StoreError('corrupt', `the copy ${to} does not pass SQLite's check (${check.slice(0, 3).join('; ')}): remove it and try again`);
    journalId = String(copy.prepare("SELECT value FROM journal_meta WHERE key = 'journal_id'").get()?.['value'] ?? '?');
  } finally {
    copy.close();
  }
  const bytes = statSync(to).size;
  if (ctx.json) {
    ctx.io.out(json({ journal: from, mode: location.mode, backup: to, journalId, bytes }));
    return;
  }
  ctx.io.out(
    `copied the ${location.mode} journal ${from} (journal ${journalId}) to ${to}: ${(bytes / 1e6).toFixed(1)} MB, checked, yours alone. ` +
      "Put it back only with the daemon stopped, in place of the journal; a copy older than the daemon's last start is told, and handled as one (README \"Exactly once\")\n",
  );
}
