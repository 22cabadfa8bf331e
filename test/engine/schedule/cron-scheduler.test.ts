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
});
