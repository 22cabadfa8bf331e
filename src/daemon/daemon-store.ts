import { existsSync } from 'node:fs';
import type { Logger } from 'pino';
import type { DaemonConfig } from '../config/daemon-config.ts';
import type { HealthServer, MetricsSource } from '../observability/health-server.ts';
import { LockedError } from '../store/errors.ts';
import { type OpenedStore, openStore } from '../store/open-store.ts';

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
    process.once('SIGHUP', stopWaiting);
  }
  const probe = options.standby ? await serveWhileWaiting(options) : null;
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
              onUnreachable: (problem: Error) =>
                logger.warn({ event: 'standby-db-unreachable', error: problem.message }, `waiting as a hot standby: the database cannot be reached (${problem.message}); trying again`),
              onReachable: () => logger.info({ event: 'standby-db-reachable' }, 'waiting as a hot standby: the database answers again'),
            },
          }
        : {}),
    });
    if (options.standby) logger.info({ event: 'took-over', journal: store.journal.path }, `took the journal over: ${store.journal.path}`);
    return store;
  } catch (error) {
    if (waiting.signal.aborted && error instanceof LockedError) {
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
    process.off('SIGHUP', stopWaiting);
  }
}

/**
 * /healthz and /metrics of a waiting standby (STACKER_METRICS_PORT): healthy, since waiting is
 * its job; the daemon's own endpoint replaces it once the journal is taken over.
 */
async function serveWhileWaiting(options: DaemonStoreOptions): Promise<HealthServer | null> {
  const { config, logger } = options;
  if (config.metricsPort === null) return null;
  const { startHealthServer } = await import('../observability/health-server.ts');
  const startedAtMs = Date.now();
  const server = await startHealthServer({
    host: config.metricsHost,
    port: config.metricsPort,
    metrics: options.metrics,
    health: { status: () => ({ ok: true, mode: config.mode, startedAtMs, lastSlot: {}, stopping: false, problems: [] }) },
  });
  logger.info({ event: 'metrics', url: server.url }, `serving ${server.url}/healthz and ${server.url}/metrics while waiting as a hot standby`);
  return server;
}
