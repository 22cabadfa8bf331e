import pg from 'pg';
import { driverUrl } from './pg-url.ts';

/**
 * How long a session with the journal's PostgreSQL server may wait for it.
 *
 * A server that stops answering without closing its connections (its processes stopped, its VM
 * paused, a partition that drops packets without a reset) would leave a query waiting until TCP
 * gives up, many minutes later: the slot would hang, /healthz would say all is well since no
 * query failed, and a stop would wait with them. So every session — the journal's pool, the
 * lock's own session, the one-off look at a schema — has one bound (STACKER_DATABASE_TIMEOUT,
 * pg-timeout.ts) on connecting and on each query:
 * - on the client (node-postgres' connectionTimeoutMillis and query_timeout): the only bound a
 *   frozen server trips, since it sends nothing, not even an error;
 * - on the server (statement_timeout), a fifth shorter: a server that is alive but slow (an
 *   overloaded disk, a lock wait) cancels the statement itself, and answers, before the client
 *   gives the connection up;
 * - TCP keepalives both ways, so that the server notices within seconds a client host that
 *   vanished, and ends its transactions and frees what they held.
 * A query that ran out fails as "the journal cannot be written" (StoreError `unwritable`: isTimeout
 * and asStoreError in pg-db.ts), which is what a database outage already is: nothing is sent,
 * /healthz answers 503, and the next operation tries again, on a new connection.
 */

/** The client side of every session: how long to connect, how long a query may go unanswered, keepalives. */
export function clientBounds(timeoutMs: number): Pick<pg.ClientConfig, 'connectionTimeoutMillis' | 'query_timeout' | 'keepAlive' | 'keepAliveInitialDelayMillis'> {
  return { connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs, keepAlive: true, keepAliveInitialDelayMillis: 5_000 };
}

/**
 * The server side, as `-c` settings of the session's `options`. The server's keepalives end the
 * session of a host that vanished within about 11 s (5 s idle, then 3 probes 2 s apart): its
 * transaction is rolled back, and a lock it held (the journal's advisory lock) frees. A session
 * that waits inside a transaction for twice the bound is ended too: its client froze mid-write
 * (a host that keeps its TCP session answers the keepalives), and the rows it holds would stall
 * the standby that takes its place.
 */
export function serverBounds(timeoutMs: number): string[] {
  return [
    `-c statement_timeout=${Math.max(1, Math.floor(timeoutMs * 0.8))}`,
    `-c idle_in_transaction_session_timeout=${2 * timeoutMs}`,
    '-c tcp_keepalives_idle=5',
    '-c tcp_keepalives_interval=2',
    '-c tcp_keepalives_count=3',
  ];
}

/**
 * A session of its own (the advisory lock's, a look at a schema), bounded as the pool's are.
 * An error the session emits later (the server ended it) must not crash the process: whoever
 * uses it learns of it from its next query, or from its `end` event.
 */
export function boundedClient(url: string, applicationName: string, timeoutMs: number): pg.Client {
  const client = new pg.Client({ connectionString: driverUrl(url), application_name: applicationName, ...clientBounds(timeoutMs), options: serverBounds(timeoutMs).join(' ') });
  client.on('error', () => undefined);
  return client;
}

/**
 * End a session, cutting it (its socket destroyed) when the server has not closed it within
 * `timeoutMs`: a graceful end waits for the server's side of the close, which a frozen server
 * never sends, and a daemon told to stop must not wait for it. The server ends the session as
 * soon as it runs again, which also frees a lock the session held.
 */
export async function endSession(client: pg.Client, timeoutMs: number): Promise<void> {
  const ended = client.end().catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), timeoutMs);
  });
  try {
    if ((await Promise.race([ended, late])) === 'late') {
      client.connection.stream.destroy();
      await ended;
    }
  } finally {
    clearTimeout(timer);
  }
}
