/** The store's public surface: the Journal port, its SQLite and PostgreSQL implementations, locks and errors. */
export type * from './journal.ts';
export { BUDGET_PERIODS, INTENT_STATUSES, INTENT_TRANSITIONS, OPERATION_STATUSES, SLOT_STATUSES } from './journal.ts';
export { SqliteJournal, type SqliteJournalOptions } from './sqlite-journal.ts';
export { JOURNAL_FILES, type OpenStoreOptions, type OpenedStore, type StoredJournal, journalPath, openStore, openStoreForReading } from './open-store.ts';
export { PgJournal, type PgJournalOptions } from './pg-journal.ts';
export { JOURNAL_SCHEMAS } from './pg-store.ts';
export { FileLock, type LockOptions, apiKeyLock, dataDirLock, defaultUserLockDir, isProcessAlive } from './lock.ts';
export { type LockOwner, type LockScope, LockedError, SchemaTooNewError, StoreError, type StoreErrorReason } from './errors.ts';
export { periodStarts, checkTimeZone } from './budget-periods.ts';
export { MIGRATIONS, SCHEMA_VERSION } from './migrations.ts';
