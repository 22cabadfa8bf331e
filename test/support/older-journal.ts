import { DatabaseSync } from 'node:sqlite';
import { MIGRATIONS, migrate } from '../../src/store/migrations.ts';

/** A journal file as a build of schema `version` left it: WAL, the operator's kill switch on, one slot. */
export function olderJournal(path: string, version: number): void {
  const db = new DatabaseSync(path, { enableForeignKeyConstraints: true });
  try {
    db.exec('PRAGMA journal_mode = WAL');
    migrate(db, path, () => 1, MIGRATIONS.filter((m) => m.version <= version));
    db.exec(`INSERT INTO slots (instance, slot_time_ms, status, reason, run_id, claimed_at_ms, finished_at_ms) VALUES ('dca-btc', 1000, 'done', NULL, NULL, 1000, 1001)`);
    if (version >= 4) db.exec(`INSERT INTO operator_controls (control, target, since_ms) VALUES ('kill-switch', '', 5), ('pause', 'dca-btc', 6)`);
  } finally {
    db.close();
  }
}

/** The newest schema version a journal file records. */
export function schemaOf(path: string): number {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return Number(db.prepare('SELECT max(version) AS v FROM schema_migrations').get()?.['v']);
  } finally {
    db.close();
  }
}
