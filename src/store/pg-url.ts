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
  // node-postgres takes any parameter without a word, and stacker sets some itself: one it would
  // not honour is refused (`?schema=x` connected to the usual schema, colliding with another daemon).
  const unknown = [...new Set(url.searchParams.keys())].filter((key) => !URL_PARAMETERS.includes(key));
  if (unknown.length > 0) {
    const schema = unknown.includes('schema') ? '; the schema is not a setting: it is stacker_live or stacker_dry_run, one per mode (give each deployment a database of its own)' : '';
    return `has parameter(s) ${unknown.map((key) => JSON.stringify(key)).join(', ')} that stacker does not pass on; it takes ${URL_PARAMETERS.join(', ')}${schema}`;
  }
  return null;
}

/** The URL parameters stacker passes on to node-postgres (the connection and its TLS); it sets the session's options itself. */
const URL_PARAMETERS = ['host', 'port', 'user', 'password', 'sslmode', 'sslrootcert', 'sslcert', 'sslkey'];

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
