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
  // Where each price sits in the text: the text stays the one copy of the numbers.
  let openStarts = new Uint32Array(capacity);
  let openEnds = new Uint32Array(capacity);
  let closeStarts = new Uint32Array(capacity);
  let closeEnds = new Uint32Array(capacity);
  const scan: Scan = { time: 0, openStart: 0, openEnd: 0, closeStart: 0, closeEnd: 0 };
  const problems: CandleCsvProblem[] = [];
  let line = 1;
  let previous = -1;
  let count = 0;
  while (start < text.length && problems.length < MAX_PROBLEMS) {
    line += 1;
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    // The common case by scanning characters (no per-row strings or arrays); a row the scanner
    // does not accept goes through checkRow, which says what exactly is wrong with it.
    const rowStart = start;
    start = end + 1;
    if (!scanRow(text, rowStart, end, scan)) {
      let row = text.slice(rowStart, end);
      if (row.endsWith('\r')) row = row.slice(0, -1);
      if (row === '' && start >= text.length) break;
      const split = row.split(',');
      // checkRow and the scanner accept the same rows; checkRow names what is wrong.
      problems.push({ line, reason: checkRow(split) ?? 'not a well-formed row' });
      continue;
    }
    const time = scan.time;
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
    if (count === openStarts.length) {
      openStarts = grow(openStarts);
      openEnds = grow(openEnds);
      closeStarts = grow(closeStarts);
      closeEnds = grow(closeEnds);
    }
    times[count] = time;
    openStarts[count] = scan.openStart;
    openEnds[count] = scan.openEnd;
    closeStarts[count] = scan.closeStart;
    closeEnds[count] = scan.closeEnd;
    count += 1;
  }
  if (problems.length > 0) throw new CandleCsvError(source, problems);
  const openText = (i: number): string => text.slice(openStarts[i] as number, openEnds[i] as number);
  const closeText = (i: number): string => text.slice(closeStarts[i] as number, closeEnds[i] as number);
  const result = series(options.market, times.subarray(0, count), openText, closeText);
  columns.set(result, { openText, closeText });
  return result;
}

interface Scan {
  time: number;
  openStart: number;
  openEnd: number;
  closeStart: number;
  closeEnd: number;
}

function grow(column: Uint32Array<ArrayBuffer>): Uint32Array<ArrayBuffer> {
  const grown = new Uint32Array(column.length * 2);
  grown.set(column);
  return grown;
}

const ZERO_CODE = 48;
const NINE_CODE = 57;
const COMMA = 44;
const DOT = 46;
const CR = 13;

/**
 * Accept a well-formed row `time,open,high,low,close,volume` between `start` and `end` (the
 * newline), noting where open and close sit; false for anything else. Prices are read as floats
 * here only to check low <= open, close <= high and no zero: no money is computed from them.
 */
function scanRow(text: string, start: number, end: number, out: Scan): boolean {
  let pos = start;
  let time = 0;
  let digits = 0;
  for (; pos < end; pos += 1) {
    const c = text.charCodeAt(pos);
    if (c < ZERO_CODE || c > NINE_CODE) break;
    time = time * 10 + (c - ZERO_CODE);
    digits += 1;
  }
  if (digits === 0 || digits > 12 || text.charCodeAt(pos) !== COMMA) return false;
  const values = [0, 0, 0, 0, 0];
  for (let field = 0; field < 5; field += 1) {
    pos += 1;
    const fieldStart = pos;
    let whole = 0;
    let fraction = 0;
    let scale = 1;
    let seenDot = false;
    let fieldDigits = 0;
    for (; pos < end; pos += 1) {
      const c = text.charCodeAt(pos);
      if (c >= ZERO_CODE && c <= NINE_CODE) {
        if (seenDot) {
          fraction = fraction * 10 + (c - ZERO_CODE);
          scale *= 10;
        } else whole = whole * 10 + (c - ZERO_CODE);
        fieldDigits += 1;
      } else if (c === DOT && !seenDot && fieldDigits > 0) seenDot = true;
      else break;
    }
    const last = text.charCodeAt(pos - 1);
    if (fieldDigits === 0 || last === DOT) return false;
    const terminator = text.charCodeAt(pos);
    if (field < 4 ? terminator !== COMMA : !(pos === end || (terminator === CR && pos + 1 === end))) return false;
    values[field] = whole + fraction / scale;
    if (field === 0) {
      out.openStart = fieldStart;
      out.openEnd = pos;
    } else if (field === 3) {
      out.closeStart = fieldStart;
      out.closeEnd = pos;
    }
  }
  const [open, high, low, close] = values as [number, number, number, number, number];
  if (!(open > 0 && low > 0 && low <= open && low <= close && high >= open && high >= close)) return false;
  out.time = time;
  return true;
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

const columns = new WeakMap<CandleSeries, { readonly openText: (index: number) => string; readonly closeText: (index: number) => string }>();

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
  return series(base.market, times, (i) => source.openText(i % n), (i) => source.closeText(i % n));
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
