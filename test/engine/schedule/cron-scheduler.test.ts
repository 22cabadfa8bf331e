import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseCron } from '../../../src/engine/schedule/cron.ts';
import { CronScheduler } from '../../../src/engine/schedule/cron-scheduler.ts';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the live scheduler (node-cron)', () => {
  it("reports a slot skipped by overlap through onMissed and hands node-cron's own lines to onCronLog, writing nothing to the console", async () => {
    const console = { warn: vi.spyOn(globalThis.console, 'warn'), info: vi.spyOn(globalThis.console, 'info'), error: vi.spyOn(globalThis.console, 'error') };
    const missed: string[] = [];
    const cronLines: string[] = [];
    const scheduler = new CronScheduler({ onMissed: (_instance, _slot, reason) => void missed.push(reason), onCronLog: (level, message) => void cronLines.push(`${level}: ${message}`) });
    // Every second, each slot taking 2.5 s: the next fires find the last one still running.
    scheduler.start([{ instance: 'slow', schedule: parseCron('* * * * * *', 'UTC') }], () => new Promise((resolve) => setTimeout(resolve, 2_500)));
    await new Promise((resolve) => setTimeout(resolve, 3_200));
    await scheduler.stop();
    expect(missed.some((reason) => reason.includes('still running'))).toBe(true);
    expect(cronLines.some((line) => line.startsWith('warn: '))).toBe(true);
    expect([...console.warn.mock.calls, ...console.info.mock.calls, ...console.error.mock.calls].filter((call) => String(call[0]).includes('NODE-CRON'))).toEqual([]);
  }, 15_000);

  it("runs a slot whose timer fired late because this machine's clock stepped forward (NTP), as its slot, not as missed: a daily buy was lost to a 30 s step", async () => {
    vi.useFakeTimers({ now: Date.UTC(2026, 10, 27, 8, 58, 0) });
    try {
      const fired: number[] = [];
      const missed: number[] = [];
      const scheduler = new CronScheduler({ onMissed: (_instance, slotTimeMs) => void missed.push(slotTimeMs) });
      scheduler.start([{ instance: 'daily', schedule: parseCron('0 9 * * *', 'UTC') }], async (_instance, slotTimeMs) => void fired.push(slotTimeMs));
      // The timer waits for 09:00 on the monotonic clock; the wall clock steps 30 s ahead meanwhile.
      await vi.advanceTimersByTimeAsync(30_000);
      vi.setSystemTime(Date.now() + 30_000);
      await vi.advanceTimersByTimeAsync(120_000);
      await scheduler.stop();
      expect(missed).toEqual([]);
      expect(fired).toEqual([Date.UTC(2026, 10, 27, 9, 0, 0)]);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('the live scheduler across the hour the autumn change repeats', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  /** Every slot the scheduler hands over from `fromIso` to `toIso` in fake time, with when it was handed over. */
  async function firedBetween(expression: string, timezone: string, fromIso: string, toIso: string): Promise<{ fired: Array<{ slot: string; at: string }>; missed: string[]; expected: string[] }> {
    vi.useFakeTimers({ now: new Date(fromIso) });
    const schedule = parseCron(expression, timezone);
    const fired: Array<{ slot: string; at: string }> = [];
    const missed: string[] = [];
    const scheduler = new CronScheduler({ onMissed: (_instance, slot, _reason, kind) => void missed.push(`${kind} ${new Date(slot).toISOString()}`) });
    scheduler.start([{ instance: 'dca', schedule }], async (_instance, slotTimeMs) => {
      fired.push({ slot: new Date(slotTimeMs).toISOString(), at: new Date().toISOString() });
    });
    await vi.advanceTimersByTimeAsync(Date.parse(toIso) - Date.parse(fromIso));
    await scheduler.stop();
    // What the backtest and catch-up run: the schedule's own slots.
    const expected: string[] = [];
    for (let slot = schedule.next(Date.parse(fromIso)); slot <= Date.parse(toIso); slot = schedule.next(slot)) expected.push(new Date(slot).toISOString());
    return { fired, missed, expected };
  }

  it('fires the repeated wall time once, at its first occurrence, in Berlin, where node-cron would run it an hour later', async () => {
    // 2026-10-25 in Berlin: 03:00 CEST (01:00 UTC) goes back to 02:00 CET; 02:55 is 00:55 and 01:55 UTC.
    const { fired, missed } = await firedBetween('*/5 2 * * *', 'Europe/Berlin', '2026-10-25T00:53:30Z', '2026-10-25T03:00:00Z');
    expect(fired).toEqual([{ slot: '2026-10-25T00:55:00.000Z', at: '2026-10-25T00:55:00.000Z' }]);
    expect(missed).toEqual([]);
  });

  it.each([
    ['Europe/Berlin', '*/30 * * * *', '2026-10-24T22:00:00Z', '2026-10-25T04:00:00Z'],
    ['Europe/Berlin', '0 2 * * *', '2026-10-23T12:00:00Z', '2026-10-27T12:00:00Z'],
    ['Australia/Lord_Howe', '*/15 1 * * *', '2026-04-04T12:00:00Z', '2026-04-05T18:00:00Z'],
    ['America/New_York', '*/30 * * * *', '2026-11-01T03:00:00Z', '2026-11-01T09:00:00Z'],
    ['America/New_York', '*/20 1 * * *', '2026-10-31T12:00:00Z', '2026-11-02T12:00:00Z'],
  ])('in %s, "%s" runs every slot of the schedule once and on time, as the backtest does', async (timezone, expression, fromIso, toIso) => {
    const { fired, missed, expected } = await firedBetween(expression, timezone, fromIso, toIso);
    expect(fired.map((fire) => fire.slot)).toEqual(expected);
    expect(fired.filter((fire) => fire.at !== fire.slot)).toEqual([]);
    expect(missed).toEqual([]);
  });
});

describe('a first occurrence fired by stacker keeps node-cron rules', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("is reported overlapped, not run beside it, while the instance's previous slot still runs", async () => {
    vi.useFakeTimers({ now: new Date('2026-10-24T23:50:00Z') });
    const fired: string[] = [];
    const missed: string[] = [];
    const scheduler = new CronScheduler({ onMissed: (_instance, slot, _reason, kind) => void missed.push(`${kind} ${new Date(slot).toISOString()}`) });
    // Berlin every 30 minutes, each slot taking 40: 02:30 CEST (00:30 UTC) finds 02:00 CEST still running.
    scheduler.start([{ instance: 'slow', schedule: parseCron('*/30 * * * *', 'Europe/Berlin') }], async (_instance, slotTimeMs) => {
      fired.push(new Date(slotTimeMs).toISOString());
      await new Promise((resolve) => setTimeout(resolve, 40 * 60_000));
    });
    await vi.advanceTimersByTimeAsync(60 * 60_000);
    await scheduler.stop();
    expect(fired).toEqual(['2026-10-25T00:00:00.000Z']);
    expect(missed).toEqual(['overlap 2026-10-25T00:30:00.000Z']);
  });

  it('is reported missed when the process was suspended across it, as node-cron reports its own', async () => {
    vi.useFakeTimers({ now: new Date('2026-10-25T00:53:30Z') });
    const fired: string[] = [];
    const missed: string[] = [];
    const scheduler = new CronScheduler({ onMissed: (_instance, slot, _reason, kind) => void missed.push(`${kind} ${new Date(slot).toISOString()}`) });
    scheduler.start([{ instance: 'dca', schedule: parseCron('*/5 2 * * *', 'Europe/Berlin') }], async (_instance, slotTimeMs) => void fired.push(new Date(slotTimeMs).toISOString()));
    await vi.advanceTimersByTimeAsync(30_000);
    // Suspended at 02:54 CEST, resumed three minutes later: the timers wake late.
    vi.setSystemTime(new Date('2026-10-25T00:57:00Z'));
    await vi.advanceTimersByTimeAsync(2 * 3_600_000);
    await scheduler.stop();
    expect(fired).toEqual([]);
    expect(missed).toEqual(['missed 2026-10-25T00:55:00.000Z']);
  });
});
