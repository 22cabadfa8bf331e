import { type Decimal, parseWireDecimal } from '../domain/money.ts';
import { SimRejection } from '../sim/rejection.ts';

/** The parsed JSON body of a private request (an object, checked by auth). */
export type Body = Readonly<Record<string, unknown>>;

/**
 * A money field from a request body. Decimal strings are accepted as the exchange accepts
 * them; a JSON number only when it is a safe integer, because any other number was a binary
 * float before it reached us (amounts are strings on the wire). null: not a decimal.
 */
export function decimalOrNull(value: unknown): Decimal | null {
  try {
    return parseWireDecimal(value, 'amount');
  } catch {
    return null;
  }
}

/**
 * An integer field given as a JSON integer or a digit string. `undefined` when absent, NaN
 * when present but not an integer (the callers' rules then name the field).
 */
export function integerOrNaN(value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'number') return Number.isSafeInteger(value) ? value : Number.NaN;
  if (typeof value === 'string' && /^-?\d{1,15}$/.test(value)) return Number(value);
  return Number.NaN;
}

/** An id sent as a JSON integer (or digit text), kept as text; null when it is neither. */
export function idOrNull(value: unknown): string | null {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return String(value);
  if (typeof value === 'string' && /^\d{1,19}$/.test(value)) return value.replace(/^0+(?=\d)/, '');
  return null;
}

/** Limit/offset paging with bounds; refusals use the given code and the exchange's wording. */
export function paging(
  body: Body,
  bounds: { readonly defaultLimit: number; readonly maxLimit: number; readonly maxOffset?: number },
  code: number,
): { limit: number; offset: number } {
  const limit = integerOrNaN(body['limit']) ?? bounds.defaultLimit;
  const offset = integerOrNaN(body['offset']) ?? 0;
  const maxOffset = bounds.maxOffset ?? 4_294_967_295;
  if (!Number.isInteger(limit)) throw SimRejection.validation(code, 'limit', 'The limit must be an integer.');
  if (limit < 1) throw SimRejection.validation(code, 'limit', 'The limit must be at least 1.');
  if (limit > bounds.maxLimit) throw SimRejection.validation(code, 'limit', `The limit may not be greater than ${bounds.maxLimit}.`);
  if (!Number.isInteger(offset)) throw SimRejection.validation(code, 'offset', 'The offset must be an integer.');
  if (offset < 0) throw SimRejection.validation(code, 'offset', 'The offset must be at least 0.');
  if (offset > maxOffset) throw SimRejection.validation(code, 'offset', `The offset may not be greater than ${maxOffset}.`);
  return { limit, offset };
}

/** An optional text filter; anything but a string is refused under its field. */
export function optionalText(body: Body, field: string, refuse: () => SimRejection): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw refuse();
  return value;
}
