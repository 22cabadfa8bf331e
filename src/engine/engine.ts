import type { CatchUpPolicy } from './schedule/catch-up.ts';
import { planCatchUp } from './schedule/catch-up.ts';
import type { CronSchedule } from './schedule/cron.ts';
import { FatalEngineError } from './error-policy.ts';
import { type ReconcileSummary, reconcile } from './reconcile.ts';
import type { EngineDeps } from './runtime.ts';
import { MarketBook } from './snapshot.ts';
import { type InstanceRuntime, type SlotOutcome, runSlot } from './slot-runner.ts';
import { trackOpenOrders } from './tracker.ts';

/** An instance with its schedule: what the scheduler fires and the catch-up policy reads. */
export interface ScheduledRuntime extends InstanceRuntime {
  readonly schedule: CronSchedule;
  readonly catchUp: CatchUpPolicy;
}

export interface EngineOptions {
  readonly runId: string | null;
  /** How long market rules are trusted before they are read again. */
  readonly marketsTtlMs?: number;
  /** Called once when trading must stop (auth or nonce refused); the daemon exits non-zero. */
  readonly onFatal?: (error: FatalEngineError) => void;
}

/**
 * The engine: one per run, the same in live, dry-run and backtest (the worlds differ only in
 * the Exchange and the scheduler handed in). It owns which instances are still enabled and
 * whether trading has been stopped; each slot is `runSlot`.
 */
export class Engine {
  readonly #deps: EngineDeps;
  readonly #instances: ReadonlyMap<string, ScheduledRuntime>;
  readonly #disabled = new Set<string>();
  readonly #markets: MarketBook;
  readonly #options: EngineOptions;
  #fatal: FatalEngineError | null = null;

  constructor(deps: EngineDeps, instances: readonly ScheduledRuntime[], options: EngineOptions) {
    this.#deps = deps;
    this.#instances = new Map(instances.map((instance) => [instance.instance, instance]));
    this.#markets = new MarketBook(deps.exchange, { ttlMs: options.marketsTtlMs ?? 10 * 60_000, nowMs: () => deps.clock.nowMs() });
    this.#options = options;
  }

  get fatal(): FatalEngineError | null {
    return this.#fatal;
  }

  isEnabled(instance: string): boolean {
    return this.#instances.has(instance) && !this.#disabled.has(instance);
  }

  /** Resolve what an earlier run left open. Run it before any slot. */
  async reconcile(): Promise<ReconcileSummary> {
    return this.#guard(() => reconcile(this.#deps, { minAgeMs: 0, closeSlots: true }), { resolved: 0, unresolved: 0, slotsClosed: 0 });
  }

  /**
   * Slots missed while stacker was stopped: journalled as missed (CATCH_UP=skip), or the latest
   * run late when within the window (CATCH_UP=last). Journalling them is what keeps a second
   * restart from catching the same slot up again.
   */
  async catchUp(nowMs: number): Promise<void> {
    for (const instance of this.#instances.values()) {
      if (!this.isEnabled(instance.instance) || this.#fatal !== null) continue;
      const last = await this.#deps.journal.lastSlot(instance.instance);
      const plan = planCatchUp(instance.schedule, last?.slotTimeMs ?? null, nowMs, instance.catchUp);
      for (const slotTimeMs of plan.skip) {
        await this.#deps.journal.skipSlot({
          instance: instance.instance,
          slotTimeMs,
          runId: this.#options.runId,
          status: 'missed',
          reason: instance.catchUp.policy === 'skip' ? 'stacker was not running; CATCH_UP=skip' : 'stacker was not running; older than the newest missed slot or CATCH_UP_WINDOW',
        });
        this.#deps.metrics.slotFinished(instance.instance, 'missed', 0, slotTimeMs);
      }
      if (plan.skippedTotal > 0) {
        this.#deps.logger.warn(
          { event: 'slots-missed', instance: instance.instance, missed: plan.skippedTotal, catchUp: instance.catchUp.policy },
          `${plan.skippedTotal} slot(s) of ${instance.instance} fell while stacker was not running; journalled as missed`,
        );
      }
      if (plan.run !== null) {
        this.#deps.logger.info({ event: 'catch-up', instance: instance.instance, slot: new Date(plan.run).toISOString() }, 'running the missed slot late (CATCH_UP=last)');
        await this.runSlot(instance.instance, plan.run);
      }
    }
  }

  /** The scheduler's handler: never throws; a fatal error stops all further slots and calls onFatal. */
  async runSlot(instanceName: string, slotTimeMs: number): Promise<SlotOutcome> {
    const instance = this.#instances.get(instanceName);
    if (instance === undefined || this.#disabled.has(instanceName)) return 'disabled';
    if (this.#fatal !== null) return 'skipped';
    const outcome = await this.#guard(() => runSlot(this.#deps, this.#markets, instance, slotTimeMs, this.#options.runId), 'failed' as SlotOutcome);
    if (outcome === 'disabled') this.#disabled.add(instanceName);
    // A slot a buy left open is followed at once: most market orders are terminal already and
    // this costs nothing; the periodic tracker covers the rest.
    return outcome;
  }

  /** One round of order tracking and of late reconciliation of lost answers. */
  async track(): Promise<void> {
    if (this.#fatal !== null) return;
    await this.#guard(async () => {
      await trackOpenOrders(this.#deps);
      await reconcile(this.#deps, { minAgeMs: this.#deps.timing.unknownSettleMs, closeSlots: false });
    }, undefined);
  }

  async #guard<T>(work: () => Promise<T>, fallback: T): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof FatalEngineError) {
        if (this.#fatal === null) {
          this.#fatal = error;
          this.#deps.logger.error({ event: 'trading-stopped', code: error.code, error: error.message }, `trading stopped: ${error.message}`);
          this.#options.onFatal?.(error);
        }
        return fallback;
      }
      this.#deps.logger.error({ event: 'engine-error', error: error instanceof Error ? error.message : String(error) }, 'unexpected engine error');
      return fallback;
    }
  }
}
