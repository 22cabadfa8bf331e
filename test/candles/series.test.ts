import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Worker } from 'node:worker_threads';
import { type CandleSeries, type SharedCandleColumns, loadCandles, parseCandles, repeatSeries, shareCandles, sharedCandles } from '../../src/candles/index.ts';
import { Decimal, formatDecimal } from '../../src/domain/money.ts';
import { CandleCsvError } from '../../src/candles/csv-errors.ts';
import { candlePriceAt, parseCandleCsv } from './reference-parser.ts';
import { thrownBy } from '../support/thrown.ts';

const FIXTURES = new URL('../fixtures/candles/', import.meta.url).pathname;
const fixture = (name: string): string => `${FIXTURES}${name}`;
const HEADER = 'time,open,high,low,close,volume';
const csv = (...rows: string[]): string => `${[HEADER, ...rows].join('\n')}\n`;
const hour = (iso: string): number => Date.parse(`${iso}Z`) / 1000;

const problemsOf = (fn: () => unknown): CandleCsvError => thrownBy(CandleCsvError, fn);

/** The rows as the file writes them: [time, open, close] per candle. */
function rowsOf(series: CandleSeries): Array<[number, string, string]> {
  return Array.from({ length: series.length }, (_, i) => [series.timeSec(i), series.openText(i), series.closeText(i)]);
}

