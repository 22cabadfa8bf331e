import type { Decimal } from './money.ts';
import type { RunMode } from './run-mode.ts';

/**
 * What stacker tells its operator while it works, as typed events. The engine emits the first
 * five where it logs the same moments; the daemon tells its own stop and composes
 * `daily-summary` from the journal.
 * They live in the domain so the engine (which emits) and src/notify/ (which delivers) share one
 * definition without knowing each other. Money stays Decimal here; a channel writes it as text.
 */
export const NOTIFY_EVENTS = ['order-filled', 'order-refused', 'intent-unknown', 'order-stuck', 'strategy-disabled', 'trading-stopped', 'daemon-stopped', 'daily-summary'] as const;
export type NotifyEventName = (typeof NOTIFY_EVENTS)[number];

interface EventBase {
  /** When stacker saw it (ms since epoch). */
  readonly atMs: number;
  readonly mode: RunMode;
}

/** An order reached its end with something filled: FILLED, or cancelled after a partial fill. */
export interface OrderFilledEvent extends EventBase {
  readonly kind: 'order-filled';
  readonly instance: string;
  readonly clientOrderId: string;
  readonly orderId: string;
  readonly market: string;
  readonly status: string;
  readonly filledBase: Decimal;
  readonly filledQuote: Decimal;
  readonly fee: Decimal;
  readonly feeAsset: string | null;
  /** filledQuote / filledBase: what one unit cost, fee not included. */
  readonly averagePrice: Decimal;
}

/** A money intent was not sent (a guard, the kill switch, the budget) or the exchange refused it. */
export interface OrderRefusedEvent extends EventBase {
  readonly kind: 'order-refused';
  readonly instance: string;
  /** The intent's kind: buy-stock-market, transfer, flex-withdraw. */
  readonly intent: string;
  readonly clientOrderId: string | null;
  /** A stable reason code (over-budget, kill-switch, E_EXCHANGE_REFUSED, …). */
  readonly reason: string;
  readonly message: string;
  /** Refusals of the same instance, intent and reason not sent since the last one that was (src/notify/refusal-gate.ts). */
  readonly withheld?: { readonly count: number; readonly sinceMs: number };
}

/** A request's answer was lost: it may or may not have happened, and is never resent. */
export interface IntentUnknownEvent extends EventBase {
  readonly kind: 'intent-unknown';
  readonly instance: string;
  /** The account it was sent on, when it is a named one (not the default): where to check it. */
  readonly account?: string;
  readonly intent: string;
  readonly clientOrderId: string | null;
  readonly code: string;
  readonly message: string;
}

/**
 * A market order is still open long after it should have ended (the exchange keeps answering it
 * open, does not find it, or cannot be read): a person checks it at the exchange. stacker keeps
 * following it, cancels and resends nothing, and its budget stays counted. Once per order.
 */
export interface OrderStuckEvent extends EventBase {
  readonly kind: 'order-stuck';
  /** null for an order the journal holds without an intent. */
  readonly instance: string | null;
  readonly orderId: string;
  readonly clientOrderId: string;
  readonly market: string;
  /** The status the exchange last gave (NEW, PARTIAL_FILLED). */
  readonly status: string;
  /** When it was sent (ms since epoch). */
  readonly sinceMs: number;
  /** Why it is still open, from the last read. */
  readonly why: string;
}

/**
 * An instance's strategy threw, answered what the engine cannot take, or did not answer in time:
 * the instance trades no more until stacker is restarted (the others go on). Once per instance.
 */
export interface StrategyDisabledEvent extends EventBase {
  readonly kind: 'strategy-disabled';
  readonly instance: string;
  readonly strategy: string;
  /** The slot whose decision failed (ms since epoch). */
  readonly slotTimeMs: number;
  /** What went wrong, as the journal keeps it (the stack is in the log only). */
  readonly error: string;
}

/** Trading stopped for the rest of the run (credentials, nonce, a lost journal, foreign orders). */
export interface TradingStoppedEvent extends EventBase {
  readonly kind: 'trading-stopped';
  readonly code: string;
  readonly reason: string;
}

/**
 * The daemon stopped because it was asked to (SIGTERM, SIGINT): nothing trades until it is started
 * again, which a supervisor may or may not do. A stop for an error is `trading-stopped` instead.
 */
export interface DaemonStoppedEvent extends EventBase {
  readonly kind: 'daemon-stopped';
  /** What stopped it: the signal's name. */
  readonly reason: string;
}

/**
 * Whether an instance of a summary still runs: `disabled` (ENABLED=false) or `no-file` (the
 * journal holds its orders, but the strategies folder has no file of that name any more).
 */
export type InstanceDayState = 'enabled' | 'disabled' | 'no-file';

/** One instance's day, as its journal counts it. */
export interface InstanceDay {
  readonly instance: string;
  readonly state: InstanceDayState;
  /** The account it trades on (as configured; for one without a file, as its orders were journalled). */
  readonly account: string;
  /** The market it buys; null when it buys nothing (a sweep, a report). */
  readonly market: string | null;
  /** Orders that filled anything that day. */
  readonly orders: number;
  /** Base bought, fees not taken off. */
  readonly bought: Decimal;
  /** Quote paid, fees not included. */
  readonly spent: Decimal;
  /** Fees per asset. */
  readonly fees: ReadonlyMap<string, Decimal>;
  /** (spent + fees in quote) / (bought − fees in base); null when nothing was bought. */
  readonly averageCost: Decimal | null;
  /**
   * The smallest of its day/week/month budgets left on the summed-up date in its own calendar
   * (budgetTimeZone): at that date's end there, or as at the summary when that day runs on past it
   * (west of UTC); null when it has none (or no file to say).
   */
  readonly budgetLeft: Decimal | null;
  /** The asset budgets are counted in; null when it has none. */
  readonly budgetAsset: string | null;
  /** The zone of the calendar its budgets count days in (its TIMEZONE); null when budgetLeft is. */
  readonly budgetTimeZone: string | null;
}

/** An account with a cap on what its instances spend together: what the cap leaves at the end of the day summed up. */
export interface AccountCapDay {
  readonly account: string;
  /** The least any of its periods (day, week, month, in `timeZone`) leaves. */
  readonly capLeft: Decimal;
  readonly capAsset: string;
  readonly timeZone: string;
}

export interface DailySummaryEvent extends EventBase {
  readonly kind: 'daily-summary';
  /** The day summed up, YYYY-MM-DD (UTC). */
  readonly day: string;
  readonly instances: readonly InstanceDay[];
  /** The accounts that have a cap (none without several accounts or caps). */
  readonly accountCaps: readonly AccountCapDay[];
}

export type NotifyEvent = OrderFilledEvent | OrderRefusedEvent | IntentUnknownEvent | OrderStuckEvent | StrategyDisabledEvent | TradingStoppedEvent | DaemonStoppedEvent | DailySummaryEvent;

export function isNotifyEventName(name: string): name is NotifyEventName {
  return (NOTIFY_EVENTS as readonly string[]).includes(name);
}
