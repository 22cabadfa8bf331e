/**
 * Every failure stacker reports is one of these classes. Callers branch on `code` (stable,
 * documented in README "Errors"), never on the message. `retryable` answers one question: may
 * the same read be tried again later? It never licenses re-sending an order or a withdrawal;
 * that is the engine's decision, made by looking the operation up first.
 *
 * Messages and fields never carry the API secret, a signature or a payload: only the exchange's
 * own answer, the HTTP status and the path.
 */

/** Map from a request field to the exchange's messages about it (`errors` in the wire body). */
export type FieldErrors = Readonly<Record<string, readonly string[]>>;

export type ErrorCode =
  | 'E_INPUT'
  | 'E_CONFIG'
  | 'E_EXCHANGE_VALIDATION'
  | 'E_EXCHANGE_REFUSED'
  | 'E_AUTH'
  | 'E_NONCE'
  | 'E_RATE_LIMIT'
  | 'E_UNAVAILABLE'
  | 'E_NETWORK'
  | 'E_TIMEOUT'
  | 'E_PROTOCOL'
  | 'E_STORE'
  | 'E_LOCKED'
  | 'E_FOREIGN_ORDER'
  | 'E_NOTIFY'
  | 'E_OUTPUT'
  | 'E_UNEXPECTED';

export abstract class StackerError extends Error {
  abstract readonly code: ErrorCode;
  abstract readonly retryable: boolean;
}

/** One problem with one input, named by the field and the rule it broke. */
export interface InputProblem {
  readonly field: string;
  readonly rule: string;
  /** Where the field came from: a flag, an env file and key. */
  readonly source?: string;
}

/** Bad input from the user (flags, env files). Nothing was sent. */
export class InputError extends StackerError {
  readonly code = 'E_INPUT' as const;
  readonly retryable = false;
  readonly problems: readonly InputProblem[];
  constructor(problems: readonly InputProblem[]) {
    super(problems.map((p) => `${p.source ? `${p.source}: ` : ''}${p.field}: ${p.rule}`).join('\n'));
    this.name = 'InputError';
    this.problems = problems;
  }
  static one(field: string, rule: string): InputError {
    return new InputError([{ field, rule }]);
  }
}

/**
 * What an exchange refusal means, for code that decides on it (the engine turns a withdrawal the
 * investment no longer covers into a refusal, not a failure). The API layer reads it from the
 * exchange's answer, the simulator knows it of its own refusals; nobody outside src/api/ reads
 * the exchange's message text or HTTP status to find it.
 */
export const REFUSAL_KINDS = ['insufficient-funds', 'amount-exceeds-investment', 'no-active-investment'] as const;
export type RefusalKind = (typeof REFUSAL_KINDS)[number];

interface ExchangeErrorInit {
  /** The HTTP answer's status, when the refusal came over HTTP (the API layer); absent from an in-process simulator. */
  readonly httpStatus?: number | null;
  readonly path?: string | null;
  readonly exchangeCode?: number | null;
  readonly exchangeMessage?: string;
  readonly fieldErrors?: FieldErrors;
  readonly refusal?: RefusalKind | null;
  readonly retryAfterMs?: number | null;
}

/** The exchange answered and refused (or failed) the request. */
export abstract class ExchangeError extends StackerError {
  /** Details of the HTTP answer, for people and logs; null when no HTTP was involved. Code decides on `code` and `refusal`. */
  readonly httpStatus: number | null;
  readonly path: string | null;
  /** The exchange's numeric `code`, null when the body had none. A hint only: codes repeat across endpoints. */
  readonly exchangeCode: number | null;
  readonly exchangeMessage: string;
  readonly fieldErrors: FieldErrors;
  /** What the refusal means, when it is one the domain knows; null otherwise. */
  readonly refusal: RefusalKind | null;
  /** How long the answer asked to be left alone before a retry (its `Retry-After`), in ms; null when it did not say. */
  readonly retryAfterMs: number | null;
  constructor(init: ExchangeErrorInit) {
    super(describe(init));
    this.httpStatus = init.httpStatus ?? null;
    this.path = init.path ?? null;
    this.exchangeCode = init.exchangeCode ?? null;
    this.exchangeMessage = init.exchangeMessage ?? '';
    this.fieldErrors = init.fieldErrors ?? {};
    this.refusal = init.refusal ?? null;
    this.retryAfterMs = init.retryAfterMs ?? null;
  }
}

