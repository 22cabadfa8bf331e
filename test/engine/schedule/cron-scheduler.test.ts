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
