import { describe, expect, it } from 'vitest';
import { formatDecimal } from '../../src/domain/money.ts';
import { CandleCsvError, candlePriceAt, firstCandleAtOrAfter, parseCandleCsv } from '../../src/sim/candles.ts';

// Three 1-minute candles opening at 1000 s, 1060 s, 1120 s.
const CSV = [
  'time,open,high,low,close,volume',
  '1000,100.5,101,100,100.75,2.5',
  '1060,100.75,102.25,100.5,102,1',
  '1120,102.1,102.3,101.9,102.2,0.333',
  '',
].join('\n');

describe('candle CSV', () => {
  it('parses every row into exact decimals, never through a float', () => {
    const candles = parseCandleCsv(CSV);
    expect(candles).toHaveLength(3);
    expect(candles[0]?.timeSec).toBe(1000);
    expect(formatDecimal(candles[2]!.volume)).toBe('0.333');
    // 0.1 + 0.2 style values keep their text exactly.
    const exact = parseCandleCsv('time,open,high,low,close,volume\n1,0.3,0.3,0.1,0.2,0.1\n');
    expect(formatDecimal(exact[0]!.low.add(exact[0]!.close))).toBe('0.3');
  });

  it('accepts CRLF line endings', () => {
    expect(parseCandleCsv(CSV.replaceAll('\n', '\r\n'))).toHaveLength(3);
  });

  it('refuses a wrong header on line 1', () => {
    expect(() => parseCandleCsv('t,o,h,l,c,v\n1,1,1,1,1,1\n')).toThrow(/line 1: header must be/);
  });

  it('names every bad row by its line number', () => {
    const bad = [
      'time,open,high,low,close,volume',
      '1000,100,101,99,100,1', // line 2 fine
      '1060,1e2,101,99,100,1', // line 3 exponent
      '1120,100,101,99', // line 4 short
      '900,100,101,99,100,1', // line 5 goes back in time
      '', // line 6 empty in the middle
      '1200,100,99,98,100,1', // line 7 high below open
      '12x0,100,101,99,100,1', // line 8 time
      '1300,100,101,99,100,1',
    ].join('\n');
    let caught: unknown;
    try {
      parseCandleCsv(bad, 'fixture.csv');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(CandleCsvError);
    const problems = (caught as CandleCsvError).problems;
    expect(problems.map((p) => p.line)).toEqual([3, 4, 5, 6, 7, 8]);
    expect(problems[0]?.reason).toMatch(/open "1e2" is not a plain decimal/);
    expect(problems[1]?.reason).toMatch(/expected 6 fields, got 4/);
    expect(problems[2]?.reason).toMatch(/not after the previous row's 1000/);
    expect((caught as CandleCsvError).message).toMatch(/^fixture\.csv: line 3: /);
  });

  it('refuses a file with a header and no candles', () => {
    expect(() => parseCandleCsv('time,open,high,low,close,volume\n')).toThrow(/no candles/);
  });
});

describe('the fill price rule', () => {
  const candles = parseCandleCsv(CSV);

  it('is the open of the first candle opening at or after the moment', () => {
    // Before the data: the first open.
    expect(formatDecimal(candlePriceAt(candles, 0)!)).toBe('100.5');
    // Exactly at an open time: that candle's open.
    expect(formatDecimal(candlePriceAt(candles, 1_000_000)!)).toBe('100.5');
    // One ms into the first candle: its close is in the future, so the next open.
    expect(formatDecimal(candlePriceAt(candles, 1_000_001)!)).toBe('100.75');
    expect(formatDecimal(candlePriceAt(candles, 1_060_000)!)).toBe('100.75');
    expect(formatDecimal(candlePriceAt(candles, 1_119_999)!)).toBe('102.1');
    expect(formatDecimal(candlePriceAt(candles, 1_120_000)!)).toBe('102.1');
  });

  it('falls back to the last close past the end', () => {
    expect(formatDecimal(candlePriceAt(candles, 1_120_001)!)).toBe('102.2');
    expect(formatDecimal(candlePriceAt(candles, 9_999_999_999)!)).toBe('102.2');
    expect(firstCandleAtOrAfter(candles, 1_120_001)).toBe(3);
  });

  it('knows no price without candles', () => {
    expect(candlePriceAt([], 0)).toBeNull();
  });

  it('agrees with a linear scan on a long series', () => {
    const rows = ['time,open,high,low,close,volume'];
    for (let i = 0; i < 500; i += 1) rows.push(`${i * 300},${i + 1},${i + 2},${i + 1},${i + 1.5},1`);
    const long = parseCandleCsv(rows.join('\n'));
    for (let t = -1000; t < 500 * 300_000 + 1000; t += 7919) {
      const linear = long.find((c) => c.timeSec * 1000 >= t)?.open ?? long[long.length - 1]!.close;
      expect(candlePriceAt(long, t)!.eq(linear)).toBe(true);
    }
  });
});
