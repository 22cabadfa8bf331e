import { type LocalParts, isValidTimezone, localParts } from '../domain/zone.ts';
import { StoreError } from './errors.ts';
import type { PeriodStarts } from './journal.ts';

/**
 * Budget periods are calendar periods on the wall clock of one IANA time zone (the instance's
 * TIMEZONE, `UTC` by default): the day starts at local midnight, the week on Monday (ISO 8601),
 * the month on the 1st. A period is stored by the instant (Unix ms) it starts, so the key of a
 * period never depends on how it is printed.
 *
 * Where a DST change skips midnight (spring forward at 00:00), the day starts at the first
 * instant that exists; where midnight happens twice (fall back across it), at the first one.
 * Changing the time zone of an instance does not start its spending over: the new zone's
 * periods count every reservation whose instant falls in them, whichever zone it was made under
 * (see periodWindows and the journals' budget reads).
 */
export function periodStarts(atMs: number, timeZone: string): PeriodStarts {
  return periodWindows(atMs, timeZone).starts;
}

/** A period's instants: from `starts` (inclusive) to `ends` (exclusive, the next period's start). */
export interface PeriodWindows {
  readonly starts: PeriodStarts;
  readonly ends: PeriodStarts;
}

/**
 * The windows of each local day already worked out, by zone and date: finding a local midnight
 * asks the zone database a few dozen times (hundreds of µs outside UTC), and a budget is read
 * several times a slot, always on the same few days. Zone rules do not change while stacker runs.
 */
const windowsByDay = new Map<string, PeriodWindows>();
const MAX_CACHED_DAYS = 4096;

/** The day, week and month around `atMs` in `timeZone`, with where each ends. */
export function periodWindows(atMs: number, timeZone: string): PeriodWindows {
  const { year, month, day, monday } = periodDates(atMs, timeZone);
  const key = `${timeZone}\u0000${year}-${month}-${day}`;
  const known = windowsByDay.get(key);
  if (known !== undefined) return known;
  const windows: PeriodWindows = {
    starts: { day: dayStart(year, month, day, timeZone), week: dayStart(year, month, monday, timeZone), month: dayStart(year, month, 1, timeZone) },
    ends: { day: dayStart(year, month, day + 1, timeZone), week: dayStart(year, month, monday + 7, timeZone), month: dayStart(year, month + 1, 1, timeZone) },
  };
  if (windowsByDay.size >= MAX_CACHED_DAYS) windowsByDay.clear();
  windowsByDay.set(key, windows);
  return windows;
}

/** The local date at `atMs`, and the day of that month its week's Monday falls on (0 or less: in the month before). */
function periodDates(atMs: number, timeZone: string): { year: number; month: number; day: number; monday: number } {
  if (!Number.isSafeInteger(atMs)) throw new StoreError('invalid-argument', `atMs must be an integer of milliseconds (got ${atMs})`);
  const local = civilAt(atMs, timeZone);
  const weekday = new Date(Date.UTC(local.year, local.month - 1, local.day)).getUTCDay();
  return { year: local.year, month: local.month, day: local.day, monday: local.day - ((weekday + 6) % 7) };
}

/** The first instant of a local date given with day or month out of range (the 0th, the 32nd, month 13): Date.UTC carries them over. */
function dayStart(year: number, month: number, day: number, timeZone: string): number {
  const date = new Date(Date.UTC(year, month - 1, day));
  return startOfLocalDay(date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate(), timeZone);
}

/** Throws StoreError('invalid-argument') unless the runtime knows the zone. */
export function checkTimeZone(timeZone: string): void {
  if (!isValidTimezone(timeZone)) throw new StoreError('invalid-argument', `unknown time zone ${JSON.stringify(timeZone)}: use an IANA name such as UTC or Europe/Berlin`);
}

type Civil = LocalParts;

const HOUR_MS = 3_600_000;
/** The wall-clock date and time in `timeZone` at an instant (shared zone arithmetic: src/domain/zone.ts). */
function civilAt(atMs: number, timeZone: string): Civil {
  checkTimeZone(timeZone);
  return localParts(atMs, timeZone);
}

/** Local time minus UTC at an instant, in ms (e.g. +3_600_000 for CET). */
function offsetAt(atMs: number, timeZone: string): number {
  const c = civilAt(atMs, timeZone);
  const wallAsUtc = Date.UTC(c.year, c.month - 1, c.day, c.hour, c.minute, c.second);
  return wallAsUtc - Math.floor(atMs / 1000) * 1000;
}

/**
 * The first instant whose local date is year-month-day. Local midnight is `midnightAsUtc -
 * offset`, for whichever offset is in force then; trying the offsets in force around that day
 * and keeping the earliest candidate that falls on the day covers DST changes at any hour.
 */
function startOfLocalDay(year: number, month: number, day: number, timeZone: string, skipped = 0): number {
  const midnightAsUtc = Date.UTC(year, month - 1, day);
  let best: number | null = null;
  for (const probe of [midnightAsUtc - 36 * HOUR_MS, midnightAsUtc - 12 * HOUR_MS, midnightAsUtc, midnightAsUtc + 12 * HOUR_MS, midnightAsUtc + 36 * HOUR_MS]) {
    const candidate = midnightAsUtc - offsetAt(probe, timeZone);
    const c = civilAt(candidate, timeZone);
    if (c.year === year && c.month === month && c.day === day && (best === null || candidate < best)) best = candidate;
  }
  if (best !== null) return best;
  // A date the zone skipped whole (Pacific/Apia's 2011-12-30, when it crossed the date line)
  // begins where the next date that exists does: the day before it ends there.
  if (skipped < 2) {
    const next = new Date(Date.UTC(year, month - 1, day + 1));
    return startOfLocalDay(next.getUTCFullYear(), next.getUTCMonth() + 1, next.getUTCDate(), timeZone, skipped + 1);
  }
  throw new StoreError('invalid-argument', `cannot find the start of ${year}-${month}-${day} in ${timeZone}`);
}
