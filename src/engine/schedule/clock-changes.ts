import { type LocalParts, localParts, utcOffsetMs, wallTimeText } from '../../domain/zone.ts';
import type { CronSchedule } from './cron.ts';

/** Wall times of a schedule its zone skipped (CronSchedule.skippedBetween): how many, and the first. */
export type SkippedWallTimes = NonNullable<ReturnType<CronSchedule['skippedBetween']>>;

/** The wall times of a schedule that the clocks going back bring round again, with no slot the second time. */
export interface RepeatedWallTimes {
  /** Slots of the schedule in the span the clocks go back over: each runs at its first occurrence only. */
  readonly count: number;
  /** The first such wall time. */
  readonly first: LocalParts;
  /** How long the second pass of those wall times lasts, in ms: the time with none of them. */
  readonly spanMs: number;
}

export interface ClockChangeListener {
  /** The clocks go forward and skip these wall times, which have no slot. */
  readonly skipped: (wallTimes: SkippedWallTimes) => void;
  /** The clocks go back and bring these wall times round again, which run at their first occurrence only. */
  readonly repeated: (wallTimes: RepeatedWallTimes) => void;
}

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;
/** The most slots counted in one repeated span (a schedule every second has 3600 in an hour). */
const COUNTED_AT_MOST = 7200;

/**
 * What the changes of clocks do to a live schedule, told before it happens. A wall time the zone
 * skips going forward has no slot, and one it repeats going back is one slot, at its first
 * occurrence (CronSchedule): a live daemon would lose a slot without a trace, or a per-minute
 * DCA go quiet for an hour each autumn, where a backtest reports the skipped ones. Asked
 * whenever the schedule's next slot is worked out again (at start, after each fire), this tells
 * of the next change before that slot, once per change, when the schedule has wall times it touches.
 */
export class ClockChanges {
  readonly #schedule: CronSchedule;
  readonly #tell: ClockChangeListener;
  /** Up to here the schedule was looked over; null before the first look. */
  #lookedToMs: number | null = null;
  /** The local date of the last skipped wall times told. */
  #toldSkippedDate: string | null = null;
  /** The instant of the last change back told. */
  #toldBackAtMs: number | null = null;

  constructor(schedule: CronSchedule, tell: ClockChangeListener) {
    this.#schedule = schedule;
    this.#tell = tell;
  }

  look(nowMs: number): void {
    const nextMs = this.#schedule.next(nowMs);
    if (this.#lookedToMs !== null && nextMs <= this.#lookedToMs) return;
    const fromMs = this.#lookedToMs ?? nowMs;
    this.#lookedToMs = nextMs;
    // Whether the clocks change is two readings of the offset a day: searching the schedule's
    // wall times costs a whole day's of them, and a schedule every second looks each second.
    // Zones change their clocks months apart: a day holds one change at most.
    const zone = this.#schedule.timezone;
    for (let fromDayMs = fromMs; fromDayMs < nextMs; fromDayMs += DAY_MS) {
      const toDayMs = Math.min(fromDayMs + DAY_MS, nextMs);
      const before = utcOffsetMs(fromDayMs, zone);
      const after = utcOffsetMs(toDayMs, zone);
      if (after > before) this.#forwardBetween(fromDayMs, toDayMs);
      else if (after < before) this.#backBetween(fromDayMs, toDayMs, before - after);
    }
  }

  #forwardBetween(fromMs: number, toMs: number): void {
    // Days around it, not the window alone: a skipped wall time read at either offset may fall
    // before the change's instant, and the line tells all of them.
    const skipped = this.#schedule.skippedBetween(fromMs - 2 * DAY_MS, toMs + 2 * DAY_MS);
    if (skipped === null) return;
    const date = wallTimeText(skipped.first, false).slice(0, 10);
    if (date === this.#toldSkippedDate) return;
    this.#toldSkippedDate = date;
    this.#tell.skipped(skipped);
  }

  #backBetween(fromMs: number, toMs: number, spanMs: number): void {
    // The change's instant: zones change at a whole minute, the first at the later offset,
    // found by halving the day between the last whole minute at the earlier offset and `toMs`.
    const zone = this.#schedule.timezone;
    const before = utcOffsetMs(fromMs, zone);
    let low = fromMs - (fromMs % MINUTE_MS);
    let high = toMs;
    while (high - low > MINUTE_MS) {
      const middle = low + Math.floor((high - low) / 2 / MINUTE_MS) * MINUTE_MS;
      if (utcOffsetMs(middle, zone) === before) low = middle;
      else high = middle;
    }
    const changeMs = low + MINUTE_MS;
    if (this.#toldBackAtMs === changeMs) return;
    // The first pass through the repeated wall times is the span before the change: its slots are the ones not run again.
    let count = 0;
    let first: number | null = null;
    for (let at = this.#schedule.next(changeMs - spanMs - 1); at < changeMs && count < COUNTED_AT_MOST; at = this.#schedule.next(at)) {
      first ??= at;
      count += 1;
    }
    if (first === null) return;
    this.#toldBackAtMs = changeMs;
    this.#tell.repeated({ count, first: localParts(first, zone), spanMs });
  }
}
