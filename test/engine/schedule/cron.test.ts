import fc from 'fast-check';
import { createTask } from 'node-cron';
import { describe, expect, it } from 'vitest';
import { cronProblems, parseCron } from '../../../src/engine/schedule/cron.ts';

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

describe('cron schedules', () => {
  it('finds the next and previous slot of a daily schedule in UTC', () => {
    const daily = parseCron('0 9 * * *', 'UTC');
    expect(iso(daily.next(Date.UTC(2026, 10, 22, 8, 59, 59)))).toBe('2026-11-22T09:00:00.000Z');
    expect(iso(daily.next(Date.UTC(2026, 10, 22, 9)))).toBe('2026-11-23T09:00:00.000Z');
    expect(iso(daily.previous(Date.UTC(2026, 10, 22, 9)))).toBe('2026-11-22T09:00:00.000Z');
    expect(iso(daily.previous(Date.UTC(2026, 10, 22, 8, 59)))).toBe('2026-11-21T09:00:00.000Z');
    expect(daily.matches(Date.UTC(2026, 10, 22, 9))).toBe(true);
    expect(daily.matches(Date.UTC(2026, 10, 22, 9, 0, 0, 1))).toBe(false);
  });

  it('reads six fields as seconds first', () => {
    const everySecond = parseCron('* * * * * *', 'UTC');
    expect(everySecond.hasSeconds).toBe(true);
    expect(everySecond.next(1_000_500)).toBe(1_001_000);
    expect(iso(parseCron('*/15 * * * * *', 'UTC').next(Date.UTC(2026, 0, 1, 0, 0, 14)))).toBe('2026-01-01T00:00:15.000Z');
  });

  it('follows node-cron: day-of-month AND day-of-week, names, L', () => {
    // node-cron 4 requires both day fields to match (not the classic Vixie OR).
    expect(iso(parseCron('0 9 13 * FRI', 'UTC').next(Date.UTC(2026, 0, 1)))).toBe('2026-02-13T09:00:00.000Z');
    expect(iso(parseCron('0 0 L * *', 'UTC').next(Date.UTC(2026, 1, 1)))).toBe('2026-02-28T00:00:00.000Z');
    expect(iso(parseCron('30 8 * * MON-FRI', 'UTC').next(Date.UTC(2026, 10, 21, 12)))).toBe('2026-11-23T08:30:00.000Z');
  });

  it('reads the schedule in its time zone, across daylight-saving changes', () => {
    const berlin = parseCron('0 9 * * *', 'Europe/Berlin');
    expect(iso(berlin.next(Date.UTC(2026, 0, 10)))).toBe('2026-01-10T08:00:00.000Z');
    expect(iso(berlin.next(Date.UTC(2026, 6, 10)))).toBe('2026-07-10T07:00:00.000Z');
    // 02:30 does not exist on 2026-03-29 in Berlin: that day has no slot.
    const skipped = parseCron('30 2 * * *', 'Europe/Berlin');
    expect(iso(skipped.next(Date.UTC(2026, 2, 28, 12)))).toBe('2026-03-30T00:30:00.000Z');
    // 02:30 happens twice on 2026-10-25: the slot runs once, at the first.
    const twice = skipped.next(Date.UTC(2026, 9, 24, 12));
    expect(iso(twice)).toBe('2026-10-25T00:30:00.000Z');
    expect(iso(skipped.next(twice))).toBe('2026-10-26T01:30:00.000Z');
    // node-cron fires at the second 02:30 that night; that instant is not a slot of its own, so
    // the live scheduler maps the fire to the first (the journal key catch-up also names).
    expect(skipped.matches(twice)).toBe(true);
    expect(skipped.matches(Date.UTC(2026, 9, 25, 1, 30))).toBe(false);
    expect(iso(skipped.previous(Date.UTC(2026, 9, 25, 1, 30)))).toBe('2026-10-25T00:30:00.000Z');
  });

  it('counts the wall times a zone skipped when its clocks went forward, which never run, and names the first', () => {
    // A weekly 02:30 on Sundays in Berlin: the last Sundays of March 2020 and 2021 had no 02:30.
    expect(parseCron('30 2 * * 0', 'Europe/Berlin').skippedBetween(Date.UTC(2020, 0, 1), Date.UTC(2022, 0, 1))).toEqual({ count: 2, first: { year: 2020, month: 3, day: 29, hour: 2, minute: 30, second: 0 } });
    // Hourly in New York: the 02:00 of 2022-03-13; only the period asked for counts.
    expect(parseCron('0 * * * *', 'America/New_York').skippedBetween(Date.UTC(2022, 0, 1), Date.UTC(2023, 0, 1))?.count).toBe(1);
    expect(parseCron('0 * * * *', 'America/New_York').skippedBetween(Date.UTC(2022, 2, 14), Date.UTC(2023, 0, 1))).toBeNull();
    // A time the change does not touch, and UTC, lose none.
    expect(parseCron('0 9 * * *', 'Europe/Berlin').skippedBetween(Date.UTC(2020, 0, 1), Date.UTC(2024, 0, 1))).toBeNull();
    expect(parseCron('*/30 * * * *', 'UTC').skippedBetween(Date.UTC(2020, 0, 1), Date.UTC(2024, 0, 1))).toBeNull();
  });

  it('counts every skipped second of a schedule every second, and a gap of half an hour', () => {
    const around = (iso: string): [number, number] => [Date.parse(iso) - 2 * 86_400_000, Date.parse(iso) + 2 * 86_400_000];
    expect(parseCron('* * * * * *', 'Europe/Berlin').skippedBetween(...around('2026-03-29T01:00:00Z'))).toEqual({ count: 3600, first: { year: 2026, month: 3, day: 29, hour: 2, minute: 0, second: 0 } });
    // Lord Howe goes forward from 02:00 to 02:30.
    expect(parseCron('* * * * *', 'Australia/Lord_Howe').skippedBetween(...around('2026-10-03T15:00:00Z'))).toEqual({ count: 30, first: { year: 2026, month: 10, day: 4, hour: 2, minute: 0, second: 0 } });
    // Santiago skips its midnight.
    expect(parseCron('*/15 0 * * *', 'America/Santiago').skippedBetween(...around('2026-09-06T04:00:00Z'))).toEqual({ count: 4, first: { year: 2026, month: 9, day: 6, hour: 0, minute: 0, second: 0 } });
  });

  it('reports every problem, naming the field and the rule', () => {
    expect(cronProblems('61 * * * *', 'Mars/Olympus').map((p) => p.field)).toEqual(['SCHEDULE', 'TIMEZONE']);
    expect(cronProblems('61 * * * *', 'UTC')[0]?.rule).toMatch(/minute field '61'/);
    expect(cronProblems('0 9 * *', 'UTC')[0]?.rule).toMatch(/5 fields/);
    expect(cronProblems('0 0 30 2 *', 'UTC')[0]?.rule).toMatch(/impossible day of month/);
    expect(() => parseCron('nonsense', 'UTC')).toThrow(/SCHEDULE/);
  });

  it('refuses a step no smaller than its field, which cron takes as the first value only ("every 70 minutes" ran hourly)', () => {
    expect(cronProblems('*/70 * * * *', 'UTC').map((p) => p.rule)).toEqual([
      "minute field '*/70': a step of 70 is not smaller than the 60 minutes of an hour, so it matches the first of them only; cron cannot count across them (every 70 minutes has no cron expression): list the times you want instead",
    ]);
    expect(cronProblems('*/30 */24 * * *', 'UTC')[0]?.rule).toMatch(/^hour field '\*\/24': a step of 24 is not smaller than the 24 hours of a day/);
    expect(cronProblems('0 9-11/3 * * *', 'UTC')[0]?.rule).toMatch(/^hour field '9-11\/3': a step of 3 is not smaller than the 3 values of 9-11/);
    expect(cronProblems('*/90 * * * * *', 'UTC')[0]?.rule).toMatch(/^second field '\*\/90'/);
    // Steps that divide their field, or do not but still repeat, are fine.
    for (const fine of ['*/59 * * * *', '*/15 * * * *', '0 */7 * * *', '0 9-17/2 * * 1-5', '*/45 * * * * *']) expect(cronProblems(fine, 'UTC')).toEqual([]);
  });

  it('agrees with node-cron\'s own matcher: next(t) is the first later second it accepts', () => {
    // Plain day fields (evaluated by stacker) and node-cron's tokens (L, #: asked of node-cron) alike.
    const expressions = ['*/7 * * * * *', '0 */5 * * * *', '15 30 */2 * * *', '0 0 9 * * MON', '0 0 12 1,15 * *', '0 30 2 * * *', '0 0 9 * * 1-5', '0 0 9 * * 7', '0 0 9 1-7 * 5', '0 0 9 L * *', '0 0 9 * * 5#2'];
    const zones = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata'];
    fc.assert(
      fc.property(fc.constantFrom(...expressions), fc.constantFrom(...zones), fc.integer({ min: Date.UTC(2025, 0, 1), max: Date.UTC(2027, 0, 1) }), (expression, zone, t) => {
        const schedule = parseCron(expression, zone);
        const next = schedule.next(t);
        const task = createTask(expression, () => {}, { timezone: zone });
        expect(task.match(new Date(next))).toBe(true);
        // No second in between is accepted (bounded walk: the densest pattern here is 7 s apart).
        const span = Math.min(next - t, 3 * 3600_000);
        for (let s = Math.floor(t / 1000) * 1000 + 1000; s < next && s <= t + span; s += 1000) {
          if (s > t && task.match(new Date(s))) return false;
        }
        expect(schedule.previous(next)).toBe(next);
        return true;
      }),
      { numRuns: 60 },
    );
  });
});
