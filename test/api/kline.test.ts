import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';
import { parseKline } from '../../src/api/parse.ts';
import { ExchangeError } from '../../src/domain/errors.ts';
import { formatDecimal } from '../../src/domain/money.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.ts';
import { candleReplay } from '../../src/sim/prices.ts';

describe('kline (GET /api/v1/public/kline)', () => {
  it('reads rows as [time, open, close, high, low, volume, volume quote]: close before high and low', () => {
    const [candle] = parseKline({ success: true, message: null, result: [[1714550400, '60000', '60500', '61000', '59000', '12.5', '750000']] });
    expect(candle && [candle.timeSec, ...[candle.open, candle.close, candle.high, candle.low].map(formatDecimal)]).toEqual([1714550400, '60000', '60500', '61000', '59000']);
  });

  describe('against the sandbox over HTTP', () => {
    let sandbox: Sandbox;
    let client: ApiClient;
    beforeAll(async () => {
      sandbox = await startSandbox({});
      client = new ApiClient({ baseUrl: sandbox.url, serverTime: false });
    });
    afterAll(async () => {
      await client.close();
      await sandbox.stop();
    });

    it('pages a span longer than one request (1440 candles) into hourly candles, oldest first, none in the future', async () => {
      const nowHour = Math.floor(Date.now() / 3_600_000) * 3600;
      const from = nowHour - 2000 * 3600;
      const candles = await client.hourlyCandles('BTC_USDT', from, nowHour);
      expect(candles).toHaveLength(2000);
      expect(candles[0]?.timeSec).toBe(from);
      expect(candles.at(-1)?.timeSec).toBe(nowHour - 3600);
      expect(candles.every((c, i) => i === 0 || c.timeSec === (candles[i - 1]?.timeSec ?? 0) + 3600)).toBe(true);
    });

    it('serves a replay (--prices) as the candles of its replayed spans, not a flat line at the price of each wall-clock hour', async () => {
      // An hourly file replayed at speed 2: each wall hour is two of its candles, joined.
      const startMs = Date.UTC(2026, 0, 1);
      const rows = Array.from({ length: 10 }, (_, i) => `${1_600_000_000 + i * 3600},${100 + i},${110 + i},${90 + i},${101 + i},${i + 1}`);
      let nowMs = startMs + 4.5 * 3_600_000;
      const replaying = await startSandbox({
        prices: candleReplay({ market: 'BTC_USDT', csvText: ['time,open,high,low,close,volume', ...rows].join('\n'), speed: 2, startAtMs: startMs }),
        clock: { nowMs: () => nowMs },
      });
      const replayClient = new ApiClient({ baseUrl: replaying.url, serverTime: false });
      try {
        const candles = await replayClient.hourlyCandles('BTC_USDT', startMs / 1000 - 3600, startMs / 1000 + 5 * 3600);
        const shown = candles.map((c) => [c.timeSec - startMs / 1000, ...[c.open, c.close, c.high, c.low].map(formatDecimal)]);
        expect(shown).toEqual([
          [-3600, '100', '100', '100', '100'], // before the file: its first price, flat
          [0, '100', '102', '111', '90'],
          [3600, '102', '104', '113', '92'],
          [7200, '104', '106', '115', '94'],
          [10800, '106', '108', '117', '96'],
          // 04:00 to 04:30 replays one candle, closed; the hour is not over.
          [14400, '108', '109', '118', '98'],
        ]);
        nowMs += 1_800_000;
        const later = await replayClient.hourlyCandles('BTC_USDT', startMs / 1000 + 4 * 3600, startMs / 1000 + 5 * 3600);
        expect(later.map((c) => formatDecimal(c.close))).toEqual(['110']);
      } finally {
        await replayClient.close();
        await replaying.stop();
      }
    });

    it('answers a bad request with HTTP 200 and success false, which the client raises as the exchange error naming the field', async () => {
      const error = await client.hourlyCandles('NOPE_USDT', 1_700_000_000, 1_700_003_600).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ExchangeError);
      expect((error as ExchangeError).fieldErrors).toMatchObject({ market: ['Market is not available.'] });
    });
  });
});
