import { type ExchangeError, InputError, type NonceError, NonceReusedError, NonceWindowError, ProtocolError, ServiceUnavailableError, StackerError } from '../domain/errors.ts';
import { httpDateMs, retryAfterMs } from '../domain/retry-after.ts';
import { type RetryPolicy, withRetry } from './backoff.ts';
import { errorInSuccessBody, mapErrorResponse, printable } from './error-map.ts';
import type { NonceSource } from './nonce.ts';
import { type RateScope, scopeOf } from './paths.ts';
import type { RateLimiters } from './rate-limit.ts';
import type { ServerClock } from './server-clock.ts';
import { WireShapeError } from './read.ts';
import { signRequest } from './sign.ts';
import type { HttpRequest, HttpResponse, Transport } from './transport.ts';

export interface Credentials {
  readonly apiKey: string;
  readonly apiSecret: string;
}

/** Observability hook: one event per attempt. Never carries secrets or bodies. */
export interface RequestEvent {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly scope: RateScope;
  readonly attempt: number;
  readonly status: number | null;
  readonly durationMs: number;
  /** StackerError.code when it failed. */
  readonly errorCode: string | null;
  /**
   * With E_NONCE, which refusal: the nonce outside the exchange's time window (the clocks
   * disagree) or one it had seen (another client on the key). Either was refused at the door.
   */
  readonly nonceRefusal?: 'window' | 'reused';
}

export interface RequesterDeps {
  readonly transport: Transport;
  readonly limiters: RateLimiters;
  readonly nonces: NonceSource;
  readonly credentials: Credentials | undefined;
  readonly nonceWindow: boolean;
  /** With nonceWindow: the exchange's clock, which the nonces are drawn from. */
  readonly serverClock: ServerClock | undefined;
  readonly retry: RetryPolicy | false;
  /** No more retries once true (BackoffDeps.stopped). */
  readonly stopped: () => boolean;
  readonly nowMs: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  readonly random: () => number;
  readonly onRequest: ((event: RequestEvent) => void) | undefined;
}

export interface CallOptions {
  /** Reads only. Orders, transfers and withdrawals are tried once: a lost answer may have committed. */
  readonly retry: boolean;
  /** Any 2xx is success whatever the body (transfer answers `[]` or `{}`). */
  readonly ignoreBody?: boolean;
  /**
   * An error answer that is an answer: the value it stands for (the order history's 422 "not
   * found" for a lookup is no order), or undefined for a real error. It is then a success, in
   * the request log and the metrics too: counted as a validation error, each routine lookup of a
   * lost answer set off alerts on refused requests.
   */
  readonly answerOf?: (error: unknown) => unknown;
  /**
   * A write refused for its nonce is signed again and sent once more: this looks first for what
   * it would have done (an order by its clientOrderId), and what it finds is the answer. An
   * exchange that took the request and still answered the refusal would otherwise do it twice.
   */
  readonly lookUp?: () => Promise<unknown>;
}

export type Query = Readonly<Record<string, string | number | undefined>>;
export type Params = Readonly<Record<string, unknown>>;

const REDACTED = '[redacted]';
/**
 * A nonce refused as already seen (window mode) is signed again up to twice, each time a random
 * 1–250 ms past the refused run: two stacker processes on one key draw their nonces from two
 * estimates of the exchange's clock, up to a second apart, so one can walk into the other's
 * recent values, several of them consecutive. A quarter second past them, at most half a
 * second ahead in all, stays well inside the exchange's ±5 s window.
 */
const REUSED_NONCE_ATTEMPTS = 3;
const REUSED_NONCE_SKIP_MS = 250;
/** Shorter strings would match ordinary text; keys and signatures are far longer. */
const MIN_SECRET_LENGTH = 8;

/**
 * One request, start to finish: rate-limit slot, fresh nonce and signature per attempt, send,
 * map the answer to a value or a typed error, report the attempt, retry reads with backoff.
 */
export class Requester {
  readonly #deps: RequesterDeps;

  constructor(deps: RequesterDeps) {
    this.#deps = deps;
  }

