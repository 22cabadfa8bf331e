import { Decimal } from '../domain/money.ts';

/**
 * The candle row scanner: a well-formed row is read straight from the file's bytes, without
 * making a string or an array; anything else goes to checkRow, which decides exactly (with
 * Decimal) and says what is wrong in the reference parser's words (test/candles/reference-parser.ts).
 */

/** Beyond this many digits a float may not order two different decimals right: check exactly. */
const FLOAT_SAFE_DIGITS = 15;
const TIME_TEXT = /^\d{1,12}$/;
const PRICE_TEXT = /^\d+(?:\.\d+)?$/;
const FIELD_NAMES = ['open', 'high', 'low', 'close', 'volume'] as const;
const CR = 13;
const LF = 10;
const COMMA = 44;
const DOT = 46;
const ZERO_CODE = 48;
const NINE_CODE = 57;

// The scanner's results. Doubles go in a typed array: a module `let` holding a double would box
// a fresh heap number on every write (four per row), which made the garbage collector the
// parser's main cost.
const scanned = new Float64Array(3);
const TIME = 0;
const VALUE = 1;
const CLOSE = 2;
let scannedDigits = 0;

/**
 * A well-formed, consistent row starting at `start`: returns where it ends (its '\n', or the
 * end of the bytes) and leaves its time and its close (a float) in `scanned`; -1 for anything else, including rows
 * whose prices have too many digits to be compared as floats (checkRow decides those exactly).
 * Prices are read as floats here only to check low <= open, close <= high and none is zero.
 * A read past the last byte gives undefined, which no comparison below accepts, so the digit
 * loops need no bounds test of their own.
 */
export function scanRow(bytes: Uint8Array, start: number, n: number): number {
  let pos = start;
  let c = bytes[pos] as number;
  let time = 0;
  let digits = 0;
  while (c >= ZERO_CODE && c <= NINE_CODE) {
    time = time * 10 + (c - ZERO_CODE);
    digits += 1;
    c = bytes[++pos] as number;
  }
  if (digits === 0 || digits > 12 || c !== COMMA) return -1;
  pos = scanNumber(bytes, pos + 1, n);
  if (pos < 0 || bytes[pos] !== COMMA) return -1;
  const open = scanned[VALUE] as number;
  let wide = scannedDigits;
  pos = scanNumber(bytes, pos + 1, n);
  if (pos < 0 || bytes[pos] !== COMMA) return -1;
  const high = scanned[VALUE] as number;
  if (scannedDigits > wide) wide = scannedDigits;
  pos = scanNumber(bytes, pos + 1, n);
  if (pos < 0 || bytes[pos] !== COMMA) return -1;
  const low = scanned[VALUE] as number;
  if (scannedDigits > wide) wide = scannedDigits;
  pos = scanNumber(bytes, pos + 1, n);
  if (pos < 0 || bytes[pos] !== COMMA) return -1;
  const close = scanned[VALUE] as number;
  if (scannedDigits > wide) wide = scannedDigits;
  pos = skipNumber(bytes, pos + 1, n);
  if (pos < 0) return -1;
  if (pos < n && bytes[pos] === CR) pos += 1;
  if (pos < n && bytes[pos] !== LF) return -1;
  if (wide > FLOAT_SAFE_DIGITS) return -1;
  if (!(low > 0 && low <= open && low <= close && high >= open && high >= close)) return -1;
  scanned[TIME] = time;
  scanned[CLOSE] = close;
  return pos;
}

