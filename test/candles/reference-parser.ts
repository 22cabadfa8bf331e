import type { Candle as DomainCandle } from '../../src/domain/candle.ts';
import { Decimal } from '../../src/domain/money.ts';
import { CANDLE_CSV_HEADER, CandleCsvError, type CandleCsvProblem } from '../../src/candles/csv-errors.ts';
import { MAX_ROW_BYTES, rowTooLong } from '../../src/candles/scan.ts';

/**
 * The candle file format read the slow, obvious way: split lines, split fields, a Decimal per
 * field. stacker reads files with the columnar parser (src/candles/); this is the oracle its
 * tests compare it with, row for row and error for error.
 */

/** One OHLCV candle of a candle file: the domain's candle with its volume. */
export interface Candle extends DomainCandle {
  readonly volume: Decimal;
}

const MAX_REPORTED_PROBLEMS = 20;
const TIME_TEXT = /^\d{1,12}$/;
// Plain decimal text as the data files write it; parsed straight into Decimal, never a float.
const PRICE_TEXT = /^\d+(?:\.\d+)?$/;

/**
 * Parse the CSV format of the candle data sets (`time,open,high,low,close,volume`, LF or CRLF,
 * header required, rows strictly ascending by time). Every bad row is reported with its line
 * number; a file with any bad row is refused as a whole, because a backtest over a silently
 * repaired file would report results for data nobody has.
 */
export function parseCandleCsv(text: string, source = 'candles'): Candle[] {
  const lines = text.split('\n');
  // Blank lines at the end are what many exporters write; a blank line between rows is a bad row.
  while (lines.length > 1 && (lines[lines.length - 1] ?? '').trim() === '') lines.pop();
  const problems: CandleCsvProblem[] = [];
  const header = stripCr(lines[0] ?? '');
  if (header.replace(/^\uFEFF/, '') !== CANDLE_CSV_HEADER) {
    throw new CandleCsvError(source, [{ line: 1, reason: `header must be "${CANDLE_CSV_HEADER}", got ${JSON.stringify(header.slice(0, 80))}` }]);
  }
  const candles: Candle[] = [];
  let previousTime = -1;
  let previousLine = 0;
  for (let i = 1; i < lines.length && problems.length < MAX_REPORTED_PROBLEMS; i += 1) {
    const lineNo = i + 1;
    const row = stripCr(lines[i] ?? '');
    const result = parseRow(row);
    if (typeof result === 'string') {
      problems.push({ line: lineNo, reason: result });
      continue;
    }
    if (result.timeSec <= previousTime) {
      problems.push({ line: lineNo, reason: result.timeSec === previousTime ? `time ${result.timeSec} is line ${previousLine}'s time again` : `time ${result.timeSec} is before ${previousTime}, the time of line ${previousLine}: rows must be in time order` });
      continue;
    }
    previousTime = result.timeSec;
    previousLine = lineNo;
    candles.push(result);
  }
  if (problems.length > 0) throw new CandleCsvError(source, problems);
  if (candles.length === 0) throw new CandleCsvError(source, [{ line: 2, reason: 'no candles after the header' }]);
  return candles;
}

function stripCr(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}

function parseRow(row: string): Candle | string {
  const length = Buffer.byteLength(row);
  if (length > MAX_ROW_BYTES) return rowTooLong(length);
  if (row.trim() === '') return 'empty line';
  const fields = row.split(',');
  if (fields.length !== 6) return `expected 6 fields, got ${fields.length}`;
  const [timeText, ...numberTexts] = fields as [string, string, string, string, string, string];
  if (!TIME_TEXT.test(timeText)) return `time ${JSON.stringify(timeText)} is not Unix seconds${/^\d{13}$/.test(timeText) ? ' (13 digits: milliseconds? divide by 1000)' : ''}`;
  const names = ['open', 'high', 'low', 'close', 'volume'] as const;
  const values: Decimal[] = [];
  for (let j = 0; j < names.length; j += 1) {
    const textValue = numberTexts[j] ?? '';
    if (!PRICE_TEXT.test(textValue)) return `${names[j]} ${JSON.stringify(textValue)} ${PRICE_TEXT.test(textValue.replace(/^-/, '')) ? 'is negative' : 'is not a plain decimal'}`;
    values.push(new Decimal(textValue));
  }
  const [open, high, low, close, volume] = values as [Decimal, Decimal, Decimal, Decimal, Decimal];
  if (open.isZero() || high.isZero() || low.isZero() || close.isZero()) return 'a price is zero';
  if (low.gt(open) || low.gt(close) || high.lt(open) || high.lt(close)) {
    return 'prices are inconsistent (need low <= open, close <= high)';
  }
  return { timeSec: Number(timeText), open, high, low, close, volume };
}

/**
 * Index of the first candle whose open time is at or after `timeMs`; `candles.length` when
 * every candle opened before it. Binary search over the ascending times.
 */
export function firstCandleAtOrAfter(candles: readonly Candle[], timeMs: number): number {
  let lo = 0;
  let hi = candles.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((candles[mid] as Candle).timeSec * 1000 >= timeMs) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * The fill price at a moment: the OPEN of the first candle that opens at or after `timeMs`
 * (a decision taken at time t can only trade at a price that exists after t, so the candle
 * that contains t is never used: its close lies in the future of t and its open in the past).
 * Past the last candle the last close is the best price known. The backtest uses this same rule.
 */
export function candlePriceAt(candles: readonly Candle[], timeMs: number): Decimal | null {
  if (candles.length === 0) return null;
  const index = firstCandleAtOrAfter(candles, timeMs);
  const candle = candles[index];
  if (candle) return candle.open;
  return (candles[candles.length - 1] as Candle).close;
}
