import { StackerError } from '../../domain/errors.ts';
import { createTask, validateDetailed } from 'node-cron';
import { type LocalParts, localParts, localToUtc, shiftDay, timezoneProblem } from '../../domain/zone.ts';

/**
 * A SCHEDULE in its TIMEZONE, read by node-cron's own parser, so the live scheduler (node-cron)
 * and the virtual one (backtests, catch-up) can never disagree on what an expression means:
 * validity and field values come from node-cron's `validateDetailed`, and whether a day matches
 * (day-of-month AND day-of-week, `L`, `#` tokens, names) is asked of node-cron's matcher. Only
 * the search for the next or previous slot is ours, done field by field rather than second by
 * second, because a seven-year hourly backtest asks for ~60 000 slots.
 *
 * Daylight saving: a slot whose wall time does not exist that day (the hour skipped in spring)
 * does not run; a wall time that happens twice (the hour repeated in autumn) runs once, at the
 * first occurrence.
 */
export interface CronSchedule {
  readonly expression: string;
  readonly timezone: string;
  readonly hasSeconds: boolean;
  /** The first slot strictly after `afterMs`. */
  next(afterMs: number): number;
  /** The last slot at or before `atMs`, or null when there is none in the 366 days before. */
  previous(atMs: number): number | null;
  /** Whether `timeMs` is exactly a slot. */
  matches(timeMs: number): boolean;
  /**
   * The wall times the expression names from `fromMs` to `toMs` that did not exist in the zone
   * (the hour skipped when clocks go forward), which never run: how many, and the first; null
   * when none.
   */
  skippedBetween(fromMs: number, toMs: number): { readonly count: number; readonly first: LocalParts } | null;
}

export interface CronProblem {
  readonly field: 'SCHEDULE' | 'TIMEZONE';
  readonly rule: string;
}

export class CronError extends StackerError {
  readonly code = 'E_CONFIG' as const;
  readonly retryable = false;
  readonly problems: readonly CronProblem[];
  constructor(problems: readonly CronProblem[]) {
    super(problems.map((p) => `${p.field}: ${p.rule}`).join('; '));
    this.name = 'CronError';
    this.problems = problems;
  }
}

const FIELD_NAMES_5 = ['minute', 'hour', 'day-of-month', 'month', 'day-of-week'];
const SEARCH_DAYS = 366 * 8;

/** Every problem with an expression and zone, each naming the field and its rule. */
export function cronProblems(expression: string, timezone: string): CronProblem[] {
  const problems: CronProblem[] = [];
  const text = expression.trim();
  const fields = text === '' ? [] : text.split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6) {
    problems.push({
      field: 'SCHEDULE',
      rule: `must have 5 fields (${FIELD_NAMES_5.join(' ')}) or 6 with seconds first, e.g. "0 9 * * *" (got ${fields.length}: ${JSON.stringify(expression)})`,
    });
  } else {
    const result = validateDetailed(text);
    for (const error of result.errors) {
      problems.push({ field: 'SCHEDULE', rule: `${error.field} field${error.value === undefined ? '' : ` '${error.value}'`} is not valid: ${error.message.replace(/ is a invalid /, ' is an invalid ')}` });
    }
    if (result.valid && problems.length === 0) problems.push(...stepProblems(fields));
    if (result.valid && problems.length === 0 && findNext(build(text, 'UTC'), Date.UTC(2000, 0, 1)) === null) {
      problems.push({ field: 'SCHEDULE', rule: `${JSON.stringify(text)} never falls on a real date (e.g. February 30)` });
    }
  }
  const zone = timezoneProblem(timezone);
  if (zone !== null) problems.push({ field: 'TIMEZONE', rule: zone });
  return problems;
}

/** Each field's name and how many values it has, seconds first (a 5-field expression has none). */
const FIELD_SPANS: ReadonlyArray<{ readonly name: string; readonly span: number; readonly unit: string }> = [
  { name: 'second', span: 60, unit: 'seconds of a minute' },
  { name: 'minute', span: 60, unit: 'minutes of an hour' },
  { name: 'hour', span: 24, unit: 'hours of a day' },
  { name: 'day-of-month', span: 31, unit: 'days of a month' },
  { name: 'month', span: 12, unit: 'months of a year' },
  { name: 'day-of-week', span: 7, unit: 'days of a week' },
];

/**
 * A step no smaller than its field (`*\/70` minutes) is valid cron but matches the first value
 * only: "every 70 minutes" ran once an hour, without a word. Refused, saying what it would do.
 */
function stepProblems(fields: readonly string[]): CronProblem[] {
  const spans = fields.length === 6 ? FIELD_SPANS : FIELD_SPANS.slice(1);
  const problems: CronProblem[] = [];
  fields.forEach((field, i) => {
    const { name, span, unit } = spans[i] as (typeof FIELD_SPANS)[number];
    for (const part of field.split(',')) {
      const step = /^(\*|\d+-\d+)\/(\d+)$/.exec(part);
      if (step === null) continue;
      const range = step[1] === '*' ? span : Number((step[1] as string).split('-')[1]) - Number((step[1] as string).split('-')[0]) + 1;
      if (Number(step[2]) < range) continue;
      problems.push({
        field: 'SCHEDULE',
        rule: `${name} field '${part}': a step of ${step[2]} is not smaller than the ${range} ${step[1] === '*' ? unit : `values of ${step[1]}`}, so it matches the first of them only; cron cannot count across them (every 70 minutes has no cron expression): list the times you want instead`,
      });
    }
  });
  return problems;
}

