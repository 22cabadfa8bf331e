import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';
import { CLOCK_CHECK_MS, ClockWatch } from '../../src/daemon/clock-watch.ts';
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

describe("the daemon's watch on its clock", () => {
  it("says when this machine's clock is a minute or more off the exchange's (live and dry-run alike), again when it is right, and nothing while it agrees", async () => {
    let skewMs = 3_600_000;
    // The exchange an hour ahead of this machine: its public time, read over real HTTP.
    const sandbox = await startSandbox({ clock: { nowMs: () => Date.now() + skewMs } });
    const clients = [new ApiClient({ baseUrl: sandbox.url, credentials: { apiKey: sandbox.apiKey, apiSecret: sandbox.apiSecret } }), new ApiClient({ baseUrl: sandbox.url })];
    const live = new LiveExchange(clients[0] as ApiClient);
    const paper = new PaperExchange({ marketData: new ApiMarketData(clients[1] as ApiClient), wallet: new Map([['USDT', new Decimal(100)]]), slippagePct: new Decimal(0) });
    const { logger, lines } = await watched();
    let nowMs = 0;
    const watch = new ClockWatch(new Map<string, Exchange>([['main', live], ['paper', paper]]), logger, () => nowMs);
    try {
      await watch.check();
      const off = lines.filter((line) => line['event'] === 'clock-off');
      expect(off.map((line) => line['account']).sort()).toEqual(['main', 'paper']);
      expect(String(off[0]?.['msg'])).toMatch(/^account (main|paper): this machine's clock is (3599|3600)\.\d s behind the exchange's: signed requests are corrected, but schedules, budget days and slot times follow this machine's clock, so every slot runs that much off; set the clock right \(NTP\)$/);
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
      nowMs += CLOCK_CHECK_MS;
      await watch.check('due');
      expect(lines.map((line) => line['event'])).toEqual(['clock-right', 'clock-right']);
      expect(watch.problems()).toEqual([]);
      // Two minutes off is a warning, not unhealthy.
      skewMs = 120_000;
      nowMs += CLOCK_CHECK_MS;
      await watch.check('due');
      expect(lines.some((line) => line['event'] === 'clock-off')).toBe(true);
      expect(watch.problems()).toEqual([]);
      skewMs = 0;
      nowMs += CLOCK_CHECK_MS;
      await watch.check('due');
      lines.length = 0;
      nowMs += CLOCK_CHECK_MS;
      await watch.check('due');
      expect(lines).toEqual([]);
    } finally {
      await Promise.all(clients.map((client) => client.close()));
      await sandbox.stop();
    }
  });
});