/** A plain decimal (`123`, `123.45`) at `start`: its end, with value and digit count in the module variables; -1 when none. */
function scanNumber(bytes: Uint8Array, start: number, n: number): number {
  let pos = start;
  let c = bytes[pos] as number;
  let whole = 0;
  let digits = 0;
  while (c >= ZERO_CODE && c <= NINE_CODE) {
    whole = whole * 10 + (c - ZERO_CODE);
    digits += 1;
    c = bytes[++pos] as number;
  }
  if (digits === 0) return -1;
  if (c !== DOT) {
    scanned[VALUE] = whole;
    scannedDigits = digits;
    return pos;
  }
  let fraction = 0;
  let scale = 1;
  let fractionDigits = 0;
  c = bytes[++pos] as number;
  while (c >= ZERO_CODE && c <= NINE_CODE) {
    fraction = fraction * 10 + (c - ZERO_CODE);
    scale *= 10;
    fractionDigits += 1;
    c = bytes[++pos] as number;
  }
  if (fractionDigits === 0) return -1;
  scanned[VALUE] = whole + fraction / scale;
  scannedDigits = digits + fractionDigits;
  return pos;
}

/** A plain decimal whose value is not needed (the volume): its end, or -1. */
function skipNumber(bytes: Uint8Array, start: number, n: number): number {
  let pos = start;
  let digits = 0;
  while (pos < n && (bytes[pos] as number) >= ZERO_CODE && (bytes[pos] as number) <= NINE_CODE) {
    pos += 1;
    digits += 1;
  }
  if (digits === 0) return -1;
  if (pos >= n || bytes[pos] !== DOT) return pos;
  pos += 1;
  let fractionDigits = 0;
  while (pos < n && (bytes[pos] as number) >= ZERO_CODE && (bytes[pos] as number) <= NINE_CODE) {
    pos += 1;
    fractionDigits += 1;
  }
  return fractionDigits === 0 ? -1 : pos;
}

/**
 * The longest row a candle file holds: six plain numbers are a few dozen bytes. A longer "row"
 * (a file of another kind, a binary, a file of NUL bytes) is refused without being decoded: made
 * into one string, a row of gigabytes failed the whole read (ERR_STRING_TOO_LONG).
 */
export const MAX_ROW_BYTES = 4096;

/** The problem of a row longer than MAX_ROW_BYTES. */
export function rowTooLong(bytes: number): string {
  return `a row of ${bytes} bytes: a candle row (time,open,high,low,close,volume) is never over ${MAX_ROW_BYTES} bytes; is this a candle file?`;
}

/** checkRow's answer for a blank row. */
export const EMPTY_LINE = 'empty line';

/** The exact check of one row (without its line end): its time, or what is wrong with it (the reference parser's wording). */
export function checkRow(row: string): number | string {
  if (row.trim() === '') return EMPTY_LINE;
  const fields = row.split(',');
  if (fields.length !== 6) return `expected 6 fields, got ${fields.length}`;
  const timeText = fields[0] as string;
  if (!TIME_TEXT.test(timeText)) return `time ${JSON.stringify(timeText)} is not Unix seconds${/^\d{13}$/.test(timeText) ? ' (13 digits: milliseconds? divide by 1000)' : ''}`;
  const values: Decimal[] = [];
  for (let i = 0; i < FIELD_NAMES.length; i += 1) {
    const value = fields[i + 1] as string;
    if (!PRICE_TEXT.test(value)) return `${FIELD_NAMES[i]} ${JSON.stringify(value)} ${PRICE_TEXT.test(value.replace(/^-/, '')) ? 'is negative' : 'is not a plain decimal'}`;
    values.push(new Decimal(value));
  }
  const [open, high, low, close] = values as [Decimal, Decimal, Decimal, Decimal, Decimal];
  if (open.isZero() || high.isZero() || low.isZero() || close.isZero()) return 'a price is zero';
  if (low.gt(open) || low.gt(close) || high.lt(open) || high.lt(close)) return 'prices are inconsistent (need low <= open, close <= high)';
  return Number(timeText);
}

/** The time of the row scanRow last accepted (Unix seconds). */
export function scannedTime(): number {
  return scanned[TIME] as number;
}

/**
 * The close of the row scanRow last accepted, as a float within a few parts in 10^16 of its
 * decimal (no digits beyond FLOAT_SAFE_DIGITS reach here): for ruling candles out, never for money.
 */
export function scannedClose(): number {
  return scanned[CLOSE] as number;
}
