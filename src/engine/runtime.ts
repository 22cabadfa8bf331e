import type { Decimal } from '../domain/money.ts';
import type { Exchange } from '../exchange/port.ts';
import type { BudgetLimits, Journal } from '../store/journal.ts';
import type { RunMode } from './contract.ts';
import type { KillSwitch } from './kill-switch.ts';
import type { EngineLogger, EngineMetrics } from './observer.ts';

/** What every part of the engine shares for one run: the world it acts on and how it reports. */
export interface EngineDeps {
  readonly exchange: Exchange;
  readonly journal: Journal;
  readonly mode: RunMode;
  readonly logger: EngineLogger;
  readonly metrics: EngineMetrics;
  readonly killSwitch: KillSwitch;
  readonly clock: { nowMs(): number };
  readonly sleep: (ms: number) => Promise<void>;
  readonly timing: EngineTiming;
}

/**
 * Waits of the money rule. A backtest sets them to zero: its exchange answers synchronously and
 * never loses an answer.
 */
export interface EngineTiming {
  /** Lookups of a lost order answer, after these delays; "none" only after all of them answered none. */
  readonly lookupDelaysMs: readonly number[];
  /** How long to wait for a transfer to show on the trade balance, and how often to look. */
  readonly transferSettleMs: number;
  readonly pollMs: number;
  /** Sends of one buy at most (the first plus resends after a provable "no such order"). */
  readonly maxSends: number;
  /** An unknown intent is reconciled only when it is at least this old: a timed-out request may still land. */
  readonly unknownSettleMs: number;
}

export const LIVE_TIMING: EngineTiming = {
  lookupDelaysMs: [500, 1500],
  transferSettleMs: 5000,
  pollMs: 250,
  maxSends: 3,
  unknownSettleMs: 60_000,
};

export const INSTANT_TIMING: EngineTiming = {
  lookupDelaysMs: [0],
  transferSettleMs: 0,
  pollMs: 0,
  maxSends: 3,
  unknownSettleMs: 0,
};

/** One configured strategy instance, as the engine needs it. */
export interface InstanceLimits {
  readonly instance: string;
  readonly timezone: string;
  readonly budgets: BudgetLimits;
  readonly maxOrderQuote: Decimal | null;
  /** The configured CLIENT_ORDER_PREFIX-like default for the derived ids; null = from the instance name. */
  readonly clientOrderIdPrefix: string | null;
}

export function hasBudget(limits: InstanceLimits): boolean {
  return limits.budgets.day !== undefined || limits.budgets.week !== undefined || limits.budgets.month !== undefined;
}
