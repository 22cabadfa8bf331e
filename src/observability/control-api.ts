import type { IncomingMessage } from 'node:http';
import { clientAddress } from './client-address.ts';
import type { ControlBackoff } from './control-backoff.ts';

/**
 * The HTTP side of the status API's controls: which path is which control, the bearer token,
 * the request body. What a control does is the daemon's (src/daemon/controls.ts); this module
 * only decides whether a request may reach it and what its answer looks like on the wire.
 *
 * - no token configured → 403 for every control: they are off, not merely locked;
 * - a missing or wrong token → 401 with `WWW-Authenticate: Bearer`, and nothing changes;
 * - after repeated 401s from one address → 429 with `Retry-After`, the token not even looked at
 *   until the window is over (control-backoff.ts): guessing is slowed to a few tries a minute;
 * - the token is never logged, echoed or put in an answer.
 *
 * There are no cookies: a browser only sends the token when the page's own script puts it in
 * the Authorization header, which another site cannot make it do (a cross-origin request with
 * that header needs a CORS preflight this server never grants), so there is nothing to forge.
 */

export type ControlAction =
  | { readonly kind: 'pause' | 'resume' | 'run'; readonly instance: string }
  /** Without `account`: the kill switch of every account; with it, that account's own. */
  | { readonly kind: 'kill-switch'; readonly on: boolean; readonly account?: string };

export type ControlAnswer =
  | { readonly outcome: 'ok'; readonly body: Readonly<Record<string, unknown>> }
  | { readonly outcome: 'unknown-instance' | 'unknown-account' | 'conflict' | 'unavailable'; readonly message: string };

/** What the daemon does for a control that passed the token check. */
export interface Controls {
  act(action: ControlAction): Promise<ControlAnswer>;
}

export interface ControlAccess {
  /** null: no STACKER_CONTROL_TOKEN, every control answers 403. */
  readonly token: { matches(presented: string): boolean } | null;
  readonly controls: Controls;
  /**
   * Told of each request refused for its token (none or a wrong one), or held back unread after
   * too many (429): someone is trying. `from` is the client, with the proxy it came through.
   */
  readonly refused?: (why: 'missing token' | 'wrong token' | 'too many refused', from: string) => void;
  /** Where the 401s of each address are counted (the health server keeps one for its life). */
  readonly backoff?: ControlBackoff;
  /** Reverse proxies whose X-Forwarded-For names the client (STACKER_METRICS_TRUSTED_PROXIES); absent: none. */
  readonly trustedProxies?: ReadonlySet<string>;
}

export interface ControlResponse {
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Readonly<Record<string, unknown>>;
}

/** A control's body is a small JSON object at most; anything larger is refused unread. */
export const MAX_CONTROL_BODY_BYTES = 1024;

const INSTANCE_ROUTE = /^\/api\/instances\/([^/]+)\/(pause|resume|run)$/;
const KILL_SWITCH_ROUTE = '/api/kill-switch';
const ACCOUNT_KILL_SWITCH_ROUTE = /^\/api\/accounts\/([^/]+)\/kill-switch$/;

export function isControlPath(path: string): boolean {
  return path === KILL_SWITCH_ROUTE || INSTANCE_ROUTE.test(path) || ACCOUNT_KILL_SWITCH_ROUTE.test(path);
}

const NO_PROXIES: ReadonlySet<string> = new Set();

const answer = (statusCode: number, body: Record<string, unknown>, headers: Record<string, string> = {}): ControlResponse => ({ statusCode, headers, body });

/** One control request, from method and token to the daemon's answer. Call only for an isControlPath path. */
export async function controlRequest(req: IncomingMessage, path: string, access: ControlAccess): Promise<ControlResponse> {
  if (req.method !== 'POST') {
    req.resume();
    return answer(405, { error: 'method not allowed: controls are POST' }, { allow: 'POST' });
  }
  if (access.token === null) {
    req.resume();
    return answer(403, { error: 'controls are off: set STACKER_CONTROL_TOKEN (at least 16 characters) and restart to enable them' });
  }
  const { client: from, via } = clientAddress(req, access.trustedProxies ?? NO_PROXIES);
  const told = via === null ? from : `${from} (through ${via})`;
  const waitSeconds = access.backoff?.waitSeconds(from) ?? null;
  if (waitSeconds !== null) {
    req.resume();
    access.refused?.('too many refused', told);
    return answer(429, { error: `too many control requests refused for their token from this address: the token is not checked again for ${waitSeconds} s` }, { 'retry-after': String(waitSeconds) });
  }
  const presented = bearerToken(req.headers.authorization);
  if (presented === null || !access.token.matches(presented)) {
    req.resume();
    access.backoff?.refused(from);
    access.refused?.(presented === null ? 'missing token' : 'wrong token', told);
    return answer(401, { error: presented === null ? 'missing token: send Authorization: Bearer <STACKER_CONTROL_TOKEN>' : 'wrong token' }, { 'www-authenticate': 'Bearer realm="stacker"' });
  }
  access.backoff?.accepted(from);
  const body = await readBody(req);
  if (body === null) return answer(413, { error: `request body larger than ${MAX_CONTROL_BODY_BYTES} bytes` });
  const action = actionOf(path, body);
  if ('problem' in action) return answer(action.status, { error: action.problem });
  const result = await access.controls.act(action);
  switch (result.outcome) {
    case 'ok':
      return answer(200, result.body);
    case 'unknown-instance':
    case 'unknown-account':
      return answer(404, { error: result.message });
    case 'conflict':
      return answer(409, { error: result.message });
    case 'unavailable':
      return answer(503, { error: result.message });
  }
}

function actionOf(path: string, body: string): ControlAction | { readonly status: number; readonly problem: string } {
  const match = INSTANCE_ROUTE.exec(path);
  if (match !== null) {
    let instance: string;
    try {
      instance = decodeURIComponent(match[1] as string);
    } catch {
      return { status: 404, problem: 'no such instance' };
    }
    return { kind: match[2] as 'pause' | 'resume' | 'run', instance };
  }
  let account: string | undefined;
  const accountMatch = ACCOUNT_KILL_SWITCH_ROUTE.exec(path);
  if (accountMatch !== null) {
    try {
      account = decodeURIComponent(accountMatch[1] as string);
    } catch {
      return { status: 404, problem: 'no such account' };
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { status: 400, problem: 'body: must be JSON, {"on": true} or {"on": false}' };
  }
  const on = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as { on?: unknown }).on : undefined;
  if (typeof on !== 'boolean') return { status: 400, problem: 'on: must be true (stop sending anything that moves money) or false (trade again)' };
  return account === undefined ? { kind: 'kill-switch', on } : { kind: 'kill-switch', on, account };
}

/** The token of `Authorization: Bearer TOKEN` (scheme case-insensitive); null when absent or another scheme. */
function bearerToken(header: string | undefined): string | null {
  if (header === undefined) return null;
  const match = /^Bearer[ ]+(\S+)[ ]*$/i.exec(header);
  return match === null ? null : (match[1] as string);
}

/** The body as text, or null once it passes the cap (the rest is drained, not kept). */
async function readBody(req: IncomingMessage): Promise<string | null> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_CONTROL_BODY_BYTES) {
    req.resume();
    return null;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  for await (const chunk of req) {
    if (tooLarge) continue;
    size += (chunk as Buffer).length;
    if (size > MAX_CONTROL_BODY_BYTES) tooLarge = true;
    else chunks.push(chunk as Buffer);
  }
  return tooLarge ? null : Buffer.concat(chunks).toString('utf8');
}
