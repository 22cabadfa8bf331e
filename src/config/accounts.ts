import { DEFAULT_ACCOUNT } from '../domain/account.ts';
import { ConfigError, type InputProblem } from '../domain/errors.ts';
import { Decimal } from '../domain/money.ts';
import { type Credentials, type EnvLayers, type EnvValue, type Settings, credentialsFromEnv, endpointFromEnv } from './settings.ts';
import { parseWallet } from './wallet.ts';
import { canonicalTimezone, timezoneProblem } from '../domain/zone.ts';
import { closestName } from '../engine/params.ts';
import { REGION_URLS } from '../domain/regions.ts';

/**
 * Accounts: one API key each. An instance file may say `ACCOUNT=NAME`; the account's key,
 * secret and endpoint come from the global env (`STACKER_ACCOUNT_<NAME>_API_KEY`, …), never
 * from the instance file, which is often shared or committed. Instances that name none trade on
 * the `default` account: STACKER_API_KEY / STACKER_API_SECRET and the global endpoint, as
 * before accounts existed.
 */

export { DEFAULT_ACCOUNT };

/** Case-sensitive, exactly as written in the env key: the name sits between two underscores of it. */
export const ACCOUNT_NAME = /^[A-Za-z0-9_-]{1,32}$/;
export const ACCOUNT_NAME_RULE = '1 to 32 letters, digits, underscores or dashes (case-sensitive: it is written the same way in STACKER_ACCOUNT_<NAME>_API_KEY)';

export const ACCOUNT_ENV_PREFIX = 'STACKER_ACCOUNT_';

/** The calendar an account's caps count in when the env names none. */
export const ACCOUNT_CAP_DEFAULT_TIME_ZONE = 'UTC';

/** What may follow `STACKER_ACCOUNT_<NAME>_`. */
export const ACCOUNT_KEY_SUFFIXES = {
  apiKey: 'API_KEY',
  apiSecret: 'API_SECRET',
  region: 'REGION',
  baseUrl: 'BASE_URL',
  dryRunWallet: 'DRY_RUN_WALLET',
  budgetDay: 'BUDGET_QUOTE_PER_DAY',
  budgetWeek: 'BUDGET_QUOTE_PER_WEEK',
  budgetMonth: 'BUDGET_QUOTE_PER_MONTH',
  budgetTimeZone: 'BUDGET_TIMEZONE',
} as const;
type Suffix = (typeof ACCOUNT_KEY_SUFFIXES)[keyof typeof ACCOUNT_KEY_SUFFIXES];

const SUFFIXES: readonly Suffix[] = Object.values(ACCOUNT_KEY_SUFFIXES).sort((a, b) => b.length - a.length);
/** The default account's key and endpoint are the global ones: a second way to set them would leave two answers. */
const GLOBAL_FOR_DEFAULT: ReadonlySet<Suffix> = new Set(['API_KEY', 'API_SECRET', 'REGION', 'BASE_URL']);
const PLAIN_DECIMAL = /^(?:0|[1-9]\d*)(?:\.\d+)?$/;

export function accountKey(name: string, suffix: Suffix): string {
  return `${ACCOUNT_ENV_PREFIX}${name}_${suffix}`;
}

/** `STACKER_ACCOUNT_<NAME>_<SUFFIX>` → its parts; null when the key is not of that shape. */
export function parseAccountKey(key: string): { readonly name: string; readonly suffix: Suffix } | null {
  if (!key.startsWith(ACCOUNT_ENV_PREFIX)) return null;
  const rest = key.slice(ACCOUNT_ENV_PREFIX.length);
  for (const suffix of SUFFIXES) {
    if (!rest.endsWith(`_${suffix}`)) continue;
    const name = rest.slice(0, -(suffix.length + 1));
    return ACCOUNT_NAME.test(name) ? { name, suffix } : null;
  }
  return null;
}

