import type { RunMode } from '../domain/run-mode.ts';

/**
 * The schema of each mode's journal in PostgreSQL, as each mode has its own SQLite file
 * (JOURNAL_FILES), so a dry-run can never consume a live slot. Apart from pg-store.ts so that
 * naming a schema (`stacker check`) does not load the driver.
 */
export const JOURNAL_SCHEMAS: Readonly<Record<RunMode, string>> = {
  live: 'stacker_live',
  'dry-run': 'stacker_dry_run',
  backtest: 'stacker_backtest',
};
