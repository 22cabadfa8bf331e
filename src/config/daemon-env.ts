import { statSync } from 'node:fs';
import { isIP } from 'node:net';
import { isPrintableAscii } from '../domain/credential-text.ts';
import type { InputProblem } from '../domain/errors.ts';
import { plainAddress } from '../domain/ip-address.ts';
import { Decimal } from '../domain/money.ts';
import { COMMON_KEYS } from '../engine/contract.ts';
import { closestName } from '../engine/params.ts';
import { NOTIFY_ENV_KEYS } from './notify-settings.ts';
import { databaseUrlProblem, redactDatabaseUrl } from '../store/pg-url.ts';
import { DATABASE_TIMEOUT } from '../store/pg-timeout.ts';
import { parseDuration } from '../engine/schedule/catch-up.ts';
import { cutAtHashRule, duplicateProblems } from './env-file.ts';
import { ENV_KEYS, type EnvLayers, type EnvValue } from './settings.ts';
import { ORDER_SETTLE_WINDOW } from '../engine/runtime.ts';
import { CONTROL_TOKEN_MIN_DISTINCT, CONTROL_TOKEN_MIN_LENGTH, type ControlToken, makeControlToken } from './control-token.ts';
import { readSettleWindow } from './settle-window.ts';
import { parseWallet } from './wallet.ts';
import { ACCOUNT_ENV_PREFIX, ACCOUNT_KEY_SUFFIXES, ACCOUNT_NAME_RULE, parseAccountKey } from './accounts.ts';

/**
 * The daemon's global settings beyond those of every command (settings.ts): mode, folders,
 * metrics, the paper wallet, the kill switch. Read from the environment layers with the same
 * rules (the environment wins over the env file; empty means unset); a flag wins over both.
 */

export const DAEMON_ENV_KEYS = {
  mode: 'STACKER_MODE',
  dataDir: 'STACKER_DATA_DIR',
  lockDir: 'STACKER_LOCK_DIR',
  strategiesDir: 'STACKER_STRATEGIES_DIR',
  metricsPort: 'STACKER_METRICS_PORT',
  metricsHost: 'STACKER_METRICS_HOST',
  metricsAllowedHosts: 'STACKER_METRICS_ALLOWED_HOSTS',
  metricsTrustedProxies: 'STACKER_METRICS_TRUSTED_PROXIES',
  dryRunWallet: 'STACKER_DRY_RUN_WALLET',
  dryRunSlippagePct: 'STACKER_DRY_RUN_SLIPPAGE_PCT',
  killSwitchFile: 'STACKER_KILL_SWITCH_FILE',
  killSwitch: 'STACKER_KILL_SWITCH',
  orderSettleWindow: 'STACKER_ORDER_SETTLE_WINDOW',
  controlToken: 'STACKER_CONTROL_TOKEN',
  databaseUrl: 'STACKER_DATABASE_URL',
  databaseTimeout: 'STACKER_DATABASE_TIMEOUT',
} as const;

/** Every STACKER_* key stacker reads. */
export const KNOWN_ENV_KEYS: readonly string[] = [...Object.values(ENV_KEYS), ...Object.values(DAEMON_ENV_KEYS), ...Object.values(NOTIFY_ENV_KEYS)];

export const DAEMON_DEFAULTS = {
  dataDir: './data',
  strategiesDir: 'config/strategies',
  metricsHost: '127.0.0.1',
} as const;

import { DAEMON_MODES as MODES, type DaemonMode } from '../domain/run-mode.ts';

export { MODES, type DaemonMode };

/** Where a setting's value came from: a flag (`--data-dir`), a key in the environment or env file, or the default. */
export interface Origin {
  /** The flag or key, for messages. */
  readonly field: string;
  /** 'environment' / 'env file PATH'; absent for flags and defaults. */
  readonly source?: string;
  /** Added to a problem's rule: for a default, how to choose another value. */
  readonly note?: string;
}

export interface Located {
  readonly value: string;
  readonly origin: Origin;
}

const HOSTNAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
const PLAIN_DECIMAL = /^(?:0|[1-9]\d*)(?:\.\d+)?$/;
const MAX_SLIPPAGE_PCT = '50';

export function problemAt(origin: Origin, rule: string): InputProblem {
  const full = origin.note === undefined ? rule : `${rule} (${origin.note})`;
  return origin.source === undefined ? { field: origin.field, rule: full } : { source: origin.source, field: origin.field, rule: full };
}

