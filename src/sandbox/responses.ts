import type { ServerResponse } from 'node:http';
import { SimRejection } from '../sim/rejection.ts';

/**
 * What a handler answers: a status and a JSON body, or raw text (the gateway's non-JSON
 * answers), or nothing at all (404 for an unknown route has an empty body, like the exchange).
 */
export type Answer =
  | { readonly status: number; readonly json: unknown }
  | { readonly status: number; readonly text: string; readonly contentType?: string }
  | { readonly status: number; readonly empty: true };

export const json = (status: number, body: unknown): Answer => ({ status, json: body });

/** Private endpoint error body (docs/exchange-api.md §7): `{code, message, errors}`. */
export function privateError(status: number, code: number, message: string, errors: Record<string, string[]> = {}): Answer {
  return json(status, { code, message, errors });
}

/**
 * Which way an endpoint family maps refusals (docs/exchange-api.md §7): order and trade-account
 * endpoints answer validation with 422 and business rules with 400; main-account endpoints
 * (transfer, codes, flex) invert that: 400 validation, 422 business.
 */
export type RefusalStyle = 'main-account' | 'trade';

export function rejectionAnswer(rejection: SimRejection, style: RefusalStyle): Answer {
  const validation = rejection.kind === 'validation';
  const status = style === 'main-account' ? (validation ? 400 : 422) : validation ? 422 : 400;
  const message = validation ? 'Validation failed' : 'Inner validation failed';
  return privateError(status, rejection.exchangeCode, message, rejection.fieldErrors());
}

/** A 500 shaped like the exchange's (docs/exchange-api.md §4); the cause stays on the server. */
export const INTERNAL_ERROR: Answer = json(500, { error: ['Internal server error.'] });

export const NOT_FOUND: Answer = { status: 404, empty: true };

export function writeAnswer(res: ServerResponse, answer: Answer): void {
  if ('empty' in answer) {
    res.writeHead(answer.status, { 'content-length': '0' });
    res.end();
    return;
  }
  const isJson = 'json' in answer;
  const payload = Buffer.from(isJson ? JSON.stringify(answer.json) : answer.text, 'utf8');
  res.writeHead(answer.status, {
    'content-type': isJson ? 'application/json' : (answer.contentType ?? 'text/plain; charset=utf-8'),
    'content-length': String(payload.length),
    'cache-control': 'no-store',
  });
  res.end(payload);
}
