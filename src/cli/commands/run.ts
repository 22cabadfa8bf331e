import type { InstanceConfig } from '../../config/instance-config.ts';
import { ConfigError, EXIT, InputError, StackerError, exitCodeFor } from '../../domain/errors.ts';
import type { LogFormat } from '../../config/settings.ts';
import type { DaemonMode } from '../../config/daemon-env.ts';
import type { Logger } from 'pino';
import type { CommandContext } from '../context.ts';
import { shellWord } from '../shell-word.ts';

export interface RunFlags {
  readonly strategies?: string;
  readonly dataDir?: string;
  readonly live?: boolean;
  readonly rebuildJournal?: boolean;
  readonly standby?: boolean;
  readonly once?: boolean;
  readonly instance?: string;
}

/**
 * `stacker run`: load and check the whole configuration (every problem at once, exit 2, nothing
 * sent), then hand over to the daemon until SIGINT/SIGTERM. Live trading needs both
 * STACKER_MODE=live and --live: one of them alone runs dry-run and says so.
 */
export async function run(ctx: CommandContext, flags: RunFlags): Promise<void> {
  const started: Started = { logger: null, logging: null, ran: false, restoreNode: null };
  try {
    await runOrOnce(ctx, flags, started);
  } catch (error) {
    // `run --once` is a person's command: its failure is printed as any command's.
    if (flags.once === true) throw error;
    const [{ createLogger, writesJson }, { loadRefusalLogging }] = await Promise.all([import('../../observability/logger.ts'), import('../../config/daemon-config.ts')]);
    const logging = started.logging ?? (await loadRefusalLogging({ envFile: ctx.globalFlags.envFile, live: flags.live === true }).catch(() => ({ format: null, mode: null })));
    // A daemon's log is what its supervisor reads: a start that fails says so there too. A stop
    // after it ran was logged as trading-stopped.
    if (!started.ran) startFailed(started.logger ?? (await createLogger({ level: 'info', format: logging.format })), logging.mode, error);
    // A log shipper reads one JSON object a line, and the log said it all; a person at a terminal gets the text too.
    if (!writesJson(logging.format)) throw error;
    ctx.setExitCode(exitCodeFor(error));
  } finally {
    started.restoreNode?.();
  }
}

/** How far a run got: its logger once made, how it logs, and whether the daemon ran (and logged its own stop). */
interface Started {
  logger: Logger | null;
  logging: { readonly format: LogFormat | null; readonly mode: DaemonMode | null } | null;
  ran: boolean;
  /** Puts Node's own printing of warnings and crashes back, once the log has taken them over. */
  restoreNode: (() => void) | null;
}

/**
 * The log line of a start that failed, saying what the printed error would (the code, the exit
 * code, each problem of a refused configuration): when the log is JSON it is all there is.
 */
function startFailed(logger: Logger, mode: DaemonMode | null, error: unknown): void {
  const code = error instanceof StackerError ? error.code : 'E_FAILURE';
  const problems = error instanceof ConfigError || error instanceof InputError ? { problems: error.problems } : {};
  // Not one of stacker's own failures: where it happened is what a fix needs.
  const stack = !(error instanceof StackerError) && error instanceof Error && error.stack !== undefined ? { stack: error.stack } : {};
  logger.error(
    { event: 'start-failed', ...(mode === null ? {} : { mode }), code, exitCode: exitCodeFor(error), retryable: error instanceof StackerError && error.retryable, ...problems, ...stack },
    `stacker did not start (${code}): ${error instanceof Error ? error.message : String(error)}`,
  );
}

