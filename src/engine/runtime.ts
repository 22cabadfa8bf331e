import { DEFAULT_ACCOUNT } from '../domain/account.ts';
import type { Clock } from '../domain/clock.ts';
import type { Decimal } from '../domain/money.ts';
import type { Exchange } from '../exchange/port.ts';
import type { BudgetLimits, BudgetScope, Journal } from '../store/journal.ts';
import type { RunMode } from './contract.ts';
import type { KillSwitch } from './kill-switch.ts';
import { LIVE_SNAPSHOT_RETRY, type SnapshotRetryTiming } from './slot-retry.ts';
import type { EngineLogger, EngineMetrics, EngineNotifier } from './observer.ts';

/** What every part of the engine shares for one run: the world it acts on and how it reports. */
export interface EngineDeps {
  readonly exchange: Exchange;
  readonly journal: Journal;
  readonly mode: RunMode;
  readonly logger: EngineLogger;
  readonly metrics: EngineMetrics;
  /** The operator's notifications; `noNotifier` in a backtest. */
  readonly notifier: EngineNotifier;
  readonly killSwitch: KillSwitch;
  readonly clock: Clock;
  readonly sleep: (ms: number) => Promise<void>;
  readonly timing: EngineTiming;
  /**
   * Several accounts (API keys) in one run: which account each instance trades on and each
   * account's exchange. Absent: every instance trades on `exchange` (a backtest, a daemon of one
   * account).
   */
  readonly accounts?: AccountRouting;
  /** Set on the deps of one account (onAccount): the account `exchange` belongs to. */
  readonly account?: string;
  /**
   * While the journal may lack the newest orders (lost, rebuilt, an older copy put back), buys
   * counted against a budget wait (BudgetHold); absent or null: none held.
   */
  readonly budgetHold?: () => BudgetHold | null;
}

/**
 * Buys counted against a budget (an instance's or its account's cap) are refused until
 * `untilMs`: the journal was found behind at `sinceMs`, and an order of its last moments may not
 * show in the exchange's history yet. Counted without it, the day's budget was spent again.
 */
export interface BudgetHold {
  readonly sinceMs: number;
  readonly untilMs: number;
  /** Why the journal may lack orders, as the start found it. */
  readonly reason: string;
  /**
   * Every buy waits, budget or none: the history showed orders of these instances placed within
   * the settle window before this start, which the new journal never sent (lost moments ago, or
   * another stacker trading these instances on this key now): the next slot may be bought already.
   */
  readonly everyBuy: boolean;
}

export { DEFAULT_ACCOUNT };

/** What the engine knows of the accounts of a run. */
export interface AccountRouting {
  accountOf(instance: string): string;
  /** undefined for an account this run does not trade on (an intent journalled under an account since removed from the config). */
  exchangeOf(account: string): Exchange | undefined;
  /** The account's cap on the spend of all its instances together; null when it has none. */
  capOf(account: string): AccountCap | null;
  /** Every account of the run, in a stable order. */
  readonly names: readonly string[];
}

export interface AccountCap {
  readonly limits: BudgetLimits;
  /** The quote asset the cap counts. */
  readonly asset: string;
  /**
   * The zone of the calendar periods it counts (UTC unless the account names one): an account's
   * instances may each have their own TIMEZONE, the account's day is one.
   */
  readonly timeZone: string;
}

/**
 * The account caps' counters live beside the instances' in the budget tables, under a scope no
 * instance can have (instance names hold no colon).
 */
export function accountBudgetScope(account: string): string {
  return `account:${account}`;
}
/** The journal names an account cap's reservations (adopting an order writes one itself). */
export { accountReservationId } from '../store/journal.ts';

/** Whether some account of the run has a cap. */
export function hasAccountCaps(deps: EngineDeps): boolean {
  const routing = deps.accounts;
  return routing !== undefined && routing.names.some((name) => routing.capOf(name) !== null);
}

/**
 * Whether every buy is counted, budget or none (its instance's and its account's reservation):
 * live and dry-run, so that a budget or cap set later in a period counts what was spent in it
 * before. A backtest, whose configuration cannot change while it runs, counts only under a limit.
 */
export function countsEveryBuy(deps: EngineDeps): boolean {
  return deps.mode !== 'backtest';
}

/** Whether a buy's account reservation may exist (and is looked for to settle or release it). */
export function mayReserveOnAccount(deps: EngineDeps): boolean {
  return countsEveryBuy(deps) || hasAccountCaps(deps);
}

/** The account an instance trades on. */
export function accountOfInstance(deps: EngineDeps, instance: string): string {
  return deps.accounts?.accountOf(instance) ?? DEFAULT_ACCOUNT;
}