describe('loading a candle file into columns', () => {
  it('keeps every row of a day of one-minute candles, times exact and prices as the file writes them', () => {
    const text = readFileSync(fixture('btc-1m-2025-05-20.csv'), 'utf8');
    const lines = text.trimEnd().split('\n').slice(1).map((line) => line.split(','));
    const series = loadCandles(fixture('btc-1m-2025-05-20.csv'), { market: 'BTC_USDT' });
    expect(series.market).toBe('BTC_USDT');
    expect(series.length).toBe(1440);
    expect(series.intervalSec).toBe(60);
    expect(series.gaps).toEqual([]);
    expect(rowsOf(series)).toEqual(lines.map((f) => [Number(f[0]), f[1], f[4]]));
    expect(series.times).toBeInstanceOf(Float64Array);
    expect(series.times[0]).toBe(hour('2025-05-20T00:00'));
  });

  it('makes a Decimal only on demand, from the file text (no float in between)', () => {
    const series = parseCandles(csv('3600,0.1,0.30000000000000004,0.1,0.2,1'), { market: 'X_Y' });
    expect(formatDecimal(series.openDecimal(0))).toBe('0.1');
    expect(formatDecimal(series.closeDecimal(0))).toBe('0.2');
    // For charts only: the nearest float.
    expect(series.closeNumber(0)).toBe(0.2);
  });

  it('estimates a close from its digits within a part in 10^15, long ones too (what a backtest rules drawdown samples out by)', () => {
    const text = readFileSync(fixture('btc-1m-2025-05-20.csv'), 'utf8');
    const series = parseCandles(text, { market: 'BTC_USDT' });
    for (let i = 0; i < series.length; i += 1) expect(Math.abs(series.closeEstimate(i) - series.closeNumber(i))).toBeLessThanOrEqual(series.closeNumber(i) * 1e-15);
    // 17 digits: too many to read digit by digit, so read as the nearest float.
    const long = parseCandles(csv('3600,1,2,0.5,1.2345678901234567,1', '7200,1,8,0.5,7,1'), { market: 'X_Y' });
    expect(long.closeEstimate(0)).toBe(1.2345678901234567);
    expect(long.closeEstimate(1)).toBe(7);
  });

  it('gives the lowest and highest close estimate of a run of candles, of a repeated series too, and null where a close needs the exact reading', () => {
    const text = readFileSync(fixture('btc-1m-2025-05-20.csv'), 'utf8');
    const series = parseCandles(text, { market: 'BTC_USDT' });
    const estimates = Array.from({ length: series.length }, (_, i) => series.closeEstimate(i));
    for (const [from, to] of [[0, 1], [0, series.length], [17, 230], [series.length - 5, series.length]] as const) {
      expect(series.closeEstimateRange(from, to)).toEqual({ low: Math.min(...estimates.slice(from, to)), high: Math.max(...estimates.slice(from, to)) });
    }
    const twice = repeatSeries(series, 2);
    expect(twice.closeEstimateRange(series.length - 3, series.length + 3)).toEqual({
      low: Math.min(...estimates.slice(-3), ...estimates.slice(0, 3)),
      high: Math.max(...estimates.slice(-3), ...estimates.slice(0, 3)),
    });
    const long = parseCandles(csv('3600,1,2,0.5,1.2345678901234567,1', '7200,1,8,0.5,7,1'), { market: 'X_Y' });
    expect(long.closeEstimateRange(1, 2)).toEqual({ low: 7, high: 7 });
    expect(long.closeEstimateRange(0, 2)).toBeNull();
    expect(() => series.closeEstimateRange(3, 3)).toThrow(RangeError);
  });

  it('reads a file given as text as it reads the same file from disk', () => {
    const text = readFileSync(fixture('btc-1h-2024-04-19_20.csv'), 'utf8');
    const fromText = loadCandles({ text }, { market: 'BTC_USDT' });
    const fromDisk = loadCandles(fixture('btc-1h-2024-04-19_20.csv'), { market: 'BTC_USDT' });
    expect(rowsOf(fromText)).toEqual(rowsOf(fromDisk));
    expect(fromDisk.length).toBe(48);
  });

  it('accepts CRLF line ends, a byte-order mark and a last row without a newline', () => {
    const series = parseCandles(`\uFEFF${HEADER}\r\n3600,10,12,9,11,1\r\n7200,11,13,10,12.5,1`, { market: 'X_Y' });
    expect(rowsOf(series)).toEqual([
      [3600, '10', '11'],
      [7200, '11', '12.5'],
    ]);
  });

  it('reads high, low and the volume (the last field of a row) as the file writes them, whatever ends the row', () => {
    const fields = (series: CandleSeries, i: number): string[] => [series.highText(i), series.lowText(i), series.volumeText(i)];
    const series = parseCandles(`${HEADER}\r\n3600,10,12,9,11,0.5\r\n7200,11,13,10,12.5,1.25\n10800,12,14,11,13,2`, { market: 'X_Y' });
    expect([0, 1, 2].map((i) => fields(series, i))).toEqual([
      ['12', '9', '0.5'],
      ['13', '10', '1.25'],
      ['14', '11', '2'],
    ]);
  });

  it('refuses an index outside the series instead of reading another row', () => {
    const series = parseCandles(csv('3600,10,12,9,11,1'), { market: 'X_Y' });
    expect(() => series.openDecimal(1)).toThrow(RangeError);
    expect(() => series.closeText(-1)).toThrow(RangeError);
  });
});

