import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';
import { parseKline } from '../../src/api/parse.ts';
import { ExchangeError } from '../../src/domain/errors.ts';
import { formatDecimal } from '../../src/domain/money.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.ts';

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

    it('answers a bad request with HTTP 200 and success false, which the client raises as the exchange error naming the field', async () => {
      const error = await client.hourlyCandles('NOPE_USDT', 1_700_000_000, 1_700_003_600).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ExchangeError);
      expect((error as ExchangeError).fieldErrors).toMatchObject({ market: ['Market is not available.'] });
    });
  });
});