/** The deps of one account: the same run, with `exchange` the account's. */
export function onAccount(deps: EngineDeps, account: string): EngineDeps | null {
  const routing = deps.accounts;
  if (routing === undefined) return deps;
  if (deps.account === account) return deps;
  const exchange = routing.exchangeOf(account);
  if (exchange === undefined) return null;
  return { ...deps, exchange, account };
}

/**
 * The start of a message that stops trading, naming the account whose key or nonce was refused
 * when the run has several: the operator must know which key to look at.
 */
export function accountPrefix(deps: EngineDeps): string {
  return deps.account !== undefined && (deps.accounts?.names.length ?? 0) > 1 ? `account ${deps.account}: ` : '';
}

/** The deps of an instance's account (every configured instance has one). */
export function onInstanceAccount(deps: EngineDeps, instance: string): EngineDeps {
  const own = onAccount(deps, accountOfInstance(deps, instance));
  if (own === null) throw new Error(`instance ${instance} trades on account ${accountOfInstance(deps, instance)}, which has no exchange`);
  return own;
}

/**
 * The deps of the account an intent was sent on, as journalled (never the instance's account
 * as configured now: the order is where it was sent). An intent journalled before accounts
 * went out on the default account. null when this run has no such account.
 */
export function onIntentAccount(deps: EngineDeps, intent: { readonly account: string | null }): EngineDeps | null {
  return onAccount(deps, intent.account ?? DEFAULT_ACCOUNT);
}

/**
 * Waits of the money rule. A backtest sets them to zero: its exchange answers synchronously and
 * never loses an answer.
 */
export interface EngineTiming {
  /**
   * Lookups of a lost order answer inside the slot, after these delays: most lost answers are
   * found this way. What they do not find is looked up over the instance's settle window.
   */
  readonly lookupDelaysMs: readonly number[];
  /** Spacing of the settle-window lookups: half the intent's age, within these bounds. */
  readonly lookupSpacingMs: { readonly min: number; readonly max: number };
  /** How long to wait for a transfer to show on the trade balance (or a withdrawal whose answer was lost, on its investment), and how often to look. */
  readonly transferSettleMs: number;
  readonly pollMs: number;
  /** Backoff of a scheduled slot whose snapshot failed for now; LIVE_SNAPSHOT_RETRY when absent. */
  readonly snapshotRetry?: SnapshotRetryTiming;
  /** How long a market order may stay open, counted from its send, before the operator is told it is stuck; LIVE_STUCK_ORDER_MS when absent. */
  readonly stuckOrderMs?: number;
  /** How long a strategy's decide may take before it counts as failed; DECIDE_TIME_LIMIT_MS when absent. */
  readonly decideTimeLimitMs?: number;
}

/**
 * How long a strategy's decide may take. It decides on a snapshot already read, so it answers in
 * milliseconds; one that has not answered in 30 s never will (a promise nothing settles), and
 * waiting for it would keep its instance "running" for good, every later slot missed. It is a
 * failed strategy like one that throws: the slot is journalled failed and the instance disabled.
 */
export const DECIDE_TIME_LIMIT_MS = 30_000;

export { withinTimeLimit } from './time-limit.ts';

/**
 * How long a market order may stay open before its operator is told. The exchange matches a
 * market order against the book or cancels what the taker band leaves within a second or two;
 * what can keep one open longer and still end by itself (its history lagging by seconds, a
 * matching engine paused for a short maintenance, a lost answer looked up over the default
 * 10-minute settle window) is over well within 15 minutes. An order open past that is not going
 * to settle by itself soon, and its operator still hears of it within the hour, long before a
 * daily slot spends again beside the budget it holds.
 */
export const LIVE_STUCK_ORDER_MS = 15 * 60_000;

export const LIVE_TIMING: EngineTiming = {
  lookupDelaysMs: [500, 1500],
  lookupSpacingMs: { min: 2_000, max: 60_000 },
  transferSettleMs: 5000,
  pollMs: 250,
  snapshotRetry: LIVE_SNAPSHOT_RETRY,
  stuckOrderMs: LIVE_STUCK_ORDER_MS,
};

export const INSTANT_TIMING: EngineTiming = {
  lookupDelaysMs: [0],
  lookupSpacingMs: { min: 0, max: 0 },
  transferSettleMs: 0,
  pollMs: 0,
};

/**
 * How long an order whose answer was lost is looked for before it is called `not-found`
 * (ORDER_SETTLE_WINDOW): the exchange's order history has been seen lagging an order by
 * seconds, so minutes, not seconds. The floor keeps a setting from turning a slow history into
 * a verdict.
 */
export const ORDER_SETTLE_WINDOW = { defaultMs: 10 * 60_000, floorMs: 30_000, ceilingMs: 24 * 3_600_000 } as const;