describe('intervals and gaps', () => {
  it('detects the interval as the most common step and reports the 33-hour outage of February 2018', () => {
    const series = loadCandles(fixture('btc-1h-2018-02-gap.csv'), { market: 'BTC_USDT' });
    expect(series.length).toBe(63);
    expect(series.intervalSec).toBe(3600);
    expect(series.gaps).toEqual([{ afterTimeSec: hour('2018-02-08T00:00'), missing: 33 }]);
  });

  it('reports the one missing hour of 2021-03-06', () => {
    const series = loadCandles(fixture('btc-1h-2021-03-01_14.csv'), { market: 'BTC_USDT' });
    expect(series.length).toBe(14 * 24 - 1);
    expect(series.gaps).toEqual([{ afterTimeSec: hour('2021-03-06T01:00'), missing: 1 }]);
  });

  it('reports every gap of the committed hourly set: 28 gaps, 128 missing hours', () => {
    const series = loadCandles(new URL('../../data/BTCUSDT_1h_binance_2017-08-17_2024-04-21.csv', import.meta.url).pathname, { market: 'BTC_USDT' });
    expect(series.length).toBe(58_419);
    expect(series.gaps.length).toBe(28);
    expect(series.gaps.reduce((sum, gap) => sum + gap.missing, 0)).toBe(128);
    expect(series.gaps[2]).toEqual({ afterTimeSec: hour('2018-02-08T00:00'), missing: 33 });
  });

  it('counts the rows off the interval grid (a 09:05 row, two rows 5 minutes apart), with the first one, and none in a clean file', () => {
    const rows = ['0,10,12,9,11,1', '3600,10,12,9,11,1', '7200,10,12,9,11,1', '7500,10,12,9,11,1', '10800,10,12,9,11,1', '14400,10,12,9,11,1'];
    const series = parseCandles(csv(...rows), { market: 'X_Y' });
    expect(series.intervalSec).toBe(3600);
    // 7200 → 7500 and 7500 → 10800 are no whole hours.
    expect(series.offGrid).toEqual({ count: 2, firstTimeSec: 7500 });
    // 7200 → 7500 → 10800: nothing is missing, so no gap either.
    expect(series.gaps).toEqual([]);
    expect(loadCandles(fixture('btc-1h-2021-03-01_14.csv'), { market: 'BTC_USDT' }).offGrid).toBeNull();
  });

  it('takes the interval from the whole file, so a short period cut from it still knows its step', () => {
    const at = hour('2021-03-02T05:00') * 1000;
    const series = loadCandles(fixture('btc-1h-2021-03-01_14.csv'), { market: 'BTC_USDT', fromMs: at, toMs: at });
    expect([series.length, series.intervalSec, series.gaps]).toEqual([1, 3600, []]);
  });
});

/** Everything a backtest reads of a series: every column, every price as text, the gaps. */
function everything(series: CandleSeries): unknown {
  const rows = Array.from({ length: series.length }, (_, i) => [series.timeSec(i), series.openText(i), series.highText(i), series.lowText(i), series.closeText(i), series.volumeText(i), series.closeEstimate(i)]);
  return { market: series.market, length: series.length, intervalSec: series.intervalSec, gaps: series.gaps, rows };
}

describe('one parse shared with worker threads (a sweep parses its candles once)', () => {
  it('gives a series equal to the one parsed, whether it was loaded into shared memory or copied there', () => {
    const file = fixture('btc-1h-2021-03-01_14.csv');
    const cut = { market: 'BTC_USDT', fromMs: hour('2021-03-03T07:00') * 1000, toMs: hour('2021-03-09T12:00') * 1000 };
    const plain = loadCandles(file, cut);
    const loadedShared = loadCandles(file, { ...cut, shared: true });
    expect(loadedShared.times.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(everything(loadedShared)).toEqual(everything(plain));
    for (const source of [plain, loadedShared]) expect(everything(sharedCandles(shareCandles(source)))).toEqual(everything(plain));
    // Shared, not copied again: the parts of a series loaded into shared memory are its own.
    expect(shareCandles(loadedShared).times).toBe(loadedShared.times.buffer);
  });

  it('reaches a worker thread through postMessage without copying the bytes, and reads the same there', async () => {
    const file = fixture('btc-1m-2025-05-20.csv');
    const series = loadCandles(file, { market: 'BTC_USDT', shared: true });
    const columns = shareCandles(series);
    const source = `
      const { parentPort } = require('node:worker_threads');
      parentPort.once('message', (columns) => {
        const bytes = Buffer.from(columns.bytes.buffer, columns.bytes.byteOffset, columns.bytes.byteLength);
        const times = new Float64Array(columns.times);
        const first = bytes.toString('latin1', 0, 31);
        // Written here, seen by the main thread: the memory is the same, not a copy.
        bytes[0] = 0x54;
        parentPort.postMessage({ shared: columns.times instanceof SharedArrayBuffer, rows: times.length, first });
      });`;
    const worker = new Worker(source, { eval: true });
    try {
      const answer = await new Promise<{ shared: boolean; rows: number; first: string }>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
        worker.postMessage(columns satisfies SharedCandleColumns);
      });
      expect(answer).toEqual({ shared: true, rows: 1440, first: 'time,open,high,low,close,volume' });
      expect(new Uint8Array(columns.bytes.buffer)[columns.bytes.byteOffset]).toBe(0x54);
    } finally {
      await worker.terminate();
    }
  });

  it('refuses a series it did not parse', () => {
    const fake = { ...parseCandles(csv('3600,1,2,0.5,1,1'), { market: 'X_Y' }) } as CandleSeries;
    expect(() => shareCandles(fake)).toThrow(TypeError);
  });
});

