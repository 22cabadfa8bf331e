import type { Dispatcher, Pool as UndiciPool } from 'undici';
import { INVALID_REQUEST_CODE, NetworkError, ProtocolError, TimeoutError, isTlsFailureCode } from '../domain/errors.ts';
import { decodeBody, type ResponseBody } from './json.ts';
import { Pool, request as undiciRequest } from './undici-core.ts';

export interface TransportOptions {
  readonly baseUrl: string;
  readonly connectTimeoutMs: number;
  /** Both the wait for headers and the longest silence while reading the body. */
  readonly responseTimeoutMs: number;
  readonly connections: number;
  /** Injected (tests, proxies); the transport never closes a dispatcher it did not create. */
  readonly dispatcher?: Dispatcher;
  readonly maxBodyBytes?: number;
}

export interface HttpRequest {
  readonly method: 'GET' | 'POST';
  /** Path as named in errors and events (no query string). */
  readonly path: string;
  /** Query string including the leading '?', or ''. */
  readonly query: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
}

export interface HttpResponse {
  readonly status: number;
  readonly body: ResponseBody;
  /** Names in lower case; a header sent more than once, its values joined by ", ". */
  readonly headers: Readonly<Record<string, string>>;
}

const DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024;

/**
 * The deadline of a whole request: twice the silence a request may meet, and a second more, so
 * that a silence is still reported as one (undici checks its time limits about once a second).
 */
function deadlineOf(responseTimeoutMs: number): number {
  return 2 * responseTimeoutMs + 1000;
}

/**
 * Failures that happen before any byte of the request can have left: the operation surely did
 * not happen. Everything else (resets, a socket closed after the write, unknown codes) counts as
 * "may have been sent" — the safe side for the money rule.
 */
const NOT_SENT_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'EADDRNOTAVAIL',
  'UND_ERR_CLOSED', // the dispatcher was closed: it refuses new requests
  INVALID_REQUEST_CODE,
  'UND_MOCK_ERR_MOCK_NOT_MATCHED', // MockAgent with net connect disabled: nothing left the process
]);


const DESCRIPTIONS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by the server',
  EPIPE: 'connection closed while sending',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed',
  UND_ERR_SOCKET: 'connection closed by the server',
  UND_ERR_CLOSED: 'client already closed',
  UND_ERR_DESTROYED: 'client destroyed during the request',
};

/**
 * The only place that talks HTTP. Keep-alive pool on one origin, per-request timeouts (so they
 * hold for an injected dispatcher too), and every response body read to the end or destroyed —
 * an unread body pins its socket in the pool.
 */
export class Transport {
  readonly #options: TransportOptions;
  #pool: UndiciPool | null = null;
  #closed = false;

  constructor(options: TransportOptions) {
    this.#options = options;
  }

  async send(request: HttpRequest): Promise<HttpResponse> {
    const { responseTimeoutMs } = this.#options;
    if (this.#closed) throw new NetworkError(request.path, 'UND_ERR_CLOSED', false, DESCRIPTIONS['UND_ERR_CLOSED']!);
    let response: Dispatcher.ResponseData;
    // The time limits above are for silence: a server that sends a byte every few seconds would
    // hold a request (and a stop waiting for it) for ever. The whole answer has a deadline too.
    const deadlineMs = deadlineOf(responseTimeoutMs);
    const deadline = AbortSignal.timeout(deadlineMs);
    try {
      response = await settledBy(
        undiciRequest(this.#dispatcher(), {
          origin: this.#options.baseUrl,
          path: request.path + request.query,
          method: request.method,
          headers: request.headers,
          body: request.body ?? null,
          headersTimeout: responseTimeoutMs,
          bodyTimeout: responseTimeoutMs,
          signal: deadline,
        }),
        deadline,
      );
    } catch (error) {
      throw deadline.aborted ? new TimeoutError(request.path, 'total', deadlineMs) : this.#mapFailure(error, request.path, false);
    }
    try {
      const text = await this.#readBody(response, request.path);
      return { status: response.statusCode, body: decodeBody(text), headers: flatHeaders(response.headers) };
    } catch (error) {
      throw deadline.aborted && !(error instanceof ProtocolError) ? new TimeoutError(request.path, 'total', deadlineMs) : error;
    }
  }

