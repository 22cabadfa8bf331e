import type { VirtualClock } from './clock.ts';
import type { ScheduledInstance, Scheduler, SlotHandler } from './scheduler.ts';

export interface VirtualSchedulerOptions {
  readonly clock: VirtualClock;
  /** Slots strictly after this time… */
  readonly fromMs: number;
  /** …and at or before this one. */
  readonly toMs: number;
  /** Called before each slot with its time, before the clock moves there (the backtest advances its candles). */
  readonly beforeSlot?: (slotTimeMs: number) => void | Promise<void>;
}

/**
 * The same schedules evaluated in virtual time: every slot of every instance in (from, to], in
 * time order (ties in the order the instances are given), each awaited before time moves on. A
 * backtest runs on it, and so does a dry-run daemon replaying history in accelerated time: the
 * engine cannot tell the difference, which is the point.
 */
export class VirtualScheduler implements Scheduler {
  readonly #options: VirtualSchedulerOptions;
  #stopped = false;
  #running: Promise<{ slots: number }> | null = null;

  constructor(options: VirtualSchedulerOptions) {
    this.#options = options;
  }

  async run(instances: readonly ScheduledInstance[], handler: SlotHandler): Promise<{ readonly slots: number }> {
    const { clock, fromMs, toMs } = this.#options;
    // The next slot of each instance; a linear scan picks the earliest (instances are few).
    const next = instances.map((entry) => entry.schedule.next(fromMs));
    let slots = 0;
    while (!this.#stopped) {
      let pick = -1;
      for (let i = 0; i < next.length; i += 1) {
        if ((next[i] as number) <= toMs && (pick === -1 || (next[i] as number) < (next[pick] as number))) pick = i;
      }
      if (pick === -1) break;
      const slotTimeMs = next[pick] as number;
      const entry = instances[pick] as ScheduledInstance;
      await this.#options.beforeSlot?.(slotTimeMs);
      clock.set(slotTimeMs);
      await handler(entry.instance, slotTimeMs).catch(() => undefined);
      slots += 1;
      next[pick] = entry.schedule.next(slotTimeMs);
    }
    return { slots };
  }

  start(instances: readonly ScheduledInstance[], handler: SlotHandler): void {
    this.#running = this.run(instances, handler);
  }

  /** Resolves once the run ends: at `toMs`, or after the slot in flight when stopped. */
  async done(): Promise<{ readonly slots: number }> {
    return (await this.#running) ?? { slots: 0 };
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#running;
  }
}