describe('cutting a period (--from, --to)', () => {
  it('keeps candles whose open time lies within both bounds, inclusive', () => {
    const from = Date.UTC(2021, 2, 2);
    const to = Date.UTC(2021, 2, 2, 23);
    const series = loadCandles(fixture('btc-1h-2021-03-01_14.csv'), { market: 'BTC_USDT', fromMs: from, toMs: to });
    expect(series.length).toBe(24);
    expect(series.timeSec(0) * 1000).toBe(from);
    expect(series.timeSec(23) * 1000).toBe(to);
  });

  it('gives an empty series when no candle falls in the period (the caller says so)', () => {
    const series = loadCandles(fixture('btc-1h-2021-03-01_14.csv'), { market: 'BTC_USDT', fromMs: Date.UTC(2030, 0, 1) });
    expect(series.length).toBe(0);
    expect(series.priceAt(Date.UTC(2030, 0, 1))).toBeNull();
    expect(series.priceAtOrAfter(0)).toBeNull();
  });
});

describe('the fill rule: the open of the first candle opening at or after the time', () => {
  const series = parseCandles(csv('3600,10,12,9,11,1', '7200,11,13,10,12.5,1', '14400,12,14,11,13.25,1'), { market: 'X_Y' });
  const price = (ms: number): string | null => {
    const p = series.priceAt(ms);
    return p === null ? null : formatDecimal(p);
  };

  it('uses the candle opening exactly at the time', () => {
    expect(price(3_600_000)).toBe('10');
    expect(series.priceAtOrAfter(3_600_000)).toMatchObject({ index: 0 });
  });

  it('never uses the candle that contains the time: one millisecond later it is the next open', () => {
    expect(price(3_600_001)).toBe('11');
    const found = series.priceAtOrAfter(3_600_001);
    expect(found?.index).toBe(1);
    expect(formatDecimal(found?.open ?? series.openDecimal(0))).toBe('11');
  });

  it('jumps a gap to the first candle after it', () => {
    expect(price(7_200_001)).toBe('12');
    expect(series.firstAtOrAfter(10_800_000)).toBe(2);
  });

  it('before the first candle, fills at the first open', () => {
    expect(price(0)).toBe('10');
  });

  it('past the last candle, priceAtOrAfter has none and priceAt gives the last close', () => {
    expect(series.priceAtOrAfter(14_400_001)).toBeNull();
    expect(price(14_400_001)).toBe('13.25');
  });

  it('answers the same as the sim core rule (candlePriceAt) at every minute of a day, in and out of order', () => {
    const text = readFileSync(fixture('btc-1h-2018-02-gap.csv'), 'utf8');
    const columnar = parseCandles(text, { market: 'BTC_USDT' });
    const candles = parseCandleCsv(text);
    const start = hour('2018-02-07T00:00') * 1000 - 90_000;
    const moments = Array.from({ length: 5000 }, (_, i) => start + i * 61_000);
    for (const ms of [...moments, ...moments.slice().reverse()]) {
      expect(formatDecimal(columnar.priceAt(ms) ?? candles[0]!.open.neg())).toBe(formatDecimal(candlePriceAt(candles, ms) ?? candles[0]!.open.neg()));
    }
  });
});

