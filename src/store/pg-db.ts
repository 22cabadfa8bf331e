import pg from 'pg';
import { StackerError } from '../domain/errors.ts';
import { StoreError } from './errors.ts';
import type { Row } from './journal-rows.ts';
import { clientBounds, serverBounds } from './pg-session.ts';
import { DATABASE_TIMEOUT } from './pg-timeout.ts';
import { driverUrl, redactDatabaseUrl } from './pg-url.ts';
import type { FailureKinds } from './write-failure.ts';

/**
 * Connections and transactions of the PostgreSQL journal (node-postgres).
 *
 * Every write runs at SERIALIZABLE and is retried from the start when PostgreSQL reports a
 * serialization failure or a deadlock. Why not SELECT … FOR UPDATE: the journal's
 * read-check-write steps (a budget's limit against what its three periods have spent, an
 * order's next transition number, a slot's status before its intents) read rows that may not
 * exist yet, which no row lock covers; SERIALIZABLE makes PostgreSQL find every such conflict,
 * so two daemons on one database get the same one-writer-at-a-time outcome as SQLite's
 * BEGIN IMMEDIATE, without the journal listing what to lock. A retried operation repeats its
 * whole transaction, so nothing of the failed attempt remains.
 */

export type PgPool = pg.Pool;

/** What a journal operation sees of its transaction. */
export interface Tx {
  rows(sql: string, params?: readonly unknown[]): Promise<Row[]>;
  one(sql: string, params?: readonly unknown[]): Promise<Row | null>;
  /** Runs a statement; how many rows it touched. */
  run(sql: string, params?: readonly unknown[]): Promise<number>;
}

export interface PgOpenOptions {
  readonly url: string;
  /** The schema the journal's tables live in (one per mode, as SQLite has one file per mode). */
  readonly schema: string;
  /** Sessions refuse to write (`stacker orders` beside a daemon). */
  readonly readOnly?: boolean;
  /** Shown in pg_stat_activity, and so in a refused lock's message. */
  readonly applicationName?: string;
  readonly maxConnections?: number;
  /** How long connecting, or any one query, may go unanswered (pg-session.ts); DATABASE_TIMEOUT.defaultMs when absent. */
  readonly timeoutMs?: number;
}

const INT8_OID = 20;

/**
 * Times are bigint milliseconds: read as Number, refused beyond 2^53 rather than rounded.
 * numeric stays text (pg's default), parsed by the journal's strict decimal reader.
 */
function parseInt8(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new StoreError('corrupt', `a bigint column holds ${text}, beyond what the journal stores (2^53)`);
  return value;
}

const TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => (oid === INT8_OID ? parseInt8 : pg.types.getTypeParser(oid, format ?? 'text'))) as typeof pg.types.getTypeParser,
};

/** A schema name is put into SQL as an identifier: only lower-case letters, digits and underscores. */
export function checkSchemaName(schema: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new StoreError('invalid-argument', `a journal schema name is lower-case letters, digits and underscores (got ${JSON.stringify(schema)})`);
  return schema;
}

export function openPool(options: PgOpenOptions): PgPool {
  const schema = checkSchemaName(options.schema);
  const timeoutMs = options.timeoutMs ?? DATABASE_TIMEOUT.defaultMs;
  const settings = [
    `-c search_path=${schema}`,
    // A commit is durable when it returns, whatever the server's default says.
    '-c synchronous_commit=on',
    ...(options.readOnly === true ? ['-c default_transaction_read_only=on'] : []),
    ...serverBounds(timeoutMs),
  ];
  const pool = new pg.Pool({
    connectionString: driverUrl(options.url),
    max: options.maxConnections ?? 4,
    application_name: options.applicationName ?? 'stacker',
    options: settings.join(' '),
    types: TYPES,
    // Also how long an operation waits for a pooled connection when every one is busy.
    ...clientBounds(timeoutMs),
    idleTimeoutMillis: 30_000,
  });
  // An idle connection the server closed must not crash the process: the next query reconnects.
  pool.on('error', () => undefined);
  return pool;
}

