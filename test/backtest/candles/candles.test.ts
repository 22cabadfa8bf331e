import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadCandles, parseCandles } from '../../../src/backtest/candles/index.ts';
import { formatDecimal } from '../../../src/domain/money.ts';
import { CandleCsvError } from '../../../src/sim/candles.ts';

const FIXTURES = new URL('../../fixtures/candles/', import.meta.url).pathname;

describe('candle files', () => {
  it('loads the columns, detects the interval and reports real gaps', () => {
    const series = loadCandles(`${FIXTURES}btc-1h-2018-02-gap.csv`, { market: 'BTC_USDT' });
    expect(series.length).toBe(63);
    expect(series.intervalSec).toBe(3600);
    expect(series.gaps).toEqual([{ afterTimeSec: Date.UTC(2018, 1, 8, 0) / 1000, missing: 33 }]);
    expect(formatDecimal(series.openDecimal(0))).toBe(readFileSync(`${FIXTURES}btc-1h-2018-02-gap.csv`, 'utf8').split('\n')[1]?.split(',')[1]);
  });

  it('cuts the period with --from and --to (inclusive open times)', () => {
    const from = Date.UTC(2021, 2, 2);
    const to = Date.UTC(2021, 2, 2, 23);
    const series = loadCandles(`${FIXTURES}btc-1h-2021-03-01_14.csv`, { market: 'BTC_USDT', fromMs: from, toMs: to });
    expect(series.length).toBe(24);
    expect(series.timeSec(0) * 1000).toBe(from);
    expect(series.timeSec(23) * 1000).toBe(to);
  });

  it('fills at the open of the first candle opening at or after the time; past the end, the last close', () => {
    const series = parseCandles('time,open,high,low,close,volume\n3600,10,12,9,11,1\n7200,11,13,10,12.5,1\n', { market: 'X_Y' });
    expect(formatDecimal(series.priceAt(3_600_000) ?? series.openDecimal(0).neg())).toBe('10');
    expect(formatDecimal(series.priceAt(3_600_001) ?? series.openDecimal(0).neg())).toBe('11');
    expect(formatDecimal(series.priceAt(0) ?? series.openDecimal(0).neg())).toBe('10');
    expect(formatDecimal(series.priceAt(9_000_000) ?? series.openDecimal(0).neg())).toBe('12.5');
  });

  it('refuses a file with bad rows, naming every line and what is wrong', () => {
    let caught: unknown;
    try {
      loadCandles(`${FIXTURES}bad-rows.csv`, { market: 'BTC_USDT' });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(CandleCsvError);
    const problems = (caught as CandleCsvError).problems;
    expect(problems.map((p) => p.line)).toEqual([3, 4, 5]);
    expect(problems[0]?.reason).toMatch(/high "abc" is not a plain decimal/);
    expect(problems[1]?.reason).toMatch(/inconsistent/);
    expect(problems[2]?.reason).toMatch(/not after the previous/);
  });

  it('refuses a file without the header', () => {
    expect(() => parseCandles('1,2,3,4,5,6\n', { market: 'X_Y' })).toThrow(/line 1: header must be/);
  });
});
