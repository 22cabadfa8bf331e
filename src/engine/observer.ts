/**
 * What the engine reports while it works. The engine never imports a logger or a metrics
 * library (docs/design.md, Layers): the composition root passes these in, pino and Prometheus in a
 * daemon, silent ones in a backtest.
 */

/** The subset of pino's Logger the engine uses; a pino logger satisfies it. */
export interface EngineLogger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
  debug(fields: Record<string, unknown>, message: string): void;
}

export interface EngineMetrics {
  orderTransition(instance: string, status: string): void;
  orderPlaced(instance: string): void;
  refusal(instance: string, reason: string): void;
  slotFinished(instance: string, outcome: 'done' | 'failed' | 'skipped' | 'missed', durationMs: number, slotTimeMs: number): void;
  strategyDisabled(instance: string): void;
  killSwitch(active: boolean): void;
}

export const silentLogger: EngineLogger = {
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