function fromEnv(key: string, found: EnvValue): Located {
  return { value: found.value, origin: { field: key, source: found.source } };
}

/** flag > environment > env file > default. */
export function locate(layers: EnvLayers, key: string, flag: { readonly name: string; readonly value: string | undefined }, fallback: string): Located {
  if (flag.value !== undefined) return { value: flag.value, origin: { field: flag.name } };
  const found = layers.lookup(key);
  if (found !== null) return fromEnv(key, found);
  return { value: fallback, origin: { field: flag.name, note: `the default; give ${flag.name} or set ${key} to choose another` } };
}

/** STACKER_MODE as written (null when unset), or a problem. */
export function readModeSetting(layers: EnvLayers, problems: InputProblem[]): { readonly mode: DaemonMode | null; readonly source: string | null } {
  const found = layers.lookup(DAEMON_ENV_KEYS.mode);
  if (found === null) return { mode: null, source: null };
  const mode = found.value.trim().toLowerCase();
  if ((MODES as readonly string[]).includes(mode)) return { mode: mode as DaemonMode, source: found.source };
  problems.push({ source: found.source, field: DAEMON_ENV_KEYS.mode, rule: `must be one of ${MODES.join(', ')} (got ${JSON.stringify(found.value)})` });
  return { mode: null, source: found.source };
}

/** A folder that, when it exists, must be a directory (it is created on first use otherwise). */
export function checkDirectory(located: Located, problems: InputProblem[], mustExist: boolean): void {
  let isDirectory: boolean;
  try {
    isDirectory = statSync(located.value).isDirectory();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      problems.push(problemAt(located.origin, `cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}): ${located.value}`));
    } else if (mustExist) {
      problems.push(problemAt(located.origin, `folder not found: ${located.value}`));
    }
    return;
  }
  if (!isDirectory) problems.push(problemAt(located.origin, `is not a folder: ${located.value}`));
}

export function readMetricsPort(layers: EnvLayers, problems: InputProblem[]): number | null {
  const found = layers.lookup(DAEMON_ENV_KEYS.metricsPort);
  if (found === null) return null;
  const text = found.value.trim();
  const port = /^\d{1,5}$/.test(text) ? Number(text) : Number.NaN;
  if (Number.isInteger(port) && port >= 0 && port <= 65_535) return port;
  problems.push({ source: found.source, field: DAEMON_ENV_KEYS.metricsPort, rule: `must be a port number from 0 to 65535; 0 picks a free one (got ${JSON.stringify(found.value)})` });
  return null;
}

export function readMetricsHost(layers: EnvLayers, problems: InputProblem[]): string {
  const found = layers.lookup(DAEMON_ENV_KEYS.metricsHost);
  if (found === null) return DAEMON_DEFAULTS.metricsHost;
  const host = found.value.trim();
  if (isIP(host) !== 0 || HOSTNAME.test(host)) return host;
  problems.push({ source: found.source, field: DAEMON_ENV_KEYS.metricsHost, rule: `must be an IP address or host name to listen on, such as 127.0.0.1 or 0.0.0.0 (got ${JSON.stringify(found.value)})` });
  return DAEMON_DEFAULTS.metricsHost;
}

/**
 * STACKER_METRICS_ALLOWED_HOSTS: the host names the status server answers to (`Host` header,
 * port aside), comma-separated, or `*` for any. Default: the loopback names when it listens on
 * loopback, any otherwise (a server on 0.0.0.0 is reached under names stacker cannot know).
 */
export function readMetricsAllowedHosts(layers: EnvLayers, problems: InputProblem[]): readonly string[] | '*' | null {
  const found = layers.lookup(DAEMON_ENV_KEYS.metricsAllowedHosts);
  if (found === null) return null;
  const text = found.value.trim();
  if (text === '*') return '*';
  const names = text.split(',').map((name) => name.trim().toLowerCase());
  const bad = names.filter((name) => !(isIP(name) !== 0 || HOSTNAME.test(name) || /^\[[0-9a-f:.]+\]$/.test(name)));
  if (names.length > 0 && bad.length === 0) return Object.freeze(names);
  problems.push({
    source: found.source,
    field: DAEMON_ENV_KEYS.metricsAllowedHosts,
    rule: `must be host names or IP addresses without a port, comma-separated (such as localhost,127.0.0.1,[::1],stacker.example.com), or * for any (got ${JSON.stringify(found.value)})`,
  });
  return null;
}

