/** What a response body turned out to be. Non-JSON is kept as text so the error map can still classify it. */
export type ResponseBody =
  | { readonly kind: 'json'; readonly value: unknown }
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'empty' };

const LONG_DIGIT_RUN = /\d{16}/;

interface ReviverContext {
  readonly source?: string;
}

/**
 * Integers beyond 2^53 (order ids are engine-assigned 64-bit numbers) would be silently rounded
 * by JSON.parse; the reviver keeps their source text instead. Floats are left alone so a float on
 * a money field is still seen — and refused — as a number.
 */
function keepBigIntegers(_key: string, value: unknown, context?: ReviverContext): unknown {
  if (typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value) && context?.source !== undefined) {
    return /^-?\d+$/.test(context.source) ? context.source : value;
  }
  return value;
}

/** Never throws: a 503 HTML page or a gateway's "Too Many Requests" text must still reach the error map. */
export function decodeBody(text: string): ResponseBody {
  if (text.trim() === '') return { kind: 'empty' };
  try {
    // The reviver costs a call per value; only a run of 16+ digits can hold an integer beyond 2^53.
    const value: unknown = LONG_DIGIT_RUN.test(text) ? JSON.parse(text, keepBigIntegers) : JSON.parse(text);
    return { kind: 'json', value };
  } catch {
    return { kind: 'text', text };
  }
}

const rawJson = (JSON as unknown as { rawJSON?: (text: string) => unknown }).rawJSON;

/**
 * A JSON integer from a string of digits, exact at any size (the wire wants order ids as
 * integers; ours are strings). Uses JSON.rawJSON (Node ≥ 21); digits that fit a double exactly
 * fall back to a number.
 */
export function jsonInteger(digits: string): unknown {
  if (!/^\d+$/.test(digits)) throw new RangeError('jsonInteger expects decimal digits');
  const asNumber = Number(digits);
  if (Number.isSafeInteger(asNumber)) return asNumber;
  if (rawJson === undefined) throw new RangeError(`integer ${digits} does not fit a JSON number on this runtime`);
  return rawJson(digits.replace(/^0+(?=\d)/, ''));
}
