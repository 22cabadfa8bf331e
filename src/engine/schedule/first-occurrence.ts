import type { CronSchedule } from './cron.ts';

/**
 * How late a slot's timer may fire and still run as that slot (node-cron's own default is 1 s).
 * node-cron waits for a slot on a timer, which keeps monotonic time: when this machine's clock
 * steps forward (NTP corrects a slow clock), the timer fires late by the step, and at 1 s a
 * daily slot after a 30 s step was reported missed, its buy lost under CATCH_UP=skip. A fire up
 * to a minute late runs; node-cron still reports a slot missed once the next one is due (it
 * never runs two of an instance for one fire), and a longer pause or step is the catch-up's.
 */
export const SLOT_LATE_TOLERANCE_MS = 60_000;

/** The longest single wait: Node's timers overflow past 24.8 days, and a clock stepped meanwhile is seen again within a day. */
const LONGEST_WAIT_MS = 86_400_000;

export interface FirstOccurrenceEvents {
  /** The slot's time came, its first occurrence: run it. */
  readonly due: (slotTimeMs: number) => void;
  /** The timer woke too late for the slot (the process paused or suspended across it). */
  readonly late: (slotTimeMs: number) => void;
}

/**
 * Fires a schedule's slots that node-cron would fire an hour late. A wall time the autumn change
 * repeats is one slot, at its first occurrence (CronSchedule); node-cron 4 turns a wall time into
 * an instant by the zone's offset at a guess, which lands on the second occurrence east of UTC
 * (Europe/Berlin, Australia/Lord_Howe) and on the first west of it (America/New_York). Where
 * node-cron's next run is later than the schedule's next slot, this timer fires the slot at the
 * schedule's time; node-cron stays the scheduler of every other slot, and its fire at the
 * repeated instant is none of the schedule's (CronSchedule.matches), which the caller drops.
 *
 * `arm` is asked again whenever node-cron fires or reports a slot, and after the timer's own:
 * node-cron's next run changes only then.
 */
export class FirstOccurrence {
  readonly #schedule: CronSchedule;
  readonly #nodeCronNext: () => Date | null;
  readonly #events: FirstOccurrenceEvents;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(schedule: CronSchedule, nodeCronNext: () => Date | null, events: FirstOccurrenceEvents) {
    this.#schedule = schedule;
    this.#nodeCronNext = nodeCronNext;
    this.#events = events;
  }

  arm(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#stopped) return;
    const nowMs = Date.now();
    const slotTimeMs = this.#schedule.next(nowMs);
    const theirs = this.#nodeCronNext()?.getTime() ?? null;
    if (theirs === null || theirs <= slotTimeMs) return;
    const waitMs = slotTimeMs - nowMs;
    if (waitMs > LONGEST_WAIT_MS) {
      this.#timer = setTimeout(() => this.arm(), LONGEST_WAIT_MS);
      return;
    }
    this.#timer = setTimeout(() => this.#wake(slotTimeMs), waitMs);
  }

  #wake(slotTimeMs: number): void {
    this.#timer = undefined;
    if (this.#stopped) return;
    const lateMs = Date.now() - slotTimeMs;
    // Woken early (a clock stepped back meanwhile): the slot is still to come.
    if (lateMs < 0) return this.arm();
    // Late within the tolerance node-cron is given, and before the next slot, as node-cron runs its own.
    if (lateMs <= SLOT_LATE_TOLERANCE_MS && Date.now() < this.#schedule.next(slotTimeMs)) this.#events.due(slotTimeMs);
    else this.#events.late(slotTimeMs);
    this.arm();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
