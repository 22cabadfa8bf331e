import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { ConfigError, type InputProblem } from '../domain/errors.ts';
import type { Decimal } from '../domain/money.ts';
import { STRATEGY_API_CHANGES, STRATEGY_API_VERSION, type Strategy } from '../engine/contract.ts';
import { ParamReader, closestName, unknownKeyProblems } from '../engine/params.ts';
import { type CatchUpPolicy, parseDuration } from '../engine/schedule/catch-up.ts';
import { type CronSchedule, cronProblems, parseCron } from '../engine/schedule/cron.ts';
import { canonicalTimezone } from '../domain/zone.ts';
import { cutAtHashRule, duplicateRule, parseEnvText, unreadable } from './env-file.ts';
import { deepFreeze } from './freeze.ts';
import { readSettleWindow } from './settle-window.ts';
import { ACCOUNT_NAME, ACCOUNT_NAME_RULE, type AccountUser, DEFAULT_ACCOUNT } from './accounts.ts';

/**
 * One strategy instance file (config/strategies/NAME.env) → one validated InstanceConfig. The
 * file's keys come from the file only, never from the process environment: an instance is what
 * its file says, whoever starts it. Every problem of the file is collected (engine keys, unknown
 * keys, the strategy's own params) so the caller can report all files at once.
 */

export interface InstanceConfig {
  /** The env file's base name, e.g. 'dca-btc': the journal, budgets and clientOrderIds belong to it. */
  readonly instance: string;
  /** The path as given (or as found in the strategies folder). */
  readonly file: string;
  readonly strategy: Strategy<unknown>;
  /** strategy.parseParams's result. */
  readonly params: unknown;
  readonly schedule: CronSchedule;
  /** IANA zone of SCHEDULE and of the budget periods. */
  readonly timezone: string;
  readonly enabled: boolean;
  readonly catchUp: CatchUpPolicy;
  readonly budgets: { readonly day: Decimal | null; readonly week: Decimal | null; readonly month: Decimal | null };
  readonly maxOrderQuote: Decimal | null;
  /** ORDER_SETTLE_WINDOW; null: STACKER_ORDER_SETTLE_WINDOW's (the global default). */
  readonly orderSettleWindowMs: number | null;
  /** ACCOUNT: the account (API key) it trades on; `default` when the file names none. */
  readonly account: string;
}

export const INSTANCE_DEFAULTS = { timezone: 'UTC', catchUp: 'skip', catchUpWindow: '1h' } as const;

/** Instance names end up in logs, metrics labels and clientOrderId prefixes. */
const INSTANCE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const CATCH_UP_POLICIES = ['skip', 'last'] as const;
const BUDGET_KEYS = { day: 'BUDGET_QUOTE_PER_DAY', week: 'BUDGET_QUOTE_PER_WEEK', month: 'BUDGET_QUOTE_PER_MONTH' } as const;
const MAX_ORDER_KEY = 'MAX_ORDER_QUOTE';
/** Parsed only to check SCHEDULE-independent TIMEZONE problems when SCHEDULE is missing. */
const ANY_VALID_CRON = '0 0 * * *';

export function instanceNameOf(file: string): string {
  return basename(file).replace(/\.env$/, '');
}

/**
 * Read and validate instance files. Returns every instance when all are valid; otherwise throws
 * one ConfigError with every problem of every file, duplicates of instance names included.
 */