const MAX_ATTEMPTS = 8;
const RETRY = new Set(['40001', '40P01']);

/**
 * One transaction on one connection of the pool. `write` runs SERIALIZABLE and retries
 * conflicts; `read` runs a consistent snapshot (REPEATABLE READ, READ ONLY).
 */
export async function inTransaction<T>(pool: PgPool, kind: 'write' | 'read', work: (tx: Tx) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    const client = await checkOut(pool);
    let broken: Error | undefined;
    try {
      await client.query(kind === 'write' ? 'BEGIN ISOLATION LEVEL SERIALIZABLE' : 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const result = await work(txOf(client));
      await client.query('COMMIT');
      return result;
    } catch (error) {
      broken = await rollBack(client, error);
      if (attempt < MAX_ATTEMPTS && RETRY.has(sqlState(error))) {
        await sleep(Math.floor(Math.random() * 5 * attempt));
        continue;
      }
      throw error;
    } finally {
      client.release(broken);
    }
  }
}

/** A connection the pool lent, whose loss while it is lent is kept for its release instead of ending the process. */
export interface LentClient extends pg.PoolClient {
  /** Back to the pool, or closed when `broken` is given or the server closed it while lent. */
  release(broken?: Error | boolean): void;
}

/**
 * A connection of the pool. The pool listens for the loss of an idle connection only: one the
 * server closes while it is lent and runs no statement (a restart between two statements of a
 * transaction) is told as an 'error' event nobody heard, which ended the whole daemon. Here the
 * loss is heard, the next statement fails as it would anyway, and the release closes the connection.
 */
export async function checkOut(pool: PgPool): Promise<LentClient> {
  const client = await pool.connect();
  let lost: Error | undefined;
  const onLost = (error: Error): void => {
    lost ??= error;
  };
  client.on('error', onLost);
  const release = client.release.bind(client);
  return Object.assign(client, {
    release(broken?: Error | boolean): void {
      client.removeListener('error', onLost);
      release(broken ?? lost);
    },
  });
}

/**
 * After a failed statement: roll the transaction back, and say why the connection must not go
 * back to the pool (release it with that), or undefined when it may. A query that ran out may
 * still be running on the connection, or the server is frozen: a ROLLBACK would only wait behind
 * it for another timeout, so the connection is dropped instead, and the server rolls back when it
 * sees it close.
 */
export async function rollBack(client: pg.PoolClient, failure: unknown): Promise<Error | undefined> {
  if (isTimeout(failure)) return asError(failure);
  try {
    await client.query('ROLLBACK');
    return undefined;
  } catch (error) {
    return asError(error);
  }
}

function txOf(client: pg.PoolClient): Tx {
  const query = async (sql: string, params: readonly unknown[] = []) => client.query(sql, params as unknown[]);
  return {
    rows: async (sql, params) => (await query(sql, params)).rows as Row[],
    one: async (sql, params) => ((await query(sql, params)).rows[0] as Row | undefined) ?? null,
    run: async (sql, params) => (await query(sql, params)).rowCount ?? 0,
  };
}

/** SQLSTATE classes and client failures that mean "the journal cannot be written now": nothing may be sent, and it passes by itself. */
const UNWRITABLE_STATES = new Set(['53100', '53200', '53300', '58030', '25006', '57P01', '57P02', '57P03']);
const UNREACHABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);

/** node-postgres' words for a session whose connection ended (a restart can end it between a connect and its first query). */
const LOST_SESSION = /Connection terminated|is not queryable/i;

/** node-postgres' words when the server asks for a password and the URL gave none (SCRAM's, then any other method's). */
const NO_PASSWORD = /client password must be a string|Password must be a string/;

/**
 * Our errors pass through; a PostgreSQL or connection failure becomes a StoreError that says what
 * was being done, and of an outage whether the journal could not be read, written or reached
 * (taking a lock): a reader told its database "cannot be written" looks for a write it never made.
 */