/**
 * STACKER_METRICS_TRUSTED_PROXIES: the addresses of the reverse proxies in front of the status
 * server, comma-separated; a control request from one of them counts, for the back-off on
 * refused tokens, as the client its X-Forwarded-For names. Empty when unset: no proxy is
 * looked through.
 */
export function readMetricsTrustedProxies(layers: EnvLayers, problems: InputProblem[]): ReadonlySet<string> {
  const found = layers.lookup(DAEMON_ENV_KEYS.metricsTrustedProxies);
  if (found === null) return new Set();
  const entries = found.value.split(',').map((entry) => entry.trim());
  const addresses = entries.map((entry) => plainAddress(entry));
  if (entries.every((entry) => entry !== '') && addresses.every((address) => address !== null)) return new Set(addresses as string[]);
  problems.push({
    source: found.source,
    field: DAEMON_ENV_KEYS.metricsTrustedProxies,
    rule: `must be the IP addresses of your reverse proxies, comma-separated (such as 127.0.0.1,::1); no names or ranges (got ${JSON.stringify(found.value)})`,
  });
  return new Set();
}

export function readWallet(layers: EnvLayers, problems: InputProblem[]): ReadonlyMap<string, Decimal> {
  const found = layers.lookup(DAEMON_ENV_KEYS.dryRunWallet);
  if (found === null) return new Map();
  const parsed = parseWallet(found.value);
  if (parsed.ok) return parsed.wallet;
  for (const rule of parsed.rules) problems.push({ source: found.source, field: DAEMON_ENV_KEYS.dryRunWallet, rule });
  return new Map();
}

export function readSlippagePct(layers: EnvLayers, problems: InputProblem[]): Decimal {
  const found = layers.lookup(DAEMON_ENV_KEYS.dryRunSlippagePct);
  if (found === null) return new Decimal(0);
  const text = found.value.trim();
  if (PLAIN_DECIMAL.test(text) && new Decimal(text).lte(MAX_SLIPPAGE_PCT)) return new Decimal(text);
  problems.push({
    source: found.source,
    field: DAEMON_ENV_KEYS.dryRunSlippagePct,
    rule: `must be a plain decimal from 0 to ${MAX_SLIPPAGE_PCT} (percent the paper exchange fills buys above the price), such as 0.1 (got ${JSON.stringify(found.value)})`,
  });
  return new Decimal(0);
}

export function readKillSwitchEnv(layers: EnvLayers, problems: InputProblem[]): boolean {
  const found = layers.lookup(DAEMON_ENV_KEYS.killSwitch);
  if (found === null) return false;
  const text = found.value.trim().toLowerCase();
  if (text === '1' || text === 'true') return true;
  if (text === '0' || text === 'false') return false;
  problems.push({ source: found.source, field: DAEMON_ENV_KEYS.killSwitch, rule: `must be 1 or true (trading stopped), 0 or false (got ${JSON.stringify(found.value)})` });
  return false;
}

/** STACKER_ORDER_SETTLE_WINDOW: the default of every instance's ORDER_SETTLE_WINDOW (10 minutes when unset). */
export function readOrderSettleWindow(layers: EnvLayers, problems: InputProblem[]): number {
  const found = layers.lookup(DAEMON_ENV_KEYS.orderSettleWindow);
  if (found === null) return ORDER_SETTLE_WINDOW.defaultMs;
  const read = readSettleWindow(found.value);
  if ('ms' in read) return read.ms;
  problems.push({ source: found.source, field: DAEMON_ENV_KEYS.orderSettleWindow, rule: read.rule });
  return ORDER_SETTLE_WINDOW.defaultMs;
}

/** STACKER_CONTROL_TOKEN: null when unset (the controls are off); a problem naming the key and the rule when it is too weak to guard money. */
export function readControlToken(layers: EnvLayers, problems: InputProblem[]): ControlToken | null {
  const found = layers.lookup(DAEMON_ENV_KEYS.controlToken);
  if (found === null) return null;
  const token = found.value;
  // The value is a secret: the rule says what is wrong, never what was given.
  // Printable ASCII without spaces: the control token travels in an HTTP header as typed.
  if (token.length < CONTROL_TOKEN_MIN_LENGTH || !isPrintableAscii(token)) {
    problems.push({
      source: found.source,
      field: DAEMON_ENV_KEYS.controlToken,
      rule: `must be at least ${CONTROL_TOKEN_MIN_LENGTH} characters of printable ASCII without spaces (it is sent as "Authorization: Bearer TOKEN"); generate one with: openssl rand -hex 32`,
    });
    return null;
  }
  if (new Set(token).size < CONTROL_TOKEN_MIN_DISTINCT) {
    problems.push({
      source: found.source,
      field: DAEMON_ENV_KEYS.controlToken,
      rule: `must hold at least ${CONTROL_TOKEN_MIN_DISTINCT} different characters: a repeated pattern (0000…, abab…) is guessed first; generate one with: openssl rand -hex 32`,
    });
    return null;
  }
  return makeControlToken(token);
}

