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
 * Changing the time zone of an instance starts new periods: spending recorded under the old
 * zone's periods is not carried over.
 */
export function periodStarts(atMs: number, timeZone: string): PeriodStarts {
  if (!Number.isSafeInteger(atMs)) throw new StoreError('invalid-argument', `atMs must be an integer of milliseconds (got ${atMs})`);
  const local = civilAt(atMs, timeZone);
  const weekday = new Date(Date.UTC(local.year, local.month - 1, local.day)).getUTCDay();
  const daysSinceMonday = (weekday + 6) % 7;
  const monday = new Date(Date.UTC(local.year, local.month - 1, local.day - daysSinceMonday));
  return {
    day: startOfLocalDay(local.year, local.month, local.day, timeZone),
    week: startOfLocalDay(monday.getUTCFullYear(), monday.getUTCMonth() + 1, monday.getUTCDate(), timeZone),
    month: startOfLocalDay(local.year, local.month, 1, timeZone),
  };
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
function startOfLocalDay(year: number, month: number, day: number, timeZone: string): number {
  const midnightAsUtc = Date.UTC(year, month - 1, day);
  let best: number | null = null;
  for (const probe of [midnightAsUtc - 36 * HOUR_MS, midnightAsUtc - 12 * HOUR_MS, midnightAsUtc, midnightAsUtc + 12 * HOUR_MS, midnightAsUtc + 36 * HOUR_MS]) {
    const candidate = midnightAsUtc - offsetAt(probe, timeZone);
    const c = civilAt(candidate, timeZone);
    if (c.year === year && c.month === month && c.day === day && (best === null || candidate < best)) best = candidate;
  }
  if (best === null) throw new StoreError('invalid-argument', `cannot find the start of ${year}-${month}-${day} in ${timeZone}`);
  return best;
}