function describe(init: ExchangeErrorInit): string {
  const fields = Object.entries(init.fieldErrors ?? {})
    .map(([field, messages]) => `${field}: ${messages.join(' ')}`)
    .join('; ');
  const code = init.exchangeCode === undefined || init.exchangeCode === null ? '' : ` code ${init.exchangeCode}`;
  const who = init.path === undefined || init.path === null ? 'the simulated exchange answered' : `${init.path} answered HTTP ${init.httpStatus}`;
  return `${who}${code}: ${init.exchangeMessage || 'no message'}${fields ? ` (${fields})` : ''}`;
}

/** Request validation failed (400 code 0 on main-account endpoints, 422 on order endpoints: docs/exchange-api.md §7). Not retryable. */
export class ExchangeValidationError extends ExchangeError {
  readonly code = 'E_EXCHANGE_VALIDATION' as const;
  readonly retryable = false;
  override readonly name: string = 'ExchangeValidationError';
}

/**
 * The exchange holds an order under the request's clientOrderId already (code 36, "This client
 * order id is already used by the current account."). stacker's ids are its own, one per intent,
 * so to an order it sends this is the order a lost answer hid (a gateway that sent the request
 * again, a first send whose answer never came): outcomeUnknown, looked up and recorded, never a
 * refusal.
 */
export class ClientOrderIdTakenError extends ExchangeValidationError {
  override readonly name = 'ClientOrderIdTakenError';
}

/** The exchange's words for ClientOrderIdTakenError, under `clientOrderId`: read by the HTTP client and the in-process simulators alike. */
export const CLIENT_ORDER_ID_TAKEN = /^This client order id is already used/i;

/** A business rule refused the request (422 code 2 "Inner validation failed", "Not enough balance.": docs/exchange-api.md §7). */
export class ExchangeRefusedError extends ExchangeError {
  readonly code = 'E_EXCHANGE_REFUSED' as const;
  readonly retryable = false;
  override readonly name = 'ExchangeRefusedError';
}

/** Key, signature or permission refused. Needs a human; trading stops. */
export class AuthError extends ExchangeError {
  readonly code = 'E_AUTH' as const;
  readonly retryable = false;
  override readonly name = 'AuthError';
}

/** 429 with the body "Too many requests.": the nonce was not accepted. Not a rate limit. */
export class NonceError extends ExchangeError {
  readonly code = 'E_NONCE' as const;
  readonly retryable = false;
  override readonly name: string = 'NonceError';
}

/**
 * The nonce is outside the exchange's ±5 s window around its own clock ("Your nonce is more than
 * 5 seconds lesser/greater than the current nonce"): this machine's clock and the exchange's
 * disagree. The request was refused at the door and did nothing.
 */
export class NonceWindowError extends NonceError {
  override readonly name: string = 'NonceWindowError';
}

/**
 * The nonce was not new ("Too many requests." as JSON on a signed request): within the window
 * it was seen before; without the window it was not above the key's last one. Refused at the
 * door: the request did nothing.
 */
export class NonceReusedError extends NonceError {
  override readonly name: string = 'NonceReusedError';
}

/** Any other 429, or our own limiter refusing to wait that long. */
export class RateLimitError extends ExchangeError {
  readonly code = 'E_RATE_LIMIT' as const;
  readonly retryable = true;
  override readonly name: string = 'RateLimitError';
}

/**
 * The exchange's own throttle turned the request away ("Too Many Attempts." in its JSON on a 4xx,
 * as on a transfer: docs/exchange-api.md §7). Its application answered before doing anything, so
 * nothing happened, unlike a gateway's 429 text, which may come after its backend took the
 * request. Tried again later, as a new request.
 */
export class ThrottledError extends RateLimitError {
  override readonly name: string = 'ThrottledError';
}

/** 5xx or maintenance. For a write, the operation may or may not have happened. */
export class ServiceUnavailableError extends ExchangeError {
  readonly code = 'E_UNAVAILABLE' as const;
  readonly retryable = true;
  override readonly name = 'ServiceUnavailableError';
}

/** The answer could not be understood (not JSON, wrong shape, a money field that is not a decimal). */
export class ProtocolError extends ExchangeError {
  readonly code = 'E_PROTOCOL' as const;
  readonly retryable = false;
  override readonly name = 'ProtocolError';
}

const TLS_FAILURE_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT$|SELF_SIGNED_CERT_IN_CHAIN$|HOSTNAME_MISMATCH$)/;

