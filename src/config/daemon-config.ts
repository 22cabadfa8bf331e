import { ConfigError, type InputProblem } from '../domain/errors.ts';
import type { Decimal } from '../domain/money.ts';
import { plainHttpRule } from '../domain/plain-http.ts';
import type { Strategy } from '../engine/contract.ts';
import {
  DAEMON_DEFAULTS,
  DAEMON_ENV_KEYS,
  checkDirectory,
  envFileKeyProblems,
  environmentKeyProblems,
  locate,
  readControlToken,
  readKillSwitchEnv,
  readKillSwitchFile,
  readDatabaseUrl,
  readDatabaseTimeout,
  type DatabaseUrl,
  readOrderSettleWindow,
  readMetricsAllowedHosts,
  readMetricsTrustedProxies,
  readMetricsHost,
  readMetricsPort,
  readModeSetting,
  readSlippagePct,
  readWallet,
} from './daemon-env.ts';
import type { ControlToken } from './control-token.ts';
import { envFileExposureNote } from './env-file-exposure.ts';
import { frozenMap } from './freeze.ts';
import { type NotifySettings, readNotifySettings } from './notify-settings.ts';
import { type InstanceConfig, accountUserOf, collectInstances } from './instance-config.ts';
import { ENV_KEYS, type EnvLayers, type LogFormat, type Settings, endpointSetting, readEnvLayers, readLogFormat, settingsFromLayers } from './settings.ts';
import { type AccountConfig, DEFAULT_ACCOUNT, readAccounts } from './accounts.ts';
import { listStrategyFiles } from './strategy-files.ts';

export type { InstanceConfig } from './instance-config.ts';
export type { AccountConfig } from './accounts.ts';

/**
 * The daemon's configuration (`stacker run`, `stacker check`): the global env (environment over
 * `--env-file`) plus one instance file per strategy instance, validated together. Every problem
 * of every source is reported in one ConfigError (exit 2) before anything is opened or sent;
 * the result is frozen. The API secret lives only in `settings.credentials`, which hides it from
 * JSON and inspect, and in dry-run not even there: a paper daemon has no way to trade.
 */

/** Command-line flags; undefined means "not given". */
export interface DaemonFlags {
  envFile?: string | undefined;
  strategiesDir?: string | undefined;
  dataDir?: string | undefined;
  live?: boolean | undefined;
  baseUrl?: string | undefined;
  region?: string | undefined;
}

