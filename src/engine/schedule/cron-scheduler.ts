import { type ScheduledTask, createTask } from 'node-cron';
import type { CronSchedule } from './cron.ts';
import { FirstOccurrence, SLOT_LATE_TOLERANCE_MS } from './first-occurrence.ts';
import type { ScheduledInstance, Scheduler, SlotHandler } from './scheduler.ts';
import { ClockChanges, type RepeatedWallTimes } from './clock-changes.ts';

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
  /**
   * Wall times of the instance's schedule that its zone skips (the hour the clocks go forward),
   * which have no slot: told once per change, when the next slot after them is worked out (at
   * start, or at the fire before), so a slot that never runs is not lost without a word.
   */
  readonly onSkippedByClockChange?: (instance: string, skipped: NonNullable<ReturnType<CronSchedule['skippedBetween']>>, schedule: CronSchedule) => void;
  /**
   * Wall times of the instance's schedule that its zone repeats (the hour the clocks go back),
   * which run at their first occurrence only: told once per change, as skipped ones are, so an
   * hour without slots is not a surprise.
   */
  readonly onRepeatedByClockChange?: (instance: string, repeated: RepeatedWallTimes, schedule: CronSchedule) => void;
}

/**
 * The live and dry-run scheduler: one node-cron task per instance, in its time zone, with
 * `noOverlap` (a slow slot makes node-cron skip the next fire, which the engine journals as
 * missed, instead of running two slots of one instance at once).
 *
 * The handler gets the scheduled slot time, not the moment node-cron fired (a few ms later, or
 * more on a busy machine): node-cron's context `date` is the matched second, and the clientOrderId
 * and the journal key derive from it, so a late fire still maps to its slot.
 *
 * A wall time the autumn change repeats runs at its first occurrence, as the schedule (and so a
 * backtest) says, whichever node-cron picks: FirstOccurrence fires it where node-cron would an
 * hour later, and node-cron's fire or missed report at the repeated instant is dropped.
 */
export class CronScheduler implements Scheduler {
  readonly #options: CronSchedulerOptions;
  readonly #tasks: ScheduledTask[] = [];
  readonly #firsts: FirstOccurrence[] = [];
  readonly #inFlight = new Set<Promise<void>>();
  /** Per instance, its slots running now (node-cron's, or FirstOccurrence's). */
  readonly #busy = new Map<string, number>();
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
          first.arm();
          clockChanges.look(Date.now());
          const slotTimeMs = wholeSecond(context.date);
          // The repeated instant of a slot that ran at its first occurrence, or fell before the start (catch-up's).
          if (!schedule.matches(slotTimeMs)) return undefined;
          return this.#run(instance, slotTimeMs, handler);
        },
        { timezone: schedule.timezone, name: instance, noOverlap: true, suppressMissedWarning: true, missedExecutionTolerance: SLOT_LATE_TOLERANCE_MS, logger: this.#cronLogger() },
      );
      const missed = (reason: string, kind: 'missed' | 'overlap') => (context: { date: Date }) => {
        first.arm();
        const slotTimeMs = wholeSecond(context.date);
        if (schedule.matches(slotTimeMs)) this.#options.onMissed?.(instance, slotTimeMs, reason, kind);
      };
      task.on('execution:overlap', missed(OVERLAP_REASON, 'overlap'));
      task.on('execution:missed', missed(MISSED_REASON, 'missed'));
      const clockChanges = new ClockChanges(schedule, {
        skipped: (wallTimes) => this.#options.onSkippedByClockChange?.(instance, wallTimes, schedule),
        repeated: (wallTimes) => this.#options.onRepeatedByClockChange?.(instance, wallTimes, schedule),
      });
      const first = new FirstOccurrence(schedule, () => task.getNextRun(), {
        due: (slotTimeMs) => {
          clockChanges.look(Date.now());
          if (!this.#stopped) void this.#run(instance, slotTimeMs, handler);
        },
        late: (slotTimeMs) => this.#options.onMissed?.(instance, slotTimeMs, MISSED_REASON, 'missed'),
      });
      void task.start();
      first.arm();
      clockChanges.look(Date.now());
      this.#tasks.push(task);
      this.#firsts.push(first);
    }
  }

  #run(instance: string, slotTimeMs: number, handler: SlotHandler): Promise<void> | undefined {
    // node-cron's noOverlap sees its own runs only, not FirstOccurrence's: the instance's count sees both.
    if (this.#busy.has(instance)) {
      this.#options.onMissed?.(instance, slotTimeMs, OVERLAP_REASON, 'overlap');
      return undefined;
    }
    this.#busy.set(instance, (this.#busy.get(instance) ?? 0) + 1);
    const run = handler(instance, slotTimeMs)
      .catch(() => undefined)
      .finally(() => {
        const left = (this.#busy.get(instance) ?? 1) - 1;
        if (left > 0) this.#busy.set(instance, left);
        else this.#busy.delete(instance);
      });
    this.#inFlight.add(run);
    return run.finally(() => this.#inFlight.delete(run));
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
    for (const first of this.#firsts.splice(0)) first.stop();
    await Promise.all(this.#tasks.splice(0).map(async (task) => task.destroy()));
    await Promise.all([...this.#inFlight]);
  }
}

const OVERLAP_REASON = 'the previous slot of this instance was still running (noOverlap)';
const MISSED_REASON = "its time passed without it firing: the process was paused or too busy, or this machine's clock stepped forward past it";

/** node-cron's date is the matched second; a slot is whole seconds. */
function wholeSecond(date: Date): number {
  return Math.floor(date.getTime() / 1000) * 1000;
}