/** A transport code of a failed TLS handshake (a protocol mismatch, a certificate refused): nothing of the request left. */
export function isTlsFailureCode(code: string): boolean {
  return TLS_FAILURE_CODE.test(code);
}

/** undici's refusal of a request it was given (a header value HTTP does not allow): nothing was sent, and the same request never passes. */
export const INVALID_REQUEST_CODE = 'UND_ERR_INVALID_ARG';

/**
 * Transport failures. `requestSent` tells whether any byte of the request may have reached the
 * server: false for a refused connection (the operation surely did not happen), true for a reset
 * or a lost response (it may have).
 */
export class NetworkError extends StackerError {
  readonly code = 'E_NETWORK' as const;
  /**
   * False for a failed TLS handshake (https:// on a plain-HTTP port, a refused certificate) and
   * for a request undici refused to send (a character HTTP does not allow in the API key): a
   * setting that trying again does not mend.
   */
  readonly retryable: boolean;
  readonly path: string;
  readonly requestSent: boolean;
  readonly causeCode: string;
  constructor(path: string, causeCode: string, requestSent: boolean, message: string) {
    super(`${path}: ${message} (${causeCode})`);
    this.name = 'NetworkError';
    this.path = path;
    this.causeCode = causeCode;
    this.retryable = !isTlsFailureCode(causeCode) && causeCode !== INVALID_REQUEST_CODE;
    this.requestSent = requestSent;
  }
}

export class TimeoutError extends StackerError {
  readonly code = 'E_TIMEOUT' as const;
  readonly retryable = true;
  readonly path: string;
  readonly requestSent: boolean;
  /** `total`: the whole answer did not come within the request's deadline, though bytes kept coming. */
  readonly phase: 'connect' | 'headers' | 'body' | 'total';
  constructor(path: string, phase: 'connect' | 'headers' | 'body' | 'total', timeoutMs: number) {
    super(`${path}: ${phase === 'total' ? `the whole answer did not come within ${timeoutMs} ms` : `no ${phase === 'connect' ? 'connection' : 'response'} within ${timeoutMs} ms`}`);
    this.name = 'TimeoutError';
    this.path = path;
    this.phase = phase;
    this.requestSent = phase !== 'connect';
  }
}