export interface AccountBudgets {
  readonly day: Decimal | null;
  readonly week: Decimal | null;
  readonly month: Decimal | null;
}

export interface AccountConfig {
  readonly name: string;
  /** What `resolveBaseUrl` takes: 'global', 'eu' or an origin. */
  readonly endpoint: string;
  readonly endpointSource: string;
  /** null in dry-run (a paper daemon keeps no key) and for an account without keys. */
  readonly credentials: Credentials | null;
  /** The paper account's starting balances (dry-run): its own, else STACKER_DRY_RUN_WALLET. */
  readonly dryRunWallet: ReadonlyMap<string, Decimal>;
  /** Caps on the spend of all its instances together, per UTC day, ISO week and month. */
  readonly budgets: AccountBudgets;
  /** The quote asset its caps count (its instances' budget asset); null without caps. */
  readonly budgetAsset: string | null;
  /** The IANA zone whose days, ISO weeks and months its caps count (default UTC). */
  readonly budgetTimeZone: string;
  /** The instances that trade on it, sorted. */
  readonly instances: readonly string[];
}

/** What the account rules need of an instance. */
export interface AccountUser {
  readonly instance: string;
  readonly file: string;
  readonly account: string;
  /** The asset its orders spend (strategy.budgetAsset); null when it places none. */
  readonly budgetAsset: string | null;
}

/**
 * The settings of a one-off command (`stacker balance --account NAME`, …) run on one account:
 * its key and endpoint in place of the global ones, read by the daemon's rules. `--base-url`
 * and `--region` still win over the account's endpoint, as they win over the global one. The
 * default account is the global settings as they are. A name no key of the env sets up is a
 * ConfigError (a typo would otherwise fall back to no key, or to another account's).
 */
export function settingsOnAccount(settings: Settings, layers: EnvLayers, name: string, flags: { readonly baseUrl?: string | undefined; readonly region?: string | undefined }): Settings {
  if (!ACCOUNT_NAME.test(name)) throw new ConfigError([{ field: '--account', rule: `must be ${ACCOUNT_NAME_RULE} (got ${JSON.stringify(name)})` }]);
  if (name === DEFAULT_ACCOUNT) return settings;
  const setUp = [...accountsSetUp(layers).keys()];
  if (!setUp.includes(name)) {
    const near = otherCase(name, setUp);
    const known = setUp.length === 0 ? 'the env sets up none' : `the env sets up ${setUp.sort().join(', ')}`;
    const hint = near === undefined ? '' : ` (account names are case-sensitive: did you mean ${near}?)`;
    throw new ConfigError([{ field: '--account', rule: `no account ${name} is set up: its key is ${accountKey(name, 'API_KEY')} / ${accountKey(name, 'API_SECRET')}, and ${known}${hint}` }]);
  }
  const lookup = (key: string): EnvValue | null => layers.lookup(key);
  const problems: InputProblem[] = [];
  const credentials = accountCredentials(name, lookup, problems);
  const flagged = flags.baseUrl !== undefined || flags.region !== undefined;
  const global = { value: settings.endpoint, source: settings.endpointSource };
  const endpointProblems: InputProblem[] = [];
  const endpoint = flagged ? global : accountEndpoint(name, lookup, global, endpointProblems);
  if (endpointProblems.length > 0) throw new ConfigError(endpointProblems);
  const credentialKeys = { apiKey: accountKey(name, 'API_KEY'), apiSecret: accountKey(name, 'API_SECRET') };
  return Object.freeze({ ...settings, endpoint: endpoint.value, endpointSource: endpoint.source, credentials, credentialProblems: Object.freeze(problems), credentialKeys });
}

/** Each account some STACKER_ACCOUNT_<NAME>_* key sets up, with the first such key. */
export function accountsSetUp(layers: EnvLayers): Map<string, string> {
  const names = new Map<string, string>();
  for (const key of layers.keysStartingWith(ACCOUNT_ENV_PREFIX)) {
    const parsed = parseAccountKey(key);
    if (parsed !== null && !names.has(parsed.name)) names.set(parsed.name, key);
  }
  return names;
}

