import { StackerError } from './errors.ts';
import { Decimal as DecimalJs } from 'decimal.js';

/**
 * Money is a Decimal from the wire to the journal. One configured constructor for the whole
 * program: 60 significant digits hold any balance we will meet with room for fee products, and
 * the exponent bounds keep `toString()` in plain notation so a value never leaves as "1e-7".
 */
export const Decimal = DecimalJs.clone({
  precision: 60,
  rounding: DecimalJs.ROUND_HALF_EVEN,
  toExpNeg: -60,
  toExpPos: 60,
});
// Frozen: decimal.js keeps precision and rounding on the constructor, where every operation of
// the program reads them, so one `Decimal.set({ precision: 2 })` (a strategy's, say: the SDK hands
// this constructor out) would round the guards', the fills' and every other instance's money.
// Now such a call throws in the code that made it. Decimal.clone() still makes a constructor of
// one's own to set.
const fixedSettings = (): never => {
  throw new TypeError("Decimal's settings are the same for the whole program (precision 60, ROUND_HALF_EVEN) and cannot be changed: Decimal.clone({ ... }) makes a constructor of your own to set");
};
Object.defineProperties(Decimal, { set: { value: fixedSettings }, config: { value: fixedSettings } });
Object.freeze(Decimal);
// The same for the methods every Decimal shares (one prototype, decimal.js's clones included): a
// strategy replacing `times` or `toFixed` would change every instance's money. Fixed one by one
// rather than frozen: decimal.js sets each new value's own `constructor`, which a frozen
// prototype's `constructor` would forbid, so that one alone stays writable.
const shared: object = Decimal.prototype;
for (const key of Reflect.ownKeys(shared)) {
  if (key !== 'constructor') Object.defineProperty(shared, key, { writable: false, configurable: false });
}
Object.preventExtensions(shared);
export type Decimal = InstanceType<typeof Decimal>;

export const ZERO: Decimal = new Decimal(0);

const DECIMAL_TEXT = /^-?(?:0|[1-9]\d*)(?:\.\d+)?$/;
/** What the exchange may write for a decimal: `12.`, `.5`, `+1`, and an exponent of at most two digits (`6.5e-2`, `1.0E-8`). */
const LENIENT_DECIMAL_TEXT = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d{1,2})?$/;

/** A value that should have been a decimal string was not. Carries the field so callers can report it. */
export class DecimalFormatError extends StackerError {
  /** Input by default; a wire reader turns it into a protocol error naming the field. */
  readonly code = 'E_INPUT' as const;
  readonly retryable = false;
  readonly field: string;
  constructor(field: string, rule: string) {
    super(`${field}: ${rule}`);
    this.name = 'DecimalFormatError';
    this.field = field;
  }
}

/**
 * Strict parse for user input (flags, env files): plain decimal notation only, no exponent,
 * no sign other than a leading minus, no leading zeros, no blanks.
 */
export function parseDecimalStrict(text: string, field: string): Decimal {
  if (!DECIMAL_TEXT.test(text)) {
    throw new DecimalFormatError(field, `must be a plain decimal number such as 0.0005 (got ${JSON.stringify(text)})`);
  }
  return new Decimal(text);
}

/**
 * Parse a money value read from the wire. Strings in decimal notation are accepted as sent
 * (the exchange sometimes writes "12.", "+1" or "1.0E-8"); a JS number is accepted only when it
 * is a safe integer, because any other number has already been through a binary float (the
 * client's JSON decoding keeps the text of a number with a fraction, src/api/json.ts).
 */
export function parseWireDecimal(value: unknown, field: string): Decimal {
  if (typeof value === 'string') {
    const text = value.trim();
    if (LENIENT_DECIMAL_TEXT.test(text)) return new Decimal(text);
    throw new DecimalFormatError(field, `expected a decimal string, got ${JSON.stringify(value)}`);
  }
  if (typeof value === 'number' && Number.isSafeInteger(value)) return new Decimal(value);
  throw new DecimalFormatError(field, `expected a decimal string, got ${typeof value === 'number' ? 'a non-integer number' : typeof value}`);
}

/** Plain notation, no exponent, no trailing zeros, never "-0". The only way money becomes text. */
export function formatDecimal(value: Decimal): string {
  if (value.isZero()) return '0';
  return value.toFixed();
}

/** Cut (never round up) to `places` decimals: an order never asks for more than the account holds. */
export function roundDown(value: Decimal, places: number): Decimal {
  return fitsPlaces(value, places) ? value : value.toDecimalPlaces(places, Decimal.ROUND_DOWN);
}

export function roundUp(value: Decimal, places: number): Decimal {
  return fitsPlaces(value, places) ? value : value.toDecimalPlaces(places, Decimal.ROUND_UP);
}