export function parseCron(expression: string, timezone: string): CronSchedule {
  const problems = cronProblems(expression, timezone);
  if (problems.length > 0) throw new CronError(problems);
  const parsed = build(expression.trim(), timezone);
  return {
    expression: parsed.expression,
    timezone,
    hasSeconds: parsed.hasSeconds,
    next(afterMs) {
      const found = findNext(parsed, afterMs);
      if (found === null) throw new Error(`${parsed.expression} has no slot in the ${SEARCH_DAYS} days after ${new Date(afterMs).toISOString()}`);
      return found;
    },
    previous: (atMs) => findPrevious(parsed, atMs),
    // node-cron's matcher accepts both occurrences of a wall time the autumn change repeats; a
    // slot is only the first (the one next() and previous() name), so the second is asked of them.
    matches: (timeMs) => timeMs % 1000 === 0 && parsed.matcher.match(new Date(timeMs)) && findPrevious(parsed, timeMs) === timeMs,
    skippedBetween: (fromMs, toMs) => findSkipped(parsed, fromMs, toMs),
  };
}

interface Parsed {
  readonly expression: string;
  readonly timezone: string;
  readonly hasSeconds: boolean;
  readonly seconds: readonly number[];
  readonly minutes: readonly number[];
  readonly hours: readonly number[];
  readonly months: ReadonlySet<number>;
  /** node-cron's matcher of the whole expression. */
  readonly matcher: { match(date: Date): boolean };
  /** node-cron's matcher of the day fields alone, at noon (a time that exists every day). */
  readonly dayMatcher: { match(date: Date): boolean };
  /**
   * The day fields as plain numbers when they are (no L, W or # token): node-cron's rule is then
   * day-of-month in the set AND weekday in the set, which needs no calendar formatting; null
   * sends every day to dayMatcher.
   */
  readonly plainDays: { readonly ofMonth: ReadonlySet<number>; readonly ofWeek: ReadonlySet<number> } | null;
  readonly dayCache: Map<number, boolean>;
}

function build(expression: string, timezone: string): Parsed {
  const fields = expression.split(/\s+/);
  const hasSeconds = fields.length === 6;
  const dayFields = fields.slice(hasSeconds ? 3 : 2);
  const result = validateDetailed(expression);
  if (!result.valid || result.fields === undefined) throw new CronError([{ field: 'SCHEDULE', rule: 'is not valid' }]);
  const sorted = (values: readonly number[]): number[] => [...new Set(values)].sort((a, b) => a - b);
  const noop = (): void => {};
  return {
    expression,
    timezone,
    hasSeconds,
    seconds: sorted(result.fields.second),
    minutes: sorted(result.fields.minute),
    hours: sorted(result.fields.hour),
    months: new Set(result.fields.month),
    // createTask builds a stopped task: no timer starts; only its matcher is used.
    matcher: createTask(expression, noop, { timezone }),
    dayMatcher: createTask(`0 0 12 ${dayFields.join(' ')}`, noop, { timezone: 'UTC' }),
    plainDays: plainDays(result.fields.dayOfMonth, result.fields.dayOfWeek),
    dayCache: new Map(),
  };
}

function plainDays(ofMonth: ReadonlyArray<number | string>, ofWeek: ReadonlyArray<number | string>): Parsed['plainDays'] {
  const numbers = (values: ReadonlyArray<number | string>): values is readonly number[] => values.every((value) => typeof value === 'number');
  return numbers(ofMonth) && numbers(ofWeek) ? { ofMonth: new Set(ofMonth), ofWeek: new Set(ofWeek) } : null;
}

function dayMatches(parsed: Parsed, year: number, month: number, day: number): boolean {
  if (!parsed.months.has(month)) return false;
  if (parsed.plainDays !== null) {
    return parsed.plainDays.ofMonth.has(day) && parsed.plainDays.ofWeek.has(new Date(Date.UTC(year, month - 1, day)).getUTCDay());
  }
  const key = year * 10_000 + month * 100 + day;
  let hit = parsed.dayCache.get(key);
  if (hit === undefined) {
    // The day fields only depend on the calendar date, so asking at UTC noon of that date is exact.
    hit = parsed.dayMatcher.match(new Date(Date.UTC(year, month - 1, day, 12)));
    if (parsed.dayCache.size > 4096) parsed.dayCache.clear();
    parsed.dayCache.set(key, hit);
  }
  return hit;
}

const secondsOfDay = (p: { hour: number; minute: number; second: number }): number => p.hour * 3600 + p.minute * 60 + p.second;

