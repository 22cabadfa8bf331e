import {
  AuthError,
  CLIENT_ORDER_ID_TAKEN,
  ClientOrderIdTakenError,
  type ExchangeError,
  ExchangeRefusedError,
  ExchangeValidationError,
  NonceError,
  NonceReusedError,
  NonceWindowError,
  ProtocolError,
  RateLimitError,
  type RefusalKind,
  ServiceUnavailableError,
  ThrottledError,
} from '../domain/errors.ts';
import { readErrorFacts, textsOf, type ErrorFacts } from './error-body.ts';
import type { ResponseBody } from './json.ts';
import type { RateScope } from './paths.ts';

type Kind = 'nonce' | 'nonce-window' | 'nonce-reused' | 'rate' | 'auth' | 'refused' | 'validation' | 'unavailable' | 'id-taken';

interface MessageRule {
  readonly match: RegExp;
  readonly kind: Kind;
}

/**
 * Exchange messages we recognise, each with the raw body it was learned from (ccxt style).
 * Matched against the message and every field message. Codes repeat across endpoints, so the
 * text decides first; codes and HTTP status are only hints (docs/exchange-api.md §7).
 */
const MESSAGE_TABLE: readonly MessageRule[] = [
  // HTTP 200 {"success":false,"message":"Service is temporarily unavailable"}, HTTP 503 "service temporary unavailable"
  // — the exchange's backend could not say what happened: for a write, a lost answer (looked up), never a refusal
  { match: /temporar(?:il)?y unavailable|service unavailable|under maintenance|try again later/i, kind: 'unavailable' },
  // HTTP 429 {"code":0,"errors":{},"message":"Too many requests."}  — a reused or decreasing nonce (ccxt#25353, ccxt#25796)
  { match: /^Too many requests\.$/, kind: 'nonce-reused' },
  // {"code":0,"message":"Nonce not provided."}
  { match: /^Nonce not provided\.?$/, kind: 'nonce' },
  // {"code":0,"message":"Your nonce is more than 5 seconds lesser than the current nonce"}  — host clock skew with nonceWindow
  // … "more than 5 seconds greater than the current nonce" when the host clock runs ahead
  { match: /^Your nonce is /, kind: 'nonce-window' },
  // {"code":0,"message":"Invalid nonceWindow."}
  { match: /^Invalid nonceWindow\.?$/, kind: 'nonce' },
  // HTTP 400 {"message":"Too Many Attempts.","code":0}  — the exchange's throttle (documented on transfers): refused, nothing done
  { match: /^Too Many Attempts\.?$/, kind: 'rate' },
  // HTTP 401 {"code":10,"message":"Unauthorized request."}  — bad signature (ccxt#12282)
  { match: /^Unauthorized request\.?$/, kind: 'auth' },
  // {"code":2,"message":"This action is unauthorized. Enable your key in API settings"}  — disabled key or IP not whitelisted
  { match: /^This action is unauthorized/, kind: 'auth' },
  // HTTP 403 {"code":0,"message":"You don't have permission to use this endpoint. Please contact support for more details"}
  { match: /^You don't have permission to use this endpoint/, kind: 'auth' },
  // HTTP 400 {"code":9,"message":"Invalid payload."}  — payload header and body differ, or spaced JSON
  { match: /^Invalid payload\.?$/, kind: 'auth' },
  // HTTP 401 {"code":4,"message":"This API Key is not authorized to perform this action."}
  { match: /^This API Key is not authorized/, kind: 'auth' },
  // {"code":0,"message":"Payload not provided."}
  { match: /^Payload not provided\.?$/, kind: 'auth' },
  // {"code":0,"message":"Request not provided."}
  { match: /^Request not provided\.?$/, kind: 'auth' },
  // HTTP 401 {"code":0,"message":"Invalid API key, signature, or nonce"}
  { match: /^Invalid API key, signature, or nonce/, kind: 'auth' },
  // HTTP 422 {"code":36,"message":"Validation failed","errors":{"clientOrderId":["This client order id is already used by the current account."]}}
  // — the exchange holds an order under the id sent: to an id only this stacker makes, the order itself
  { match: CLIENT_ORDER_ID_TAKEN, kind: 'id-taken' },
  // HTTP 422 {"code":2,"message":"Inner validation failed","errors":{"amount":["Withdraw amount exceeds total invested"]}}  — Smart Flex 422
  { match: /^Inner validation failed/i, kind: 'refused' },
  // HTTP 422 {"code":32,"message":"Validation failed","errors":{"amount":["Not enough balance."]}}  — also code 10 on 400, and without the dot
  { match: /^Not enough balance/, kind: 'refused' },
  // HTTP 422 {"code":3,"message":"Inner validation failed","errors":{"amount":["You don't have such amount for transfer (available 34.68, in amount: 1000000)"]}}
  { match: /^You don't have such amount for transfer/, kind: 'refused' },
  // HTTP 400 {"code":2,"message":"Inner validation failed","errors":{"orderId":["Unexecuted order was not found."]}}
  { match: /^Unexecuted order was not found/, kind: 'refused' },
  // HTTP 422 {"code":0,"message":"Inner validation failed","errors":{"amount":["Withdraw amount exceeds total invested"]}}
  { match: /^Withdraw amount exceeds total invested/, kind: 'refused' },
  // HTTP 400 {"code":0,"message":"Validation failed","errors":{"plan":["validation.required"],"amount":["validation.numeric"]}}  — Smart Flex 400
  // HTTP 422 {"code":30,"message":"Validation failed","errors":{"total":["Total (amount * price) is less than 5.05"]}}
  { match: /^Validation failed/i, kind: 'validation' },
  // Laravel's generic text, seen on older main-account endpoints
  { match: /^The given data was invalid/, kind: 'validation' },
];

export interface ErrorContext {
  readonly status: number;
  readonly path: string;
  readonly scope: RateScope;
  /** Whether the request carried a nonce: "Too many requests." means a nonce problem only then. */
  readonly signed: boolean;
  readonly body: ResponseBody;
  /** Removes anything secret-like that the server might have echoed back. */
  readonly scrub?: (text: string) => string;
  /** The answer's `Retry-After`, in ms, when it had one. */
  readonly retryAfterMs?: number | null;
}

/** A non-2xx answer → the typed error that says what the caller may do about it. */
export function mapErrorResponse(context: ErrorContext): ExchangeError {
  const facts = scrubFacts(readErrorFacts(context.body), context.scrub);
  const ErrorClass = classify(facts, context);
  return new ErrorClass({
    httpStatus: context.status,
    path: context.path,
    exchangeCode: facts.code,
    exchangeMessage: gatewayBlock(facts, context) ? `blocked by a gateway in front of the exchange (not the exchange's JSON, so no verdict on the API key): ${facts.message || 'no body'}` : facts.message,
    fieldErrors: facts.fieldErrors,
    // Only a refusal has a meaning the domain decides on; a malformed request is a validation error whatever its words.
    refusal: ErrorClass === ExchangeRefusedError ? refusalOf(facts) : null,
    retryAfterMs: context.retryAfterMs ?? null,
  });
}

/**
 * What a refusal means, from the exchange's words (docs/exchange-api.md §5, §7): a Smart Flex
 * withdrawal above the investment ("Withdraw amount exceeds total invested"), or from a plan
 * without one ("Investment does not exist", or any refusal under `plan`), or an order or
 * transfer the balance does not cover ("Not enough balance.", "You don't have such amount for
 * transfer").
 */
export function refusalOf(facts: Pick<ErrorFacts, 'message' | 'fieldErrors'>): RefusalKind | null {
  const text = [facts.message, ...Object.values(facts.fieldErrors).flat()].join(' ').toLowerCase();
  if (/exceeds total invest/.test(text)) return 'amount-exceeds-investment';
  if ('plan' in facts.fieldErrors || text.includes('investment does not exist') || text.includes('no active investment')) return 'no-active-investment';
  if (text.includes('not enough balance') || text.includes("don't have such amount") || text.includes('insufficient')) return 'insufficient-funds';
  return null;
}

/**
 * Some errors arrive with HTTP 200: public `{"success":false,…}` (kline validation) and the
 * legacy envelope with its own `status`. Returns null for a body that is not an error.
 */
export function errorInSuccessBody(context: ErrorContext): ExchangeError | null {
  if (context.body.kind !== 'json') return null;
  const value = context.body.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const o = value as Record<string, unknown>;
  const legacy = 'response' in o && typeof o['status'] === 'number' && o['status'] >= 400;
  if (o['success'] !== false && !legacy) return null;
  return mapErrorResponse(context);
}

type ErrorClass = new (init: ConstructorParameters<typeof ExchangeValidationError>[0]) => ExchangeError;

function classify(facts: ErrorFacts, context: ErrorContext): ErrorClass {
  const kinds = new Set<Kind>();
  for (const text of textsOf(facts)) {
    for (const rule of MESSAGE_TABLE) if (rule.match.test(text)) kinds.add(rule.kind);
  }
  const status = context.status >= 200 && context.status < 300 && facts.bodyStatus !== null ? facts.bodyStatus : context.status;

  // A nonce refusal is a 4xx from the exchange's door, and the requester signs the request afresh
  // and sends it again, an order too. A 5xx is never one, whatever its body says: the request may
  // have been done behind a failing gateway, and resending an order would buy twice.
  const atTheDoor = context.signed && facts.parsed && context.status >= 400 && context.status < 500;
  if (atTheDoor && kinds.has('nonce-window')) return NonceWindowError;
  if (atTheDoor && kinds.has('nonce-reused')) return NonceReusedError;
  if (atTheDoor && kinds.has('nonce')) return NonceError;
  // The exchange's throttle answers in its own JSON, from its application, before the request is
  // done: nothing happened. Only a gateway's text (or a 5xx) may come after the backend took it.
  if (kinds.has('rate') && facts.parsed && context.status >= 400 && context.status < 500) return ThrottledError;
  if (kinds.has('rate') || status === 429 || status === 418) return RateLimitError;
  if (gatewayBlock(facts, context)) return RateLimitError;
  if (kinds.has('auth') || status === 401 || status === 403) return AuthError;
  if (status >= 500 || kinds.has('unavailable')) return ServiceUnavailableError;
  if (!facts.parsed || status === 404) return ProtocolError;
  // A success status around an error, to a signed request (a write, or a private read): the
  // backend may have done it before it failed, so it is an answer stacker cannot read (for an
  // order, a lost answer, looked up), never a refusal, whatever its words ("Not enough balance."
  // in a 200 is no refusal stacker can trust).
  if (context.signed && status >= 200 && status < 300) return ProtocolError;
  if (kinds.has('id-taken')) return ClientOrderIdTakenError;
  if (kinds.has('refused')) return ExchangeRefusedError;
  if (kinds.has('validation')) return ExchangeValidationError;
  // Codes that mean one thing wherever they appear: 422 code 2 is a business rule; 30–43 are order validation.
  if (facts.code === 2) return ExchangeRefusedError;
  if (facts.code !== null && facts.code >= 30 && facts.code <= 43) return ExchangeValidationError;
  // A public read's success status around an error naming fields (kline's
  // {"success":false,"message":{"interval":[…]}}) is a validation: it says what it refused.
  if (status >= 200 && status < 300) return Object.keys(facts.fieldErrors).length > 0 ? ExchangeValidationError : ProtocolError;
  return byStatus(status, context.scope);
}

/**
 * A 401 or 403 that is not the exchange's JSON: a CDN or firewall in front of it refusing this
 * IP for a while (Cloudflare's "Attention Required!" page), as a 418 page does. The exchange
 * refuses a key in its JSON (docs/exchange-api.md §7), and only that stops trading.
 */
function gatewayBlock(facts: ErrorFacts, context: ErrorContext): boolean {
  return !facts.parsed && (context.status === 401 || context.status === 403);
}

/** Last resort. Main-account endpoints invert the order endpoints' 400/422 meanings (docs/exchange-api.md §7). */
function byStatus(status: number, scope: RateScope): ErrorClass {
  if (status === 453) return ExchangeValidationError;
  if (status === 400) return scope === 'trade' || scope === 'trade-query' || scope === 'active-orders' ? ExchangeRefusedError : ExchangeValidationError;
  if (status === 422) return scope === 'main-account' ? ExchangeRefusedError : ExchangeValidationError;
  return ExchangeRefusedError;
}

/** C0 and C1 control characters: an exchange's text is printed on terminals and written to logs, where they would be escape sequences. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/** A server's text made safe to print: no control character. */
export function printable(text: string): string {
  return text.replace(CONTROL, ' ');
}

function scrubFacts(facts: ErrorFacts, scrub: ((text: string) => string) | undefined): ErrorFacts {
  const clean = (text: string): string => printable(scrub === undefined ? text : scrub(text));
  const fieldErrors: Record<string, string[]> = {};
  for (const [field, messages] of Object.entries(facts.fieldErrors)) fieldErrors[clean(field)] = messages.map(clean);
  return { ...facts, message: clean(facts.message), fieldErrors };
}
