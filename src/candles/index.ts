import { CANDLE_INTERVAL_SEC, type Candle } from '../domain/candle.ts';
import { Decimal } from '../domain/money.ts';
import { firstAtLeast } from '../domain/sorted.ts';
import { CandleCsvError } from './csv-errors.ts';
import { bodyStart, readCandleBytes } from './file-bytes.ts';
import { type ScannedPart, mostCommonStep, scanPart } from './part.ts';

/** Missing candles between two present ones: `missing` intervals after the candle at `afterTimeSec`. */
export interface CandleGap {
  readonly afterTimeSec: number;
  readonly missing: number;
}

/**
 * Candles in columns, for backtests over millions of rows. Open times sit in a Float64Array
 * (whole seconds, exact); prices stay the file's own text, and a Decimal is made only when a
 * slot or a chart asks for one (a backtest reads a price a few thousand times, not a few
 * million). Reading a time is O(1) and allocates nothing; no float ever carries money.
 */
export interface CandleSeries {
  readonly market: string;
  readonly length: number;
  /** The most common step between consecutive rows of the file, in seconds (0 for a single row). */
  readonly intervalSec: number;
  /** Runs of missing candles within the series, given `intervalSec`. */
  readonly gaps: readonly CandleGap[];
  /**
   * Rows whose step from the row before is not a whole number of intervals (a 09:05 row in an
   * hourly file, two rows 5 minutes apart): how many, and the first one's time; null when none.
   * Such a file is read, but its interval is not what every candle spans.
   */
  readonly offGrid: { readonly count: number; readonly firstTimeSec: number } | null;
  /** Open times in Unix seconds, ascending. Shared with the series: read it, never write it. */
  readonly times: Float64Array;
  timeSec(index: number): number;
  /** The price exactly as the file writes it. */
  openText(index: number): string;
  highText(index: number): string;
  lowText(index: number): string;
  closeText(index: number): string;
  /** The volume (base traded) exactly as the file writes it. */
  volumeText(index: number): string;
  openDecimal(index: number): Decimal;
  closeDecimal(index: number): Decimal;
  /** The close as the nearest float: for chart coordinates only, never for money. */
  closeNumber(index: number): number;
  /** The close as a float within a few parts in 10^16, as the parse read it (no string made): for ruling candles out, never for money. */
  closeEstimate(index: number): number;
  /**
   * The lowest and highest closeEstimate of candles [from, to), read straight from the column (a
   * backtest rules whole runs of candles out at once); null when a close there was not read as a
   * float by the parse (then ask closeEstimate one by one).
   */
  closeEstimateRange(from: number, to: number): { readonly low: number; readonly high: number } | null;
  /** Index of the first candle opening at or after `timeMs`; `length` when none does. */
  firstAtOrAfter(timeMs: number): number;
  /**
   * The candle a slot at `timeMs` fills on (the backtest fill rule): the first
   * whose open time is at or after it, with its open. null when no candle opens that late.
   */
  priceAtOrAfter(timeMs: number): { readonly index: number; readonly open: Decimal } | null;
  /** The fill rule's price: priceAtOrAfter's open; past the last candle, the last close. null when empty. */
  priceAt(timeMs: number): Decimal | null;
  /**
   * The last price known at `timeMs`, what a ticker shows then: the open of the candle opening
   * at or last before it, or that candle's close once it has closed (a gap in the data, the end
   * of the file). Never a later candle's price: a decision at 08:30 on hourly data does not see
   * the 09:00 open its order will fill at. null before the first candle.
   */
  priceKnownAt(timeMs: number): Decimal | null;
  /**
   * The hours opening in [fromSec, toSec), each made of all its candles: open of the hour's
   * first, close of its last, high and low over all. An hour is whole or absent (no data): one
   * that opened before `fromSec` is not begun again from the candles after it, nor one opening
   * before `toSec` cut at it, so asking for the hours after the last one held never gives an hour
   * twice. Hourly data is its own candles; coarser data (daily) its candles, at their open.
   */
  hourly(fromSec: number, toSec: number): Candle[];
}