function findNext(parsed: Parsed, afterMs: number): number | null {
  const start = localParts(afterMs, parsed.timezone);
  let { year, month, day } = start;
  for (let i = 0; i < SEARCH_DAYS; i += 1) {
    if (dayMatches(parsed, year, month, day)) {
      const bound = i === 0 ? secondsOfDay(start) : -1;
      for (const hour of parsed.hours) {
        if (hour * 3600 + 3599 < bound) continue;
        for (const minute of parsed.minutes) {
          if (hour * 3600 + minute * 60 + 59 < bound) continue;
          for (const second of parsed.seconds) {
            // Local times can repeat around DST, so compare instants, not wall clocks.
            if (hour * 3600 + minute * 60 + second < bound) continue;
            const utc = localToUtc({ year, month, day, hour, minute, second } satisfies LocalParts, parsed.timezone);
            if (utc !== null && utc > afterMs) return utc;
          }
        }
      }
    }
    ({ year, month, day } = shiftDay(year, month, day, 1));
  }
  return null;
}

const DAY_MS = 86_400_000;

/**
 * Wall times of the expression that a zone skipped (see CronSchedule.skippedBetween). Only the
 * days around a change of offset are searched: one shorter than 24 h between two noons (noon
 * exists on every day a zone changes its clocks at night). A zone without such changes costs a
 * pass over the days, a noon each.
 */
function findSkipped(parsed: Parsed, fromMs: number, toMs: number): { count: number; first: LocalParts } | null {
  if (toMs <= fromMs) return null;
  const noon = (d: { year: number; month: number; day: number }): number | null => localToUtc({ ...d, hour: 12, minute: 0, second: 0 }, parsed.timezone);
  const start = localParts(fromMs, parsed.timezone);
  const end = localParts(toMs, parsed.timezone);
  const endKey = end.year * 10_000 + end.month * 100 + end.day;
  let day = { year: start.year, month: start.month, day: start.day };
  let previousNoon = noon(shiftDay(day.year, day.month, day.day, -1));
  let count = 0;
  let first: LocalParts | null = null;
  const checked = new Set<number>();
  for (let i = 0; i < 366 * 100 && day.year * 10_000 + day.month * 100 + day.day <= endKey; i += 1) {
    const thisNoon = noon(day);
    if (previousNoon !== null && thisNoon !== null && thisNoon - previousNoon < DAY_MS) {
      // The clocks went forward between yesterday's noon and today's: the skipped hour is on one of the two days.
      for (const d of [shiftDay(day.year, day.month, day.day, -1), day]) {
        const key = d.year * 10_000 + d.month * 100 + d.day;
        if (checked.has(key) || !dayMatches(parsed, d.year, d.month, d.day)) continue;
        checked.add(key);
        for (const hour of parsed.hours) {
          if (wholeHourExists(d, hour, parsed.timezone)) continue;
          for (const minute of parsed.minutes) {
            for (const second of parsed.seconds) {
              const wall: LocalParts = { ...d, hour, minute, second };
              if (localToUtc(wall, parsed.timezone) !== null) continue;
              // Within the period: the wall time read at the offset in force after the change.
              const offsetMs = Date.UTC(day.year, day.month - 1, day.day, 12) - thisNoon;
              const around = Date.UTC(d.year, d.month - 1, d.day, hour, minute, second) - offsetMs;
              if (around < fromMs || around > toMs) continue;
              count += 1;
              first ??= wall;
            }
          }
        }
      }
    }
    previousNoon = thisNoon;
    day = shiftDay(day.year, day.month, day.day, 1);
  }
  return first === null ? null : { count, first };
}

/**
 * Whether every second of an hour of a date exists in the zone: its first and last do, 3599 s
 * apart. A gap inside it would bring them closer (a repeat would part them). Asked before each of
 * the hour's seconds is: a schedule every second has 86 400 a day, and the live scheduler asks
 * on the day before each change of clocks (SkippedByClockChange).
 */
function wholeHourExists(date: { year: number; month: number; day: number }, hour: number, timezone: string): boolean {
  const start = localToUtc({ ...date, hour, minute: 0, second: 0 }, timezone);
  const end = localToUtc({ ...date, hour, minute: 59, second: 59 }, timezone);
  return start !== null && end !== null && end - start === 3_599_000;
}

function findPrevious(parsed: Parsed, atMs: number): number | null {
  const start = localParts(atMs, parsed.timezone);
  let { year, month, day } = start;
  const hours = [...parsed.hours].reverse();
  const minutes = [...parsed.minutes].reverse();
  const seconds = [...parsed.seconds].reverse();
  for (let i = 0; i < 367; i += 1) {
    if (dayMatches(parsed, year, month, day)) {
      const bound = i === 0 ? secondsOfDay(start) : 86_400;
      for (const hour of hours) {
        if (hour * 3600 > bound) continue;
        for (const minute of minutes) {
          if (hour * 3600 + minute * 60 > bound) continue;
          for (const second of seconds) {
            if (hour * 3600 + minute * 60 + second > bound) continue;
            const utc = localToUtc({ year, month, day, hour, minute, second }, parsed.timezone);
            if (utc !== null && utc <= atMs) return utc;
          }
        }
      }
    }
    ({ year, month, day } = shiftDay(year, month, day, -1));
  }
  return null;
}
