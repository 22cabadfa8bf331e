import { createHash } from 'node:crypto';
import { abortableSleep } from '../domain/abortable-sleep.ts';
import { hostname as osHostname } from 'node:os';
import type pg from 'pg';
import { type LockOwner, type LockScope, LockedError, StoreError } from './errors.ts';
import { asStoreError } from './pg-db.ts';
import type { Pulse, PulseWatch } from './pg-lease-pulse.ts';
import { boundedClient, endSession } from './pg-session.ts';
import { DATABASE_TIMEOUT } from './pg-timeout.ts';
import { redactDatabaseUrl } from './pg-url.ts';

/**
 * A daemon's lock on a PostgreSQL journal: a session-level advisory lock held by a connection
 * of its own. The
 * server releases it the moment that session ends — the daemon stopped, killed -9, its host
 * gone (once the server notices the dropped connection) — so, like the kernel's file lock,
 * nothing is left behind to delete. The session's application_name names the holder, so a
 * refused daemon can say who has it.
 */
export class PgAdvisoryLock {
  readonly scope: LockScope;
  /** What the lock guards, for messages (no secret: the URL is shown without its password). */
  readonly label: string;
  readonly #url: string;
  readonly #key: bigint;
  readonly #name: string;
  readonly #keep: LockKeep | null;
  readonly #timeoutMs: number;
  #client: pg.Client | null = null;
  /** Set while the lock is held or being taken again; aborted by release(). */
  #held: AbortController | null = null;

  constructor(
    url: string,
    scope: LockScope,
    subject: string,
    options: { readonly pid?: number; readonly hostname?: string; readonly keep?: LockKeep; readonly timeoutMs?: number } = {},
  ) {
    this.scope = scope;
    this.#url = url;
    this.#key = lockKey(subject);
    this.label = `PostgreSQL advisory lock ${this.#key} (${scope}) on ${redactDatabaseUrl(url)}`;
    this.#name = `stacker pid ${options.pid ?? process.pid} on ${options.hostname ?? osHostname()}`.slice(0, 63);
    this.#keep = options.keep ?? null;
    this.#timeoutMs = options.timeoutMs ?? DATABASE_TIMEOUT.defaultMs;
  }

  /** How the holder is named (pid and host), in pg_stat_activity and the journal's lease. */
  get holder(): string {
    return this.#name;
  }