export interface LoadOptions {
  readonly market: string;
  /** Inclusive bounds on the open time. */
  readonly fromMs?: number;
  readonly toMs?: number;
  /** Shown in errors: the file path. */
  readonly source?: string;
  /**
   * Keep the columns in shared memory too (a file's bytes always are: readCandleBytes), so that
   * worker threads read the series (shareCandles) instead of each reading and parsing the file again.
   */
  readonly shared?: boolean;
}

const MAX_PROBLEMS = 20;
/** time,open,high,low,close,volume: the volume is field 5, the last. */
const LAST_FIELD = 5;
const CR = 13;
const LF = 10;
const COMMA = 44;

/** A file (path) or its content. */
export type CandleInput = string | { readonly text: string };

/**
 * Read and check a candle file (`time,open,high,low,close,volume`, the format of data/): the
 * same rows are accepted and refused as the reference parser of its tests (test/candles/reference-parser.ts) (every bad row reported with its
 * line number, the whole file refused), gaps are tolerated and reported.
 */
export function loadCandles(input: CandleInput, options: LoadOptions): CandleSeries {
  if (typeof input === 'string') return parseCandleBytes(readCandleBytes(input), { ...options, source: options.source ?? input });
  return parseCandles(input.text, options);
}

/** Parse candle text (see parseCandleBytes; the text is scanned as its UTF-8 bytes). */
export function parseCandles(text: string, options: LoadOptions): CandleSeries {
  return parseCandleBytes(Buffer.from(text, 'utf8'), options);
}

/**
 * Parse a candle file's bytes. One pass: a well-formed row is read without making a string or
 * an array; only a row the fast scanner does not accept is decoded, split and checked exactly
 * (with Decimal), which also says what is wrong with it. The series keeps the bytes and reads
 * prices out of them on demand.
 */
export function parseCandleBytes(bytes: Buffer, options: LoadOptions): CandleSeries {
  const source = sourceOf(options);
  const { fromSec, toSec } = periodOf(options);
  const part = scanPart(bytes, bodyStart(bytes, source), bytes.length, { fromSec, toSec }, 1, MAX_PROBLEMS);
  if (part.problems.length > 0) throw new CandleCsvError(source, part.problems, part.stoppedAt < bytes.length);
  if (part.rows === 0) throw new CandleCsvError(source, [{ line: 2, reason: 'no candles after the header' }]);
  return seriesOf(options, bytes, part, mostCommonStep(part.steps));
}

/** What errors name the candles by. */
export function sourceOf(options: LoadOptions): string {
  return options.source ?? `${options.market} candles`;
}

/** The period's bounds in Unix seconds, open-ended where not given. */
export function periodOf(options: LoadOptions): { readonly fromSec: number; readonly toSec: number } {
  return { fromSec: options.fromMs === undefined ? -Infinity : options.fromMs / 1000, toSec: options.toMs === undefined ? Infinity : options.toMs / 1000 };
}

/** The series of a file's scanned rows (in shared memory when `options.shared`). */
export function seriesOf(options: LoadOptions, bytes: Buffer, part: Pick<ScannedPart, 'count' | 'times' | 'rowStarts' | 'closes'>, intervalSec: number): CandleSeries {
  const { count, times, rowStarts, closes } = part;
  const column = options.shared === true ? sharedCopy : <T extends Float64Array | Uint32Array>(c: T, n: number): T => (c.length === n ? c : (c.slice(0, n) as T));
  return new ColumnarCandles(options.market, bytes, column(rowStarts, count), column(times, count), column(closes, count), intervalSec);
}

/**
 * A parsed series as its parts in shared memory: what a worker thread makes the same series of
 * (sharedCandles) without reading the file (a sweep over a million candles parsed it once per
 * run before). Plain data: it goes through postMessage, and the memory is shared, not copied.
 */