/** The set-up account a name most likely meant: another case, or at most 2 edits away. */
function nearAccount(name: string, names: Iterable<string>): string | undefined {
  const known = [...names];
  const upper = closestName(name, known.map((known) => known.toUpperCase()));
  return upper === undefined ? undefined : known.find((known) => known.toUpperCase() === upper);
}

/** Another of `names` that differs from `name` in capitals only (a likely typo): account names are case-sensitive. */
function otherCase(name: string, names: Iterable<string>): string | undefined {
  for (const other of names) if (other !== name && other.toLowerCase() === name.toLowerCase()) return other;
  return undefined;
}

/** An account's key and secret (STACKER_ACCOUNT_<NAME>_API_KEY / _API_SECRET); problems appended. */
function accountCredentials(name: string, lookup: (key: string) => EnvValue | null, problems: InputProblem[]): Credentials | null {
  return credentialsFromEnv(lookup, { apiKey: accountKey(name, 'API_KEY'), apiSecret: accountKey(name, 'API_SECRET') }, problems);
}

/** An account's endpoint (its BASE_URL, else its REGION, else `fallback`); problems appended. */
function accountEndpoint(name: string, lookup: (key: string) => EnvValue | null, fallback: EnvValue, problems: InputProblem[]): EnvValue {
  return endpointFromEnv(lookup, { baseUrl: accountKey(name, 'BASE_URL'), region: accountKey(name, 'REGION') }, fallback, problems);
}

/**
 * Every account some instance uses (the default one too when no instance names any, so a
 * daemon without instances keeps today's rules), validated together; problems appended.
 * Live mode needs a key for each; in dry-run the keys are checked but not kept.
 */
export function readAccounts(
  layers: EnvLayers,
  settings: Settings | null,
  mode: 'dry-run' | 'live',
  users: readonly AccountUser[],
  defaultWallet: ReadonlyMap<string, Decimal>,
  problems: InputProblem[],
): ReadonlyMap<string, AccountConfig> {
  const lookup = (key: string): EnvValue | null => layers.lookup(key);
  const used = new Map<string, AccountUser[]>();
  for (const user of users) used.set(user.account, [...(used.get(user.account) ?? []), user]);
  if (users.length === 0) used.set(DEFAULT_ACCOUNT, []);

  const setNames = accountsSetUp(layers);
  for (const key of layers.keysStartingWith(ACCOUNT_ENV_PREFIX)) {
    const parsed = parseAccountKey(key);
    if (parsed !== null && parsed.name === DEFAULT_ACCOUNT && GLOBAL_FOR_DEFAULT.has(parsed.suffix)) {
      problems.push({ ...sourced(lookup(key)), field: key, rule: `the default account (instances without ACCOUNT) takes its ${parsed.suffix} from STACKER_${parsed.suffix}; set that instead` });
    }
  }
  // An account set in the env that no instance names is an error, like any other key stacker
  // would silently ignore: most often a typo in the name, here or in an instance's ACCOUNT.
  for (const [name, key] of setNames) {
    if (used.has(name)) continue;
    const near = otherCase(name, used.keys());
    const hint = near === undefined ? '' : ` (an instance names ${near}: account names are case-sensitive)`;
    problems.push({ ...sourced(lookup(key)), field: key, rule: `account ${name} is set up here but no instance file says ACCOUNT=${name}${hint}; remove its STACKER_ACCOUNT_${name}_* keys or name it in an instance` });
  }

  const accounts = new Map<string, AccountConfig>();
  for (const [name, members] of [...used].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const account = readAccount(name, members, { lookup, settings, mode, defaultWallet, setNames }, problems);
    if (account !== null) accounts.set(name, account);
  }
  problems.push(...sharedKeyProblems(accounts));
  if (mode === 'live') {
    problems.push(...otherExchangeProblems(accounts, lookup));
    return accounts;
  }
  return new Map([...accounts].map(([name, account]) => [name, Object.freeze({ ...account, credentials: null })]));
}