  /**
   * Take the lock, or throw LockedError naming the holder. With `wait` (a standby), keep trying
   * on the same session every `pollMs` until the holder's session ends, telling `onWaiting` once;
   * an aborted `signal` gives up with the last LockedError. A standby also waits out a database
   * it cannot reach (restarting, or not up yet when the containers start, or a host name that
   * does not resolve): it tells `onUnreachable` at each try that fails and tries again on a new
   * session, since a daemon that waits to take over must not be the one that dies when the
   * database blips.
   */
  async acquire(wait?: LockWait): Promise<void> {
    if (this.#held !== null) return;
    let told = false;
    let unreachable = false;
    for (;;) {
      const client = this.#session();
      try {
        await client.connect();
        if (unreachable) wait?.onReachable?.();
        unreachable = false;
        for (;;) {
          const taken = await client.query('SELECT pg_try_advisory_lock($1::bigint) AS taken', [this.#key.toString()]);
          if (taken.rows[0]?.['taken'] === true) {
            this.#held = new AbortController();
            this.#hold(client, this.#held.signal);
            return;
          }
          const refused = new LockedError(this.scope, this.label, await holderOf(client, this.#key), 'stop it first (PostgreSQL releases this lock the moment that daemon\'s session ends: there is nothing to delete)');
          if (wait === undefined || isAborted(wait.signal)) throw refused;
          if (!told) wait.onWaiting?.(refused);
          told = true;
          if (wait.lapse !== undefined) {
            const still = wait.lapse.watch.lapsed(await wait.lapse.read(client));
            if (still.lapsed) {
              // The holder froze with its session open: end that session, and with it the lock.
              await client.query(
                `SELECT pg_terminate_backend(l.pid) FROM pg_locks l WHERE ${THIS_LOCK}`,
                [this.#key.toString()],
              );
              wait.lapse.watch.reset();
              wait.lapse.onLapsed?.(refused, still.stillForMs);
            }
          }
          await abortableSleep(wait.pollMs ?? 1_000, wait.signal);
          if (isAborted(wait.signal)) throw refused;
        }
      } catch (error) {
        await endSession(client, this.#timeoutMs);
        if (error instanceof LockedError) throw error;
        const problem = asStoreError(error, `taking the ${this.label}`, 'reach');
        const retryable = problem instanceof StoreError && problem.retryable;
        if (wait === undefined || isAborted(wait.signal) || !retryable) throw problem;
        // A pulse is watched only while it can be read: an outage is not the owner's freeze.
        wait.lapse?.watch.reset();
        wait.onUnreachable?.(problem);
        unreachable = true;
        await abortableSleep(wait.pollMs ?? 1_000, wait.signal);
        if (isAborted(wait.signal)) throw problem;
      }
    }
  }

  /**
   * A new session for the lock, bounded like the journal's (pg-session.ts): taking the lock from
   * a frozen server fails in time (a standby waits it out) instead of hanging. A held lock's
   * session sends nothing: a frozen server does not end it, and the lock is still held when the
   * server runs again. Nor does this daemon ask the server: a question left unanswered would
   * prove neither that the lock is held nor that it is lost, and dropping the session over it
   * would free a lock the server still holds. A holder whose host vanished is noticed by the
   * server's keepalives within seconds and its lock frees; what fences that holder is the lease.
   */
  #session(): pg.Client {
    // A session the server ends (the lock lost with it) is told by its `end` event (#hold); the
    // journal's lease tells this daemon whether it was replaced meanwhile, at its next write.
    return boundedClient(this.#url, this.#name, this.#timeoutMs);
  }

  /**
   * Keep `client` as the lock's session. When the server ends it while the lock is held (a
   * restart, a failover, pg_terminate_backend), the lock is gone with it and nothing would keep
   * a second daemon out: with `keep`, take it again on a new session, every `pollMs`, until
   * release(). Should a standby get it first, it also takes the journal's lease, which stops
   * this daemon at its next write; the lease, not this lock, is what fences writes.
   */
  #hold(client: pg.Client, held: AbortSignal): void {
    this.#client = client;
    const keep = this.#keep;
    if (keep === null) return;
    client.once('end', () => {
      if (this.#client !== client || held.aborted) return;
      this.#client = null;
      keep.onLost?.();
      void this.#takeAgain(keep, held);
    });
  }

  async #takeAgain(keep: LockKeep, held: AbortSignal): Promise<void> {
    while (!held.aborted) {
      await abortableSleep(keep.pollMs ?? 2_000, held);
      if (held.aborted) return;
      const client = this.#session();
      try {
        await client.connect();
        const taken = await client.query('SELECT pg_try_advisory_lock($1::bigint) AS taken', [this.#key.toString()]);
        if (taken.rows[0]?.['taken'] === true && !held.aborted) {
          this.#hold(client, held);
          keep.onRetaken?.();
          return;
        }
      } catch {
        // Still unreachable, or not answering: try again.
      }
      await endSession(client, this.#timeoutMs);
    }
  }

  async release(): Promise<void> {
    this.#held?.abort();
    this.#held = null;
    const client = this.#client;
    if (client === null) return;
    this.#client = null;
    // Ending the session releases the lock whether or not the unlock got through.
    await client.query('SELECT pg_advisory_unlock($1::bigint)', [this.#key.toString()]).catch(() => undefined);
    await endSession(client, this.#timeoutMs);
  }
}

/** A daemon's lock kept through the end of its session (PgAdvisoryLock's `keep`), and what it is told. */
export interface LockKeep {
  /**
   * How often to try to take the lock again: 2 s by default, twice a standby's wait, so that a
   * standby that can reach the database gets the freed lock first, as it is there to.
   */
  readonly pollMs?: number;
  readonly onLost?: () => void;
  readonly onRetaken?: () => void;
}

/** How a standby waits for a lock (PgAdvisoryLock.acquire). */
export interface LockWait {
  /** Aborting gives up waiting (the daemon was told to stop). */
  readonly signal?: AbortSignal;
  /** How often to try again; 1 s by default, so a standby takes over within seconds of the holder's end. */
  readonly pollMs?: number;
  /** Told once, when the lock is first found taken. */
  readonly onWaiting?: (holder: LockedError) => void;
  /** Told at each try that cannot reach the database while waiting (every `pollMs` while it lasts); the wait goes on. */
  readonly onUnreachable?: (problem: Error) => void;
  /** Told when the database answers again after an outage. */
  readonly onReachable?: () => void;
  /**
   * Take a frozen holder's place (pg-lease-pulse.ts): at each try, read its pulse with `read`;
   * once `watch` says it stood still for the lapse, end the holder's lock session, and tell
   * `onLapsed` (the holder, and for how long its pulse stood still).
   */
  readonly lapse?: {
    readonly watch: PulseWatch;
    readonly read: (client: pg.Client) => Promise<{ readonly pulse: Pulse; readonly leaseToken: number } | null>;
    readonly onLapsed?: (holder: LockedError, stillForMs: number) => void;
  };
}

const isAborted = (signal: AbortSignal | undefined): boolean => signal?.aborted === true;

/**
 * The advisory lock of key $1 in pg_locks (as `l`), granted, in this session's database only: the key is
 * the same in every database of a cluster (each mode's journal, a staging stacker beside), and
 * the lock of another database's journal is another daemon's, not to be named or ended.
 */
const THIS_LOCK =
  "l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND ((l.classid::bigint << 32) | l.objid::bigint) = $1::bigint " +
  'AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())';

/** A positive 63-bit key from the subject's SHA-256: the same on every host and PostgreSQL version. */
export function lockKey(subject: string): bigint {
  const digest = createHash('sha256').update('stacker advisory lock\0').update(subject, 'utf8').digest();
  return digest.readBigUInt64BE(0) & 0x7fff_ffff_ffff_ffffn;
}

async function holderOf(client: pg.Client, key: bigint): Promise<LockOwner | null> {
  const found = await client.query(
    `SELECT a.application_name AS name, (extract(epoch FROM a.backend_start) * 1000)::bigint::text AS started
     FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
     WHERE ${THIS_LOCK}`,
    [key.toString()],
  );
  const row = found.rows[0] as { name?: unknown; started?: unknown } | undefined;
  const match = typeof row?.name === 'string' ? /^stacker pid (\d+) on (.+)$/.exec(row.name) : null;
  if (match === null) return null;
  return { pid: Number(match[1]), hostname: match[2] ?? '', startedAtMs: Number(row?.started) };
}
