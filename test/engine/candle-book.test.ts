import { describe, expect, it } from 'vitest';
import { loadCandles } from '../../src/candles/index.ts';
import type { Candle } from '../../src/domain/candle.ts';
import { Decimal, formatDecimal } from '../../src/domain/money.ts';
import { CandleBook } from '../../src/engine/candle-book.ts';
import type { Exchange } from '../../src/exchange/port.ts';

const HOUR = 3600;
const T0 = 1_714_521_600; // 2024-05-01 00:00 UTC

/** An exchange with a candle every hour at price = hour index; counts what it is asked. */
function countingExchange(): { exchange: Exchange; asked: Array<[number, number]> } {
  const asked: Array<[number, number]> = [];
  const candles = async ({ fromSec, toSec }: { fromSec: number; toSec: number }): Promise<Candle[]> => {
    asked.push([fromSec, toSec]);
    const out: Candle[] = [];
    for (let t = Math.ceil(fromSec / HOUR) * HOUR; t < toSec; t += HOUR) {
      const price = new Decimal((t - T0) / HOUR);
      out.push({ timeSec: t, open: price, high: price, low: price, close: price });
    }
    return out;
  };
  return { exchange: { candles } as unknown as Exchange, asked };
}

describe('the candle book', () => {
  it('reads a window whole once, then only the hours closed since, and drops what fell out of it', async () => {
    const { exchange, asked } = countingExchange();
    const book = new CandleBook(exchange);
    const window = { market: 'BTC_USDT', lookbackSec: 24 * HOUR };
    const first = await book.window(window, (T0 + 48 * HOUR) * 1000 + 5 * 60_000);
    expect([first.length, first[0]?.timeSec, first.at(-1)?.timeSec]).toEqual([24, T0 + 24 * HOUR, T0 + 47 * HOUR]);
    const next = await book.window(window, (T0 + 49 * HOUR) * 1000);
    expect([next.length, next[0]?.timeSec, next.at(-1)?.timeSec]).toEqual([24, T0 + 25 * HOUR, T0 + 48 * HOUR]);
    // The second read starts at the hour after the last candle it holds: every read the exchange is asked starts on an hour.
    expect(asked).toEqual([
      [T0 + 24 * HOUR, T0 + 48 * HOUR],
      [T0 + 48 * HOUR, T0 + 49 * HOUR],
    ]);
  });

  it('reads a candle again once it has closed when the exchange held it back as still open (daily data)', async () => {
    const DAY = 24 * HOUR;
    // Daily candles, each answered only once its day is over, as the backtest's exchange answers them.
    let nowSec = T0 + 10 * DAY + 9 * HOUR;
    const candles = async ({ fromSec, toSec }: { fromSec: number; toSec: number }): Promise<Candle[]> => {
      const out: Candle[] = [];
      for (let t = Math.ceil(fromSec / DAY) * DAY; t < toSec && t + DAY <= nowSec; t += DAY) {
        const price = new Decimal((t - T0) / DAY);
        out.push({ timeSec: t, open: price, high: price, low: price, close: price });
      }
      return out;
    };
    const book = new CandleBook({ candles } as unknown as Exchange);
    const window = { market: 'BTC_USDT', lookbackSec: 3 * DAY };
    const days = async (): Promise<number[]> => (await book.window(window, nowSec * 1000)).map((c) => (c.timeSec - T0) / DAY);
    // At 09:00 on day 10 the window opens at 09:00 on day 7: days 8 and 9 have closed, day 10 has not.
    expect(await days()).toEqual([8, 9]);
    nowSec += DAY;
    // Day 10 opened before yesterday's slot, when it was still open: it is read now that it has closed.
    expect(await days()).toEqual([9, 10]);
    nowSec += DAY;
    expect(await days()).toEqual([10, 11]);
  });

  it('reads again whole when a longer window is asked, or time goes back', async () => {
    const { exchange, asked } = countingExchange();
    const book = new CandleBook(exchange);
    await book.window({ market: 'BTC_USDT', lookbackSec: 2 * HOUR }, (T0 + 10 * HOUR) * 1000);
    await book.window({ market: 'BTC_USDT', lookbackSec: 5 * HOUR }, (T0 + 10 * HOUR) * 1000);
    await book.window({ market: 'BTC_USDT', lookbackSec: 5 * HOUR }, (T0 + 9 * HOUR) * 1000);
    expect(asked).toEqual([
      [T0 + 8 * HOUR, T0 + 10 * HOUR],
      [T0 + 5 * HOUR, T0 + 10 * HOUR],
      [T0 + 4 * HOUR, T0 + 9 * HOUR],
    ]);
  });
});

describe("a backtest's data as hourly candles", () => {
  it('groups minute candles by hour: the first open, the last close, the extremes', () => {
    const series = loadCandles(new URL('../fixtures/candles/btc-1m-2025-05-20.csv', import.meta.url).pathname, { market: 'BTC_USDT' });
    const hours = series.hourly(series.timeSec(0), series.timeSec(0) + 2 * HOUR);
    expect(hours).toHaveLength(2);
    const first = hours[0] as Candle;
    expect(formatDecimal(first.open)).toBe(series.openText(0));
    expect(formatDecimal(first.close)).toBe(series.closeText(59));
    const closes = Array.from({ length: 60 }, (_, i) => new Decimal(series.closeText(i)));
    expect(first.high.gte(Decimal.max(...closes))).toBe(true);
    expect(first.low.lte(Decimal.min(...closes))).toBe(true);
  });
});