interface ReadContext {
  readonly lookup: (key: string) => EnvValue | null;
  readonly settings: Settings | null;
  readonly mode: 'dry-run' | 'live';
  readonly defaultWallet: ReadonlyMap<string, Decimal>;
  readonly setNames: ReadonlyMap<string, string>;
}

function readAccount(name: string, members: readonly AccountUser[], context: ReadContext, problems: InputProblem[]): AccountConfig | null {
  const { lookup, settings, mode } = context;
  const before = problems.length;
  const isDefault = name === DEFAULT_ACCOUNT;
  let credentials: Credentials | null;
  let endpoint: EnvValue;
  if (isDefault) {
    // settings.ts already reported a bad global endpoint or half-set pair.
    credentials = settings?.credentials ?? null;
    endpoint = { value: settings?.endpoint ?? 'global', source: settings?.endpointSource ?? 'default' };
  } else {
    credentials = accountCredentials(name, lookup, problems);
    endpoint = accountEndpoint(name, lookup, { value: settings?.endpoint ?? 'global', source: settings?.endpointSource ?? 'default' }, problems);
  }
  // An account the env does not set up at all, beside one it does with a name that close: a typo
  // in an instance's ACCOUNT, which a dry-run would otherwise run on a paper account of its own.
  // (Live says a case slip with the keys it misses, below.)
  const caseSlip = mode === 'live' && otherCase(name, context.setNames.keys()) !== undefined;
  const typo = isDefault || context.setNames.has(name) || caseSlip ? undefined : nearAccount(name, [...context.setNames.keys(), DEFAULT_ACCOUNT]);
  if (typo !== undefined && problems.length === before) {
    for (const member of members) {
      problems.push({ source: member.file, field: 'ACCOUNT', rule: `names account ${name}, which the env does not set up; did you mean ${typo}? (account names are case-sensitive)` });
    }
  }
  if (mode === 'live' && credentials === null && problems.length === before && !isDefault) {
    const near = otherCase(name, context.setNames.keys());
    const hint = near === undefined ? '' : ` (the env sets account ${near}: account names are case-sensitive)`;
    for (const member of members) {
      problems.push({
        source: member.file,
        field: 'ACCOUNT',
        rule: `names account ${name}, but ${accountKey(name, 'API_KEY')} and ${accountKey(name, 'API_SECRET')} are not set${hint}; live mode needs the account's key: set both in the environment or the --env-file file`,
      });
    }
  }
  const wallet = readAccountWallet(name, lookup, context.defaultWallet, problems);
  const { budgets, budgetAsset, budgetTimeZone } = readAccountCap(name, members, lookup, problems);
  if (problems.length > before) return null;
  return Object.freeze({
    name,
    endpoint: endpoint.value,
    endpointSource: endpoint.source,
    credentials,
    dryRunWallet: wallet,
    budgets: Object.freeze(budgets),
    budgetAsset,
    budgetTimeZone,
    instances: Object.freeze(members.map((member) => member.instance).sort()),
  });
}

/** An account's cap settings: its limits, the asset they count (its instances' budget asset) and its zone; problems appended. */
function readAccountCap(
  name: string,
  members: readonly AccountUser[],
  lookup: (key: string) => EnvValue | null,
  problems: InputProblem[],
): Pick<AccountConfig, 'budgets' | 'budgetAsset' | 'budgetTimeZone'> {
  const budgets = readAccountBudgets(name, lookup, problems);
  const budgetAsset = accountBudgetAsset(name, budgets, members, problems);
  const budgetTimeZone = readAccountBudgetTimeZone(name, lookup, budgets, problems);
  return { budgets, budgetAsset, budgetTimeZone };
}