/** One configured strategy instance, as the engine needs it. */
export interface InstanceLimits {
  readonly instance: string;
  readonly timezone: string;
  readonly budgets: BudgetLimits;
  readonly maxOrderQuote: Decimal | null;
  /** The configured CLIENT_ORDER_PREFIX-like default for the derived ids; null = from the instance name. */
  readonly clientOrderIdPrefix: string | null;
  /** ORDER_SETTLE_WINDOW of the instance: how long a lost order answer is looked for. */
  readonly orderSettleWindowMs: number;
}

export function hasBudget(limits: InstanceLimits): boolean {
  return limits.budgets.day !== undefined || limits.budgets.week !== undefined || limits.budgets.month !== undefined;
}

/**
 * The smallest of an instance's day/week/month budgets left at `atMs`, as the journal counts
 * them (never below zero); null when it has no budget. What a slot's strategy reads and what the
 * daily summary reports.
 */
export async function budgetLeft(journal: Journal, instance: InstanceLimits & { readonly budgetAsset: string | null }, atMs: number): Promise<Decimal | null> {
  if (!hasBudget(instance) || instance.budgetAsset === null) return null;
  return leftOf(journal, { instance: instance.instance, asset: instance.budgetAsset, timeZone: instance.timezone }, instance.budgets, atMs);
}

/** What an instance may still spend, and which limit leaves that little: a refusal names it. */
export interface SpendLeft {
  readonly amount: Decimal;
  /** The asset budgets count (the instance's quote). */
  readonly asset: string;
  /** "the instance's own budget", or "the cap of account NAME" when the cap leaves less. */
  readonly limitedBy: string;
  /**
   * The most a fresh period allows: the smallest limit configured, of the instance's budgets and
   * its account's cap. A buy above it is never sent; one within it waits for the period to reset.
   */
  readonly ceiling: Decimal;
  /** The setting that is the ceiling, for the refusal to say what to raise: `BUDGET_QUOTE_PER_DAY` (the instance file's) or the account's `STACKER_ACCOUNT_<NAME>_…`. */
  readonly ceilingSetting: string;
}

/**
 * What an instance may still spend at `atMs`: its own budget left, or its account's cap left when
 * that is less; null when neither limits it. What a slot's guards judge a buy against, and
 * `stacker check`'s pre-flight with them.
 */
export async function spendLeft(journal: Journal, instance: InstanceLimits & { readonly budgetAsset: string | null }, account: string, cap: AccountCap | null, atMs: number): Promise<SpendLeft | null> {
  const own = await budgetLeft(journal, instance, atMs);
  const capLeft = await accountCapLeft(journal, account, cap, atMs);
  // The env keys of the limits (config/accounts.ts writes the account's): what a refusal tells to raise.
  const limits = [
    ...(own === null ? [] : settingsOf(instance.budgets, "the instance file's ")),
    ...(capLeft === null || cap === null ? [] : settingsOf(cap.limits, `STACKER_ACCOUNT_${account}_`)),
  ];
  const smallest = limits.reduce((least, limit) => (limit.value.lt(least.value) ? limit : least), limits[0] as { value: Decimal; setting: string });
  const ceiling = { ceiling: smallest?.value as Decimal, ceilingSetting: smallest?.setting as string };
  const asset = cap?.asset ?? instance.budgetAsset ?? '';
  if (capLeft !== null && (own === null || capLeft.lt(own))) return { amount: capLeft, asset, limitedBy: `the cap of account ${account}`, ...ceiling };
  return own === null ? null : { amount: own, asset, limitedBy: "the instance's own budget", ...ceiling };
}

function settingsOf(limits: BudgetLimits, prefix: string): Array<{ readonly value: Decimal; readonly setting: string }> {
  return Object.entries(limits)
    .filter((entry): entry is [string, Decimal] => entry[1] !== undefined)
    .map(([period, value]) => ({ value, setting: `${prefix}BUDGET_QUOTE_PER_${period.toUpperCase()}` }));
}

/** The smallest of an account cap's periods left at `atMs` (never below zero); null without a cap. */
export async function accountCapLeft(journal: Journal, account: string, cap: AccountCap | null, atMs: number): Promise<Decimal | null> {
  if (cap === null) return null;
  return leftOf(journal, { instance: accountBudgetScope(account), asset: cap.asset, timeZone: cap.timeZone }, cap.limits, atMs);
}

async function leftOf(journal: Journal, scope: BudgetScope, limits: BudgetLimits, atMs: number): Promise<Decimal | null> {
  const spent = await journal.budgetSpent(scope, atMs);
  let remaining: Decimal | null = null;
  for (const period of ['day', 'week', 'month'] as const) {
    const limit = limits[period];
    if (limit === undefined) continue;
    const left = limit.sub(spent[period]);
    remaining = remaining === null || left.lt(remaining) ? left : remaining;
  }
  return remaining !== null && remaining.isNegative() ? remaining.mul(0) : remaining;
}