export async function readInstanceFiles(files: readonly string[], strategies: ReadonlyMap<string, Strategy<unknown>>): Promise<InstanceConfig[]> {
  const problems: InputProblem[] = [];
  const instances = await collectInstances(files, strategies, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return instances;
}

/** readInstanceFiles without the throw: valid instances returned, problems appended. */
export async function collectInstances(
  files: readonly string[],
  strategies: ReadonlyMap<string, Strategy<unknown>>,
  problems: InputProblem[],
  overrides: Readonly<Record<string, string>> = {},
): Promise<InstanceConfig[]> {
  const instances: InstanceConfig[] = [];
  const firstFileOf = new Map<string, string>();
  for (const file of files) {
    const name = instanceNameOf(file);
    // Case-insensitive: dca-btc.env and DCA-btc.env are one name to a human and on some file systems.
    const seen = firstFileOf.get(name.toLowerCase());
    if (seen !== undefined) {
      problems.push({ source: file, field: 'file name', rule: `instance name ${name} is already used by ${seen}; each instance needs its own file name (it owns a journal, budgets and order ids)` });
    } else {
      firstFileOf.set(name.toLowerCase(), file);
    }
    const instance = await readInstanceFile(file, strategies, problems, overrides);
    if (instance !== null && seen === undefined) instances.push(instance);
  }
  return instances.sort((a, b) => (a.instance < b.instance ? -1 : a.instance > b.instance ? 1 : 0));
}

/**
 * One file: the InstanceConfig, or null with its problems appended. `overrides` replace keys of
 * the file (a backtest's --sweep): checked exactly as if the file held them.
 */
export async function readInstanceFile(
  file: string,
  strategies: ReadonlyMap<string, Strategy<unknown>>,
  problems: InputProblem[],
  overrides: Readonly<Record<string, string>> = {},
): Promise<InstanceConfig | null> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    // The path is what is wrong: named as the field, not as the source of a field called `file`.
    problems.push({ field: file, rule: unreadable(error) });
    return null;
  }
  const parsed = await parseEnvText(text);
  const { badLines, duplicates } = parsed;
  const env = { ...parsed.values, ...overrides };
  const found: InputProblem[] = [];
  const p = new ParamReader(env, file);

  for (const line of badLines) p.problem(`line ${line}`, 'is not KEY=value, a comment or blank, so dotenv skips it (a missing "="?)');
  for (const duplicate of duplicates) p.problem(duplicate.key, duplicateRule(duplicate));
  for (const cut of parsed.cutAtHash) p.problem(cut.key, cutAtHashRule(cut));
  const instance = instanceNameOf(file);
  if (!INSTANCE_NAME.test(instance)) {
    p.problem('file name', `the instance name ${JSON.stringify(instance)} (the file name without .env) must be 1 to 64 letters, digits, dots, dashes or underscores, starting with a letter or digit`);
  }

  const strategy = chooseStrategy(p, strategies);
  const schedule = readSchedule(p);
  const enabled = p.boolean('ENABLED', true);
  const catchUp = readCatchUp(p);
  const budgets = {
    day: p.optionalDecimal(BUDGET_KEYS.day, { positive: true }) ?? null,
    week: p.optionalDecimal(BUDGET_KEYS.week, { positive: true }) ?? null,
    month: p.optionalDecimal(BUDGET_KEYS.month, { positive: true }) ?? null,
  };
  const maxOrderQuote = p.optionalDecimal(MAX_ORDER_KEY, { positive: true }) ?? null;
  const orderSettleWindowMs = readInstanceSettleWindow(p);
  const account = readAccountName(p);
  found.push(...p.problems);

  // Global settings in an instance file are never read from it: say where they belong.
  const globalKeys = Object.keys(env).filter((key) => key.toUpperCase().startsWith('STACKER_'));
  for (const key of globalKeys) {
    found.push({ source: file, field: key, rule: 'is a global setting: set it in the environment or the --env-file file, not in a strategy instance file' });
  }

  let params: unknown;
  let paramsOk = false;
  if (strategy !== undefined) {
    const strategyEnv = Object.fromEntries(Object.entries(env).filter(([key]) => !globalKeys.includes(key)));
    found.push(...unknownKeyProblems(strategyEnv, strategy.name, strategy.params, file));
    try {
      params = strategy.parseParams(env, file);
      paramsOk = true;
    } catch (error) {
      if (error instanceof ConfigError) found.push(...error.problems);
      else found.push({ source: file, field: 'STRATEGY', rule: `strategy ${strategy.name} failed while reading its keys (a bug in the strategy): ${error instanceof Error ? error.message : String(error)}` });
    }
    if (paramsOk) found.push(...budgetProblems(strategy, params, env, file));
  }

  // A value the file does not hold is not the file's fault: say where it came from. A swept
  // STRATEGY reads the file's keys as another strategy's: every problem of the file comes from it.
  const sweptStrategy = Object.hasOwn(overrides, 'STRATEGY') ? `STRATEGY=${overrides.STRATEGY} from --sweep` : null;
  problems.push(
    ...found.map((problem) => {
      if (problem.source !== file) return problem;
      if (Object.hasOwn(overrides, problem.field)) return { ...problem, source: `${file} (${problem.field} from --sweep)` };
      return sweptStrategy === null ? problem : { ...problem, source: `${file} (${sweptStrategy})` };
    }),
  );
  if (found.length > 0 || strategy === undefined || schedule === null || catchUp === null) return null;
  // Shallow where the value belongs to another module: the strategy object is the shared
  // registry entry and the compiled schedule is the scheduler's.
  return Object.freeze({
    instance,
    file,
    strategy,
    params: deepFreeze(params),
    schedule: schedule.schedule,
    timezone: schedule.timezone,
    enabled,
    catchUp: Object.freeze(catchUp),
    budgets: Object.freeze(budgets),
    maxOrderQuote,
    orderSettleWindowMs,
    account,
  });
}

