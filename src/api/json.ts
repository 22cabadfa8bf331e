/** What a response body turned out to be. Non-JSON is kept as text so the error map can still classify it. */
export type ResponseBody =
  | { readonly kind: 'json'; readonly value: unknown }
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'empty' };

/**
 * A number JSON.parse would round can only be a run of 16+ digits, or a number with a fraction
 * or an exponent outside a string (after `:`, `,` or `[`): text without either is parsed without
 * the reviver, which costs a call per value (a balance of every asset, on every slot).
 */
const INEXACT_NUMBER = /\d{16}|[:,[]\s*-?\d+[.eE]/;

interface ReviverContext {
  readonly source?: string;
}

/**
 * A number JSON.parse would round is kept as the text the exchange wrote: an integer beyond 2^53
 * (order ids are engine-assigned 64-bit numbers), and any number with a fraction or an exponent
 * (`"amount":0.0002`, `1e-8`). The spec sends money as strings, but the real exchange may not, and
 * a client reads both (docs/exchange-api.md): from the source text a decimal is exact, where the
 * double JSON.parse makes of it is not. A money field reads the text as it reads a string; a
 * time reads it as a number.
 */
function keepExactNumbers(_key: string, value: unknown, context?: ReviverContext): unknown {
  if (typeof value !== 'number' || Number.isSafeInteger(value) || context?.source === undefined) return value;
  return context.source;
}

/** Never throws: a 503 HTML page or a gateway's "Too Many Requests" text must still reach the error map. */
export function decodeBody(text: string): ResponseBody {
  if (text.trim() === '') return { kind: 'empty' };
  try {
    const value: unknown = INEXACT_NUMBER.test(text) ? JSON.parse(text, keepExactNumbers) : JSON.parse(text);
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
