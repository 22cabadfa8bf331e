/**
 * Wall-clock arithmetic in an IANA time zone, on the runtime's Intl data (no library: the zone
 * rules ship with Node). UTC takes a fast path: backtests usually run in it.
 */
export interface LocalParts {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

const isUtc = (timezone: string): boolean => timezone === 'UTC' || timezone === 'Etc/UTC';

function formatter(timezone: string): Intl.DateTimeFormat {
  let found = formatters.get(timezone);
  if (found === undefined) {
    found = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      calendar: 'gregory',
      numberingSystem: 'latn',
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timezone, found);
  }
  return found;
}

export function isValidTimezone(timezone: string): boolean {
  if (timezone.trim() === '') return false;
  // Checking a zone makes a formatter, and the first formatter loads the zone data (~20 ms of a
  // backtest's start); UTC needs neither, here or in localParts.
  if (isUtc(timezone)) return true;
  try {
    formatter(timezone);
    return true;
  } catch {
    return false;
  }
}

/** A fixed UTC offset written as one ("+02:00", "-0500"): Intl takes it for a zone, one without daylight saving. */
const FIXED_OFFSET = /^[+-]\d/;

/**
 * Why `timezone` cannot be a setting's zone, or null when it can: an IANA name, in any case. A
 * fixed offset works as a zone but keeps no daylight saving, which whoever typed +02:00 for
 * Berlin did not mean; Etc/GMT-2 says a fixed offset on purpose.
 */
export function timezoneProblem(timezone: string): string | null {
  if (FIXED_OFFSET.test(timezone.trim())) return `is a fixed UTC offset, which keeps no daylight saving: give the zone's IANA name, such as Europe/Berlin (Etc/GMT-2 is a fixed offset on purpose) (got ${JSON.stringify(timezone)})`;
  if (!isValidTimezone(timezone)) return `must be an IANA time zone such as UTC or Europe/Berlin (got ${JSON.stringify(timezone)})`;
  return null;
}

/** An accepted zone as the zone data spells it ("europe/berlin" is Europe/Berlin): what the status page, check and the journal then show. */
export function canonicalTimezone(timezone: string): string {
  if (isUtc(timezone)) return timezone;
  try {
    return formatter(timezone).resolvedOptions().timeZone;
  } catch {
    return timezone;
  }
}

/** How far the zone's wall clock is ahead of UTC at an instant (whole seconds). */
export function utcOffsetMs(atMs: number, timezone: string): number {
  const parts = localParts(atMs, timezone);
  return Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second) - Math.floor(atMs / 1000) * 1000;
}

/** The local calendar fields of an instant. */
export function localParts(utcMs: number, timezone: string): LocalParts {
  if (isUtc(timezone)) {
    const d = new Date(utcMs);
    return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes(), second: d.getUTCSeconds() };
  }
  const out = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0 };
  for (const part of formatter(timezone).formatToParts(new Date(utcMs))) {
    if (part.type in out) out[part.type as keyof typeof out] = Number(part.value);
  }
  return out;
}

/**
 * The instant a local wall time names, or null when the zone skips it (the hour lost when
 * daylight saving starts). A wall time that happens twice (the hour repeated when it ends)
 * gives the earlier instant, so a slot in it runs once.
 */
export function localToUtc(parts: LocalParts, timezone: string): number | null {
  const wall = Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second);
  if (isUtc(timezone)) return wall;
  const offsetAt = (utcMs: number): number => {
    const p = localParts(utcMs, timezone);
    return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - Math.floor(utcMs / 1000) * 1000;
  };
  // The two offsets in force around this wall time (they differ only near a transition).
  const early = wall - offsetAt(wall - 86_400_000);
  const late = wall - offsetAt(wall + 86_400_000);
  const candidates = [Math.min(early, late), Math.max(early, late)];
  for (const utc of candidates) {
    const back = localParts(utc, timezone);
    if (back.year === parts.year && back.month === parts.month && back.day === parts.day && back.hour === parts.hour && back.minute === parts.minute && back.second === parts.second) {
      return utc;
    }
  }
  return null;
}

/** The calendar day after (or before, with -1) a date, as plain fields. */
export function shiftDay(year: number, month: number, day: number, by: 1 | -1): { year: number; month: number; day: number } {
  const d = new Date(Date.UTC(year, month - 1, day + by));
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

/** A wall time as people read it: `2026-03-29 02:30` (seconds only when the schedule has them). */
export function wallTimeText(parts: LocalParts, withSeconds: boolean): string {
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `${parts.year}-${pad(parts.month)}-${pad(parts.day)} ${pad(parts.hour)}:${pad(parts.minute)}${withSeconds ? `:${pad(parts.second)}` : ''}`;
}
