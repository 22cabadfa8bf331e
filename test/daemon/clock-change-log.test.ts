import { Writable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { logRepeatedByClockChange, logSkippedByClockChange } from '../../src/daemon/clock-change-log.ts';
import { parseCron } from '../../src/engine/schedule/cron.ts';
import { CronScheduler } from '../../src/engine/schedule/cron-scheduler.ts';
import { createLogger } from '../../src/observability/logger.ts';

afterEach(() => {
  vi.useRealTimers();
});

/** The daemon's scheduler and log line over `fromIso` to `toIso` in fake time: the lines it wrote and the slots it fired. */
async function scheduled(expression: string, timezone: string, fromIso: string, toIso: string): Promise<{ lines: Array<Record<string, unknown>>; repeated: Array<Record<string, unknown>>; fired: string[] }> {
  vi.useFakeTimers({ now: new Date(fromIso) });
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write: (chunk: Buffer, _encoding, done) => {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const logger = await createLogger({ level: 'info', destination });
  const fired: string[] = [];
  const scheduler = new CronScheduler({ onSkippedByClockChange: logSkippedByClockChange(logger), onRepeatedByClockChange: logRepeatedByClockChange(logger) });
  scheduler.start([{ instance: 'dca-btc', schedule: parseCron(expression, timezone) }], async (_instance, slotTimeMs) => void fired.push(new Date(slotTimeMs).toISOString()));
  await vi.advanceTimersByTimeAsync(Date.parse(toIso) - Date.parse(fromIso));
  await scheduler.stop();
  return { lines: lines.filter((line) => line['event'] === 'slot-skipped-by-clock-change'), repeated: lines.filter((line) => line['event'] === 'slot-not-repeated-by-clock-change'), fired };
}

describe('a slot whose wall time the clocks skip going forward', () => {
  it('is said once, naming the instance, the wall time and the zone, before its time: the daily 02:30 in Berlin has none on 29 March', async () => {
    const { lines, fired } = await scheduled('30 2 * * *', 'Europe/Berlin', '2026-03-27T12:00:00Z', '2026-03-31T12:00:00Z');
    expect(fired).toEqual(['2026-03-28T01:30:00.000Z', '2026-03-30T00:30:00.000Z', '2026-03-31T00:30:00.000Z']);
    expect(lines).toEqual([expect.objectContaining({ level: 30, event: 'slot-skipped-by-clock-change', instance: 'dca-btc', wallTime: '2026-03-29 02:30', timezone: 'Europe/Berlin', count: 1 })]);
    expect(lines[0]?.['msg']).toBe('dca-btc: the slot at 2026-03-29 02:30 Europe/Berlin never runs: the clocks go forward there and skip that wall time (a backtest reports them too)');
    // Told at the slot before it, a day ahead.
    expect(lines[0]?.['time']).toBe(Date.parse('2026-03-28T01:30:00Z'));
  });

  it('is one line for the whole skipped hour of a schedule every minute, with how many slots it loses', async () => {
    const { lines, fired } = await scheduled('* * * * *', 'Europe/Berlin', '2026-03-28T23:30:00Z', '2026-03-29T01:30:00Z');
    expect(fired).toHaveLength(120);
    expect(lines).toEqual([expect.objectContaining({ wallTime: '2026-03-29 02:00', timezone: 'Europe/Berlin', count: 60 })]);
    expect(Number(lines[0]?.['time'])).toBeLessThan(Date.parse('2026-03-29T01:00:00Z'));
  });

  it('is said west of UTC too, and not for a schedule the change does not touch nor for the hour repeated in autumn', async () => {
    expect((await scheduled('*/30 2 * * *', 'America/New_York', '2026-03-07T12:00:00Z', '2026-03-09T12:00:00Z')).lines).toEqual([expect.objectContaining({ wallTime: '2026-03-08 02:00', timezone: 'America/New_York', count: 2 })]);
    expect((await scheduled('0 9 * * *', 'Europe/Berlin', '2026-03-27T12:00:00Z', '2026-03-31T12:00:00Z')).lines).toEqual([]);
    expect((await scheduled('30 2 * * *', 'Europe/Berlin', '2026-10-23T12:00:00Z', '2026-10-27T12:00:00Z')).lines).toEqual([]);
  });
});

describe('slots whose wall times the clocks going back bring round again', () => {
  it('are said once before the change, with how many run only once and how long the repeated wall times last: a schedule every minute in Berlin has none for an hour on 25 October', async () => {
    const { repeated, fired } = await scheduled('* * * * *', 'Europe/Berlin', '2026-10-24T23:30:00Z', '2026-10-25T01:30:00Z');
    // 00:00Z–01:00Z is 02:00–02:59 CEST, run; 01:00Z–02:00Z is the same wall times in CET, not run again.
    expect(fired).toHaveLength(89);
    expect(fired.at(-1)).toBe('2026-10-25T00:59:00.000Z');
    expect(repeated).toEqual([expect.objectContaining({ level: 30, event: 'slot-not-repeated-by-clock-change', instance: 'dca-btc', wallTime: '2026-10-25 02:00', timezone: 'Europe/Berlin', count: 60, minutes: 60 })]);
    expect(repeated[0]?.['msg']).toBe('dca-btc: 60 slots from 2026-10-25 02:00 Europe/Berlin run once although the clocks go back and bring those wall times round again: a wall time is one slot, at its first occurrence, so the 60 minutes after the change have none of them');
    // Told at the last slot before the quiet hour, which starts at the change (01:00Z).
    expect(Number(repeated[0]?.['time'])).toBeLessThan(Date.parse('2026-10-25T01:00:00Z'));
  });

  it('are said for a daily slot in the repeated hour, west of UTC too, and not for a schedule the change does not touch', async () => {
    expect((await scheduled('30 2 * * *', 'Europe/Berlin', '2026-10-23T12:00:00Z', '2026-10-27T12:00:00Z')).repeated).toEqual([expect.objectContaining({ wallTime: '2026-10-25 02:30', count: 1, minutes: 60 })]);
    expect((await scheduled('*/30 1 * * *', 'America/New_York', '2026-10-31T12:00:00Z', '2026-11-02T12:00:00Z')).repeated).toEqual([expect.objectContaining({ wallTime: '2026-11-01 01:00', timezone: 'America/New_York', count: 2 })]);
    expect((await scheduled('0 9 * * *', 'Europe/Berlin', '2026-10-23T12:00:00Z', '2026-10-27T12:00:00Z')).repeated).toEqual([]);
    expect((await scheduled('30 2 * * *', 'Europe/Berlin', '2026-03-27T12:00:00Z', '2026-03-31T12:00:00Z')).repeated).toEqual([]);
  });
});
