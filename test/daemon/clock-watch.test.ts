import { Writable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';
import { CLOCK_CHECK_MS, CLOCK_RECHECK_OFF_MS, ClockWatch } from '../../src/daemon/clock-watch.ts';
import { Decimal } from '../../src/domain/money.ts';
import { LiveExchange } from '../../src/exchange/live.ts';
import type { Exchange } from '../../src/exchange/port.ts';
import { ApiMarketData } from '../../src/exchange/market-data.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { startSandbox } from '../../src/sandbox/server.ts';
import { PaperExchange } from '../../src/sim/paper-exchange.ts';

/** The log lines a ClockWatch writes, parsed. */
async function watched(): Promise<{ logger: Awaited<ReturnType<typeof createLogger>>; lines: Array<Record<string, unknown>> }> {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write: (chunk: Buffer, _encoding, done) => {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: await createLogger({ level: 'info', destination }), lines };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("the daemon's watch on its clock", () => {
  it("says when this machine's clock is a minute or more off the exchange's (live and dry-run alike), again when it is right, and nothing while it agrees", async () => {
    let skewMs = 3_600_000;
    // The exchange an hour ahead of this machine: its public time, read over real HTTP.
    const sandbox = await startSandbox({ clock: { nowMs: () => Date.now() + skewMs } });
    const clients = [new ApiClient({ baseUrl: sandbox.url, credentials: { apiKey: sandbox.apiKey, apiSecret: sandbox.apiSecret } }), new ApiClient({ baseUrl: sandbox.url })];
    const live = new LiveExchange(clients[0] as ApiClient);
    const paper = new PaperExchange({ marketData: new ApiMarketData(clients[1] as ApiClient), wallet: new Map([['USDT', new Decimal(100)]]), slippagePct: new Decimal(0) });
    const { logger, lines } = await watched();
    // The daemon's clock is this process's; the test moves it on (Date only: requests keep real timers) to make a reading due.
    vi.useFakeTimers({ toFake: ['Date'] });
    const later = (ms: number): void => void vi.setSystemTime(Date.now() + ms);
    const watch = new ClockWatch(new Map<string, Exchange>([['main', live], ['paper', paper]]), logger, () => Date.now());
    try {
      await watch.check();
      const off = lines.filter((line) => line['event'] === 'clock-off');
      expect(off.map((line) => line['account']).sort()).toEqual(['main', 'paper']);
      expect(String(off[0]?.['msg'])).toMatch(/^account (main|paper): this machine's clock is (3599|3600)\.\d s behind the exchange's: signed requests are corrected, but schedules, budget days and slot times follow this machine's clock, so every slot runs that much off, and nothing that moves money is sent while it is 5 minutes or more off; set the clock right \(NTP\)$/);
      expect(off[0]?.['level']).toBe(40);
      // An hour off: /healthz names it for each account, as slots and budget days are that much off.
      expect(watch.problems()).toEqual([
        expect.stringMatching(/^account main: this machine's clock is (3599|3600)\.\d s behind the exchange's: slots, budget days and periods follow this machine's clock/),
        expect.stringMatching(/^account paper: /),
      ]);

      // Not measured again before its time.
      skewMs = 0;
      lines.length = 0;
      await watch.check('due');
      expect(lines).toEqual([]);
      later(CLOCK_CHECK_MS);
      await watch.check('due');
      expect(lines.map((line) => line['event'])).toEqual(['clock-right', 'clock-right']);
      expect(watch.problems()).toEqual([]);
      // Two minutes off is a warning, not unhealthy.
      skewMs = 120_000;
      later(CLOCK_CHECK_MS);
      await watch.check('due');
      expect(lines.some((line) => line['event'] === 'clock-off')).toBe(true);
      expect(watch.problems()).toEqual([]);
      skewMs = 0;
      later(CLOCK_CHECK_MS);
      await watch.check('due');
      lines.length = 0;
      later(CLOCK_CHECK_MS);
      await watch.check('due');
      expect(lines).toEqual([]);
    } finally {
      await Promise.all(clients.map((client) => client.close()));
      await sandbox.stop();
    }
  });

  it('refuses the sends of an account whose clock is five minutes or more off, measures it again every minute meanwhile, and at once after this machine\'s clock stepped back', async () => {
    let offsetMs = -3_600_000;
    const exchange = { clockOffsetMs: async () => offsetMs } as unknown as Exchange;
    const { logger } = await watched();
    vi.useFakeTimers({ toFake: ['Date'] });
    const later = (ms: number): void => void vi.setSystemTime(Date.now() + ms);
    const watch = new ClockWatch(new Map<string, Exchange>([['main', exchange]]), logger, () => Date.now());
    await watch.check();
    expect(watch.refusal('main')).toMatch(/^this machine's clock is 3600\.0 s ahead of the exchange's, and slots and budget days follow this machine's clock: nothing that moves money is sent until it is within 5 minutes/);
    // Named per account: another account, or none named, is not refused for this one's clock.
    expect(watch.refusal('kids')).toBeNull();
    expect(watch.refusal()).toBeNull();

    // Set right: read again within a minute, not ten, and the sends go again.
    offsetMs = 0;
    later(CLOCK_RECHECK_OFF_MS);
    await watch.check('due');
    expect(watch.refusal('main')).toBeNull();

    // This machine's clock stepped back an hour just after a reading: due at once, not in an hour and ten minutes.
    offsetMs = 3_600_000;
    later(-3_600_000);
    await watch.check('due');
    expect(watch.problems()).toHaveLength(1);
    expect(watch.refusal('main')).toMatch(/3600\.0 s behind the exchange's/);
  });
});