  get<T>(path: string, query: Query, parse: (value: unknown) => T): Promise<T> {
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) if (value !== undefined) search.set(key, String(value));
    const text = search.toString();
    const request: HttpRequest = { method: 'GET', path, query: text === '' ? '' : `?${text}`, headers: { accept: 'application/json' } };
    return this.#call('GET', path, false, () => ({ request, secrets: [] }), parse, { retry: true });
  }

  /**
   * A signed request. With nonceWindow the nonce must be within ±5 s of the exchange's clock,
   * so it is drawn from ServerClock (measured before the first request and every ten minutes).
   * Nonce refusals happen at the exchange's door, before anything is done, so the request is
   * signed afresh and sent once more (a write, an order, a transfer or a withdrawal, only on a
   * refusal that can only be the door's, a window refusal the clocks explain, and an order only
   * when its lookup finds nothing; otherwise it is a lost answer: a throttle, or a gateway's
   * second send, answers the same after the write was done):
   * - outside the window: after measuring the clock again; a second refusal means the skew
   *   cannot be corrected, and the error says so;
   * - a nonce already seen ("Too many requests."): another process on the key may have drawn
   *   the same millisecond (each measures the exchange's clock to within about half a second).
   *   With nonceWindow, signed again up to twice, each time a random stretch past the refused
   *   nonce (REUSED_NONCE_SKIP_MS); without it the rule is "greater than the key's last", so
   *   once, with the next nonce. A refusal that still comes back is for the caller.
   */
  async post<T>(path: string, params: Params, parse: (value: unknown) => T, options: CallOptions): Promise<T> {
    const credentials = this.#deps.credentials;
    if (credentials === undefined) throw InputError.one('api-key', `${path} is a private endpoint: API key and secret are required`);
    const clock = this.#deps.nonceWindow ? this.#deps.serverClock : undefined;
    await clock?.ensureFresh();
    const send = (): Promise<T> =>
      this.#call(
        'POST',
        path,
        true,
        () => {
          const signed = signRequest(path, this.#deps.nonces.next(), params, credentials.apiKey, credentials.apiSecret, this.#deps.nonceWindow);
          const request: HttpRequest = { method: 'POST', path, query: '', headers: { ...signed.headers, accept: 'application/json' }, body: signed.body };
          return { request, secrets: [credentials.apiSecret, credentials.apiKey, signed.headers['x-txc-signature'], signed.headers['x-txc-payload']] };
        },
        parse,
        options,
      );
    // Sent again after a nonce refusal: a write is looked up first (CallOptions.lookUp), and what
    // is found is its answer. Not found, a write (an order, a transfer, a withdrawal: never
    // retried) is sent again only on a refusal that must have come from the exchange's door;
    // otherwise it is a lost answer (rule 3: an order looked up over its settle window, since a
    // history lags; a move settled by the balances). "Too many requests." never tells: a throttle
    // may say it after the write was done. A window refusal tells when the clocks explain it:
    // the nonce, drawn with the correction it had, was 4 s or more off the exchange's clock as
    // measured after it (`explained`); nearer, the nonce was in the window as it left, and the
    // refusal came later: a gateway sending again a request the exchange may already have taken.
    // A read is always sent again.
    const again = async (refused: NonceError, explained = false): Promise<T> => {
      const found = await lookUpBeforeResend(options, refused);
      if (found !== null) return found as T;
      if (!options.retry && !explained) throw notSentAgain(refused);
      return send();
    };
    // The correction the nonce is drawn with (ServerClock.nowMs): none while the exchange's time
    // is unread, or while the offset measured is too small to trust: this machine's clock as it is.
    const correctionAtSend = clock?.correctionMs ?? 0;
    try {
      return await send();
    } catch (error) {
      if (error instanceof NonceReusedError) return this.#pastReusedNonce(again, error);
      if (!(error instanceof NonceWindowError) || clock === undefined) throw error;
      try {
        await clock.measure();
      } catch (readError) {
        // No reading says the clocks disagree: for a write, a refusal that may have come after it was done, as any unexplained one.
        if (!options.retry) throw notSentAgain(error, "refused for its nonce's time, and the exchange's time could not be read to say the clocks disagree: what a gateway gets when it sends again a request the exchange may already have taken");
        throw clockSkew(error, `and the exchange's time could not be read to correct it (${readError instanceof Error ? readError.message : String(readError)})`);
      }
      // How far the nonce was from the exchange's clock, as now measured: outside the window, the refusal is the door's.
      const offsetNow = clock.offsetMs;
      const explained = offsetNow !== null && Math.abs(offsetNow - correctionAtSend) >= NONCE_OFF_EXPLAINS_MS;
      try {
        return await again(error, explained);
      } catch (refusedAgain) {
        if (!(refusedAgain instanceof NonceWindowError)) throw refusedAgain;
        throw clockSkew(refusedAgain, `even after correcting for the ${((clock.offsetMs ?? 0) / 1000).toFixed(1)} s measured between this machine's clock and the exchange's`);
      }
    }
  }

  async #pastReusedNonce<T>(again: (refused: NonceError) => Promise<T>, refused: NonceReusedError): Promise<T> {
    if (!this.#deps.nonceWindow) return again(refused);
    let last = refused;
    for (let attempt = 1; attempt < REUSED_NONCE_ATTEMPTS; attempt += 1) {
      this.#deps.nonces.skip(1 + Math.floor(this.#deps.random() * REUSED_NONCE_SKIP_MS));
      try {
        return await again(last);
      } catch (refusedAgain) {
        if (!(refusedAgain instanceof NonceReusedError)) throw refusedAgain;
        last = refusedAgain;
      }
    }
    throw last;
  }

  async #call<T>(
    method: 'GET' | 'POST',
    path: string,
    signed: boolean,
    build: () => { request: HttpRequest; secrets: readonly string[] },
    parse: (value: unknown) => T,
    options: CallOptions,
  ): Promise<T> {
    const scope = scopeOf(path);
    const deps = this.#deps;
    return withRetry(
      async (attempt) => {
        await deps.limiters.acquire(scope);
        const startedMs = deps.nowMs();
        let status: number | null = null;
        let secrets: readonly string[] = [];
        try {
          const built = build();
          secrets = built.secrets;
          const response = await deps.transport.send(built.request);
          status = response.status;
          const value = this.#interpret(response, path, scope, signed, secrets, parse, options);
          this.#emit({ method, path, scope, attempt, status, durationMs: deps.nowMs() - startedMs, errorCode: null });
          return value;
        } catch (error) {
          const safe = redactError(error, secrets);
          const answer = options.answerOf?.(safe);
          if (answer !== undefined) {
            this.#emit({ method, path, scope, attempt, status, durationMs: deps.nowMs() - startedMs, errorCode: null });
            return answer as T;
          }
          const errorCode = safe instanceof StackerError ? safe.code : 'E_UNEXPECTED';
          const nonceRefusal = safe instanceof NonceWindowError ? 'window' : safe instanceof NonceReusedError ? 'reused' : undefined;
          this.#emit({ method, path, scope, attempt, status, durationMs: deps.nowMs() - startedMs, errorCode, ...(nonceRefusal === undefined ? {} : { nonceRefusal }) });
          throw safe;
        }
      },
      options.retry ? deps.retry : false,
      { sleep: deps.sleep, random: deps.random, stopped: deps.stopped },
    );
  }

  #interpret<T>(
    response: HttpResponse,
    path: string,
    scope: RateScope,
    signed: boolean,
    secrets: readonly string[],
    parse: (value: unknown) => T,
    options: CallOptions,
  ): T {
    const { status, body } = response;
    const context = { status, path, scope, signed, body, scrub: (text: string) => redact(text, secrets), retryAfterMs: askedWaitMs(response.headers, this.#deps.nowMs()) };
    if (status >= 300 && status < 400) throw new ProtocolError({ httpStatus: status, path, exchangeMessage: redirected(status, response.headers['location']) });
    if (status < 200 || status >= 300) throw mapErrorResponse(context);
    const inBody: ExchangeError | null = errorInSuccessBody(context);
    if (inBody !== null) throw inBody;
    if (options.ignoreBody === true) return parse(body.kind === 'json' ? body.value : undefined);
    if (body.kind !== 'json') {
      throw new ProtocolError({ httpStatus: status, path, exchangeMessage: body.kind === 'empty' ? 'empty answer where JSON was expected' : notJson(response.headers['content-encoding']) });
    }
    try {
      return parse(body.value);
    } catch (error) {
      if (error instanceof WireShapeError) {
        throw new ProtocolError({ httpStatus: status, path, exchangeMessage: `unexpected answer: ${error.message}` });
      }
      throw error;
    }
  }

  #emit(event: RequestEvent): void {
    const listener = this.#deps.onRequest;
    if (listener === undefined) return;
    try {
      listener(event);
    } catch {
      // An observer must never turn a finished request (perhaps a placed order) into a failure.
    }
  }
}

