import type { Clock } from '../domain/clock.ts';
import type { Decimal } from '../domain/money.ts';
import type { Exchange } from '../exchange/port.ts';
import type { BudgetLimits, Journal } from '../store/journal.ts';
import type { RunMode } from './contract.ts';
import type { KillSwitch } from './kill-switch.ts';
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
  /** How long to wait for a transfer to show on the trade balance, and how often to look. */
  readonly transferSettleMs: number;
  readonly pollMs: number;
}

export const LIVE_TIMING: EngineTiming = {
  lookupDelaysMs: [500, 1500],
  lookupSpacingMs: { min: 2_000, max: 60_000 },
  transferSettleMs: 5000,
  pollMs: 250,
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
  const spent = await journal.budgetSpent({ instance: instance.instance, asset: instance.budgetAsset, timeZone: instance.timezone }, atMs);
  let remaining: Decimal | null = null;
  for (const period of ['day', 'week', 'month'] as const) {
    const limit = instance.budgets[period];
    if (limit === undefined) continue;
    const left = limit.sub(spent[period]);
    remaining = remaining === null || left.lt(remaining) ? left : remaining;
  }
  return remaining !== null && remaining.isNegative() ? remaining.mul(0) : remaining;
}