  /**
   * Closes the pool this transport created; an injected dispatcher belongs to its owner. Requests
   * in flight are waited for up to their deadline; a pool still busy then (a request undici never
   * settles: see settledBy) is destroyed, so that a stop never waits for ever.
   */
  async close(): Promise<void> {
    this.#closed = true;
    const pool = this.#pool;
    this.#pool = null;
    if (pool === null) return;
    let timer: NodeJS.Timeout | undefined;
    const overdue = new Promise<'overdue'>((resolve) => {
      timer = setTimeout(() => resolve('overdue'), deadlineOf(this.#options.responseTimeoutMs));
    });
    try {
      if ((await Promise.race([pool.close(), overdue])) === 'overdue') await pool.destroy();
    } finally {
      clearTimeout(timer);
    }
  }

  #dispatcher(): Dispatcher {
    if (this.#options.dispatcher !== undefined) return this.#options.dispatcher;
    // Created on first use: constructing the client does no I/O and holds no sockets.
    this.#pool ??= new Pool(this.#options.baseUrl, {
      connections: this.#options.connections,
      connectTimeout: this.#options.connectTimeoutMs,
      headersTimeout: this.#options.responseTimeoutMs,
      bodyTimeout: this.#options.responseTimeoutMs,
    });
    return this.#pool;
  }

  async #readBody(response: Dispatcher.ResponseData, path: string): Promise<string> {
    const limit = this.#options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of response.body) {
        const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
        size += buffer.length;
        if (size > limit) {
          response.body.destroy();
          throw new ProtocolError({ httpStatus: response.statusCode, path, exchangeMessage: `response body larger than ${limit} bytes` });
        }
        chunks.push(buffer);
      }
    } catch (error) {
      if (error instanceof ProtocolError) throw error;
      if (!response.body.destroyed) response.body.destroy();
      throw this.#mapFailure(error, path, true);
    }
    return Buffer.concat(chunks).toString('utf8');
  }

  /** undici error → NetworkError / TimeoutError. The undici error is not attached: it can reference the request. */
  #mapFailure(error: unknown, path: string, responseStarted: boolean): NetworkError | TimeoutError {
    const code = errorCode(error);
    const { connectTimeoutMs, responseTimeoutMs } = this.#options;
    if (code === 'UND_ERR_CONNECT_TIMEOUT') return new TimeoutError(path, 'connect', connectTimeoutMs);
    if (code === 'UND_ERR_HEADERS_TIMEOUT') return new TimeoutError(path, 'headers', responseTimeoutMs);
    if (code === 'UND_ERR_BODY_TIMEOUT') return new TimeoutError(path, 'body', responseTimeoutMs);
    const notSent = !responseStarted && (NOT_SENT_CODES.has(code) || isTlsFailureCode(code));
    return new NetworkError(path, code, !notSent, describe(code, error));
  }
}

/**
 * The request's answer, or a rejection once the deadline passes even if undici never settles it:
 * a connection undici left wedged (a request it refused for a header value, with others queued
 * behind it on the connection) ignores the abort signal, and its requests would wait for ever,
 * and a stop with them. An answer that comes after the deadline is thrown away, its body freed.
 */
function settledBy(answer: Promise<Dispatcher.ResponseData>, deadline: AbortSignal): Promise<Dispatcher.ResponseData> {
  return new Promise((resolve, reject) => {
    const giveUp = (): void => {
      reject(deadline.reason);
      answer.then(
        (late) => late.body.destroy(),
        () => undefined,
      );
    };
    if (deadline.aborted) return giveUp();
    deadline.addEventListener('abort', giveUp, { once: true });
    answer.then(
      (response) => {
        deadline.removeEventListener('abort', giveUp);
        resolve(response);
      },
      (error: unknown) => {
        deadline.removeEventListener('abort', giveUp);
        reject(error);
      },
    );
  });
}

function flatHeaders(headers: Dispatcher.ResponseData['headers']): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

function errorCode(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code !== '') return code;
  }
  return 'UNKNOWN';
}

function describe(code: string, error: unknown): string {
  const known = DESCRIPTIONS[code];
  if (known !== undefined) return known;
  if (isTlsFailureCode(code)) return 'TLS handshake failed: check the endpoint (https:// on a plain-HTTP port?) and its certificate; trying again does not mend it';
  const message = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ').slice(0, 160);
  // undici names the header, never its value.
  if (code === INVALID_REQUEST_CODE) return `request refused before sending: ${message} (a character HTTP does not allow, pasted with the API key?); trying again does not mend it`;
  return `transport failure: ${message}`;
}