async function runOrOnce(ctx: CommandContext, flags: RunFlags, started: Started): Promise<void> {
  const globals = ctx.globalFlags;
  const { stackerVersion } = await import('../../daemon/build-version.ts');
  const [{ loadDaemonConfig }, { createLogger }, { Metrics }, { createExchanges }, { runDaemon }, { logNonceRefusals }] = await Promise.all([
    import('../../config/daemon-config.ts'),
    import('../../observability/logger.ts'),
    import('../../observability/metrics.ts'),
    import('../../daemon/exchange-factory.ts'),
    import('../../daemon/daemon.ts'),
    import('../../daemon/nonce-refusal-log.ts'),
  ]);
  const config = await loadDaemonConfig({
    ...(globals.envFile === undefined ? {} : { envFile: globals.envFile }),
    ...(globals.baseUrl === undefined ? {} : { baseUrl: globals.baseUrl }),
    ...(globals.region === undefined ? {} : { region: globals.region }),
    ...(flags.strategies === undefined ? {} : { strategiesDir: flags.strategies }),
    ...(flags.dataDir === undefined ? {} : { dataDir: flags.dataDir }),
    live: flags.live === true,
  }).catch(async (error: unknown) => {
    if (flags.once !== true && error instanceof ConfigError) await tellConfigRefusal(error, globals.envFile, flags.live === true, started);
    throw error;
  });
  const once = flags.once === true ? { instances: onceInstances(config.instances, flags.instance) } : undefined;
  if (flags.once !== true && flags.instance !== undefined) throw InputError.one('--instance', 'only applies with --once (a daemon runs every enabled instance on its schedule)');
  if (flags.standby === true && config.databaseUrl === null) throw InputError.one('--standby', 'needs the journal in PostgreSQL (set STACKER_DATABASE_URL): daemons share a journal only through a database');
  if (flags.standby === true && once !== undefined) throw InputError.one('--standby', 'does not go with --once (a standby waits; --once runs now)');
  const logger = await createLogger({ level: config.settings.logLevel, format: config.settings.logFormat });
  started.logger = logger;
  started.logging = { format: config.settings.logFormat, mode: config.mode };
  started.restoreNode = (await import('../../observability/process-log.ts')).logProcessEvents(logger.child({ mode: config.mode }));
  const metrics = new Metrics({ mode: config.mode, version: stackerVersion() });
  // Once the daemon stops, a read that fails is not tried again: the slot in flight ends sooner.
  const stopping = new AbortController();
  const nonceRefused = logNonceRefusals(logger);
  const { ExchangeReachability } = await import('../../daemon/exchange-reachability.ts');
  const reachability = new ExchangeReachability();
  const exchanges = await createExchanges(config, logger, {
    onRequest: (event) => {
      metrics.apiRequest(event);
      nonceRefused(event);
      reachability.record(event);
    },
    stop: stopping.signal,
  });
  const result = await runDaemon({
    config,
    logger,
    exchanges,
    metrics,
    handleSignals: true,
    rebuildJournal: flags.rebuildJournal === true,
    standby: flags.standby === true,
    onStopping: () => stopping.abort(),
    reachability,
    ...(once === undefined ? {} : { once }),
  });
  started.ran = true;
  // Trading stopped (credentials, nonce, a lost journal, foreign orders): leave with that error's exit code and message.
  if (result.fatal !== null) throw result.fatal.cause;
  if (once !== undefined) {
    const { intentSummary } = await import('./journal.ts');
    const lines = Object.entries(result.slots).flatMap(([instance, outcome]) => [
      `${instance}: ${outcome}${result.onceWhy?.[instance] === undefined ? '' : ` (${result.onceWhy[instance]})`}`,
      ...(result.onceNotDone?.[instance] ?? []).map((record) =>
        record.intent.kind === 'refusal'
          ? `  declined by the strategy: ${record.intent.message} (${record.intent.reason})`
          : `  ${intentSummary(record.intent)}: ${record.status}${record.error === null ? '' : ` (${record.error.code}: ${record.error.message})`}`,
      ),
    ]);
    ctx.io.out(`${lines.join('\n')}\n(what each slot did: ${journalCommand(config.mode, flags.dataDir, globals.envFile)})\n`);
    const bad = Object.entries(result.slots).filter(([, outcome]) => outcome !== 'done' && outcome !== 'already');
    // Every one failed for a reason that passes (the exchange down, an answer lost): 4, as the exit table says; anything else 1.
    if (bad.length > 0) ctx.setExitCode(bad.every(([instance]) => result.oncePassing?.includes(instance) === true) ? EXIT.transient : EXIT.failure);
  }
}

/**
 * The daemon tells a refused start on its notification channels once it has its configuration;
 * one refused for the configuration itself (a bad instance file stops every instance) is told
 * from the global env alone, when its notification settings are sound.
 */
async function tellConfigRefusal(error: ConfigError, envFile: string | undefined, live: boolean, started: Started): Promise<void> {
  const [{ loadRefusalLogging, loadRefusalNotify }, { createLogger }, { Metrics }, { tellRefusedStart }] = await Promise.all([
    import('../../config/daemon-config.ts'),
    import('../../observability/logger.ts'),
    import('../../observability/metrics.ts'),
    import('../../daemon/notifier.ts'),
  ]);
  const found = await loadRefusalNotify({ envFile, live }).catch(() => null);
  if (found === null) return;
  const logging = await loadRefusalLogging({ envFile, live });
  const logger = await createLogger({ level: 'info', format: logging.format });
  started.logger = logger;
  started.logging = logging;
  await tellRefusedStart(found.notify, error, found.mode, Date.now(), logger, new Metrics({ mode: found.mode }));
}

/**
 * The command that reads the journal this run wrote. `stacker journal` finds it as `run` did
 * (--data-dir, else STACKER_DATA_DIR or STACKER_DATABASE_URL from the environment or the env
 * file, else ./data), so the flags that chose it go with it: without them it reads another
 * journal, or says that stacker never ran here.
 */
function journalCommand(mode: string, dataDir: string | undefined, envFile: string | undefined): string {
  const words = ['stacker', 'journal', '--mode', mode];
  if (dataDir !== undefined) words.push('--data-dir', dataDir);
  if (envFile !== undefined) words.push('--env-file', envFile);
  return words.map(shellWord).join(' ');
}

/** The instances `--once` runs: the one named, or every enabled one. */
function onceInstances(instances: readonly InstanceConfig[], named: string | undefined): string[] {
  if (named === undefined) {
    const enabled = instances.filter((instance) => instance.enabled).map((instance) => instance.instance);
    if (enabled.length === 0) throw InputError.one('--once', 'there is no enabled instance to run (ENABLED=false in every file, or no files)');
    return enabled;
  }
  const found = instances.find((instance) => instance.instance === named);
  const names = instances.map((instance) => instance.instance).join(', ') || 'none';
  if (found === undefined) throw InputError.one('--instance', `no instance ${JSON.stringify(named)} in the strategies folder (instances: ${names})`);
  if (!found.enabled) throw InputError.one('--instance', `${named} is disabled (ENABLED=false in ${found.file}); enable it to run it`);
  return [named];
}