/** Where stacker was sent: a wrong base URL (http for https, another region's host) or a proxy in between. */
function redirected(status: number, location: string | undefined): string {
  const to = location === undefined ? '' : ` to ${printable(location).slice(0, 200)}`;
  return `unexpected redirect (HTTP ${status})${to}: stacker follows none; check the base URL (STACKER_BASE_URL, --base-url, --region) and any proxy in between`;
}

/**
 * Nothing asks for compressed answers, and the client reads none: a body in another encoding
 * (gzip from a proxy, say) is named as such, not left as "not JSON".
 */
function notJson(encoding: string | undefined): string {
  const coding = encoding?.trim() ?? '';
  if (coding === '' || coding.toLowerCase() === 'identity') return 'answer is not JSON';
  return `answer is not JSON: its body is Content-Encoding ${printable(coding).slice(0, 40)}, which stacker neither asks for nor decodes; a proxy between stacker and the exchange (or the base URL: STACKER_BASE_URL, --base-url) is the likely cause`;
}

/**
 * The wait an answer's `Retry-After` asks for. A date is the server's time: counted from its own
 * `Date` header when it sent one, so that a clock off on either side does not turn it into no
 * wait at all, or into hours.
 */
function askedWaitMs(headers: Readonly<Record<string, string>>, nowMs: number): number | null {
  const header = headers['retry-after'];
  if (header === undefined) return null;
  const date = headers['date'];
  return retryAfterMs(header, (date === undefined ? null : httpDateMs(date.trim())) ?? nowMs);
}

