import { inspect } from 'node:util';
import { credentialTextProblem } from '../domain/credential-text.ts';
import { ConfigError, type InputProblem } from '../domain/errors.ts';
import { type CutAtHash, type DuplicateKey, readEnvFileChecked } from './env-file.ts';

/**
 * The one reader of `process.env` (docs/design.md, Conventions). Settings come from three layers, highest
 * first: command-line flags, the real environment, then the `--env-file` file. The real
 * environment winning over the file is dotenv's convention, so a one-off
 * `STACKER_REGION=eu stacker ping --env-file prod.env` does what it says. A variable set to the
 * empty string counts as unset. The API key and secret are read from the environment or the
 * file only, never from flags: flags end up in shell history and `ps`.
 */

export const ENV_KEYS = {
  apiKey: 'STACKER_API_KEY',
  apiSecret: 'STACKER_API_SECRET',
  baseUrl: 'STACKER_BASE_URL',
  region: 'STACKER_REGION',
  logLevel: 'STACKER_LOG_LEVEL',
  logFormat: 'STACKER_LOG_FORMAT',
  allowPlainHttp: 'STACKER_ALLOW_PLAIN_HTTP',
} as const;

export const REGIONS = ['global', 'eu'] as const;
export type RegionName = (typeof REGIONS)[number];

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export interface Credentials {
  readonly apiKey: string;
  readonly apiSecret: string;
}

export interface Settings {
  /** 'global', 'eu' or an http(s) origin: exactly what `resolveBaseUrl` in src/api takes. */
  readonly endpoint: string;
  /** Where `endpoint` came from, for messages: `--base-url`, `STACKER_REGION (environment)`, `default`. */
  readonly endpointSource: string;
  /** null when neither key nor secret is set (fine for public commands). */
  readonly credentials: Credentials | null;
  /** Why `credentials` is null although a key or secret was given (half set, whitespace). */
  readonly credentialProblems: readonly InputProblem[];
  readonly logLevel: LogLevel;
  /**
   * STACKER_LOG_FORMAT: JSON lines even on a terminal (`docker run -t`, compose's `tty: true`), or
   * human-readable ones; null: by the terminal (pretty on one, JSON otherwise).
   */
  readonly logFormat: LogFormat | null;
  /**
   * STACKER_ALLOW_PLAIN_HTTP=1: signed requests may go over plain http:// to a host that is not
   * this machine (a lab network); without it they go in clear to loopback only.
   */
  readonly allowPlainHttp: boolean;
  readonly envFile: string | null;
  /**
   * The env keys the credentials come from, for messages: STACKER_API_KEY / _SECRET, or an
   * account's STACKER_ACCOUNT_<NAME>_API_KEY / _SECRET when a command runs on it (`--account`).
   */
  readonly credentialKeys?: { readonly apiKey: string; readonly apiSecret: string };
}

/** The global flags that feed settings; undefined means "not given". */
export interface SettingsFlags {
  readonly baseUrl?: string | undefined;
  readonly region?: string | undefined;
  readonly envFile?: string | undefined;
}