function readAccountName(p: ParamReader): string {
  const name = p.raw('ACCOUNT');
  if (name === undefined) return DEFAULT_ACCOUNT;
  if (ACCOUNT_NAME.test(name)) return name;
  p.problem('ACCOUNT', `must be ${ACCOUNT_NAME_RULE} (got ${JSON.stringify(name)})`);
  return DEFAULT_ACCOUNT;
}

function readInstanceSettleWindow(p: ParamReader): number | null {
  const text = p.raw('ORDER_SETTLE_WINDOW');
  if (text === undefined) return null;
  const read = readSettleWindow(text);
  if ('ms' in read) return read.ms;
  p.problem('ORDER_SETTLE_WINDOW', read.rule);
  return null;
}

function chooseStrategy(p: ParamReader, strategies: ReadonlyMap<string, Strategy<unknown>>): Strategy<unknown> | undefined {
  const names = [...strategies.keys()];
  const name = p.raw('STRATEGY');
  if (name === undefined) {
    p.problem('STRATEGY', `is required: the strategy this instance runs, one of ${names.join(', ')}`);
    return undefined;
  }
  const strategy = strategies.get(name);
  if (strategy === undefined) {
    // closestName compares in capitals; strategy names are kebab-case lower case.
    const guess = closestName(name, names.map((known) => known.toUpperCase()));
    const hint = guess === undefined ? `; the strategies are ${names.join(', ')}` : `; did you mean ${guess.toLowerCase()}?`;
    p.problem('STRATEGY', `${JSON.stringify(name)} is not a known strategy${hint}`);
    return undefined;
  }
  if (strategy.version !== STRATEGY_API_VERSION) {
    p.problem('STRATEGY', `strategy ${name} is written for strategy API version ${String(strategy.version)}, but this stacker runs version ${STRATEGY_API_VERSION}: ${STRATEGY_API_CHANGES}`);
    return undefined;
  }
  return strategy;
}

function readSchedule(p: ParamReader): { schedule: CronSchedule; timezone: string } | null {
  const expression = p.raw('SCHEDULE');
  const timezone = p.raw('TIMEZONE') ?? INSTANCE_DEFAULTS.timezone;
  if (expression === undefined) {
    p.problem('SCHEDULE', 'is required: a cron expression of 5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first, such as "0 9 * * *"');
  }
  const cron = cronProblems(expression ?? ANY_VALID_CRON, timezone).filter((problem: { readonly field: string }) => expression !== undefined || problem.field === 'TIMEZONE');
  for (const problem of cron) p.problem(problem.field, problem.rule);
  if (expression === undefined || cron.length > 0) return null;
  try {
    const zone = canonicalTimezone(timezone);
    return { schedule: parseCron(expression, zone), timezone: zone };
  } catch (error) {
    // cronProblems and parseCron disagreeing is the scheduler's bug; still a config problem, not a crash.
    p.problem('SCHEDULE', `cannot be scheduled: ${error instanceof Error ? error.message : String(error)}`);
    return null;
  }
}

function readCatchUp(p: ParamReader): CatchUpPolicy | null {
  const before = p.problems.length;
  const policy = p.oneOf('CATCH_UP', CATCH_UP_POLICIES, 'skip');
  const windowText = p.raw('CATCH_UP_WINDOW') ?? INSTANCE_DEFAULTS.catchUpWindow;
  const windowMs = parseDuration(windowText);
  // Checked with CATCH_UP=skip too: a wrong value waiting for the day someone switches to last helps nobody.
  if (windowMs === null || windowMs <= 0) {
    p.problem('CATCH_UP_WINDOW', `must be a duration greater than zero: a whole number followed by a unit, such as 30m, 6h or 1d (got ${JSON.stringify(windowText)})`);
  }
  if (p.problems.length > before || windowMs === null) return null;
  return policy === 'skip' ? { policy: 'skip' } : { policy: 'last', windowMs };
}

/** Budgets and MAX_ORDER_QUOTE count orders: on an instance whose strategy places none they would silently do nothing. */
function budgetProblems(strategy: Strategy<unknown>, params: unknown, env: Readonly<Record<string, string>>, file: string): InputProblem[] {
  const asset = strategy.budgetAsset?.(params) ?? null;
  if (asset !== null) return [];
  const set = [...Object.values(BUDGET_KEYS), MAX_ORDER_KEY].filter((key) => (env[key] ?? '') !== '');
  return set.map((key) => ({
    source: file,
    field: key,
    rule: `strategy ${strategy.name} declares no budgetAsset (it places no orders, or its author left budgetAsset out), so a budget or order limit has nothing to count in; remove the key`,
  }));
}

/** What the account rules need of an instance. */
export function accountUserOf(instance: InstanceConfig): AccountUser {
  return { instance: instance.instance, file: instance.file, account: instance.account, budgetAsset: instance.strategy.budgetAsset?.(instance.params) ?? null };
}