/** A window refusal stacker could not correct, naming the clock. */
function clockSkew(error: NonceWindowError, why: string): NonceWindowError {
  return new NonceWindowError({
    httpStatus: error.httpStatus,
    path: error.path,
    exchangeCode: error.exchangeCode,
    exchangeMessage: `${error.exchangeMessage} — the nonce is outside the exchange's ±5 s window ${why}: set this machine's clock right (NTP) and start again`,
    fieldErrors: error.fieldErrors,
  });
}

function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= MIN_SECRET_LENGTH) out = out.split(secret).join(REDACTED);
  return out;
}

/**
 * Last line of defence: nothing we throw may quote the secret, the key, the signature or the
 * payload, even if a server or a library echoed one back.
 */
function redactError(error: unknown, secrets: readonly string[]): unknown {
  if (error instanceof Error && secrets.length > 0) {
    const message = redact(error.message, secrets);
    if (message !== error.message) error.message = message;
    if (error.stack !== undefined) error.stack = redact(error.stack, secrets);
  }
  return error;
}

/** A write refused in the words a throttle shares with a nonce refusal, not found at once: a lost answer, never sent again. */
/**
 * How far a nonce must have been from the exchange's clock, as measured after its window
 * refusal against the correction it was drawn with, for that refusal to be the nonce's own: the
 * window is ±5 s and a measure is good to about half a second, so a nonce nearer than this was
 * inside the window when it left.
 */
const NONCE_OFF_EXPLAINS_MS = 4_000;

function notSentAgain(refused: NonceError, why?: string): ServiceUnavailableError {
  const could =
    why ??
    (refused instanceof NonceWindowError
      ? "refused for its nonce's time although the clocks agree, so the nonce was in the window as it left: what a gateway gets when it sends again a request the exchange may already have taken"
      : 'a nonce refusal, or a throttle after the request was done: the two say the same');
  return new ServiceUnavailableError({
    httpStatus: refused.httpStatus,
    path: refused.path,
    exchangeCode: refused.exchangeCode,
    exchangeMessage: `${refused.exchangeMessage} (${could}); not found at once, and not sent again on an answer that cannot tell: whether the exchange took it is not known`,
    fieldErrors: refused.fieldErrors,
  });
}

/**
 * What a write refused for its nonce already did, looked up before it is sent again; null when
 * it did nothing (or has no lookup). A lookup that fails leaves it unknown whether the exchange
 * took it: a lost answer (outcomeUnknown), never a resend.
 */
async function lookUpBeforeResend(options: CallOptions, refused: NonceError): Promise<unknown> {
  if (options.lookUp === undefined) return null;
  try {
    return await options.lookUp();
  } catch (error) {
    throw new ServiceUnavailableError({
      httpStatus: refused.httpStatus,
      path: refused.path,
      exchangeCode: refused.exchangeCode,
      exchangeMessage: `${refused.exchangeMessage} (its nonce refused); looking it up before sending it again failed (${error instanceof Error ? error.message : String(error)}): whether the exchange took it is not known`,
      fieldErrors: refused.fieldErrors,
    });
  }
}
