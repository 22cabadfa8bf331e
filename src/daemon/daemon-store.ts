import { existsSync } from 'node:fs';
import type { Logger } from 'pino';
import type { DaemonConfig } from '../config/daemon-config.ts';
import type { HealthServer, MetricsSource } from '../observability/health-server.ts';
import { LockedError, StoreError } from '../store/errors.ts';
import { type JournalMigration, describeMigration } from '../store/migrations.ts';
import { type OpenedStore, openStore } from '../store/open-store.ts';
import { throttled } from './throttled-log.ts';
import { misdirectedRequests } from './misdirected-requests.ts';

export interface DaemonStoreOptions {
  readonly config: DaemonConfig;
  readonly logger: Logger;
  readonly rebuildJournal: boolean;
  /** Wait as a hot standby while another daemon holds the PostgreSQL journal. */
  readonly standby: boolean;
  /** Stops the wait (the daemon's stop signal). */
  readonly stop?: AbortSignal;
  /** Also stop the wait on SIGINT/SIGTERM (the CLI's daemon). */
  readonly handleSignals: boolean;
  /** Served while a standby waits, so a probe (Docker's HEALTHCHECK) sees a healthy standby. */
  readonly metrics: MetricsSource;
  /** How often a standby that cannot reach its database says so again in the log; a minute by default. */
  readonly unreachableLogEveryMs?: number;
}

/**
 * A waiting standby's view of its database: a standby that cannot reach it cannot take over, so
 * its /healthz says so (503) and its log keeps saying so, whatever the cause (a restart, a host
 * name that does not resolve), until the database answers.
 */
class StandbyReach {
  #since: { readonly atMs: number; readonly message: string } | null = null;
  #log: (problem: Error) => void;
  readonly #newLog: () => (problem: Error) => void;

