import { accessSync, constants, statSync } from 'node:fs';

/**
 * A PostgreSQL connection URL as stacker accepts it (`STACKER_DATABASE_URL`, `journal migrate
 * --to`), and the one way it is printed: with its password replaced, in logs, errors and reports.
 */

const PROTOCOLS = ['postgres:', 'postgresql:'];

/** A password holding /, #, @, ? or % breaks the URL apart where it stands: said with every problem of its shape. */
const ENCODE = '; a password with / # @ ? % or : in it must be percent-encoded (/ as %2F, @ as %40, # as %23), or use one of letters and digits (openssl rand -hex 32)';

/** Why `text` is not a PostgreSQL URL stacker can use; null when it is. Never repeats the text (it may hold a password). */
export function databaseUrlProblem(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return `must be a URL such as postgres://user:password@host:5432/database${ENCODE}`;
  }
  if (!PROTOCOLS.includes(url.protocol)) return `must start with postgres:// or postgresql:// (got ${url.protocol.replace(/:$/, '')}://)`;
  if (url.hostname === '' && !url.searchParams.has('host')) return `must name a host (postgres://user@host/database)${ENCODE}`;
  if (url.pathname === '' || url.pathname === '/') return `must name a database (postgres://user@host/database)${ENCODE}`;
  // A % that starts no %XX makes node-postgres encode the whole URL again, so that its other %XX
  // (%2F, %40: not those of two digits) reach the server as written: not the password meant.
  if (/%(?![0-9a-f]{2})/i.test(`${url.username}:${url.password}`)) return `has a % in its user or password that is not percent-encoding: write % itself as %25${ENCODE}`;
  // node-postgres takes any parameter without a word, and stacker sets some itself: one it would
  // not honour is refused (`?schema=x` connected to the usual schema, colliding with another daemon).
  const unknown = [...new Set(url.searchParams.keys())].filter((key) => !URL_PARAMETERS.includes(key));
  if (unknown.length > 0) {
    const schema = unknown.includes('schema') ? '; the schema is not a setting: it is stacker_live or stacker_dry_run, one per mode (give each deployment a database of its own)' : '';
    return `has parameter(s) ${unknown.map((key) => JSON.stringify(key)).join(', ')} that stacker does not pass on; it takes ${URL_PARAMETERS.join(', ')}${schema}`;
  }
  return tlsProblem(url.searchParams);
}

/**
 * The TLS modes stacker takes, as it applies them (node-postgres reads any other word, a typo
 * included, as verify-full, and libpq's `allow` and `prefer` too):
 * - `disable`: no TLS;
 * - `no-verify`: TLS, the server's certificate not checked;
 * - `require`, `verify-full`: TLS, the certificate signed by a CA this host trusts (or by
 *   `sslrootcert`) and naming the host: libpq's `require` would not check it, node-postgres
 *   checks it in full, and so does stacker;
 * - `verify-ca`: TLS, the certificate signed by the CA of `sslrootcert`, whatever host it names.
 */
export const SSL_MODES = ['disable', 'no-verify', 'require', 'verify-ca', 'verify-full'] as const;

/** The parameters that name a file: read when the connection is made, so checked at start. */
const TLS_FILES = ['sslrootcert', 'sslcert', 'sslkey'] as const;

function tlsProblem(params: URLSearchParams): string | null {
  const mode = params.get('sslmode');
  if (mode === 'allow' || mode === 'prefer') {
    return (
      `has sslmode=${mode}, which libpq takes as "TLS if the server offers it, else plain" and node-postgres as verify-full: say which you mean, ` +
      'sslmode=verify-full (TLS, the certificate checked), no-verify (TLS, not checked) or disable (no TLS)'
    );
  }
  if (mode !== null && !(SSL_MODES as readonly string[]).includes(mode)) return `has sslmode=${JSON.stringify(mode)}, which is not a TLS mode stacker takes: use one of ${SSL_MODES.join(', ')}`;
  if (mode === 'verify-ca' && !params.has('sslrootcert')) return 'has sslmode=verify-ca, which checks the certificate against the CA named by sslrootcert: add sslrootcert=/path/to/ca.crt, or use sslmode=verify-full';
  for (const key of TLS_FILES) {
    const path = params.get(key);
    if (path === null) continue;
    const problem = unreadableFile(path);
    if (problem !== null) return `has ${key}=${path}, which cannot be read (${problem}): name a file this user may read`;
  }
  return null;
}

function unreadableFile(path: string): string | null {
  try {
    if (!statSync(path).isFile()) return 'not a file';
    accessSync(path, constants.R_OK);
    return null;
  } catch (error) {
    return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : String(error);
  }
}

/**
 * The URL as node-postgres is given it, so that it applies the mode as SSL_MODES says (a URL
 * that passed databaseUrlProblem): `require` as `verify-full`, which node-postgres does anyway
 * but with a warning on stderr that advises a parameter stacker refuses; `verify-ca` in libpq's
 * sense, which node-postgres applies only in its libpq mode.
 */
export function driverUrl(text: string): string {
  const url = new URL(text.trim());
  const mode = url.searchParams.get('sslmode');
  if (mode === 'require') url.searchParams.set('sslmode', 'verify-full');
  if (mode === 'verify-ca') url.searchParams.set('uselibpqcompat', 'true');
  return mode === 'require' || mode === 'verify-ca' ? url.toString() : text.trim();
}

/** The URL parameters stacker passes on to node-postgres (the connection and its TLS); it sets the session's options itself. */
const URL_PARAMETERS = ['host', 'port', 'user', 'password', 'sslmode', 'sslrootcert', 'sslcert', 'sslkey'];

/** Whether the URL carries a password (after the user, or as a `password` parameter): what a command line must not. */
export function hasPassword(text: string): boolean {
  try {
    const url = new URL(text.trim());
    return url.password !== '' || url.searchParams.has('password');
  } catch {
    return false;
  }
}

/** The URL with its password (and any `password` parameter) shown as `***`. Unparseable text is not printed at all. */
export function redactDatabaseUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return '(an unreadable database URL)';
  }
  if (url.password !== '') url.password = '***';
  if (url.searchParams.has('password')) url.searchParams.set('password', '***');
  return url.toString();
}