export interface DaemonConfig {
  /** live only when STACKER_MODE=live AND --live; anything less is dry-run (see modeNote). */
  readonly mode: 'dry-run' | 'live';
  /** Why the mode is dry-run although one of the two live switches was given; null otherwise. */
  readonly modeNote: string | null;
  /** The --env-file's secrets are readable by other users of the machine: which, and how to mend it; null when not. */
  readonly envFileNote: string | null;
  /** Endpoint, credentials (null in dry-run), log level. */
  readonly settings: Settings;
  /** --data-dir > STACKER_DATA_DIR > ./data, as given (not resolved). */
  readonly dataDir: string;
  /** STACKER_LOCK_DIR: where live mode keeps its API-key locks; null: ~/.stacker/locks. */
  readonly lockDir?: string | null;
  /** --strategies > STACKER_STRATEGIES_DIR > config/strategies, as given. */
  readonly strategiesDir: string;
  /** STACKER_METRICS_PORT; null = no metrics server; 0 = a free port. */
  readonly metricsPort: number | null;
  /** STACKER_METRICS_HOST, default 127.0.0.1 (the Docker image sets 0.0.0.0). */
  readonly metricsHost: string;
  /** STACKER_METRICS_ALLOWED_HOSTS: the Host names the status server answers; null: its default (loopback names on loopback, any elsewhere). */
  readonly metricsAllowedHosts: readonly string[] | '*' | null;
  /** STACKER_METRICS_TRUSTED_PROXIES: proxies whose X-Forwarded-For names a control request's client; empty: none. */
  readonly metricsTrustedProxies: ReadonlySet<string>;
  /** STACKER_DRY_RUN_WALLET: the paper wallet's starting balances by ticker; empty when unset. */
  readonly dryRunWallet: ReadonlyMap<string, Decimal>;
  /** STACKER_DRY_RUN_SLIPPAGE_PCT, default 0. */
  readonly dryRunSlippagePct: Decimal;
  /** STACKER_KILL_SWITCH_FILE: trading stops while this file exists. */
  readonly killSwitchFile: string | null;
  /** STACKER_DATABASE_URL: the journal is in PostgreSQL (null: the data dir's SQLite file). */
  readonly databaseUrl: DatabaseUrl | null;
  /** STACKER_DATABASE_TIMEOUT (default 10 s): how long that database may take to connect or to answer one query. */
  readonly databaseTimeoutMs: number;
  /** STACKER_KILL_SWITCH=1|true: start with trading stopped. */
  readonly killSwitchEnv: boolean;
  /** STACKER_ORDER_SETTLE_WINDOW (default 10 min): the settle window of instances that set none. */
  readonly orderSettleWindowMs: number;
  /** STACKER_CONTROL_TOKEN: what the status API's controls require; null = controls off (403). */
  readonly controlToken: ControlToken | null;
  /** Where notifications go (STACKER_NOTIFY_*, STACKER_TELEGRAM_*); no channel set = none sent. */
  readonly notify: NotifySettings;
  /** Sorted by instance name. */
  readonly instances: readonly InstanceConfig[];
  /**
   * The accounts the instances trade on (`default`: STACKER_API_KEY and the global endpoint),
   * by name. Credentials only in live mode.
   */
  readonly accounts: ReadonlyMap<string, AccountConfig>;
}

export interface DaemonSources {
  /** Defaults to process.env (read by settings.ts, the one reader). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Defaults to the shipped registry (strategies/index.ts). */
  readonly strategies?: ReadonlyMap<string, Strategy<unknown>>;
}

