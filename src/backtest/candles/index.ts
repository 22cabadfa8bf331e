import { readFileSync } from 'node:fs';
import { Decimal } from '../../domain/money.ts';
import { CANDLE_CSV_HEADER, CandleCsvError, type CandleCsvProblem } from '../../sim/candles.ts';

/** Missing candles between two present ones: `missing` intervals after `afterTimeSec`. */
export interface CandleGap {
  readonly afterTimeSec: number;
  readonly missing: number;
}

/**
 * Candles in columns, for backtests over millions of rows: open times in a Float64Array, prices
 * kept as the file's own text and turned into Decimal only when a slot or a chart asks (a
 * backtest reads a price a few thousand times, not a few million). No float ever carries a price.
 */
export interface CandleSeries {
  readonly market: string;
  readonly length: number;
  /** The most common step between rows, in seconds. */
  readonly intervalSec: number;
  readonly gaps: readonly CandleGap[];
  timeSec(index: number): number;
  openDecimal(index: number): Decimal;
  closeDecimal(index: number): Decimal;
  /** Index of the first candle opening at or after `timeMs`; `length` when none does. */
  firstAtOrAfter(timeMs: number): number;
  /**
   * The backtest fill rule: the OPEN of the first candle whose open time is at or after
   * `timeMs`; past the last candle, the last close. null for an empty series.
   */
  priceAt(timeMs: number): Decimal | null;
}

export interface LoadOptions {
  readonly market: string;
  /** Inclusive bounds on the open time. */
  readonly fromMs?: number;
  readonly toMs?: number;
  /** Shown in errors: the file path. */
  readonly source?: string;
}

const MAX_PROBLEMS = 20;
const ROW = /(\d{1,12}),(\d+(?:\.\d+)?),(\d+(?:\.\d+)?),(\d+(?:\.\d+)?),(\d+(?:\.\d+)?),\d+(?:\.\d+)?\r?(?=\n|$)/y;

/** low <= open, close <= high, no zero price (floats only check the file; no money is computed from them). */
function consistent(m: RegExpExecArray): boolean {
  const open = Number(m[2]);
  const high = Number(m[3]);
  const low = Number(m[4]);
  const close = Number(m[5]);
  return open > 0 && low > 0 && low <= open && low <= close && high >= open && high >= close;
}
const PRICE = /^\d+(?:\.\d+)?$/;
const TIME = /^\d{1,12}$/;

/**
 * Parse `time,open,high,low,close,volume` (the format of the files in data/): every bad
 * row is reported with its line number and the file is refused as a whole, like parseCandleCsv;
 * gaps (missing intervals) are tolerated and reported.
 */
export function parseCandles(text: string, options: LoadOptions): CandleSeries {
  const source = options.source ?? `${options.market} candles`;
  const fromSec = options.fromMs === undefined ? -Infinity : options.fromMs / 1000;
  const toSec = options.toMs === undefined ? Infinity : options.toMs / 1000;
  let start = 0;
  const firstNewline = text.indexOf('\n');
  const header = (firstNewline === -1 ? text : text.slice(0, firstNewline)).replace(/\r$/, '').replace(/^\uFEFF/, '');
  if (header !== CANDLE_CSV_HEADER) throw new CandleCsvError(source, [{ line: 1, reason: `header must be "${CANDLE_CSV_HEADER}", got ${JSON.stringify(header.slice(0, 80))}` }]);
  start = firstNewline === -1 ? text.length : firstNewline + 1;

  const capacity = Math.max(16, Math.ceil(text.length / 40));
  let times = new Float64Array(capacity);
  const opens: string[] = [];
  const closes: string[] = [];
  const problems: CandleCsvProblem[] = [];
  let line = 1;
  let previous = -1;
  let count = 0;
  while (start < text.length && problems.length < MAX_PROBLEMS) {
    line += 1;
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    // The common case in one sticky regex (no per-row arrays); a row it does not match goes
    // through checkRow, which says what exactly is wrong with it.
    ROW.lastIndex = start;
    const match = ROW.exec(text);
    let fields: readonly string[];
    if (match !== null && ROW.lastIndex - 1 <= end && consistent(match)) {
      fields = match;
      start = end + 1;
    } else {
      let row = text.slice(start, end);
      start = end + 1;
      if (row.endsWith('\r')) row = row.slice(0, -1);
      if (row === '' && start >= text.length) break;
      const split = row.split(',');
      const problem = checkRow(split);
      if (problem !== null) {
        problems.push({ line, reason: problem });
        continue;
      }
      fields = ['', ...split];
    }
    const time = Number(fields[1]);
    if (time <= previous) {
      problems.push({ line, reason: `time ${time} is not after the previous row's ${previous}` });
      continue;
    }
    previous = time;
    if (time < fromSec || time > toSec) continue;
    if (count === times.length) {
      const grown = new Float64Array(times.length * 2);
      grown.set(times);
      times = grown;
    }
    times[count] = time;
    opens.push(fields[2] as string);
    closes.push(fields[5] as string);
    count += 1;
  }
  if (problems.length > 0) throw new CandleCsvError(source, problems);
  const result = series(options.market, times.subarray(0, count), opens, closes);
  columns.set(result, { opens, closes });
  return result;
}