describe('bad files', () => {
  it('refuses a file with bad rows, naming every line and what is wrong', () => {
    const problems = problemsOf(() => loadCandles(fixture('bad-rows.csv'), { market: 'BTC_USDT' })).problems;
    expect(problems.map((p) => p.line)).toEqual([3, 4, 5]);
    expect(problems[0]?.reason).toMatch(/high "abc" is not a plain decimal/);
    expect(problems[1]?.reason).toMatch(/inconsistent/);
    expect(problems[2]?.reason).toBe('time 1614556800 is line 2\'s time again');
  });

  it('names each kind of bad row: field count, empty line, zero price, fractional time, negative volume, exponent', () => {
    const error = problemsOf(() => loadCandles(fixture('bad-rows-mixed.csv'), { market: 'BTC_USDT' }));
    expect(error.source).toBe(fixture('bad-rows-mixed.csv'));
    expect(error.problems).toEqual([
      { line: 3, reason: 'expected 6 fields, got 5' },
      { line: 4, reason: 'empty line' },
      { line: 5, reason: 'a price is zero' },
      { line: 6, reason: 'time "1614567600.5" is not Unix seconds' },
      { line: 7, reason: 'volume "-1" is negative' },
      { line: 8, reason: 'open "1e5" is not a plain decimal' },
    ]);
  });

  it('takes blank lines at the end of the file as its end (exporters write them), and refuses one between rows', () => {
    for (const end of ['\n\n', '\r\n\r\n', '\n\n  \n', '\n\t\n\n']) {
      const series = parseCandles(`${HEADER}\n3600,1,2,1,1,0\n7200,1,2,1,1,0${end}`, { market: 'BTC_USDT' });
      expect(series.length).toBe(2);
    }
    expect(problemsOf(() => parseCandles(`${HEADER}\n3600,1,2,1,1,0\n\n7200,1,2,1,1,0\n\n`, { market: 'BTC_USDT' })).problems).toEqual([{ line: 3, reason: 'empty line' }]);
  });

  it('refuses and accepts exactly the rows parseCandleCsv refuses and accepts, with the same reasons', () => {
    const files = [
      fixture('bad-rows.csv'),
      fixture('bad-rows-mixed.csv'),
      fixture('btc-1h-2018-02-gap.csv'),
      fixture('btc-1m-2025-05-20.csv'),
    ].map((path) => readFileSync(path, 'utf8'));
    files.push(csv('3600,1,1,1,1,0', '', '7200,1,1,1,1,0'), `${HEADER}\n3600,1,2,1,1,0\n\n`, csv('3600,1.,2,1,1,0'), csv('3600,1,2,1,1,.5'), csv(' 3600,1,2,1,1,0'));
    for (const text of files) {
      const outcome = (parse: () => unknown) => {
        try {
          parse();
          return 'accepted';
        } catch (error) {
          return error instanceof CandleCsvError ? error.problems : error;
        }
      };
      expect(outcome(() => parseCandles(text, { market: 'X_Y', source: 's' }))).toEqual(outcome(() => parseCandleCsv(text, 's')));
    }
  });

  it('agrees with parseCandleCsv on any file made of numbers, separators and stray characters', () => {
    const number = fc.oneof(
      fc.stringMatching(/^\d{1,6}(\.\d{1,10})?$/),
      fc.stringMatching(/^\d{1,20}\.\d{1,20}$/),
      fc.constantFrom('0', '0.0', '', '.5', '5.', '-1', '1e3', ' 1', 'abc'),
    );
    const row = fc.oneof(
      fc.tuple(fc.integer({ min: 0, max: 2_000_000_000 }), number, number, number, number, number).map(([t, ...v]) => [String(t), ...v].join(',')),
      fc.tuple(fc.integer({ min: 0, max: 2_000_000_000 }), fc.integer({ min: 1, max: 9 })).map(([t, p]) => `${t},${p},${p + 1},${p},${p},1`),
      fc.constantFrom('', '1,2,3', '1,2,3,4,5,6,7', '1.5,1,1,1,1,1'),
    );
    const file = fc.tuple(fc.array(row, { maxLength: 8 }), fc.constantFrom('\n', '\r\n'), fc.boolean()).map(([rows, eol, finalEol]) => [HEADER, ...rows].join(eol) + (finalEol ? eol : ''));
    // Accepted: each candle's time, open and close as exact decimals; refused: the problems.
    const outcome = (parse: () => Array<[number, Decimal, Decimal]>): unknown => {
      try {
        return parse().map(([time, open, close]) => [time, formatDecimal(open), formatDecimal(close)]);
      } catch (error) {
        return error instanceof CandleCsvError ? error.problems : String(error);
      }
    };
    const columnar = (text: string) => () =>
      rowsOf(parseCandles(text, { market: 'X_Y', source: 's' })).map(([time, open, close]): [number, Decimal, Decimal] => [time, new Decimal(open), new Decimal(close)]);
    const reference = (text: string) => () => parseCandleCsv(text, 's').map((c): [number, Decimal, Decimal] => [c.timeSec, c.open, c.close]);
    fc.assert(
      fc.property(file, (text) => {
        expect(outcome(columnar(text))).toEqual(outcome(reference(text)));
      }),
      { numRuns: 500 },
    );
  });

  it('compares prices with more digits than a float holds exactly, not as floats', () => {
    // As floats 1.0000000000000001 == 1, so "low <= open" would pass; exactly it does not.
    const error = problemsOf(() => parseCandles(csv('3600,1,2,1.0000000000000001,1.5,0'), { market: 'X_Y' }));
    expect(error.problems).toEqual([{ line: 2, reason: 'prices are inconsistent (need low <= open, close <= high)' }]);
    const fine = parseCandles(csv('3600,1.0000000000000001,2,1.0000000000000001,1.5,0'), { market: 'X_Y' });
    expect(fine.openText(0)).toBe('1.0000000000000001');
  });

  it('refuses a file without the header, and a header with no candles', () => {
    expect(() => parseCandles('1,2,3,4,5,6\n', { market: 'X_Y' })).toThrow(/line 1: header must be/);
    expect(problemsOf(() => parseCandles(`${HEADER}\n`, { market: 'X_Y' })).problems).toEqual([{ line: 2, reason: 'no candles after the header' }]);
  });

  it('refuses a row longer than any candle row without decoding it (a binary, a file of NUL bytes), and takes a long blank tail as the end', () => {
    const long = `1614556800,${'1'.repeat(5000)},2,1,1,1`;
    const nul = '\0'.repeat(10_000);
    for (const text of [csv('3600,1,2,1,1,0', long), csv('3600,1,2,1,1,0', nul, '7200,1,2,1,1,0')]) {
      const error = problemsOf(() => parseCandles(text, { market: 'X_Y', source: 's' }));
      expect(error.problems).toEqual([{ line: 3, reason: expect.stringMatching(/^a row of \d+ bytes: a candle row \(time,open,high,low,close,volume\) is never over 4096 bytes; is this a candle file\?$/) }]);
      expect(error.problems).toEqual(problemsOf(() => parseCandleCsv(text, 's')).problems);
    }
    expect(parseCandles(`${csv('3600,1,2,1,1,0')}${' '.repeat(10_000)}\n\n`, { market: 'X_Y' }).length).toBe(1);
  });

  it('stops after 20 problems, so a wrong file does not flood the terminal', () => {
    const rows = Array.from({ length: 50 }, (_, i) => `${3600 * (i + 1)},x,1,1,1,1`);
    expect(problemsOf(() => parseCandles(csv(...rows), { market: 'X_Y' })).problems.length).toBe(20);
  });
});

describe('replaying a file several times (benchmarks)', () => {
  it('shifts each copy by the span of the file and shares the prices', () => {
    const base = parseCandles(csv('3600,10,12,9,11,1', '7200,11,13,10,12.5,1'), { market: 'X_Y' });
    const replay = repeatSeries(base, 3);
    expect(Array.from(replay.times)).toEqual([3600, 7200, 10_800, 14_400, 18_000, 21_600]);
    expect([replay.openText(2), replay.closeText(5), replay.intervalSec, replay.gaps]).toEqual(['10', '12.5', 3600, []]);
  });

  it('takes only series made by the loader, and a positive number of copies', () => {
    const base = parseCandles(csv('3600,10,12,9,11,1'), { market: 'X_Y' });
    expect(() => repeatSeries({ ...base }, 2)).toThrow(TypeError);
    expect(() => repeatSeries(base, 0)).toThrow(RangeError);
  });
});
