import type { NotifyEvent } from '../domain/notification.ts';
import { REFUSAL_REASONS } from './contract.ts';

/**
 * What the engine reports while it works. The engine never imports a logger or a metrics
 * library (docs/design.md, Layers): the composition root passes these in, pino and Prometheus in a
 * daemon, silent ones in a backtest.
 */

/** The subset of pino's Logger the engine uses; a pino logger satisfies it. */
export interface EngineLogger {
  /** Whether a line at this level is written: the engine builds costly fields (decimal text) only then. */
  isLevelEnabled(level: 'debug' | 'info' | 'warn' | 'error'): boolean;
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
  debug(fields: Record<string, unknown>, message: string): void;
}

export interface EngineMetrics {
  orderTransition(instance: string, status: string): void;
  /** The exchange accepted an order of this instance, at `placedAtMs` (its own time for the order). */
  orderPlaced(instance: string, placedAtMs: number): void;
  refusal(instance: string, reason: string): void;
  slotFinished(instance: string, outcome: 'done' | 'failed' | 'skipped' | 'missed', durationMs: number, slotTimeMs: number): void;
  strategyDisabled(instance: string): void;
  killSwitch(active: boolean): void;
  /** A scheduled slot's snapshot failed for now and the slot will be tried again (`code`: why). */
  slotRetried?(instance: string, code: string): void;
}

/** The reason a refusal by the exchange is counted under (the journal keeps its error code). */
export const EXCHANGE_REFUSED = 'exchange-refused';

/**
 * The engine's own refusals, beside the contract's: a move of the same money whose fate is
 * unknown, an intent after one that stopped, a budget held while the journal may lack orders;
 * and a buy the exchange took and ended with nothing filled (an empty book, self-trade
 * prevention), counted with them: nothing was bought.
 */
export const ENGINE_REFUSED = {
  transferUnresolved: 'transfer-unresolved',
  withdrawUnresolved: 'withdraw-unresolved',
  earlierIntentStopped: 'earlier-intent-stopped',
  journalBehind: 'journal-behind',
  unfilled: 'unfilled',
} as const;

/** The refusal reasons known before any slot, counted from 0: the contract's, the engine's and the exchange's (a strategy may add its own). */
export const KNOWN_REFUSAL_REASONS: readonly string[] = [...REFUSAL_REASONS, ...Object.values(ENGINE_REFUSED), EXCHANGE_REFUSED];

export const silentLogger: EngineLogger = {
  isLevelEnabled: () => false,
  info() {},
  warn() {},
  error() {},
  debug() {},
};

export const noEngineMetrics: EngineMetrics = {
  orderTransition() {},
  orderPlaced() {},
  refusal() {},
  slotFinished() {},
  strategyDisabled() {},
  killSwitch() {},
};

/**
 * Where the engine tells its operator about fills, refusals, lost answers and a stop: a port the
 * daemon fills with the notification dispatcher (src/notify/), a backtest with nothing. `notify`
 * must return at once and never throw: the engine calls it on its money path and never waits
 * for a delivery.
 */
export interface EngineNotifier {
  notify(event: NotifyEvent): void;
}

export const noNotifier: EngineNotifier = {
  notify() {},
};

/**
 * Hand an event to the notifier; a notifier that breaks its promise and throws is logged, never
 * allowed to fail the slot that was reporting. The event is built only when someone listens: a
 * backtest's slots pay nothing for it.
 */
export function tell(deps: { readonly notifier: EngineNotifier; readonly logger: EngineLogger }, build: () => NotifyEvent): void {
  if (deps.notifier === noNotifier) return;
  const event = build();
  try {
    deps.notifier.notify(event);
  } catch (error) {
    deps.logger.warn({ event: 'notifier-threw', kind: event.kind, error: error instanceof Error ? error.message : String(error) }, `could not queue the ${event.kind} notification`);
  }
}
