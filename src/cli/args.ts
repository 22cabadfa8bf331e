import { InputError, type InputProblem } from '../domain/errors.ts';
import { type Decimal, DecimalFormatError, parseDecimalStrict } from '../domain/money.ts';
import { CLIENT_ORDER_ID_PATTERN, STP_INPUT_HELP, type Stp, readStp } from '../domain/order.ts';

/**
 * Flag checks. Each takes the raw text commander collected and either returns the typed value
 * or throws an InputError whose field is the flag and whose rule says what is allowed and what
 * was given, e.g. `--amount: must be a plain decimal number such as 0.0005 (got "1e-3")`.
 * They run before any client exists, so a bad flag never sends a request.
 */

const MARKET = /^[A-Z0-9]{1,16}_[A-Z0-9]{1,16}$/;
const TICKER = /^[A-Z0-9][A-Z0-9._-]{0,31}$/;
const INTEGER = /^\d+$/;
const PLAN = /^\S{1,128}$/;

/** docs/exchange-api.md §5: code list `limit` 1–100, `offset` 0–10000. */
export const CODE_LIMIT = { min: 1, max: 100 } as const;
export const CODE_OFFSET = { min: 0, max: 10_000 } as const;

/** `stacker orders` and `stacker journal --limit`. */
export const LIST_LIMIT = { min: 1, max: 10_000 } as const;
export const LIST_DEFAULT = 50;

const got = (text: string): string => `(got ${JSON.stringify(text)})`;

/** A positive amount in plain decimal notation; never a float. */
export function positiveAmount(text: string, flag: string): Decimal {
  let value: Decimal;
  try {
    value = parseDecimalStrict(text, flag);
  } catch (error) {
    if (error instanceof DecimalFormatError) {
      throw InputError.one(flag, `must be a plain decimal number such as 0.0005 ${got(text)}`);
    }
    throw error;
  }
  if (value.lte(0)) throw InputError.one(flag, `must be greater than 0 ${got(text)}`);
  return value;
}

export function integerIn(text: string, flag: string, range: { readonly min: number; readonly max: number }): number {
  const value = INTEGER.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < range.min || value > range.max) {
    throw InputError.one(flag, `must be a whole number from ${range.min} to ${range.max} ${got(text)}`);
  }
  return value;
}

/** A market name such as BTC_USDT. Lower case is accepted and upper-cased: market names have one spelling. */
export function marketName(text: string, flag = '--market'): string {
  const name = text.trim().toUpperCase();
  if (!MARKET.test(name)) throw InputError.one(flag, `must be a market such as BTC_USDT (BASE_QUOTE) ${got(text)}`);
  return name;
}

export function tickerName(text: string, flag = '--ticker'): string {
  const name = text.trim().toUpperCase();
  if (!TICKER.test(name)) throw InputError.one(flag, `must be an asset ticker such as BTC or USDT ${got(text)}`);
  return name;
}

export function clientOrderId(text: string, flag = '--client-order-id'): string {
  if (!CLIENT_ORDER_ID_PATTERN.test(text)) {
    throw InputError.one(flag, `must be 1 to 64 characters, only letters, digits, dashes, dots and underscores ${got(text)}`);
  }
  return text;
}

export function stpMode(text: string, flag = '--stp'): Stp {
  const stp = readStp(text);
  if (stp === null) throw InputError.one(flag, `must be ${STP_INPUT_HELP} ${got(text)}`);
  return stp;
}

export function planId(text: string, flag = '--plan'): string {
  if (!PLAN.test(text)) throw InputError.one(flag, `must be a plan id: 1 to 128 characters without spaces ${got(text)}`);
  return text;
}

export function nonEmpty(text: string, flag: string, what: string): string {
  if (text === '' || /\s/.test(text)) throw InputError.one(flag, `must be ${what} without spaces`);
  return text;
}

type Checks = Record<string, () => unknown>;
type Checked<T extends Checks> = { readonly [K in keyof T]: ReturnType<T[K]> };

/**
 * Run every check and report every failure at once (one InputError with all problems), so the
 * user fixes a command line in one go rather than one flag per attempt.
 */
export function checkAll<T extends Checks>(checks: T): Checked<T> {
  const problems: InputProblem[] = [];
  const values: Record<string, unknown> = {};
  for (const [name, check] of Object.entries(checks)) {
    try {
      values[name] = check();
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      problems.push(...error.problems);
    }
  }
  if (problems.length > 0) throw new InputError(problems);
  return values as Checked<T>;
}

/** For flags that are optional: run the check only when the flag was given. */
export function optional<T>(text: string | undefined, check: (text: string) => T): T | undefined {
  return text === undefined ? undefined : check(text);
}
