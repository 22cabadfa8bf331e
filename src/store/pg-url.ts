/**
 * A PostgreSQL connection URL as stacker accepts it (`STACKER_DATABASE_URL`, `journal migrate
 * --to`), and the one way it is printed: with its password replaced, in logs, errors and reports.
 */

const PROTOCOLS = ['postgres:', 'postgresql:'];

/** Why `text` is not a PostgreSQL URL stacker can use; null when it is. Never repeats the text (it may hold a password). */
export function databaseUrlProblem(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return 'must be a URL such as postgres://user:password@host:5432/database';
  }
  if (!PROTOCOLS.includes(url.protocol)) return `must start with postgres:// or postgresql:// (got ${url.protocol.replace(/:$/, '')}://)`;
  if (url.hostname === '' && !url.searchParams.has('host')) return 'must name a host (postgres://user@host/database)';
  if (url.pathname === '' || url.pathname === '/') return 'must name a database (postgres://user@host/database)';
  return null;
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