/**
 * The caps of the accounts these instances trade on, read by the daemon's rules, without their
 * keys, endpoints or wallets (a backtest runs them on its own simulated wallet). Accounts the env
 * sets up that none of them names are left alone: a backtest of one strategy is often given the
 * daemon's whole env file. Only accounts with a cap are in the map.
 */
export function readAccountCaps(layers: EnvLayers, users: readonly AccountUser[]): ReadonlyMap<string, Pick<AccountConfig, 'budgets' | 'budgetAsset' | 'budgetTimeZone'>> {
  const lookup = (key: string): EnvValue | null => layers.lookup(key);
  const problems: InputProblem[] = [];
  const caps = new Map<string, Pick<AccountConfig, 'budgets' | 'budgetAsset' | 'budgetTimeZone'>>();
  for (const name of [...new Set(users.map((user) => user.account))].sort()) {
    const cap = readAccountCap(name, users.filter((user) => user.account === name), lookup, problems);
    if (cap.budgetAsset !== null) caps.set(name, cap);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return caps;
}

function readAccountWallet(name: string, lookup: (key: string) => EnvValue | null, fallback: ReadonlyMap<string, Decimal>, problems: InputProblem[]): ReadonlyMap<string, Decimal> {
  const key = accountKey(name, 'DRY_RUN_WALLET');
  const found = lookup(key);
  if (found === null) return fallback;
  const parsed = parseWallet(found.value);
  if (parsed.ok) return parsed.wallet;
  for (const rule of parsed.rules) problems.push({ source: found.source, field: key, rule });
  return fallback;
}

function readAccountBudgets(name: string, lookup: (key: string) => EnvValue | null, problems: InputProblem[]): AccountBudgets {
  const read = (suffix: Suffix): Decimal | null => {
    const key = accountKey(name, suffix);
    const found = lookup(key);
    if (found === null) return null;
    const text = found.value.trim();
    if (PLAIN_DECIMAL.test(text) && new Decimal(text).gt(0)) return new Decimal(text);
    problems.push({ source: found.source, field: key, rule: `must be a plain decimal > 0 in the quote asset its instances spend, such as 250 (got ${JSON.stringify(found.value)})` });
    return null;
  };
  return { day: read('BUDGET_QUOTE_PER_DAY'), week: read('BUDGET_QUOTE_PER_WEEK'), month: read('BUDGET_QUOTE_PER_MONTH') };
}

/**
 * The zone whose calendar an account's caps count in: one for the account, whatever the
 * TIMEZONE of each of its instances (UTC unless `STACKER_ACCOUNT_<NAME>_BUDGET_TIMEZONE` says).
 * A zone without a cap to count is refused, like any key that would change nothing.
 */
function readAccountBudgetTimeZone(name: string, lookup: (key: string) => EnvValue | null, budgets: AccountBudgets, problems: InputProblem[]): string {
  const key = accountKey(name, 'BUDGET_TIMEZONE');
  const found = lookup(key);
  if (found === null) return ACCOUNT_CAP_DEFAULT_TIME_ZONE;
  const zone = found.value.trim();
  const problem = timezoneProblem(zone);
  if (problem !== null) {
    problems.push({ source: found.source, field: key, rule: problem });
    return ACCOUNT_CAP_DEFAULT_TIME_ZONE;
  }
  if (budgets.day === null && budgets.week === null && budgets.month === null) {
    problems.push({ source: found.source, field: key, rule: `account ${name} has no cap (${accountKey(name, 'BUDGET_QUOTE_PER_DAY')}, _WEEK or _MONTH) for it to count; remove it or set a cap` });
  }
  return canonicalTimezone(zone);
}

/** A cap is one number in one asset: the instances it counts must all spend that asset. */
function accountBudgetAsset(name: string, budgets: AccountBudgets, members: readonly AccountUser[], problems: InputProblem[]): string | null {
  if (budgets.day === null && budgets.week === null && budgets.month === null) return null;
  const field = accountKey(name, budgets.day !== null ? 'BUDGET_QUOTE_PER_DAY' : budgets.week !== null ? 'BUDGET_QUOTE_PER_WEEK' : 'BUDGET_QUOTE_PER_MONTH');
  const spenders = members.filter((member) => member.budgetAsset !== null);
  const assets = [...new Set(spenders.map((member) => member.budgetAsset as string))].sort();
  if (assets.length === 1) return assets[0] as string;
  if (assets.length === 0) {
    problems.push({ field, rule: `account ${name} has a budget cap, but none of its instances' strategies declares a budgetAsset (they place no orders, or their authors left it out), so the cap has nothing to count; remove the cap` });
    return null;
  }
  const who = assets.map((asset) => `${asset} (${spenders.filter((m) => m.budgetAsset === asset).map((m) => m.instance).join(', ')})`).join(', ');
  problems.push({ field, rule: `a cap counts one quote asset, but the instances of account ${name} spend ${who}; give those instances budgets of their own, or put them on separate accounts` });
  return null;
}

/**
 * One API key is one nonce sequence and one order history: two accounts on the same key would
 * refuse each other's nonces and read each other's orders as foreign. Compared in every mode
 * (dry-run keeps no key, but the mistake would stop the live daemon later).
 */
function sharedKeyProblems(accounts: ReadonlyMap<string, AccountConfig>): InputProblem[] {
  const problems: InputProblem[] = [];
  const firstWith = new Map<string, string>();
  for (const account of accounts.values()) {
    const key = account.credentials?.apiKey;
    if (key === undefined) continue;
    const field = account.name === DEFAULT_ACCOUNT ? 'STACKER_API_KEY' : accountKey(account.name, 'API_KEY');
    const first = firstWith.get(key);
    if (first === undefined) firstWith.set(key, field);
    else problems.push({ field, rule: `is the same API key as ${first}: each account needs a key of its own (one key has one nonce sequence and one order history; the exchange would refuse the nonces of one of them)` });
  }
  return problems;
}

/**
 * Accounts on more than one exchange (endpoint): one daemon trades on one. Its journal keys an
 * order by the exchange's order id, which two exchanges may both hand out, and an order of the
 * second could then be filled and never recorded. Refused live (run --live, check --live)
 * before anything is sent; a dry-run's paper accounts number their orders apart.
 */
function otherExchangeProblems(accounts: ReadonlyMap<string, AccountConfig>, lookup: (key: string) => EnvValue | null): InputProblem[] {
  const list = [...accounts.values()];
  const first = list.find((account) => account.name === DEFAULT_ACCOUNT) ?? list[0];
  if (first === undefined) return [];
  const problems: InputProblem[] = [];
  for (const account of list) {
    if (sameExchange(account.endpoint, first.endpoint)) continue;
    const key = lookup(accountKey(account.name, 'BASE_URL')) !== null ? accountKey(account.name, 'BASE_URL') : accountKey(account.name, 'REGION');
    problems.push({
      ...sourced(lookup(key)),
      field: key,
      rule: `puts account ${account.name} on ${account.endpoint}, while account ${first.name} trades on ${first.endpoint}: one daemon trades on one exchange (its journal knows an order by the exchange's order id, which two exchanges may both use); run a daemon of its own for ${account.name}'s instances, with its own data dir or database`,
    });
  }
  return problems;
}

/** Two endpoints by their origin (a region is its URL's): one exchange under two spellings is one. */
function sameExchange(a: string, b: string): boolean {
  const origin = (endpoint: string): string => {
    try {
      return new URL(endpoint === 'global' || endpoint === 'eu' ? REGION_URLS[endpoint] : endpoint).origin;
    } catch {
      return endpoint;
    }
  };
  return a === b || origin(a) === origin(b);
}

function sourced(found: EnvValue | null): { source?: string } {
  return found === null ? {} : { source: found.source };
}
