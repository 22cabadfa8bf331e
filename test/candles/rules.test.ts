import { describe, expect, it } from 'vitest';
import { parseCandles } from '../../src/candles/index.ts';
import { CandleCsvError } from '../../src/candles/csv-errors.ts';
import { formatDecimal } from '../../src/domain/money.ts';

/** The file as stacker reads it (the columnar parser), in these tests' shorthand. */
const parse = (text: string, source = 'candles') => parseCandles(text, { market: 'BTC_USDT', source });

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
    const candles = parse(CSV);
    expect(candles.length).toBe(3);
    expect(candles.timeSec(0)).toBe(1000);
    expect(formatDecimal(candles.closeDecimal(2))).toBe('102.2');
    // 0.1 + 0.2 style values keep their text exactly.
    const exact = parse('time,open,high,low,close,volume\n1,0.1,0.3,0.1,0.2,0.1\n');
    expect(formatDecimal(exact.openDecimal(0).add(exact.closeDecimal(0)))).toBe('0.3');
  });

  it('accepts CRLF line endings', () => {
    expect(parse(CSV.replaceAll('\n', '\r\n')).length).toBe(3);
  });

  it('refuses a wrong header on line 1', () => {
    expect(() => parse('t,o,h,l,c,v\n1,1,1,1,1,1\n')).toThrow(/line 1: header must be/);
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
      parse(bad, 'fixture.csv');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(CandleCsvError);
    const problems = (caught as CandleCsvError).problems;
    expect(problems.map((p) => p.line)).toEqual([3, 4, 5, 6, 7, 8]);
    expect(problems[0]?.reason).toMatch(/open "1e2" is not a plain decimal/);
    expect(problems[1]?.reason).toMatch(/expected 6 fields, got 4/);
    // Against line 2, the last row taken (lines 3 and 4 were refused themselves).
    expect(problems[2]?.reason).toBe('time 900 is before 1000, the time of line 2: rows must be in time order');
    expect((caught as CandleCsvError).message).toMatch(/^fixture\.csv: line 3: /);
  });

  it('refuses a file with a header and no candles', () => {
    expect(() => parse('time,open,high,low,close,volume\n')).toThrow(/no candles/);
  });
});

describe('the fill price rule', () => {
  const candles = parse(CSV);

  it('is the open of the first candle opening at or after the moment', () => {
    // Before the data: the first open.
    expect(formatDecimal(candles.priceAt(0)!)).toBe('100.5');
    // Exactly at an open time: that candle's open.
    expect(formatDecimal(candles.priceAt(1_000_000)!)).toBe('100.5');
    // One ms into the first candle: its close is in the future, so the next open.
    expect(formatDecimal(candles.priceAt(1_000_001)!)).toBe('100.75');
    expect(formatDecimal(candles.priceAt(1_060_000)!)).toBe('100.75');
    expect(formatDecimal(candles.priceAt(1_119_999)!)).toBe('102.1');
    expect(formatDecimal(candles.priceAt(1_120_000)!)).toBe('102.1');
  });

  it('falls back to the last close past the end', () => {
    expect(formatDecimal(candles.priceAt(1_120_001)!)).toBe('102.2');
    expect(formatDecimal(candles.priceAt(9_999_999_999)!)).toBe('102.2');
    expect(candles.firstAtOrAfter(1_120_001)).toBe(3);
  });

  it('is not what a strategy sees: the last price known then is the open of the candle under way, never a later one', () => {
    expect(candles.priceKnownAt(999_999)).toBeNull();
    expect(formatDecimal(candles.priceKnownAt(1_000_000)!)).toBe('100.5');
    // Inside the first minute: its open, while an order fills at the next open (100.75).
    expect(formatDecimal(candles.priceKnownAt(1_000_001)!)).toBe('100.5');
    expect(formatDecimal(candles.priceKnownAt(1_059_999)!)).toBe('100.5');
    expect(formatDecimal(candles.priceKnownAt(1_060_000)!)).toBe('100.75');
    // Past the last candle's close: its close.
    expect(formatDecimal(candles.priceKnownAt(1_179_999)!)).toBe('102.1');
    expect(formatDecimal(candles.priceKnownAt(1_180_000)!)).toBe('102.2');
  });

  it('knows the close of the candle before a gap, in the gap, and not the open after it', () => {
    const gapped = parse('time,open,high,low,close,volume\n1000,100,101,99,100.5,1\n1060,100.5,101,100,100.9,1\n1300,120,121,119,120.5,1\n');
    expect(formatDecimal(gapped.priceKnownAt(1_100_000)!)).toBe('100.5');
    expect(formatDecimal(gapped.priceKnownAt(1_200_000)!)).toBe('100.9');
    expect(formatDecimal(gapped.priceAt(1_200_000)!)).toBe('120');
    expect(formatDecimal(gapped.priceKnownAt(1_300_000)!)).toBe('120');
  });

  it('agrees with a linear scan on a long series', () => {
    const rows = ['time,open,high,low,close,volume'];
    for (let i = 0; i < 500; i += 1) rows.push(`${i * 300},${i + 1},${i + 2},${i + 1},${i + 1.5},1`);
    const long = parse(rows.join('\n'));
    const times = Array.from({ length: long.length }, (_, i) => long.timeSec(i));
    for (let t = -1000; t < 500 * 300_000 + 1000; t += 7919) {
      const at = times.findIndex((sec) => sec * 1000 >= t);
      const linear = at === -1 ? long.closeDecimal(long.length - 1) : long.openDecimal(at);
      expect(long.priceAt(t)!.eq(linear)).toBe(true);
    }
  });
});