export async function loadDaemonConfig(flags: DaemonFlags, sources: DaemonSources = {}): Promise<DaemonConfig> {
  const problems: InputProblem[] = [];
  const layers = await readLayers(flags.envFile, sources, problems);
  problems.push(...envFileKeyProblems(layers), ...environmentKeyProblems(layers));

  let settings: Settings | null = null;
  try {
    settings = settingsFromLayers({ baseUrl: flags.baseUrl, region: flags.region }, layers);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    problems.push(...error.problems);
  }

  const modeSetting = readModeSetting(layers, problems);
  const { mode, modeNote } = chooseMode(modeSetting, flags.live === true);

  const dataDir = locate(layers, DAEMON_ENV_KEYS.dataDir, { name: '--data-dir', value: flags.dataDir }, DAEMON_DEFAULTS.dataDir);
  checkDirectory(dataDir, problems, false);
  const lockDirSetting = layers.lookup(DAEMON_ENV_KEYS.lockDir);
  if (lockDirSetting !== null) checkDirectory({ value: lockDirSetting.value, origin: { field: DAEMON_ENV_KEYS.lockDir, source: lockDirSetting.source } }, problems, false);
  const strategiesDir = locate(layers, DAEMON_ENV_KEYS.strategiesDir, { name: '--strategies', value: flags.strategiesDir }, DAEMON_DEFAULTS.strategiesDir);
  const files = listStrategyFiles(strategiesDir, problems);

  const metricsPort = readMetricsPort(layers, problems);
  const metricsHost = readMetricsHost(layers, problems);
  const metricsAllowedHosts = readMetricsAllowedHosts(layers, problems);
  const metricsTrustedProxies = readMetricsTrustedProxies(layers, problems);
  const dryRunWallet = readWallet(layers, problems);
  const dryRunSlippagePct = readSlippagePct(layers, problems);
  const killSwitchEnv = readKillSwitchEnv(layers, problems);
  const killSwitchFile = readKillSwitchFile(layers);
  const databaseUrl = readDatabaseUrl(layers, problems);
  const databaseTimeoutMs = readDatabaseTimeout(layers, problems);
  const orderSettleWindowMs = readOrderSettleWindow(layers, problems);
  const controlToken = readControlToken(layers, problems);
  const notify = readNotifySettings(layers, problems);

  const instances = await collectInstances(files, await strategyRegistry(sources), problems);
  const users = instances.map(accountUserOf);
  // The default account's key is needed only when some instance trades on it (or none is configured, as before accounts).
  const defaultUsed = users.length === 0 || users.some((user) => user.account === DEFAULT_ACCOUNT);
  if (mode === 'live' && defaultUsed && settings !== null && settings.credentials === null) problems.push(...liveCredentialProblems(settings));
  const accounts = readAccounts(layers, settings, mode, users, dryRunWallet, problems);
  if (mode === 'live' && settings !== null && !settings.allowPlainHttp) problems.push(...plainHttpProblems(accounts));
  if (problems.length > 0 || settings === null) throw new ConfigError(problems);

  // settings and each instance are frozen where they are built; deepFreeze would walk into the strategies.
  return Object.freeze({
    mode,
    modeNote,
    envFileNote: envFileExposureNote(layers),
    settings: mode === 'live' ? settings : withoutCredentials(settings),
    dataDir: dataDir.value,
    lockDir: lockDirSetting?.value ?? null,
    strategiesDir: strategiesDir.value,
    metricsPort,
    metricsHost,
    metricsAllowedHosts,
    metricsTrustedProxies,
    dryRunWallet: frozenMap(dryRunWallet),
    dryRunSlippagePct,
    killSwitchFile,
    databaseUrl,
    databaseTimeoutMs,
    killSwitchEnv,
    orderSettleWindowMs,
    controlToken,
    notify,
    instances: Object.freeze([...instances]),
    accounts: frozenMap(accounts),
  });
}

/**
 * Where a start refused for its configuration is told, read from the global env alone (no
 * instance file): a bad instance file stops every instance, and a supervisor restarting stacker
 * in a loop shows nothing but its log. null when the global env cannot be read or its
 * notification settings have a problem of their own (the refusal names those too).
 */
export async function loadRefusalNotify(flags: Pick<DaemonFlags, 'envFile' | 'live'>, sources: Pick<DaemonSources, 'env'> = {}): Promise<{ readonly notify: NotifySettings; readonly mode: DaemonConfig['mode'] } | null> {
  const problems: InputProblem[] = [];
  const layers = await readLayers(flags.envFile, sources, problems);
  const notify = readNotifySettings(layers, problems);
  if (problems.length > 0) return null;
  return { notify, mode: chooseMode(readModeSetting(layers, []), flags.live === true).mode };
}

/**
 * How to log a start refused before its configuration could be read whole (another setting or a
 * file refused): in the format STACKER_LOG_FORMAT asks for, marked with the mode the daemon would
 * have run in, each null when that setting itself cannot be read (the terminal's format; no mode).
 */
export async function loadRefusalLogging(flags: Pick<DaemonFlags, 'envFile' | 'live'>, sources: Pick<DaemonSources, 'env'> = {}): Promise<{ readonly format: LogFormat | null; readonly mode: DaemonConfig['mode'] | null }> {
  const problems: InputProblem[] = [];
  const layers = await readLayers(flags.envFile, sources, problems);
  const format = readLogFormat(layers, problems);
  const setting = readModeSetting(layers, []);
  // A STACKER_MODE that is not a mode names none: saying dry-run would be a guess.
  const mode = setting.mode === null && setting.source !== null ? null : chooseMode(setting, flags.live === true).mode;
  return { format, mode };
}

