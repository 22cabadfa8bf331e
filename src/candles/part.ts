import type { CandleCsvProblem } from './csv-errors.ts';
import { EMPTY_LINE, MAX_ROW_BYTES, checkRow, rowTooLong, scanRow, scannedClose, scannedTime } from './scan.ts';

/**
 * The rows of one stretch of a candle file's bytes, scanned: what parseCandleBytes reads of the
 * whole body, and what each thread of a split load reads of its half (split-load.ts).
 */
export interface ScannedPart {
  /** Rows kept (within the period): the first `count` entries of the columns below. */
  readonly count: number;
  readonly times: Float64Array;
  /** Where each kept row starts in the file's bytes. */
  readonly rowStarts: Uint32Array;
  /** Each kept row's close as the scanner read it; NaN for a row left to the exact check. */
  readonly closes: Float64Array;
  /** Rows accepted, in the period or not: the steps between them are the file's steps. */
  readonly rows: number;
  /** The first and last accepted rows' times; NaN when none was accepted. */
  readonly firstTime: number;
  readonly lastTime: number;
  /** How often each step between consecutive accepted rows occurs. */
  readonly steps: ReadonlyMap<number, number>;
  /** Bad rows found (line numbers count from `lineBefore` + 1), at most `maxProblems`. */
  readonly problems: readonly CandleCsvProblem[];
  /** Where reading stopped: `end`, or earlier at blank lines closing the file or at the problem cap. */
  readonly stoppedAt: number;
}

const CR = 13;
const LF = 10;

/**
 * Scan the rows in bytes [start, end), which begins at a row's start and ends after a row's line
 * end (or at the end of the bytes). One pass: a well-formed row is read without making a string
 * or an array; only a row the fast scanner does not accept is decoded, split and checked exactly
 * (with Decimal), which also says what is wrong with it. Rows must follow each other in time, each
 * compared with the last row accepted. Rows outside [fromSec, toSec] are checked and left out.
 */
export function scanPart(bytes: Buffer, start: number, end: number, period: { readonly fromSec: number; readonly toSec: number }, lineBefore: number, maxProblems: number): ScannedPart {
  const n = bytes.length;
  const { fromSec, toSec } = period;
  let capacity = Math.max(16, Math.ceil((end - start) / 40));
  let times = new Float64Array(capacity);
  let rowStarts = new Uint32Array(capacity);
  // The closes as floats, kept while the scanner has them anyway: a backtest's drawdown walks every close.
  let closes = new Float64Array(capacity);
  const steps = new StepCounter();
  const problems: CandleCsvProblem[] = [];
  let pos = start;
  let line = lineBefore;
  let previous = -1;
  let first = Number.NaN;
  let previousLine = 0;
  let rows = 0;
  let count = 0;
  while (pos < end && problems.length < maxProblems) {
    line += 1;
    const rowStart = pos;
    let time: number;
    let close = Number.NaN;
    const scannedEnd = scanRow(bytes, pos, n);
    if (scannedEnd >= 0) {
      time = scannedTime();
      close = scannedClose();
      pos = scannedEnd + 1;
    } else {
      let lineEnd = bytes.indexOf(LF, pos);
      if (lineEnd === -1) lineEnd = n;
      pos = lineEnd + 1;
      const rowEnd = lineEnd > rowStart && bytes[lineEnd - 1] === CR ? lineEnd - 1 : lineEnd;
      if (rowEnd - rowStart > MAX_ROW_BYTES) {
        if (blankFrom(bytes, rowStart, n)) break;
        problems.push({ line, reason: rowTooLong(rowEnd - rowStart) });
        continue;
      }
      const checked = checkRow(bytes.toString('utf8', rowStart, rowEnd));
      // Blank lines at the end are what many exporters write; a blank line between rows is a bad
      // row. To the end of the whole file, not of this part: rows after it make it one between rows.
      if (checked === EMPTY_LINE && blankFrom(bytes, rowStart, n)) break;
      if (typeof checked === 'string') {
        problems.push({ line, reason: checked });
        continue;
      }
      time = checked;
    }
    if (time <= previous) {
      // Against the last row taken, which the row just above may not be (refused itself).
      problems.push({ line, reason: outOfOrder(time, previous, previousLine) });
      continue;
    }
    if (rows > 0) steps.add(time - previous);
    else first = time;
    previous = time;
    previousLine = line;
    rows += 1;
    if (time < fromSec || time > toSec) continue;
    if (count === capacity) {
      capacity *= 2;
      times = grown(times, capacity);
      rowStarts = grown(rowStarts, capacity);
      closes = grown(closes, capacity);
    }
    times[count] = time;
    rowStarts[count] = rowStart;
    closes[count] = close;
    count += 1;
  }
  return { count, times, rowStarts, closes, rows, firstTime: first, lastTime: rows === 0 ? Number.NaN : previous, steps: steps.counts(), problems, stoppedAt: pos };
}

/** The most common step of a file (the smaller one on a tie; 0 when there was none), from its steps counted. */
export function mostCommonStep(steps: ReadonlyMap<number, number>): number {
  let best = 0;
  let bestCount = 0;
  for (const [step, count] of steps) if (count > bestCount || (count === bestCount && step < best)) [best, bestCount] = [step, count];
  return best;
}

/** A row whose time does not follow the last row taken (its line given): the rows must be in time order, each time once. */
function outOfOrder(time: number, previous: number, previousLine: number): string {
  return time === previous ? `time ${time} is line ${previousLine}'s time again` : `time ${time} is before ${previous}, the time of line ${previousLine}: rows must be in time order`;
}

/** Whether the bytes from `start` on are only spaces, tabs and line ends. */
function blankFrom(bytes: Uint8Array, start: number, n: number): boolean {
  for (let i = start; i < n; i += 1) {
    const c = bytes[i];
    if (c !== 32 && c !== 9 && c !== CR && c !== LF) return false;
  }
  return true;
}

function grown<T extends Float64Array | Uint32Array>(column: T, capacity: number): T {
  const next = (column instanceof Float64Array ? new Float64Array(capacity) : new Uint32Array(capacity)) as T;
  next.set(column);
  return next;
}

/** Counts the steps between rows; runs of the same step (the usual case) cost one comparison each. */
class StepCounter {
  readonly #counts = new Map<number, number>();
  #runStep = Number.NaN;
  #runLength = 0;

  add(step: number): void {
    if (step === this.#runStep) {
      this.#runLength += 1;
      return;
    }
    this.#flush();
    this.#runStep = step;
    this.#runLength = 1;
  }

  counts(): ReadonlyMap<number, number> {
    this.#flush();
    return this.#counts;
  }

  #flush(): void {
    if (this.#runLength > 0) this.#counts.set(this.#runStep, (this.#counts.get(this.#runStep) ?? 0) + this.#runLength);
    this.#runLength = 0;
  }
}
