/** The store's public surface: the Journal port, its SQLite implementation, locks and errors. */
export type * from './journal.ts';
export { BUDGET_PERIODS, INTENT_STATUSES, INTENT_TRANSITIONS, OPERATION_STATUSES, SLOT_STATUSES } from './journal.ts';
export { SqliteJournal, type SqliteJournalOptions } from './sqlite-journal.ts';
export { JOURNAL_FILES, type OpenStoreOptions, type OpenedStore, journalPath, openStore, openStoreForReading } from './open-store.ts';
export { FileLock, type LockOptions, apiKeyLock, dataDirLock, defaultUserLockDir, isProcessAlive } from './lock.ts';
export { type LockOwner, type LockScope, LockedError, SchemaTooNewError, StoreError, type StoreErrorReason } from './errors.ts';
export { periodStarts, checkTimeZone } from './budget-periods.ts';
export { MIGRATIONS, SCHEMA_VERSION } from './migrations.ts';