export interface SettingsSources {
  /** Defaults to `process.env`; tests pass their own. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** One value found in the environment layers, and where it came from. */
export interface EnvValue {
  readonly value: string;
  /** 'environment' or 'env file PATH'. */
  readonly source: string;
}

type Found = EnvValue;

/**
 * The real environment over the `--env-file` file, read once. Other config modules (the daemon
 * config, the journal readers) look their keys up here so that `process.env` has one reader and
 * every key follows the same rules: the environment wins, the empty string counts as unset.
 */
export interface EnvLayers {
  readonly envFile: string | null;
  /** Every key the env file sets (empty ones too), for the check of keys stacker does not read. Never the values. */
  readonly fileKeys: readonly string[];
  /** 1-based numbers of env-file lines that are neither blank, a comment nor KEY=value (dotenv skips them silently). */
  readonly fileBadLines: readonly number[];
  /** Keys the env file sets on more than one line: empty unless read with duplicates 'keep' (readEnvLayers refuses them otherwise). */
  readonly fileDuplicates: readonly DuplicateKey[];
  /** Keys of the env file whose unquoted value dotenv cuts at a "#" (env-file.ts cutAtHashRule). */
  readonly fileCutAtHash: readonly CutAtHash[];
  lookup(key: string): EnvValue | null;
  /** What the env file itself sets for `key` (the environment may override it); null when it sets nothing. */
  fileValue(key: string): string | null;
  /** Keys set (non-empty) in the environment or the env file that start with `prefix`, sorted; never the values. */
  keysStartingWith(prefix: string): readonly string[];
  /** Keys of the process environment (non-empty) that start with STACKER_ in any case, sorted; never the values. */
  readonly environmentKeys: readonly string[];
}

/**
 * Read the env file (when given) and pair it with the environment. An unreadable file is a
 * ConfigError naming it; so is a key set twice, unless `duplicates` is 'keep' (the daemon's
 * config reports them with every other problem of its files, in one error).
 */
export async function readEnvLayers(envFile: string | undefined | null, sources: SettingsSources = {}, duplicates: 'refuse' | 'keep' = 'refuse'): Promise<EnvLayers> {
  const env = sources.env ?? process.env;
  const file = envFile === undefined ? null : envFile;
  if (file === '') throw new ConfigError([{ field: '--env-file', rule: 'must name a file' }]);
  const read = file === null ? { values: {}, badLines: [] as number[], duplicates: [] as DuplicateKey[], cutAtHash: [] as CutAtHash[] } : await readEnvFileChecked(file, duplicates);
  const fileValues: Readonly<Record<string, string>> = read.values;
  return Object.freeze({
    envFile: file,
    fileKeys: Object.freeze(Object.keys(fileValues)),
    fileBadLines: Object.freeze([...read.badLines]),
    fileDuplicates: Object.freeze([...read.duplicates]),
    fileCutAtHash: Object.freeze([...read.cutAtHash]),
    environmentKeys: Object.freeze(
      Object.entries(env)
        .filter(([key, value]) => key.toUpperCase().startsWith('STACKER_') && typeof value === 'string' && value !== '')
        .map(([key]) => key)
        .sort(),
    ),
    lookup(key: string): EnvValue | null {
      // Own keys only: `constructor` or `toString` must not come back from Object.prototype.
      const real = Object.hasOwn(env, key) ? env[key] : undefined;
      if (typeof real === 'string' && real !== '') return { value: real, source: 'environment' };
      const fromFile = Object.hasOwn(fileValues, key) ? fileValues[key] : undefined;
      if (fromFile !== undefined && fromFile !== '') return { value: fromFile, source: `env file ${file}` };
      return null;
    },
    fileValue(key: string): string | null {
      const value = Object.hasOwn(fileValues, key) ? fileValues[key] : undefined;
      return value === undefined || value === '' ? null : value;
    },
    keysStartingWith(prefix: string): readonly string[] {
      const keys = new Set<string>();
      for (const [key, value] of Object.entries(env)) if (key.startsWith(prefix) && typeof value === 'string' && value !== '') keys.add(key);
      for (const [key, value] of Object.entries(fileValues)) if (key.startsWith(prefix) && value !== '') keys.add(key);
      return [...keys].sort();
    },
  });
}

/** Build the validated, frozen settings. Every problem is reported at once in one ConfigError. */
export async function loadSettings(flags: SettingsFlags, sources: SettingsSources = {}): Promise<Settings> {
  return settingsFromLayers(flags, await readEnvLayers(flags.envFile, sources));
}

/** loadSettings over layers already read (the daemon config reads them once for all its keys). */
export function settingsFromLayers(flags: Pick<SettingsFlags, 'baseUrl' | 'region'>, layers: EnvLayers): Settings {
  const lookup = (key: string): Found | null => layers.lookup(key);
  const problems: InputProblem[] = [];
  const endpoint = chooseEndpoint(flags, lookup, problems);
  const logLevel = chooseLogLevel(lookup, problems);
  const logFormat = chooseLogFormat(lookup, problems);
  const allowPlainHttp = chooseAllowPlainHttp(lookup, problems);
  if (problems.length > 0) throw new ConfigError(problems);

  const credentialProblems: InputProblem[] = [];
  const credentials = chooseCredentials(lookup, credentialProblems);
  return Object.freeze({
    endpoint: endpoint.value,
    endpointSource: endpoint.source,
    credentials,
    credentialProblems: Object.freeze(credentialProblems),
    logLevel,
    logFormat,
    allowPlainHttp,
    envFile: layers.envFile,
  });
}

/**
 * The credentials a private command needs, or a ConfigError (exit 2) that names the missing
 * variables and how to set them. Called before the client is built, so nothing is sent.
 */
export function requireCredentials(settings: Settings, command: string): Credentials {
  if (settings.credentials !== null) return settings.credentials;
  if (settings.credentialProblems.length > 0) throw new ConfigError(settings.credentialProblems);
  const keys = settings.credentialKeys ?? ENV_KEYS;
  const how = `set it in the environment (export ${keys.apiKey}=... ${keys.apiSecret}=...) or in a dotenv file passed with --env-file FILE`;
  throw new ConfigError([
    { field: keys.apiKey, rule: `is not set; \`stacker ${command}\` is a private command and needs an API key: ${how}` },
    { field: keys.apiSecret, rule: `is not set; it is the secret that belongs to ${keys.apiKey}` },
  ]);
}

function chooseEndpoint(flags: Pick<SettingsFlags, 'baseUrl' | 'region'>, lookup: (key: string) => Found | null, problems: InputProblem[]): Found {
  if (flags.baseUrl !== undefined && flags.region !== undefined) {
    problems.push({ field: '--base-url', rule: 'give either --base-url or --region, not both' });
    return { value: 'global', source: 'default' };
  }
  if (flags.baseUrl !== undefined) return checkedUrl({ value: flags.baseUrl, source: '--base-url' }, '--base-url', problems);
  if (flags.region !== undefined) return checkedRegion({ value: flags.region, source: '--region' }, '--region', problems);
  return endpointFromEnv(lookup, { baseUrl: ENV_KEYS.baseUrl, region: ENV_KEYS.region }, { value: 'global', source: 'default' }, problems);
}

/**
 * The endpoint named by a pair of env keys, or `fallback` when neither is set. Set in the same
 * layer, the base URL wins over the region; set in two, the higher layer wins, as every setting's
 * does: `STACKER_REGION=eu stacker ping --env-file prod.env` goes to the eu exchange even when
 * prod.env names a base URL. The global endpoint and each account's
 * (STACKER_ACCOUNT_<name>_BASE_URL / _REGION) are read by this one rule.
 */
export function endpointFromEnv(
  lookup: (key: string) => EnvValue | null,
  keys: { readonly baseUrl: string; readonly region: string },
  fallback: EnvValue,
  problems: InputProblem[],
): EnvValue {
  const url = lookup(keys.baseUrl);
  const region = lookup(keys.region);
  const regionAbove = region !== null && url !== null && region.source === 'environment' && url.source !== 'environment';
  if (url !== null && !regionAbove) return checkedUrl(url, keys.baseUrl, problems);
  if (region !== null) return checkedRegion(region, keys.region, problems);
  return fallback;
}

function fromEnv(found: Found, field: string): Pick<InputProblem, 'field' | 'source'> {
  return found.source.startsWith('--') ? { field } : { field, source: found.source };
}

function checkedRegion(found: Found, field: string, problems: InputProblem[]): Found {
  const region = found.value.trim().toLowerCase();
  if ((REGIONS as readonly string[]).includes(region)) {
    return { value: region, source: labelled(found, field) };
  }
  problems.push({ ...fromEnv(found, field), rule: `must be one of ${REGIONS.join(', ')} (got ${JSON.stringify(found.value)})` });
  return { value: 'global', source: 'default' };
}

/** The same rules as `resolveBaseUrl` in src/api, checked here so every config problem is reported together. */
function checkedUrl(found: Found, field: string, problems: InputProblem[]): Found {
  const fail = (rule: string): Found => {
    problems.push({ ...fromEnv(found, field), rule });
    return { value: 'global', source: 'default' };
  };
  let url: URL;
  try {
    url = new URL(found.value.trim());
  } catch {
    return fail(`must be an http(s) URL such as https://whitebit.com (got ${JSON.stringify(found.value)})`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return fail(`must use http or https (got ${url.protocol.replace(/:$/, '')})`);
  if (url.username !== '' || url.password !== '') return fail('must not carry credentials');
  if ((url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.hash !== '') {
    return fail(`must be an origin such as https://whitebit.com, without a path, query or fragment (got ${JSON.stringify(found.value)})`);
  }
  return { value: url.origin, source: labelled(found, field) };
}

function labelled(found: Found, field: string): string {
  return found.source.startsWith('--') ? found.source : `${field} (${found.source})`;
}

/** The setting an `endpointSource` names, as a problem names it: `--base-url`, or a key and where it was set. */
export function endpointSetting(endpointSource: string): Pick<InputProblem, 'field' | 'source'> {
  const match = /^(\S+) \((.+)\)$/.exec(endpointSource);
  return match === null ? { field: endpointSource } : { field: match[1] as string, source: match[2] as string };
}

function chooseAllowPlainHttp(lookup: (key: string) => Found | null, problems: InputProblem[]): boolean {
  const found = lookup(ENV_KEYS.allowPlainHttp);
  if (found === null) return false;
  const text = found.value.trim().toLowerCase();
  if (text === '1' || text === 'true') return true;
  if (text === '0' || text === 'false') return false;
  problems.push({
    ...fromEnv(found, ENV_KEYS.allowPlainHttp),
    rule: `must be 1 or true (signed requests may go over plain http:// to a host that is not this machine), 0 or false (got ${JSON.stringify(found.value)})`,
  });
  return false;
}

function chooseLogLevel(lookup: (key: string) => Found | null, problems: InputProblem[]): LogLevel {
  const found = lookup(ENV_KEYS.logLevel);
  if (found === null) return 'info';
  const level = found.value.trim().toLowerCase();
  if ((LOG_LEVELS as readonly string[]).includes(level)) return level as LogLevel;
  problems.push({ ...fromEnv(found, ENV_KEYS.logLevel), rule: `must be one of ${LOG_LEVELS.join(', ')} (got ${JSON.stringify(found.value)})` });
  return 'info';
}

function chooseLogFormat(lookup: (key: string) => Found | null, problems: InputProblem[]): LogFormat | null {
  const found = lookup(ENV_KEYS.logFormat);
  if (found === null) return null;
  const format = found.value.trim().toLowerCase();
  if ((LOG_FORMATS as readonly string[]).includes(format)) return format as LogFormat;
  problems.push({
    ...fromEnv(found, ENV_KEYS.logFormat),
    rule: `must be json (one JSON object a line, on a terminal too) or pretty (readable lines); unset, it is pretty on a terminal and json otherwise (got ${JSON.stringify(found.value)})`,
  });
  return null;
}

/** STACKER_LOG_FORMAT alone (null: unset, or refused into `problems`), for a start refused before the settings could be read whole. */
export function readLogFormat(layers: EnvLayers, problems: InputProblem[]): LogFormat | null {
  return chooseLogFormat((key) => layers.lookup(key), problems);
}

function chooseCredentials(lookup: (key: string) => Found | null, problems: InputProblem[]): Credentials | null {
  return credentialsFromEnv(lookup, { apiKey: ENV_KEYS.apiKey, apiSecret: ENV_KEYS.apiSecret }, problems);
}

/**
 * A key and secret named by a pair of env keys: null when neither is set, or when they are half
 * set or malformed (problems appended). The global pair and each account's pair follow this rule.
 */
export function credentialsFromEnv(lookup: (key: string) => Found | null, keys: { readonly apiKey: string; readonly apiSecret: string }, problems: InputProblem[]): Credentials | null {
  const before = problems.length;
  const key = lookup(keys.apiKey);
  const secret = lookup(keys.apiSecret);
  if (key === null && secret === null) return null;
  if (key === null) problems.push({ field: keys.apiKey, rule: `is not set, but ${keys.apiSecret} is (from ${secret?.source}); set both` });
  if (secret === null) problems.push({ field: keys.apiSecret, rule: `is not set, but ${keys.apiKey} is (from ${key?.source}); set both` });
  // The values are never echoed: the message says what is wrong, not what was found.
  for (const [found, field] of [[key, keys.apiKey], [secret, keys.apiSecret]] as const) {
    const problem = found === null ? null : credentialTextProblem(found.value);
    if (found !== null && problem !== null) problems.push({ field, source: found.source, rule: problem });
  }
  if (problems.length > before || key === null || secret === null) return null;
  return makeCredentials(key.value, secret.value);
}

/**
 * Credentials that keep the secret out of `JSON.stringify`, `console.log` and `util.inspect`
 * (which a careless log line or error report might call), while `credentials.apiSecret` still
 * reads the value.
 */
export function makeCredentials(apiKey: string, apiSecret: string): Credentials {
  const credentials = { apiKey, apiSecret };
  const shown = (): { apiKey: string; apiSecret: string } => ({ apiKey, apiSecret: '[redacted]' });
  Object.defineProperty(credentials, 'toJSON', { value: shown, enumerable: false });
  Object.defineProperty(credentials, inspect.custom, { value: () => shown(), enumerable: false });
  return Object.freeze(credentials);
}