  constructor(logger: Logger, everyMs: number) {
    this.#newLog = () =>
      throttled(everyMs, (tries, problem: Error) => {
        const since = new Date(this.#since?.atMs ?? Date.now()).toISOString();
        logger.warn(
          { event: 'standby-db-unreachable', error: problem.message, since, tries },
          `waiting as a hot standby: the database cannot be reached since ${since} (${problem.message}; ${tries} tr${tries === 1 ? 'y' : 'ies'} since the last such line); trying again every second, and this standby cannot take over until it answers`,
        );
      });
    this.#log = this.#newLog();
  }

  unreachable(problem: Error): void {
    this.#since = { atMs: this.#since?.atMs ?? Date.now(), message: problem.message };
    this.#log(problem);
  }

  /** Back: the next outage is told at once. */
  reachable(): void {
    this.#since = null;
    this.#log = this.#newLog();
  }

  problems(): string[] {
    const since = this.#since;
    if (since === null) return [];
    return [`waiting as a hot standby, but the journal's database cannot be reached since ${new Date(since.atMs).toISOString()} (${since.message}): this standby cannot take over until it can`];
  }
}

/**
 * The daemon's journal: the data dir's SQLite file, or the PostgreSQL database of
 * STACKER_DATABASE_URL, locked for this daemon. As a standby it waits, logging once, until the
 * owner ends; null when it was told to stop while still waiting (nothing was journalled or sent).
 */
export async function openDaemonStore(options: DaemonStoreOptions): Promise<OpenedStore | null> {
  const { config, logger } = options;
  const waiting = new AbortController();
  const stopWaiting = (): void => waiting.abort();
  options.stop?.addEventListener('abort', stopWaiting, { once: true });
  if (options.standby && options.handleSignals) {
    process.once('SIGINT', stopWaiting);
    process.once('SIGTERM', stopWaiting);
  }
  const reach = new StandbyReach(logger, options.unreachableLogEveryMs ?? 60_000);
  const probe = options.standby ? await serveWhileWaiting(options, reach) : null;
  // A data dir that is not there is made, and a journal starts in it: said, since a typo in the
  // path starts the same way (the readers, orders or journal, refuse a folder that is not there).
  if (config.databaseUrl === null && !existsSync(config.dataDir)) {
    logger.warn(
      { event: 'data-dir-created', dataDir: config.dataDir },
      `the data dir ${config.dataDir} did not exist: created it, and a new journal starts there (a first run; if you meant another folder, stop stacker and give it with --data-dir or STACKER_DATA_DIR)`,
    );
  }
  try {
    const store = await openStore({
      dataDir: config.dataDir,
      mode: config.mode,
      // One lock per account key, all taken before anything is opened or sent.
      ...(config.mode === 'live' ? { apiKeys: [...config.accounts.values()].flatMap((account) => (account.credentials === null ? [] : [account.credentials.apiKey])) } : {}),
      ...(config.lockDir === undefined || config.lockDir === null ? {} : { userLockDir: config.lockDir }),
      onLostJournal: options.rebuildJournal ? 'rebuild' : 'refuse',
      ...(config.databaseUrl === null
        ? {}
        : {
            databaseUrl: config.databaseUrl.url,
            databaseTimeoutMs: config.databaseTimeoutMs,
            keep: {
              onLost: () =>
                logger.warn({ event: 'journal-lock-lost' }, "the journal's lock was lost with its database session (a restart, a failover, a terminated session): taking it again; should another daemon take the journal over first, this one stops"),
              onRetaken: () => logger.info({ event: 'journal-lock-retaken' }, "took the journal's lock again"),
            },
          }),
      ...(options.standby
        ? {
            standby: {
              signal: waiting.signal,
              onWaiting: (held: Error) => logger.info({ event: 'standby', holder: held.message }, `waiting as a hot standby: ${held.message}`),
              onUnreachable: (problem: Error) => reach.unreachable(problem),
              onReachable: () => {
                reach.reachable();
                logger.info({ event: 'standby-db-reachable' }, 'waiting as a hot standby: the database answers again');
              },
            },
            onOwnerLapsed: (held: Error, stillForMs: number) =>
              logger.warn(
                { event: 'standby-ended-frozen-owner', holder: held.message, stillForS: Math.round(stillForMs / 1000) },
                `the journal's owner wrote no pulse for ${Math.round(stillForMs / 1000)} s (frozen, or cut off from the database) while its session holds the lock: ended that session to take the journal over; should the owner run again, it can journal and send nothing (${held.message})`,
              ),
          }
        : {}),
    });
    if (options.standby) logger.info({ event: 'took-over', journal: store.journal.path }, `took the journal over: ${store.journal.path}`);
    if (store.narrowed.length > 0) {
      const files = store.narrowed.map((file) => `${file.path} (was ${file.was.toString(8).padStart(4, '0')})`);
      logger.warn(
        { event: 'journal-mode-narrowed', files: store.narrowed.map((file) => file.path) },
        `the journal's files could be read by other users of this machine (an older stacker made them so): made them yours alone (0600): ${files.join(', ')}`,
      );
    }
    if (store.migrated !== null) logMigration(logger, store.journal.path, store.migrated);
    return store;
  } catch (error) {
    // Stopped while it waited for the lock, or for a database it could not reach: it never traded.
    if (waiting.signal.aborted && (error instanceof LockedError || (error instanceof StoreError && error.retryable))) {
      logger.info({ event: 'standby-stopped' }, 'stopped while waiting as a hot standby: nothing was journalled or sent');
      return null;
    }
    throw error;
  } finally {
    // Before the daemon's own server takes the port.
    await probe?.stop();
    options.stop?.removeEventListener('abort', stopWaiting);
    process.off('SIGINT', stopWaiting);
    process.off('SIGTERM', stopWaiting);
  }
}

/**
 * A migration is one-way: the stacker that wrote the journal refuses it from now on. Said once,
 * with what was applied and where the copy to go back to is (README "Upgrading").
 */
export function logMigration(logger: Pick<Logger, 'info'>, journal: string, migrated: JournalMigration): void {
  const back =
    migrated.backup === null
      ? 'to go back, restore the pg_dump taken before the upgrade'
      : `the file as it was is kept as ${migrated.backup}: to go back, stop stacker and put it back as the journal (README "Upgrading")`;
  logger.info(
    { event: 'journal-migrated', journal, from: migrated.from, to: migrated.to, migrations: migrated.applied.map((m) => `${m.version} ${m.name}`), backup: migrated.backup },
    `migrated the journal ${journal} ${describeMigration(migrated)}: one-way, a stacker older than this one refuses it from now on; ${back}`,
  );
}

/**
 * /healthz and /metrics of a waiting standby (STACKER_METRICS_PORT): healthy while it waits,
 * since waiting is its job, but not while it cannot reach the database (it could not take over);
 * the daemon's own endpoint replaces it once the journal is taken over.
 */
async function serveWhileWaiting(options: DaemonStoreOptions, reach: StandbyReach): Promise<HealthServer | null> {
  const { config, logger } = options;
  if (config.metricsPort === null) return null;
  const { startHealthServer } = await import('../observability/health-server.ts');
  const startedAtMs = Date.now();
  const server = await startHealthServer({
    host: config.metricsHost,
    // The same hosts as the owner's page: a standby's own would let any Host in off loopback (DNS rebinding).
    ...(config.metricsAllowedHosts === null ? {} : { allowedHosts: config.metricsAllowedHosts }),
    port: config.metricsPort,
    metrics: options.metrics,
    onMisdirected: misdirectedRequests(logger),
    health: {
      status: () => {
        const problems = reach.problems();
        return { ok: problems.length === 0, mode: config.mode, startedAtMs, lastSlot: {}, stopping: false, problems };
      },
    },
  });
  logger.info({ event: 'metrics', url: server.url }, `serving ${server.url}/healthz and ${server.url}/metrics while waiting as a hot standby`);
  return server;
}
