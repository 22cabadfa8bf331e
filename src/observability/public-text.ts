/**
 * What the unauthenticated endpoints (`/healthz`, `/api/status`) may say of a failure: why, not
 * where. A database error carries the server's address (`connect ECONNREFUSED 10.0.0.7:5432`,
 * `getaddrinfo ENOTFOUND db.internal`) and a journal's location its URL (password masked, host
 * and port not): anyone who can read the page learns the internal network from them. The
 * daemon's log keeps the full message; these answers keep the reason, in words.
 */

/** Node's system errors, `SYSCALL CODE [ADDRESS]`, as a socket or a name lookup fails. */
const SYSTEM_ERROR = /\b(?:connect|getaddrinfo|read|write|send|recv|socket|lookup) (E[A-Z_]+)(?: [^\s,;)]+)?/g;

/** A PostgreSQL URL as messages name a journal (its password already masked), without the punctuation after it. */
const DATABASE_URL = /\bpostgres(?:ql)?:\/\/[^\s)]*[^\s):;,.]/g;

const REASONS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed for now',
  EPIPE: 'connection broken',
};

export function withoutAddresses(text: string): string {
  return text
    .replace(SYSTEM_ERROR, (_whole, code: string) => (REASONS[code] === undefined ? code : `${REASONS[code]} (${code})`))
    .replace(DATABASE_URL, '<STACKER_DATABASE_URL>');
}

/** JSON of a document whose every string is told without addresses. */
export function publicJson(document: unknown): string {
  return JSON.stringify(document, (_key, value: unknown) => (typeof value === 'string' ? withoutAddresses(value) : value));
}