export function asStoreError(error: unknown, doing: string, access: 'read' | 'write' | 'reach' = 'write'): StackerError {
  if (error instanceof StackerError) return error;
  const state = sqlState(error);
  const message = messageOf(error);
  if (NO_PASSWORD.test(message)) {
    return new StoreError('open-failed', `${doing}: the server asks for a password and the URL has none: write it in STACKER_DATABASE_URL as postgres://user:PASSWORD@host/database, percent-encoded`, { cause: error });
  }
  if (isTimeout(error)) {
    return new StoreError('unwritable', `${doing}: the journal's database did not answer in time (${message}): it may be stopped, overloaded or cut off`, { retryable: true, cause: error });
  }
  if (state.startsWith('23')) return new StoreError('conflict', `${doing}: ${message}`, { cause: error });
  // A refused login or a database that does not exist is a setting: say which one to look at.
  if (state === '3D000' || state.startsWith('28')) return new StoreError('open-failed', `${doing}: ${message} (check the user, password and database in STACKER_DATABASE_URL)`, { cause: error });
  // insufficient_privilege on a table at run time (a grant revoked, a table's owner changed): the
  // role's administrator fixes it, and nothing can be journalled until then.
  if (state === '42501') {
    return new StoreError('no-privilege', `${doing}: ${message}: the role in STACKER_DATABASE_URL lacks a privilege on the journal, which the owner of its schema grants (README "PostgreSQL")`, { retryable: true, cause: error });
  }
  if (UNWRITABLE_STATES.has(state) || state.startsWith('08') || UNREACHABLE.has(state) || LOST_SESSION.test(message)) {
    // A host name that does not resolve passes if DNS blips, and never if it is a typo.
    const hint = /ENOTFOUND|EAI_AGAIN/.test(state + message) ? '; if this lasts, check the host name in STACKER_DATABASE_URL' : '';
    return new StoreError('unwritable', `${doing}: the journal's database cannot be ${ACCESS_WORDS[access]}: ${message}${hint}`, { retryable: true, cause: error });
  }
  return new StoreError('postgres', `${doing}: ${message}`, { retryable: RETRY.has(state), cause: error });
}

const ACCESS_WORDS = { read: 'read', write: 'written', reach: 'reached' } as const;

/** PostgreSQL's disk_full: the server could not extend a file. */
const DISK_FULL = '53100';

/**
 * What /healthz reports of a PostgreSQL journal: an outage, a login the server refuses now (a
 * password rotated under a running daemon) and a privilege taken away. A full disk and a missing
 * privilege stick past a heartbeat (write-failure.ts).
 */
export const PG_FAILURE_KINDS: FailureKinds = {
  counts: (error) => error instanceof StoreError && (error.reason === 'unwritable' || error.reason === 'no-privilege' || error.reason === 'open-failed'),
  sticks: (error) => error instanceof StoreError && (error.reason === 'no-privilege' || sqlState(error.cause) === DISK_FULL),
};

/** A bound of pg-session.ts ran out: node-postgres' own (a query, a connect, a wait for a pooled connection) or the server's statement_timeout. */
export function isTimeout(error: unknown): boolean {
  // 57014 is query_canceled: the server's statement_timeout (or an operator's pg_cancel_backend).
  if (sqlState(error) === '57014') return true;
  return /^Query read timeout$|^timeout expired$|timeout exceeded when trying to connect|due to connection timeout/.test(messageOf(error));
}

/** The journal's tables or schema are gone (dropped under a running daemon): PostgreSQL's undefined_table or invalid_schema_name. */
export function isMissingJournal(error: unknown): boolean {
  const cause = error instanceof StoreError ? error.cause : error;
  return ['42P01', '3F000'].includes(sqlState(cause));
}

/** Where a journal lives, for messages: the URL without its password, and the schema. */
export function describeLocation(url: string, schema: string): string {
  return `${redactDatabaseUrl(url)} (schema ${schema})`;
}

function sqlState(error: unknown): string {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : '';
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