/** Configuration problems found at start; every one of them, with file and key. */
export class ConfigError extends StackerError {
  readonly code = 'E_CONFIG' as const;
  readonly retryable = false;
  readonly problems: readonly InputProblem[];
  constructor(problems: readonly InputProblem[]) {
    super(problems.map((p) => `${p.source ? `${p.source}: ` : ''}${p.field}: ${p.rule}`).join('\n'));
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/**
 * A file the user named for stacker to write (`backtest --report`, `report --html`) could not be
 * written once the work was done. The path passed every check up front (an existing folder, not
 * a folder itself), so this is the file system failing (no space, no permission, an I/O error),
 * not bad input: exit 1 (README "Exit codes"), and the message names the flag, the path and the
 * operating system's code.
 */
export class OutputFileError extends StackerError {
  readonly code = 'E_OUTPUT' as const;
  readonly retryable = false;
  readonly flag: string;
  readonly path: string;
  /** The operating system's error code: ENOSPC, EACCES, EIO… */
  readonly osCode: string;
  constructor(flag: string, path: string, osCode: string) {
    super(`${flag}: cannot write ${path}: ${osCode}`);
    this.name = 'OutputFileError';
    this.flag = flag;
    this.path = path;
    this.osCode = osCode;
  }
}

/**
 * Whether a failed write may have taken effect at the exchange. The money rule depends on it:
 * when true, look the operation up before any resend.
 */
export function outcomeUnknown(error: unknown): boolean {
  if (error instanceof NetworkError || error instanceof TimeoutError) return error.requestSent;
  if (error instanceof ServiceUnavailableError) return true;
  // A gateway's 429 may come after its backend took the request; the exchange's own throttle
  // refuses before it does anything (a nonce refusal is E_NONCE, not this).
  if (error instanceof RateLimitError) return !(error instanceof ThrottledError);
  if (error instanceof ProtocolError) return error.httpStatus !== null && error.httpStatus >= 200 && error.httpStatus < 300;
  if (error instanceof ClientOrderIdTakenError) return true;
  return false;
}

/** CLI exit codes (README "Exit codes"). */
export const EXIT = { ok: 0, failure: 1, badInput: 2, refused: 3, transient: 4 } as const;

/** The codes of failures that pass by themselves (exit 4): what a journal keeps of an error is its code. */
export const TRANSIENT_CODES: ReadonlySet<string> = new Set<ErrorCode>(['E_RATE_LIMIT', 'E_UNAVAILABLE', 'E_NETWORK', 'E_TIMEOUT']);

export function exitCodeFor(error: unknown): number {
  if (error instanceof InputError || error instanceof ConfigError) return EXIT.badInput;
  if (error instanceof OutputFileError) return EXIT.failure;
  if (error instanceof StackerError) return error.retryable ? EXIT.transient : EXIT.refused;
  return EXIT.failure;
}

/** An order at the exchange that carries an instance's id scheme, seen by stacker's history check. */
export interface ForeignOrder {
  readonly instance: string;
  readonly clientOrderId: string;
  readonly orderId: string;
  readonly market: string;
  /** When the exchange took it, or, from a finding the journal kept, when stacker found it. */
  readonly at: { readonly kind: 'placed' | 'found'; readonly ms: number };
  /** Why it cannot be this journal's own order. */
  readonly why: string;
  /** A second order of an intent this journal sent: two stackers on the key, or the same order sent twice. */
  readonly twin?: boolean;
  /** A second order of an intent the journal shows sent more than once: an older stacker resent it. */
  readonly resent?: boolean;
  /** The order of a slot this journal journalled missed: also what a history lagging past the settle window shows after a journal was rebuilt or put back. */
  readonly missedSlot?: boolean;
}

/**
 * The exchange holds orders with this stacker's order ids that this journal did not send:
 * another stacker (another host, another container with its own data) trades on the same API
 * key with the same instances, and every slot is bought twice (or, for a second order of a sent
 * intent, an exchange took an order it said it refused at its door). Not retryable: a human must stop
 * one of them.
 */
export class ForeignOrderError extends StackerError {
  readonly code = 'E_FOREIGN_ORDER' as const;
  readonly retryable = false;
  readonly orders: readonly ForeignOrder[];
  constructor(orders: readonly ForeignOrder[]) {
    const shown = orders
      .slice(0, 5)
      .map((o) => `${o.clientOrderId} (order ${o.orderId}, ${o.market}, ${o.at.kind} ${new Date(o.at.ms).toISOString()}: ${o.why})`)
      .join('; ');
    const more = orders.length > 5 ? `; and ${orders.length - 5} more` : '';
    // A twin can also be stacker's own order sent twice: an exchange that answered a nonce
    // refusal (refused at its door, so signed afresh and sent again) after taking the order.
    const twice = orders.some((o) => o.twin === true && o.resent !== true)
      ? ' If no other stacker runs on the key, the exchange took an order it answered as refused for its nonce while its clock moved, and stacker, which sends such a request again then, bought twice: tell the exchange.'
      : '';
    const counted = orders.some((o) => o.twin === true) ? ' A second order of an intent of this journal is recorded against its instance and counted in its budgets and reports.' : '';
    const lagged = orders.some((o) => o.missedSlot === true)
      ? " If no other stacker runs on the key and this journal was rebuilt, put back from a copy or lost lately, the exchange's history showed that slot's order later than ORDER_SETTLE_WINDOW after the loss (the slot was journalled missed meanwhile): nothing was bought twice; acknowledge, and set ORDER_SETTLE_WINDOW above the history's lag."
      : '';
    super(
      orders.every((o) => o.resent === true)
        ? // The journal itself says why: its intent was sent more than once, which only a stacker from before exactly-once did.
          `the exchange holds a second order of an intent this journal sent more than once: ${shown}${more}. ` +
            "An older stacker, which sent a lost answer's order again, bought that slot twice before this one took the journal over; this one never resends." +
            `${counted} Read it (\`stacker journal\`), then run \`stacker journal acknowledge\` and start this one again.`
        : `the exchange holds orders with this stacker's order ids that its journal did not send${orders.every((o) => o.twin === true) ? ' (a second order of an intent it sent)' : ''}: ${shown}${more}. ` +
            'Two stackers on one key buy every slot twice: stop the other one (another host or container with its own data dir), ' +
            `then run \`stacker journal acknowledge\` and start this one again.${twice}${lagged}${counted}`,
    );
    this.name = 'ForeignOrderError';
    this.orders = orders;
  }
}