export interface SharedCandleColumns {
  readonly market: string;
  readonly intervalSec: number;
  readonly bytes: { readonly buffer: SharedArrayBuffer; readonly byteOffset: number; readonly byteLength: number };
  readonly rowStarts: SharedArrayBuffer;
  readonly times: SharedArrayBuffer;
  readonly closes: SharedArrayBuffer;
}

/** The series' parts in shared memory: as they are when it was loaded with `shared`, else copied there once. */
export function shareCandles(series: CandleSeries): SharedCandleColumns {
  if (!(series instanceof ColumnarCandles)) throw new TypeError('shareCandles takes a series from parseCandles or loadCandles');
  return series.shared();
}

/** The series whose parts shareCandles gave (in a worker thread: the same candles, nothing parsed). */
export function sharedCandles(columns: SharedCandleColumns): CandleSeries {
  const { bytes } = columns;
  return new ColumnarCandles(
    columns.market,
    Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
    new Uint32Array(columns.rowStarts),
    new Float64Array(columns.times),
    new Float64Array(columns.closes),
    columns.intervalSec,
  );
}

/** The first `n` values of a column, in shared memory (kept as they are when they already are). */
function sharedCopy<T extends Float64Array | Uint32Array>(column: T, n: number): T {
  // Kept only when it is the whole of its buffer: a worker makes the column of the whole buffer.
  if (column.buffer instanceof SharedArrayBuffer && column.byteOffset === 0 && column.length === n && column.buffer.byteLength === column.byteLength) return column;
  const shared = (column instanceof Float64Array ? new Float64Array(new SharedArrayBuffer(n * 8)) : new Uint32Array(new SharedArrayBuffer(n * 4))) as T;
  shared.set(column.subarray(0, n));
  return shared;
}

/**
 * One file replayed `copies` times end to end, each copy shifted by the file's span (the
 * benchmark's million candles out of a 130 000-row file). Prices are shared with the original,
 * not copied.
 */
export function repeatSeries(base: CandleSeries, copies: number): CandleSeries {
  if (!(base instanceof ColumnarCandles)) throw new TypeError('repeatSeries takes a series from parseCandles or loadCandles');
  if (!Number.isSafeInteger(copies) || copies < 1) throw new RangeError('copies must be a positive integer');
  return base.repeated(copies);
}

/** The gaps (whole intervals missing) and the steps that are no whole number of intervals. */
function gridOf(times: Float64Array, intervalSec: number): { gaps: CandleGap[]; offGrid: CandleSeries['offGrid'] } {
  const gaps: CandleGap[] = [];
  let offGrid: { count: number; firstTimeSec: number } | null = null;
  if (intervalSec <= 0) return { gaps, offGrid };
  for (let i = 1; i < times.length; i += 1) {
    const step = (times[i] as number) - (times[i - 1] as number);
    if (step % intervalSec !== 0) offGrid = offGrid === null ? { count: 1, firstTimeSec: times[i] as number } : { count: offGrid.count + 1, firstTimeSec: offGrid.firstTimeSec };
    // A step a little over one interval (10:05 after 09:00) is off the grid, not a gap: no candle is missing.
    const missing = Math.round(step / intervalSec) - 1;
    if (missing > 0) gaps.push({ afterTimeSec: times[i - 1] as number, missing });
  }
  return { gaps, offGrid };
}

/**
 * The series over the text: `rowStarts[i % rowStarts.length]` is where candle i's row starts
 * (the modulo serves a repeated series; for a plain one it is the identity).
 */
class ColumnarCandles implements CandleSeries {
  readonly market: string;
  readonly length: number;
  readonly intervalSec: number;
  readonly gaps: readonly CandleGap[];
  readonly offGrid: CandleSeries['offGrid'];
  readonly times: Float64Array;
  readonly #bytes: Buffer;
  readonly #rowStarts: Uint32Array;
  /** Per row (indexed like rowStarts), the close as the scanner read it; NaN for a row it left to the exact check. */
  readonly #closes: Float64Array;
  /** The last index answered: backtests ask in time order, so the next answer is usually here or next. */
  #hint = 0;
  /** The last open and close read as Decimals: a slot asks for the same candle's price several times. Decimals are immutable, so sharing one is safe. */
  #openAt = -1;
  #open: Decimal | null = null;
  #closeAt = -1;
  #close: Decimal | null = null;

