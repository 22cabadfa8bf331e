import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatDecimal } from '../../src/domain/money.ts';
import { candleReplay, firstOf, fixedPrices } from '../../src/sim/prices.ts';

const CSV = [
  'time,open,high,low,close,volume',
  '600,10,11,9,10.5,1', // 00:10
  '900,10.5,12,10,11,1', // 00:15
  '1200,11,11.5,10.8,11.2,1', // 00:20
].join('\n');

describe('fixed prices', () => {
  it('answers the configured price and null for other markets', () => {
    const prices = fixedPrices({ BTC_USDT: '65000' });
    expect(formatDecimal(prices.priceAt('BTC_USDT', 0)!)).toBe('65000');
    expect(prices.priceAt('ETH_USDT', 0)).toBeNull();
    prices.set('BTC_USDT', '64000.5');
    expect(formatDecimal(prices.priceAt('BTC_USDT', 123)!)).toBe('64000.5');
  });

  it('refuses prices that are not plain positive decimals', () => {
    expect(() => fixedPrices({ BTC_USDT: '6.5e4' })).toThrow(/price of BTC_USDT/);
    expect(() => fixedPrices({ BTC_USDT: '0' })).toThrow(/greater than 0/);
  });
});

describe('candle replay', () => {
  it('maps wall time to virtual time from the first candle at the given speed', () => {
    // speed 300: one 5-minute candle passes in one wall second.
    const replay = candleReplay({ market: 'BTC_USDT', csvText: CSV, speed: 300, startAtMs: 50_000 });
    expect(replay.virtualTimeMs(50_000)).toBe(600_000);
    expect(replay.virtualTimeMs(51_000)).toBe(900_000);
    expect(formatDecimal(replay.priceAt('BTC_USDT', 50_000)!)).toBe('10'); // at the first open
    expect(formatDecimal(replay.priceAt('BTC_USDT', 50_001)!)).toBe('10.5'); // inside candle 1 → next open
    expect(formatDecimal(replay.priceAt('BTC_USDT', 51_000)!)).toBe('10.5');
    expect(formatDecimal(replay.priceAt('BTC_USDT', 51_500)!)).toBe('11');
    expect(formatDecimal(replay.priceAt('BTC_USDT', 60_000)!)).toBe('11.2'); // past the end: last close
    expect(replay.priceAt('ETH_USDT', 50_000)).toBeNull();
  });

  it('starts at the injected clock when no start is given', () => {
    const clock = { nowMs: () => 7_000 };
    const replay = candleReplay({ market: 'BTC_USDT', csvText: CSV, speed: 1, clock });
    expect(replay.virtualTimeMs(7_000)).toBe(600_000);
    expect(replay.virtualTimeMs(8_000)).toBe(601_000);
  });

  it("joins the file's candles of a replayed span into one, those closed by its end only", () => {
    // speed 300: wall [50 s, 52 s) replays [600 s, 1200 s), the first two 5-minute candles.
    const replay = candleReplay({ market: 'BTC_USDT', csvText: CSV, speed: 300, startAtMs: 50_000 });
    const plain = (from: number, to: number) => {
      const candle = replay.candleAt?.('BTC_USDT', from, to);
      return candle === null || candle === undefined ? candle : Object.fromEntries(Object.entries(candle).map(([key, value]) => [key, formatDecimal(value)]));
    };
    // Quote volume: each candle's volume at its (open + high + low + close) / 4, 10.125 + 10.875.
    expect(plain(50_000, 52_000)).toEqual({ open: '10', close: '11', high: '12', low: '9', volume: '2', quoteVolume: '21' });
    // The second candle closes at 1200 s, past the span's end at 1050 s: it is still trading.
    expect(plain(50_000, 51_500)).toEqual({ open: '10', close: '10.5', high: '11', low: '9', volume: '1', quoteVolume: '10.125' });
    expect(plain(0, 50_000)).toBeNull();
    // Spans side by side whose edges fall inside candles serve each candle once, in the span it closes in.
    expect([plain(50_500, 51_500), plain(51_500, 52_500), plain(52_500, 53_500)].map((candle) => candle?.close)).toEqual(['10.5', '11', '11.2']);
    expect(replay.candleAt?.('ETH_USDT', 50_000, 52_000)).toBeNull();
  });

  it('refuses a bad file, a bad speed, and ambiguous input at creation', () => {
    expect(() => candleReplay({ market: 'X', csvText: 'time,open,high,low,close,volume\nx\n', speed: 1 })).toThrow(/line 2/);
    expect(() => candleReplay({ market: 'X', csvText: CSV, speed: 0 })).toThrow(/speed/);
    expect(() => candleReplay({ market: 'X', speed: 1 })).toThrow(/exactly one of csvPath or csvText/);
  });

  it('can be combined with fixed prices for other markets', () => {
    const replay = candleReplay({ market: 'BTC_USDT', csvText: CSV, speed: 1, startAtMs: 0 });
    const prices = firstOf(replay, fixedPrices({ ETH_USDT: '3150.42', BTC_USDT: '1' }));
    expect(formatDecimal(prices.priceAt('BTC_USDT', 0)!)).toBe('10');
    expect(formatDecimal(prices.priceAt('ETH_USDT', 0)!)).toBe('3150.42');
  });
});

describe('candle replay from a file', () => {
  it('reads the CSV once at creation and names the file in errors', () => {
    const dir = mkdtempSync(join(tmpdir(), 'stacker-candles-'));
    try {
      const good = join(dir, 'good.csv');
      writeFileSync(good, CSV);
      const replay = candleReplay({ market: 'ETH_USDT', csvPath: good, speed: 60, startAtMs: 0 });
      expect(replay.candles.length).toBe(3);
      expect(formatDecimal(replay.priceAt('ETH_USDT', 5_000)!)).toBe('10.5');
      const bad = join(dir, 'bad.csv');
      writeFileSync(bad, `${CSV}\n1500,1,1,1,1\n`);
      expect(() => candleReplay({ market: 'ETH_USDT', csvPath: bad, speed: 1 })).toThrow(`${bad}: line 5: expected 6 fields, got 5`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
