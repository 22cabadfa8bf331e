import { ConfigError, type InputProblem } from '../domain/errors.ts';
import { DAEMON_DEFAULTS, DAEMON_ENV_KEYS, type DatabaseUrl, type Located, checkDirectory, locate, readDatabaseTimeout, readDatabaseUrl, readModeSetting } from './daemon-env.ts';
import { readEnvLayers } from './settings.ts';

/**
 * Which journal the read-only commands (`stacker orders`, `stacker journal`) open: the data dir
 * as the daemon finds it (--data-dir > STACKER_DATA_DIR > ./data) and a mode (--mode >
 * STACKER_MODE > dry-run), so `stacker orders --env-file .env` reads what `stacker run
 * --env-file .env` writes.
 */

import { RUN_MODES as JOURNAL_MODES, type RunMode as JournalMode } from '../domain/run-mode.ts';

export { JOURNAL_MODES, type JournalMode };

export interface JournalLocationFlags {
  readonly envFile?: string | undefined;
  readonly dataDir?: string | undefined;
  readonly mode?: string | undefined;
}

export interface JournalLocation {
  readonly dataDir: string;
  readonly mode: JournalMode;
  /** Where the mode came from: '--mode', 'STACKER_MODE (environment)', 'default'. */
  readonly modeSource: string;
  /** STACKER_DATABASE_URL: the journal is in PostgreSQL; null for the data dir's SQLite file. */
  readonly databaseUrl: DatabaseUrl | null;
  /** STACKER_DATABASE_TIMEOUT: how long that database (or migrate's --to) may take to connect or to answer one query. */
  readonly databaseTimeoutMs: number;
}

export async function loadJournalLocation(flags: JournalLocationFlags, sources: { readonly env?: Readonly<Record<string, string | undefined>> } = {}): Promise<JournalLocation> {
  const problems: InputProblem[] = [];
  let mode: JournalMode = 'dry-run';
  let modeSource = 'default';
  if (flags.mode !== undefined && !(JOURNAL_MODES as readonly string[]).includes(flags.mode)) {
    problems.push({ field: '--mode', rule: `must be one of ${JOURNAL_MODES.join(', ')} (got ${JSON.stringify(flags.mode)})` });
  }
  const layers = await readEnvLayers(flags.envFile, sources.env === undefined ? {} : { env: sources.env });
  if (flags.mode !== undefined) {
    mode = flags.mode as JournalMode;
    modeSource = '--mode';
  } else {
    const setting = readModeSetting(layers, problems);
    if (setting.mode !== null) {
      mode = setting.mode;
      modeSource = `${DAEMON_ENV_KEYS.mode} (${setting.source})`;
    }
  }
  const dataDir: Located = locate(layers, DAEMON_ENV_KEYS.dataDir, { name: '--data-dir', value: flags.dataDir }, DAEMON_DEFAULTS.dataDir);
  const databaseUrl = readDatabaseUrl(layers, problems);
  const databaseTimeoutMs = readDatabaseTimeout(layers, problems);
  // The data dir must hold a journal only when the journal is a file.
  checkDirectory(dataDir, problems, databaseUrl === null);
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze({ dataDir: dataDir.value, mode, modeSource, databaseUrl, databaseTimeoutMs });
}