export function loadCandles(path: string, options: Omit<LoadOptions, 'source'>): CandleSeries {
  return parseCandles(readFileSync(path, 'utf8'), { ...options, source: path });
}

function checkRow(fields: readonly string[]): string | null {
  if (fields.length !== 6) return fields.length === 1 && fields[0] === '' ? 'empty line' : `expected 6 fields, got ${fields.length}`;
  if (!TIME.test(fields[0] as string)) return `time ${JSON.stringify(fields[0])} is not Unix seconds`;
  const names = ['open', 'high', 'low', 'close', 'volume'];
  for (let i = 1; i < 6; i += 1) if (!PRICE.test(fields[i] as string)) return `${names[i - 1]} ${JSON.stringify(fields[i])} is not a plain decimal`;
  // Consistency (low <= open, close <= high) compared as numbers is safe here: it only checks the
  // file, no money is computed from these floats.
  const [open, high, low, close] = [Number(fields[1]), Number(fields[2]), Number(fields[3]), Number(fields[4])];
  if (open === 0 || high === 0 || low === 0 || close === 0) return 'a price is zero';
  if (low > open || low > close || high < open || high < close) return 'prices are inconsistent (need low <= open, close <= high)';
  return null;
}

const columns = new WeakMap<CandleSeries, { readonly opens: readonly string[]; readonly closes: readonly string[] }>();

/**
 * One file replayed `copies` times end to end, each copy shifted by the file's span (the
 * benchmark's million candles out of a 130 000-row file). Prices are shared with the original,
 * not copied.
 */
export function repeatSeries(base: CandleSeries, copies: number): CandleSeries {
  const source = columns.get(base);
  if (source === undefined) throw new TypeError('repeatSeries takes a series from parseCandles');
  const n = base.length;
  const span = base.timeSec(n - 1) - base.timeSec(0) + base.intervalSec;
  const times = new Float64Array(n * copies);
  for (let copy = 0; copy < copies; copy += 1) for (let i = 0; i < n; i += 1) times[copy * n + i] = base.timeSec(i) + copy * span;
  return series(base.market, times, (i) => source.opens[i % n] as string, (i) => source.closes[i % n] as string);
}

type Column = readonly string[] | ((index: number) => string);

/** Build a series over columns. */
function series(market: string, times: Float64Array, openColumn: Column, closeColumn: Column): CandleSeries {
  const openText = typeof openColumn === 'function' ? openColumn : (index: number) => openColumn[index] as string;
  const closeText = typeof closeColumn === 'function' ? closeColumn : (index: number) => closeColumn[index] as string;
  const length = times.length;
  const intervalSec = commonStep(times);
  const gaps: CandleGap[] = [];
  if (intervalSec > 0) {
    for (let i = 1; i < length; i += 1) {
      const step = (times[i] as number) - (times[i - 1] as number);
      if (step > intervalSec) gaps.push({ afterTimeSec: times[i - 1] as number, missing: Math.round(step / intervalSec) - 1 });
    }
  }
  const firstAtOrAfter = (timeMs: number): number => {
    const sec = timeMs / 1000;
    let lo = 0;
    let hi = length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((times[mid] as number) >= sec) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  };
  return {
    market,
    length,
    intervalSec,
    gaps,
    timeSec: (index) => times[index] as number,
    openDecimal: (index) => new Decimal(openText(index)),
    closeDecimal: (index) => new Decimal(closeText(index)),
    firstAtOrAfter,
    priceAt(timeMs) {
      if (length === 0) return null;
      const index = firstAtOrAfter(timeMs);
      return index < length ? new Decimal(openText(index)) : new Decimal(closeText(length - 1));
    },
  };
}

function commonStep(times: Float64Array): number {
  const counts = new Map<number, number>();
  const sample = Math.min(times.length, 10_000);
  for (let i = 1; i < sample; i += 1) {
    const step = (times[i] as number) - (times[i - 1] as number);
    counts.set(step, (counts.get(step) ?? 0) + 1);
  }
  let best = 0;
  let bestCount = 0;
  for (const [step, n] of counts) if (n > bestCount || (n === bestCount && step < best)) [best, bestCount] = [step, n];
  return best;
}