/**
 * A PostgreSQL URL: `url` connects, `shown` is what may be printed (the password as ***). The
 * object prints itself as `shown` too (JSON, util.inspect), so a careless log line leaks nothing.
 */
export interface DatabaseUrl {
  readonly url: string;
  readonly shown: string;
}

export function makeDatabaseUrl(url: string): DatabaseUrl {
  const shown = redactDatabaseUrl(url);
  const value = { url: url.trim(), shown };
  Object.defineProperty(value, 'toJSON', { value: () => shown, enumerable: false });
  Object.defineProperty(value, Symbol.for('nodejs.util.inspect.custom'), { value: () => shown, enumerable: false });
  return Object.freeze(value);
}

/**
 * STACKER_DATABASE_URL: the journal lives in that PostgreSQL database instead of the data dir's
 * SQLite file. null when unset. A problem is reported without the value (it may hold a password).
 */
export function readDatabaseUrl(layers: EnvLayers, problems: InputProblem[]): DatabaseUrl | null {
  const found = layers.lookup(DAEMON_ENV_KEYS.databaseUrl);
  if (found === null) return null;
  const problem = databaseUrlProblem(found.value);
  if (problem === null) return makeDatabaseUrl(found.value);
  problems.push({ source: found.source, field: DAEMON_ENV_KEYS.databaseUrl, rule: problem });
  return null;
}

/**
 * STACKER_DATABASE_TIMEOUT: how long the PostgreSQL journal's server may take to connect or to
 * answer one query before the journal counts as unwritable (10 s when unset). Read whether or not
 * STACKER_DATABASE_URL is set, as the URL may come from `--to` (journal migrate).
 */
export function readDatabaseTimeout(layers: EnvLayers, problems: InputProblem[]): number {
  const found = layers.lookup(DAEMON_ENV_KEYS.databaseTimeout);
  if (found === null) return DATABASE_TIMEOUT.defaultMs;
  const ms = parseDuration(found.value);
  if (ms !== null && ms >= DATABASE_TIMEOUT.floorMs && ms <= DATABASE_TIMEOUT.ceilingMs) return ms;
  problems.push({
    source: found.source,
    field: DAEMON_ENV_KEYS.databaseTimeout,
    rule:
      `must be a duration from ${DATABASE_TIMEOUT.floorMs / 1000}s to ${DATABASE_TIMEOUT.ceilingMs / 60_000}m, such as 10s (got ${JSON.stringify(found.value)}); ` +
      'a shorter one would count an ordinary commit as an outage, a longer one holds a slot past its moment',
  });
  return DATABASE_TIMEOUT.defaultMs;
}

export function readKillSwitchFile(layers: EnvLayers): string | null {
  return layers.lookup(DAEMON_ENV_KEYS.killSwitchFile)?.value ?? null;
}

/**
 * Keys of the global env file that stacker would silently ignore: an unprefixed setting
 * (`LOG_LEVEL` where STACKER_LOG_LEVEL was meant: every setting is STACKER_*), a misspelt STACKER_* key,
 * or a strategy instance key that belongs in config/strategies/. Other keys are left alone: one
 * file may also feed `docker run --env-file` with TZ or NODE_OPTIONS. The process environment
 * holds many variables that are none of our business: environmentKeyProblems looks only at
 * near misses there. Values are never quoted (the file holds the API secret).
 */