/**
 * Whether rounding to `places` would leave the value as it is. Most values on a slot's path
 * (amounts, prices, fees) already fit, and toDecimalPlaces copies the value even then; Decimal
 * is immutable, so the value itself is the answer. NaN and ±Infinity go through toDecimalPlaces.
 */
function fitsPlaces(value: Decimal, places: number): boolean {
  return value.isFinite() && value.decimalPlaces() <= places;
}

/**
 * `value > 0`, read off the sign: comparing with the literal 0 makes a Decimal of it every time,
 * and the checks on a slot's path make several. NaN is not above zero; +Infinity is.
 */
export function isAboveZero(value: Decimal): boolean {
  return value.isPositive() && !value.isZero();
}

export function decimalPlaces(value: Decimal): number {
  return value.decimalPlaces();
}

export function isDecimal(value: unknown): value is Decimal {
  return value instanceof Decimal || DecimalJs.isDecimal(value);
}

/**
 * A fresh value of the program's own Decimal read from `value`'s text, whatever made `value`. A
 * strategy's amount may come from a constructor of decimal.js's `Decimal.clone()`, whose
 * precision and rounding an operation takes from its left side (`amount.mul(price)` of a 1-digit
 * clone's amount rounded a 19.82 order value to 10, under a MAX_ORDER_QUOTE of 15), or be a
 * program Decimal given methods of its own, a Proxy, or an object that only says it is a Decimal
 * (its digit words copied as they were made a value whose text said 0.01 and whose products
 * were a hundredth of it). The text is read once and parsed: the guards, the journal and the
 * order all use that one value. Text that is not a number is a DecimalError.
 */
export function ownDecimal(value: Decimal): Decimal {
  // Its digit words copied, when they are words decimal.js could have made (a value in order):
  // a fifth of the cost of reading and parsing its text, which a backtest pays every slot.
  const copied = new Decimal(value);
  return inOrder(copied) ? copied : new Decimal(String(value));
}

/** Base-10^7 words, as decimal.js keeps them. */
const WORD_DIGITS = 7;

/**
 * Whether a Decimal's sign, exponent and digit words are as decimal.js makes them, so that its
 * text and its arithmetic say the same value: a sign of ±1, whole words below 10^7, no trailing
 * zero word, and a first word of as many digits as its exponent puts before the next word
 * boundary. NaN and ±Infinity (no words) are left to the finiteness checks.
 */
function inOrder(x: Decimal): boolean {
  const { d: words, e, s } = x;
  if (words === null || words === undefined) return true;
  if (!Array.isArray(words) || words.length === 0 || (s !== 1 && s !== -1) || !Number.isSafeInteger(e)) return false;
  for (const word of words) if (!Number.isInteger(word) || word < 0 || word >= 10 ** WORD_DIGITS) return false;
  const first = words[0] as number;
  if (first === 0) return words.length === 1 && e === 0;
  if (words[words.length - 1] === 0) return false;
  let digits = 1;
  for (let rest = first; rest >= 10; rest = Math.floor(rest / 10)) digits += 1;
  return digits === (((e % WORD_DIGITS) + WORD_DIGITS) % WORD_DIGITS) + 1;
}

/**
 * A Decimal as a float within a few parts in 10^16, read from its digits (decimal.js documents
 * `d`, base-10^7 words, `e`, the exponent of the first digit, and `s`, the sign, as its instances'
 * read-only properties) rather than through its text as `toNumber()` reads it, which costs a
 * backtest a string a sample. For ranking and pixels, never for money.
 */
export function roughNumber(x: Decimal): number {
  const words = x.d;
  // NaN and ±Infinity carry no digits; zero's only word is 0.
  if (words === null || words === undefined) return x.toNumber();
  const first = words[0] as number;
  if (first === 0) return 0;
  let firstDigits = 1;
  for (let rest = first; rest >= 10; rest = Math.floor(rest / 10)) firstDigits += 1;
  // The first word holds 1 to 7 digits, the others 7: the first two words (at most 14 digits, an
  // integer a float holds exactly) and the next two (14 more) give at least 16 + 1 digits
  // whatever the first word's length; three words alone are only 15 when it holds one.
  const n = words.length;
  const high = n > 1 ? first * 1e7 + (words[1] as number) : first;
  const low = n > 2 ? (words[2] as number) * 1e7 + (n > 3 ? (words[3] as number) : 0) : 0;
  // The exponent of high's last digit; low's last digit is 14 places further down.
  const exponent = x.e - (firstDigits - 1) - 7 * (Math.min(n, 2) - 1);
  return x.s * (low === 0 ? scaled(high, exponent) : scaled(high, exponent) + scaled(low, exponent - 14));
}

/** digits × 10^exponent, one rounding while the power is exact (|exponent| ≤ 22). */
function scaled(digits: number, exponent: number): number {
  return exponent >= 0 ? digits * 10 ** exponent : digits / 10 ** -exponent;
}
