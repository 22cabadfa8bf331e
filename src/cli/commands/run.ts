import type { CommandContext } from '../context.ts';

export interface RunFlags {
  readonly strategies?: string;
  readonly dataDir?: string;
  readonly live?: boolean;
  readonly rebuildJournal?: boolean;
}

/**
 * `stacker run`: load and check the whole configuration (every problem at once, exit 2, nothing
 * sent), then hand over to the daemon until SIGINT/SIGTERM. Live trading needs both
 * STACKER_MODE=live and --live: one of them alone runs dry-run and says so.
 */
export async function run(ctx: CommandContext, flags: RunFlags): Promise<void> {
  const globals = ctx.globalFlags;
  const [{ loadDaemonConfig }, { createLogger }, { Metrics }, { createExchange }, { runDaemon }] = await Promise.all([
    import('../../config/daemon-config.ts'),
    import('../../observability/logger.ts'),
    import('../../observability/metrics.ts'),
    import('../../daemon/exchange-factory.ts'),
    import('../../daemon/daemon.ts'),
  ]);
  const config = await loadDaemonConfig({
    ...(globals.envFile === undefined ? {} : { envFile: globals.envFile }),
    ...(globals.baseUrl === undefined ? {} : { baseUrl: globals.baseUrl }),
    ...(globals.region === undefined ? {} : { region: globals.region }),
    ...(flags.strategies === undefined ? {} : { strategiesDir: flags.strategies }),
    ...(flags.dataDir === undefined ? {} : { dataDir: flags.dataDir }),
    live: flags.live === true,
  });
  const logger = await createLogger({ level: config.settings.logLevel });
  const metrics = new Metrics({ mode: config.mode });
  const exchange = await createExchange(config, logger, { onRequest: (event) => metrics.apiRequest(event) });
  const result = await runDaemon({ config, logger, exchange, metrics, handleSignals: true, rebuildJournal: flags.rebuildJournal === true });
  // Trading stopped (credentials, nonce, a lost journal, foreign orders): leave with that error's exit code and message.
  if (result.fatal !== null) throw result.fatal.cause;
}