export function envFileKeyProblems(layers: EnvLayers): InputProblem[] {
  if (layers.envFile === null) return [];
  const source = `env file ${layers.envFile}`;
  const problems: InputProblem[] = duplicateProblems(layers.envFile, layers.fileDuplicates);
  const known = new Set(KNOWN_ENV_KEYS);
  for (const key of layers.fileKeys) {
    const stackerKey = readStackerKey(key, known);
    if (stackerKey.kind === 'setting') continue;
    if (stackerKey.kind === 'bad-account') {
      problems.push({ source, field: key, rule: stackerKey.rule });
      continue;
    }
    if (stackerKey.kind === 'unknown') {
      const hint = stackerKey.guess === undefined ? `; the settings are ${KNOWN_ENV_KEYS.join(', ')}` : `; did you mean ${stackerKey.guess}?`;
      problems.push({ source, field: key, rule: `is not a stacker setting${hint}` });
      continue;
    }
    // Exact names only: a near miss of an unprefixed key (NODE vs MODE) is more likely someone else's variable.
    const prefixed = `STACKER_${key.toUpperCase()}`;
    if (known.has(prefixed)) {
      problems.push({ source, field: key, rule: `is not read: every stacker setting starts with STACKER_; did you mean ${prefixed}?` });
    } else if (COMMON_KEYS.has(key.toUpperCase())) {
      problems.push({ source, field: key, rule: 'is a strategy instance key: it belongs in an instance file in the strategies folder (config/strategies/NAME.env), not in the global env file' });
    }
  }
  for (const line of layers.fileBadLines) {
    problems.push({ source, field: `line ${line}`, rule: 'is not KEY=value, a comment or blank, so dotenv skips it (a missing "="?)' });
  }
  for (const cut of layers.fileCutAtHash) problems.push({ source, field: cut.key, rule: cutAtHashRule(cut) });
  return problems;
}

/**
 * STACKER_* variables of the process environment that look like a stacker setting mistyped
 * (`STACKER_KILL_SWICH=1` under `docker run -e`, `stacker_mode=live`): without this check the
 * daemon would trade as if the operator had set nothing. Only near misses (at most two letters
 * off, or another case) and malformed account keys are refused; any other STACKER_ variable
 * may belong to a tool around stacker (the bench's own STACKER_BENCH_*) and is left alone. A
 * setting whose value came with its quotes is refused too.
 */
/** A value with a quote at either end, as a .env line written for dotenv (or mistyped) reaches the process from Docker. */
const QUOTED = /^["']|["']$/;

export function environmentKeyProblems(layers: EnvLayers): InputProblem[] {
  const problems: InputProblem[] = [];
  const known = new Set(KNOWN_ENV_KEYS);
  for (const key of layers.environmentKeys) {
    const stackerKey = readStackerKey(key, known);
    const value = layers.lookup(key);
    if (stackerKey.kind === 'setting' && value?.source === 'environment' && QUOTED.test(value.value)) {
      // Never echoed: it may be a key, a secret or a token.
      problems.push({ source: 'environment', field: key, rule: `starts or ends with a quote: docker run --env-file and compose's env_file pass a value's quotes on as part of it (a token or key with them is refused by whoever checks it); write it without quotes` });
    }
    if (stackerKey.kind === 'bad-account') problems.push({ source: 'environment', field: key, rule: stackerKey.rule });
    else if (stackerKey.kind === 'unknown' && stackerKey.guess !== undefined) {
      problems.push({ source: 'environment', field: key, rule: `is not a stacker setting, and so close to one that it is taken for a typo: did you mean ${stackerKey.guess}?` });
    }
  }
  return problems;
}

type StackerKey =
  | { readonly kind: 'setting' }
  | { readonly kind: 'bad-account'; readonly rule: string }
  | { readonly kind: 'unknown'; readonly guess: string | undefined }
  | { readonly kind: 'not-stacker' };

/** What a variable's name is to stacker: one of its settings, a malformed account key, an unknown STACKER_ name (and the setting it is nearest), or none of its business. */
function readStackerKey(key: string, known: ReadonlySet<string>): StackerKey {
  if (known.has(key) || parseAccountKey(key) !== null) return { kind: 'setting' };
  if (key.startsWith(ACCOUNT_ENV_PREFIX)) {
    const endings = Object.values(ACCOUNT_KEY_SUFFIXES).join(', ');
    return { kind: 'bad-account', rule: `is not an account setting: write STACKER_ACCOUNT_<NAME>_<SETTING>, NAME being ${ACCOUNT_NAME_RULE}, SETTING one of ${endings}` };
  }
  if (key.toUpperCase().startsWith('STACKER_')) return { kind: 'unknown', guess: closestName(key, KNOWN_ENV_KEYS) };
  return { kind: 'not-stacker' };
}