/**
 * Instance files named one by one (`stacker backtest --strategy a.env --strategy b.env`), with
 * the same validation as a strategies folder; sorted by instance name. No global settings are
 * read: a backtest needs no keys.
 */
export async function loadStrategyFiles(
  paths: readonly string[],
  sources: Pick<DaemonSources, 'strategies'> & { readonly overrides?: Readonly<Record<string, string>> } = {},
): Promise<readonly InstanceConfig[]> {
  if (paths.length === 0) throw new ConfigError([{ field: '--strategy', rule: 'give at least one strategy instance file (NAME.env)' }]);
  const problems: InputProblem[] = [];
  const instances = await collectInstances(paths, await strategyRegistry(sources), problems, sources.overrides ?? {});
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(instances);
}

async function readLayers(envFile: string | undefined, sources: DaemonSources, problems: InputProblem[]): Promise<EnvLayers> {
  const envSources = sources.env === undefined ? {} : { env: sources.env };
  try {
    return await readEnvLayers(envFile, envSources, 'keep');
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    // Keep going with the environment alone, so the instance files are checked in the same run.
    problems.push(...error.problems);
    return readEnvLayers(null, envSources);
  }
}

/**
 * Live needs two switches, one in the config and one on the command line: a copied .env with
 * STACKER_MODE=live cannot trade by accident, and neither can a `--live` typed out of habit.
 */
function chooseMode(setting: { readonly mode: 'dry-run' | 'live' | null; readonly source: string | null }, liveFlag: boolean): { mode: 'dry-run' | 'live'; modeNote: string | null } {
  if (setting.mode === 'live' && liveFlag) return { mode: 'live', modeNote: null };
  if (setting.mode === 'live') {
    return { mode: 'dry-run', modeNote: `STACKER_MODE=live (${setting.source}) but --live was not given: running in dry-run; live trading needs both` };
  }
  if (liveFlag) {
    const is = setting.mode === null ? 'is not set' : `is ${setting.mode} (${setting.source})`;
    return { mode: 'dry-run', modeNote: `--live was given but STACKER_MODE ${is}: running in dry-run; live trading needs STACKER_MODE=live as well` };
  }
  return { mode: 'dry-run', modeNote: null };
}

function liveCredentialProblems(settings: Settings): InputProblem[] {
  if (settings.credentialProblems.length > 0) return [...settings.credentialProblems];
  const how = 'set it in the environment or in the --env-file file';
  return [
    { field: ENV_KEYS.apiKey, rule: `is not set; live mode places real orders and needs the API key: ${how}` },
    { field: ENV_KEYS.apiSecret, rule: `is not set; live mode needs the secret that belongs to ${ENV_KEYS.apiKey}: ${how}` },
  ];
}

/** Live accounts whose signed requests would cross a network in clear (plain http:// to another machine), each named by the setting of its endpoint. */
function plainHttpProblems(accounts: ReadonlyMap<string, AccountConfig>): InputProblem[] {
  const problems: InputProblem[] = [];
  const named = new Set<string>();
  for (const account of accounts.values()) {
    const rule = plainHttpRule(account.endpoint);
    // Accounts on the global endpoint share its setting: named once.
    if (rule !== null && !named.has(account.endpointSource)) {
      named.add(account.endpointSource);
      problems.push({ ...endpointSetting(account.endpointSource), rule });
    }
  }
  return problems;
}

/** Dry-run never needs the keys (prices and market rules are public), so it does not keep them. */
function withoutCredentials(settings: Settings): Settings {
  return Object.freeze({ ...settings, credentials: null, credentialProblems: Object.freeze([]) });
}

async function strategyRegistry(sources: Pick<DaemonSources, 'strategies'>): Promise<ReadonlyMap<string, Strategy<unknown>>> {
  if (sources.strategies !== undefined) return sources.strategies;
  // Imported on demand: the registry pulls in every shipped strategy module.
  const { STRATEGIES } = await import('../../strategies/index.ts');
  return STRATEGIES;
}
