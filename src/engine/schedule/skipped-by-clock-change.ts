import { type LocalParts, localParts, wallTimeText } from '../../domain/zone.ts';
import type { CronSchedule } from './cron.ts';

/** Wall times of a schedule its zone skipped (CronSchedule.skippedBetween): how many, and the first. */
type Skipped = NonNullable<ReturnType<CronSchedule['skippedBetween']>>;

const DAY_MS = 86_400_000;

/**
 * A wall time the zone skips when its clocks go forward has no slot (CronSchedule), so nothing
 * fires for it: a live daemon lost it without a trace, where a backtest reports it. Asked
 * whenever the schedule's next slot is worked out again (at start, after each fire), this tells
 * of the wall times the next change of clocks before that slot skips, once per change, before
 * its time.
 */
export class SkippedByClockChange {
  readonly #schedule: CronSchedule;
  readonly #tell: (skipped: Skipped) => void;
  /** Up to here the schedule was looked over; null before the first look. */
  #lookedToMs: number | null = null;
  /** The local date of the last change told. */
  #toldDate: string | null = null;

  constructor(schedule: CronSchedule, tell: (skipped: Skipped) => void) {
    this.#schedule = schedule;
    this.#tell = tell;
  }

  look(nowMs: number): void {
    const nextMs = this.#schedule.next(nowMs);
    if (this.#lookedToMs !== null && nextMs <= this.#lookedToMs) return;
    const fromMs = this.#lookedToMs ?? nowMs;
    this.#lookedToMs = nextMs;
    // Whether the clocks go forward is two readings of the offset a day: searching the schedule's
    // wall times for skipped ones costs a whole day's of them, and a schedule every second looks
    // each second. Zones change their clocks months apart: a day holds one change at most.
    for (let fromDayMs = fromMs; fromDayMs < nextMs; fromDayMs += DAY_MS) {
      const toDayMs = Math.min(fromDayMs + DAY_MS, nextMs);
      if (offsetMs(toDayMs, this.#schedule.timezone) > offsetMs(fromDayMs, this.#schedule.timezone)) this.#changeBetween(fromDayMs, toDayMs);
    }
  }

  #changeBetween(fromMs: number, toMs: number): void {
    // Days around it, not the window alone: a skipped wall time read at either offset may fall
    // before the change's instant, and the line tells all of them.
    const skipped = this.#schedule.skippedBetween(fromMs - 2 * DAY_MS, toMs + 2 * DAY_MS);
    if (skipped === null) return;
    const date = wallTimeText(skipped.first, false).slice(0, 10);
    if (date === this.#toldDate) return;
    this.#toldDate = date;
    this.#tell(skipped);
  }
}

/** How far the zone's wall clock is ahead of UTC at an instant. */
function offsetMs(atMs: number, timezone: string): number {
  const parts: LocalParts = localParts(atMs, timezone);
  return Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second) - Math.floor(atMs / 1000) * 1000;
}
