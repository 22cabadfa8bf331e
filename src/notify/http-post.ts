import { Agent as HttpAgent, type IncomingMessage, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { NotifyDeliveryError } from './delivery-error.ts';
import { httpDateMs, retryAfterMs } from '../domain/retry-after.ts';

/**
 * One POST to a notification receiver with node's own http/https: a few small messages a day
 * need neither undici's pool nor fetch (whose bundled undici costs the daemon megabytes of
 * resident memory; see src/api/undici-core.ts). Every request has one deadline covering connect,
 * send and answer; the answer's body is read only as far as a status needs explaining.
 */
export interface PostRequest {
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
}

export interface PostAnswer {
  readonly status: number;
  readonly headers: IncomingMessage['headers'];
  /** At most MAX_BODY_CHARS of the answer, for a refusal's explanation. */
  readonly body: string;
}

const MAX_BODY_CHARS = 2048;

/** A keep-alive connection per channel: a burst of fills reuses it; close() ends it. */
export function agentFor(url: URL): HttpAgent {
  return url.protocol === 'https:' ? new HttpsAgent({ keepAlive: true, maxSockets: 2 }) : new HttpAgent({ keepAlive: true, maxSockets: 2 });
}

export function postOnce(channel: string, agent: HttpAgent, request: PostRequest): Promise<PostAnswer> {
  const send = request.url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<PostAnswer>((resolve, reject) => {
    let settled = false;
    const fail = (error: NotifyDeliveryError): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(error);
      req.destroy();
    };
    const req = send(request.url, {
      method: 'POST',
      agent,
      headers: { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) },
      signal: request.signal,
    });
    const timer = setTimeout(() => fail(new NotifyDeliveryError(channel, `no answer within ${request.timeoutMs} ms`, { retryable: true })), request.timeoutMs);
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (request.signal.aborted) fail(new NotifyDeliveryError(channel, 'given up: stacker is stopping', { retryable: false }));
      // The code only: a message may quote the host and port, never the path, but keep it plain.
      else fail(new NotifyDeliveryError(channel, `could not deliver (${error.code ?? 'network error'})`, { retryable: true }));
    });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (body.length < MAX_BODY_CHARS) body += chunk.slice(0, MAX_BODY_CHARS - body.length);
      });
      res.on('error', () => fail(new NotifyDeliveryError(channel, 'the answer broke off', { retryable: true })));
      res.on('end', () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
      });
    });
    req.end(request.body);
  });
}

/** What a channel knows of its receiver's refusals beyond HTTP: why (from the body), how long to wait. */
export interface AnswerReading {
  readonly explain?: (answer: PostAnswer) => string;
  readonly retryAfterMs?: (answer: PostAnswer) => number | null;
}

/**
 * A receiver's answer as a delivery outcome: 2xx is delivered; 429 and 5xx may be tried again
 * (after the wait the receiver asked for, when it said); any other status refuses this message.
 */
export function checkAnswer(channel: string, answer: PostAnswer, reading: AnswerReading = {}): void {
  if (answer.status >= 200 && answer.status < 300) return;
  const why = reading.explain?.(answer) ?? '';
  throw new NotifyDeliveryError(channel, `the receiver answered HTTP ${answer.status}${why === '' ? '' : `: ${why}`}`, {
    retryable: answer.status === 429 || answer.status >= 500,
    httpStatus: answer.status,
    retryAfterMs: reading.retryAfterMs?.(answer) ?? retryAfterMs(answer.headers['retry-after'], receiverNowMs(answer)),
  });
}

/**
 * The receiver's clock when it answered: its own Date header, else ours. A Retry-After date is
 * the receiver's time, so counting it from the receiver's Date keeps a skewed clock on either
 * side from turning it into no wait at all, or into hours.
 */
function receiverNowMs(answer: PostAnswer): number {
  const date = answer.headers.date;
  return (date === undefined ? null : httpDateMs(date.trim())) ?? Date.now();
}