  constructor(market: string, bytes: Buffer, rowStarts: Uint32Array, times: Float64Array, closes: Float64Array, intervalSec: number) {
    this.market = market;
    this.length = times.length;
    this.intervalSec = intervalSec;
    this.times = times;
    const grid = gridOf(times, intervalSec);
    this.gaps = grid.gaps;
    this.offGrid = grid.offGrid;
    this.#bytes = bytes;
    this.#rowStarts = rowStarts;
    this.#closes = closes;
  }

  shared(): SharedCandleColumns {
    let sharedBytes = this.#bytes;
    if (!(sharedBytes.buffer instanceof SharedArrayBuffer)) {
      sharedBytes = Buffer.from(new SharedArrayBuffer(this.#bytes.length));
      this.#bytes.copy(sharedBytes);
    }
    return {
      market: this.market,
      intervalSec: this.intervalSec,
      bytes: { buffer: sharedBytes.buffer as SharedArrayBuffer, byteOffset: sharedBytes.byteOffset, byteLength: sharedBytes.byteLength },
      rowStarts: sharedCopy(this.#rowStarts, this.#rowStarts.length).buffer as SharedArrayBuffer,
      times: sharedCopy(this.times, this.times.length).buffer as SharedArrayBuffer,
      closes: sharedCopy(this.#closes, this.#closes.length).buffer as SharedArrayBuffer,
    };
  }

  repeated(copies: number): ColumnarCandles {
    const n = this.length;
    if (n === 0) return this;
    const span = (this.times[n - 1] as number) - (this.times[0] as number) + this.intervalSec;
    const times = new Float64Array(n * copies);
    for (let copy = 0; copy < copies; copy += 1) for (let i = 0; i < n; i += 1) times[copy * n + i] = (this.times[i] as number) + copy * span;
    return new ColumnarCandles(this.market, this.#bytes, this.#rowStarts, times, this.#closes, this.intervalSec);
  }

  timeSec(index: number): number {
    return this.times[index] as number;
  }

  openText(index: number): string {
    return this.#field(index, 1);
  }

  highText(index: number): string {
    return this.#field(index, 2);
  }

  lowText(index: number): string {
    return this.#field(index, 3);
  }

  closeText(index: number): string {
    return this.#field(index, 4);
  }

  volumeText(index: number): string {
    return this.#field(index, 5);
  }

  openDecimal(index: number): Decimal {
    if (index !== this.#openAt || this.#open === null) {
      this.#open = new Decimal(this.#field(index, 1));
      this.#openAt = index;
    }
    return this.#open;
  }

  closeDecimal(index: number): Decimal {
    if (index !== this.#closeAt || this.#close === null) {
      this.#close = new Decimal(this.#field(index, 4));
      this.#closeAt = index;
    }
    return this.#close;
  }

  closeNumber(index: number): number {
    return Number(this.#field(index, 4));
  }

  closeEstimate(index: number): number {
    if (!(index >= 0 && index < this.length)) throw new RangeError(`candle ${index} is outside 0..${this.length - 1}`);
    const read = this.#closes[index % this.#closes.length] as number;
    return Number.isNaN(read) ? this.closeNumber(index) : read;
  }

  closeEstimateRange(from: number, to: number): { readonly low: number; readonly high: number } | null {
    if (!(from >= 0 && from < to && to <= this.length)) throw new RangeError(`candles ${from}..${to} are not a range within 0..${this.length}`);
    const closes = this.#closes;
    const rows = closes.length;
    let low = Number.POSITIVE_INFINITY;
    let high = Number.NEGATIVE_INFINITY;
    for (let i = from; i < to; i += 1) {
      const close = closes[i % rows] as number;
      // NaN fails both comparisons: found by the check below.
      if (close < low) low = close;
      if (close > high) high = close;
      if (close !== close) return null;
    }
    return { low, high };
  }

  firstAtOrAfter(timeMs: number): number {
    const sec = timeMs / 1000;
    const times = this.times;
    const hint = this.#hint;
    if (hint < this.length && (times[hint] as number) >= sec && (hint === 0 || (times[hint - 1] as number) < sec)) return hint;
    if (hint + 1 < this.length && (times[hint + 1] as number) >= sec && (times[hint] as number) < sec) return (this.#hint = hint + 1);
    const found = firstAtLeast(times, sec, this.length);
    if (found < this.length) this.#hint = found;
    return found;
  }

  priceAtOrAfter(timeMs: number): { readonly index: number; readonly open: Decimal } | null {
    const index = this.firstAtOrAfter(timeMs);
    return index < this.length ? { index, open: this.openDecimal(index) } : null;
  }

  priceAt(timeMs: number): Decimal | null {
    if (this.length === 0) return null;
    const index = this.firstAtOrAfter(timeMs);
    return index < this.length ? this.openDecimal(index) : this.closeDecimal(this.length - 1);
  }

  priceKnownAt(timeMs: number): Decimal | null {
    const next = this.firstAtOrAfter(timeMs);
    if (next < this.length && this.timeSec(next) * 1000 === timeMs) return this.openDecimal(next);
    const last = next - 1;
    if (last < 0) return null;
    return timeMs < (this.timeSec(last) + this.intervalSec) * 1000 ? this.openDecimal(last) : this.closeDecimal(last);
  }

  hourly(fromSec: number, toSec: number): Candle[] {
    const out: Candle[] = [];
    let open: Decimal | null = null;
    let high: Decimal | null = null;
    let low: Decimal | null = null;
    let close: Decimal | null = null;
    let hour = -1;
    const flush = (): void => {
      if (open !== null && high !== null && low !== null && close !== null) out.push({ timeSec: hour, open, high, low, close });
    };
    const endSec = Math.ceil(toSec / CANDLE_INTERVAL_SEC) * CANDLE_INTERVAL_SEC;
    for (let i = this.firstAtOrAfter(Math.ceil(fromSec / CANDLE_INTERVAL_SEC) * CANDLE_INTERVAL_SEC * 1000); i < this.length && this.timeSec(i) < endSec; i += 1) {
      const start = Math.floor(this.timeSec(i) / CANDLE_INTERVAL_SEC) * CANDLE_INTERVAL_SEC;
      const h = new Decimal(this.highText(i));
      const l = new Decimal(this.lowText(i));
      if (start !== hour) {
        flush();
        hour = start;
        open = this.openDecimal(i);
        high = h;
        low = l;
      } else {
        high = Decimal.max(high as Decimal, h);
        low = Decimal.min(low as Decimal, l);
      }
      close = this.closeDecimal(i);
    }
    flush();
    return out;
  }

  /** Field `k` (1 open … 4 close) of candle `index`'s row, as the file writes it (ASCII digits: latin1 is exact). */
  #field(index: number, k: number): string {
    if (!(index >= 0 && index < this.length)) throw new RangeError(`candle ${index} is outside 0..${this.length - 1}`);
    const bytes = this.#bytes;
    let start = this.#rowStarts[index % this.#rowStarts.length] as number;
    for (let i = 0; i < k; i += 1) start = bytes.indexOf(COMMA, start) + 1;
    if (k < LAST_FIELD) return bytes.toString('latin1', start, bytes.indexOf(COMMA, start));
    // The last field ends the row: at its line end (CR LF or LF) or the file's end.
    let end = bytes.indexOf(LF, start);
    if (end === -1) end = bytes.length;
    if (end > start && bytes[end - 1] === CR) end -= 1;
    return bytes.toString('latin1', start, end);
  }
}

