import { timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { signPayload } from '../api/sign.ts';
import type { NonceTracker } from './nonces.ts';
import type { Body } from './params.ts';
import { type Answer, privateError } from './responses.ts';

export interface ApiKeyPair {
  readonly apiKey: string;
  readonly apiSecret: string;
}

export type AuthOutcome = { readonly ok: true; readonly body: Body } | { readonly ok: false; readonly answer: Answer };

const refuse = (answer: Answer): AuthOutcome => ({ ok: false, answer });

// Messages verbatim from docs/exchange-api.md §2–3 and §7. Statuses: 401 for key and signature,
// 400 for a malformed payload, 429 (with a JSON body) for a nonce the rules refuse.
const UNKNOWN_KEY = privateError(401, 2, 'This action is unauthorized. Enable your key in API settings');
const BAD_SIGNATURE = privateError(401, 10, 'Unauthorized request.');
const NO_PAYLOAD = privateError(400, 9, 'Payload not provided.');
const INVALID_PAYLOAD = privateError(400, 9, 'Invalid payload.');
const NO_REQUEST = privateError(400, 9, 'Request not provided.');
const NO_NONCE = privateError(400, 0, 'Nonce not provided.');
const BAD_NONCE_WINDOW = privateError(400, 0, 'Invalid nonceWindow.');
const nonceRefused = (message: string): Answer => ({ status: 429, json: { code: 0, errors: {}, message } });

const NONCE_TEXT = /^\d{1,20}$/;

/**
 * Check a private request the way docs/exchange-api.md §2 describes: the three headers, a known
 * key, `X-TXC-PAYLOAD` equal to the base64 of the exact body bytes, compact JSON, the HMAC-SHA512
 * signature (constant-time compare), `request` equal to the path, and the nonce rules. The
 * nonce is consumed only once the signature is proven, so nobody can burn a key's nonces.
 * Nothing here writes the secret, the signature or the payload anywhere.
 */
export function authenticate(
  headers: IncomingHttpHeaders,
  rawBody: Buffer,
  path: string,
  key: ApiKeyPair,
  nonces: NonceTracker,
  nowMs: number,
): AuthOutcome {
  const apiKey = header(headers, 'x-txc-apikey');
  if (apiKey === undefined || !sameText(apiKey, key.apiKey)) return refuse(UNKNOWN_KEY);
  const payload = header(headers, 'x-txc-payload');
  if (payload === undefined || payload === '') return refuse(NO_PAYLOAD);
  const signature = header(headers, 'x-txc-signature');
  if (signature === undefined) return refuse(BAD_SIGNATURE);
  if (payload !== rawBody.toString('base64')) return refuse(INVALID_PAYLOAD);
  if (!sameText(signature.toLowerCase(), signPayload(payload, key.apiSecret))) return refuse(BAD_SIGNATURE);

  const text = rawBody.toString('utf8');
  if (hasWhitespaceOutsideStrings(text)) return refuse(INVALID_PAYLOAD);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return refuse(INVALID_PAYLOAD);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return refuse(INVALID_PAYLOAD);
  const body = parsed as Body;

  if (body['request'] === undefined) return refuse(NO_REQUEST);
  if (body['request'] !== path) return refuse(INVALID_PAYLOAD);
  const windowFlag = body['nonceWindow'];
  if (windowFlag !== undefined && typeof windowFlag !== 'boolean') return refuse(BAD_NONCE_WINDOW);
  const nonce = body['nonce'];
  if (nonce === undefined || nonce === null || nonce === '') return refuse(NO_NONCE);
  const nonceText = typeof nonce === 'number' && Number.isSafeInteger(nonce) && nonce >= 0 ? String(nonce) : nonce;
  if (typeof nonceText !== 'string' || !NONCE_TEXT.test(nonceText)) return refuse(nonceRefused('Too many requests.'));
  const verdict = nonces.check(apiKey, nonceText, windowFlag === true, nowMs);
  if (!verdict.ok) return refuse(nonceRefused(verdict.message));
  return { ok: true, body };
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

/** docs/exchange-api.md §2: spaced (pretty-printed) JSON is refused; whitespace inside strings is data. */
export function hasWhitespaceOutsideStrings(text: string): boolean {
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i += 1;
      else if (ch === '"') inString = false;
    } else if (ch === '"') {
      inString = true;
    } else if (ch === ' ' || ch === '\n' || ch === '\r' || ch === '\t') {
      return true;
    }
  }
  return false;
}
