import { type ScheduledTask, createTask } from 'node-cron';
import type { ScheduledInstance, Scheduler, SlotHandler } from './scheduler.ts';

export interface CronSchedulerOptions {
  /**
   * node-cron skipped a slot: `missed`, its time passed without it firing (the process paused,
   * suspended or blocked past node-cron's tolerance, or the clock stepped forward); `overlap`, the
   * instance's previous slot still ran.
   */
  readonly onMissed?: (instance: string, slotTimeMs: number, reason: string, kind: 'missed' | 'overlap') => void;
  /**
   * node-cron's own log lines. It writes them to the console, coloured, which broke the daemon's
   * JSON log; what they say (a slot skipped by overlap, or missed) is reported by onMissed.
   */
  readonly onCronLog?: (level: 'info' | 'warn' | 'error' | 'debug', message: string) => void;
}

/**
 * How late a slot's timer may fire and still run as that slot (node-cron's own default is 1 s).
 * node-cron waits for a slot on a timer, which keeps monotonic time: when this machine's clock
 * steps forward (NTP corrects a slow clock), the timer fires late by the step, and at 1 s a
 * daily slot after a 30 s step was reported missed, its buy lost under CATCH_UP=skip. A fire up
 * to a minute late runs; node-cron still reports a slot missed once the next one is due (it
 * never runs two of an instance for one fire), and a longer pause or step is the catch-up's.
 */
export const SLOT_LATE_TOLERANCE_MS = 60_000;

/**
 * The live and dry-run scheduler: one node-cron task per instance, in its time zone, with
 * `noOverlap` (a slow slot makes node-cron skip the next fire, which the engine journals as
 * missed, instead of running two slots of one instance at once).
 *
 * The handler gets the scheduled slot time, not the moment node-cron fired (a few ms later, or
 * more on a busy machine): node-cron's context `date` is the matched second, and the clientOrderId
 * and the journal key derive from it, so a late fire still maps to its slot.
 */
export class CronScheduler implements Scheduler {
  readonly #options: CronSchedulerOptions;
  readonly #tasks: ScheduledTask[] = [];
  readonly #inFlight = new Set<Promise<void>>();
  #stopped = false;

  constructor(options: CronSchedulerOptions = {}) {
    this.#options = options;
  }

  start(instances: readonly ScheduledInstance[], handler: SlotHandler): void {
    if (this.#stopped) throw new Error('a stopped scheduler cannot start again');
    for (const { instance, schedule } of instances) {
      const task = createTask(
        schedule.expression,
        (context) => {
          if (this.#stopped) return undefined;
          const slotTimeMs = slotOf(schedule, context.date.getTime());
          const run = handler(instance, slotTimeMs).catch(() => undefined);
          this.#inFlight.add(run);
          return run.finally(() => this.#inFlight.delete(run));
        },
        { timezone: schedule.timezone, name: instance, noOverlap: true, suppressMissedWarning: true, missedExecutionTolerance: SLOT_LATE_TOLERANCE_MS, logger: this.#cronLogger() },
      );
      const missed = (reason: string, kind: 'missed' | 'overlap') => (context: { date: Date }) => {
        this.#options.onMissed?.(instance, slotOf(schedule, context.date.getTime()), reason, kind);
      };
      task.on('execution:overlap', missed('the previous slot of this instance was still running (noOverlap)', 'overlap'));
      task.on('execution:missed', missed("its time passed without it firing: the process was paused or too busy, or this machine's clock stepped forward past it", 'missed'));
      void task.start();
      this.#tasks.push(task);
    }
  }

  #cronLogger(): { info(message: string): void; warn(message: string): void; error(message: string | Error): void; debug(message: string | Error): void } {
    const tell = this.#options.onCronLog ?? (() => undefined);
    const text = (message: string | Error): string => (message instanceof Error ? message.message : message);
    return {
      info: (message) => tell('info', message),
      warn: (message) => tell('warn', message),
      error: (message) => tell('error', text(message)),
      debug: (message) => tell('debug', text(message)),
    };
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await Promise.all(this.#tasks.splice(0).map(async (task) => task.destroy()));
    await Promise.all([...this.#inFlight]);
  }
}

/** node-cron's date is the matched second; a slot is whole seconds, the schedule's own. */
function slotOf(schedule: { matches(ms: number): boolean; previous(ms: number): number | null }, firedMs: number): number {
  const second = Math.floor(firedMs / 1000) * 1000;
  if (schedule.matches(second)) return second;
  return schedule.previous(firedMs) ?? second;
}
