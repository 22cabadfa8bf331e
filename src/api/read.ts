import { StackerError } from '../domain/errors.ts';
import { type Decimal, DecimalFormatError, parseWireDecimal } from '../domain/money.ts';

/**
 * A successful answer had the wrong shape. Names the field (`orders[0].amount`) and the rule,
 * never the whole record (a code record holds a redeemable code). The caller turns it into a
 * ProtocolError with the status and path.
 */
export class WireShapeError extends StackerError {
  readonly code = 'E_PROTOCOL' as const;
  readonly retryable = false;
  readonly field: string;
  constructor(field: string, rule: string) {
    super(`${field}: ${rule}`);
    this.name = 'WireShapeError';
    this.field = field;
  }
}

/** Typed reads of one wire object. `W` is the wire type, so key names are checked by the compiler. */
export class WireReader<W> {
  readonly #o: Readonly<Record<string, unknown>>;
  readonly at: string;

  private constructor(o: Readonly<Record<string, unknown>>, at: string) {
    this.#o = o;
    this.at = at;
  }

  static of<W>(value: unknown, at: string): WireReader<W> {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new WireShapeError(at, `expected an object, got ${kindOf(value)}`);
    }
    return new WireReader<W>(value as Record<string, unknown>, at);
  }

  field(key: keyof W & string): string {
    return this.at === '' ? key : `${this.at}.${key}`;
  }

  has(key: keyof W & string): boolean {
    return this.#o[key] !== undefined && this.#o[key] !== null;
  }

  raw(key: keyof W & string): unknown {
    return this.#o[key];
  }

  string(key: keyof W & string): string {
    const v = this.#o[key];
    if (typeof v !== 'string') throw new WireShapeError(this.field(key), `expected a string, got ${kindOf(v)}`);
    return v;
  }

  /** Missing, null and "" all mean "not given". */
  optionalString(key: keyof W & string): string | null {
    const v = this.#o[key];
    if (v === undefined || v === null || v === '') return null;
    return this.string(key);
  }

  /** Money: a decimal string (or a safe integer), never a float. */
  decimal(key: keyof W & string): Decimal {
    return wireDecimal(this.#o[key], this.field(key));
  }

  optionalDecimal(key: keyof W & string): Decimal | null {
    const v = this.#o[key];
    if (v === undefined || v === null || v === '') return null;
    return this.decimal(key);
  }

  /** A small integer such as a precision or a count; a string of digits is accepted. */
  integer(key: keyof W & string): number {
    return wireInteger(this.#o[key], this.field(key));
  }

  optionalInteger(key: keyof W & string): number | null {
    const v = this.#o[key];
    if (v === undefined || v === null) return null;
    return this.integer(key);
  }

  /** An identifier sent as a JSON integer or a string; kept as text so 64-bit ids stay exact. */
  id(key: keyof W & string): string {
    const v = this.#o[key];
    if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return String(v);
    if (typeof v === 'string' && v !== '' && v.length <= 100) return v;
    throw new WireShapeError(this.field(key), `expected an identifier, got ${kindOf(v)}`);
  }

  /** A time as Unix seconds (fractions kept). 13-digit values are milliseconds. */
  timeSec(key: keyof W & string): number {
    return wireTimeSec(this.#o[key], this.field(key));
  }

  boolean(key: keyof W & string): boolean {
    const v = this.#o[key];
    if (typeof v === 'boolean') return v;
    if (v === 0 || v === 1) return v === 1;
    // Written as text by some answers ("tradesEnabled":"true"): what it says is not in doubt.
    if (v === 'true' || v === 'false') return v === 'true';
    throw new WireShapeError(this.field(key), `expected a boolean, got ${kindOf(v)}`);
  }

  optionalBoolean(key: keyof W & string): boolean | null {
    const v = this.#o[key];
    if (v === undefined || v === null) return null;
    return this.boolean(key);
  }
}

export function wireDecimal(value: unknown, field: string): Decimal {
  try {
    return parseWireDecimal(value, field);
  } catch (error) {
    if (error instanceof DecimalFormatError) throw new WireShapeError(field, error.message.slice(field.length + 2));
    throw error;
  }
}

export function wireInteger(value: unknown, field: string): number {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  if (typeof value === 'string' && /^-?\d{1,15}$/.test(value)) return Number(value);
  throw new WireShapeError(field, `expected an integer, got ${kindOf(value)}`);
}

export function wireTimeSec(value: unknown, field: string): number {
  let n: number | null = null;
  if (typeof value === 'number' && Number.isFinite(value)) n = value;
  else if (typeof value === 'string' && /^\d+(\.\d+)?$/.test(value)) n = Number(value);
  else if (typeof value === 'string' && !Number.isNaN(Date.parse(value))) return Date.parse(value) / 1000;
  if (n === null || n < 0) throw new WireShapeError(field, `expected a Unix time, got ${kindOf(value)}`);
  return n > 1e12 ? n / 1000 : n;
}

/** An array, or the `[]`-for-empty-map quirk's opposite: callers decide what an object means. */
export function wireArray(value: unknown, at: string): readonly unknown[] {
  if (!Array.isArray(value)) throw new WireShapeError(at, `expected an array, got ${kindOf(value)}`);
  return value;
}

/**
 * A map keyed by ticker or market. The exchange sends `[]` for an empty map (a PHP habit,
 * docs/exchange-api.md §5), so an empty array is an empty map.
 */
export function wireMap(value: unknown, at: string): ReadonlyArray<readonly [string, unknown]> {
  if (Array.isArray(value)) {
    if (value.length === 0) return [];
    throw new WireShapeError(at, 'expected an object keyed by name, got a non-empty array');
  }
  if (typeof value !== 'object' || value === null) throw new WireShapeError(at, `expected an object, got ${kindOf(value)}`);
  return Object.entries(value);
}

export function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a non-integer number';
  if (typeof value === 'string') return value === '' ? 'an empty string' : 'a string';
  return typeof value === 'object' ? 'an object' : typeof value;
}
