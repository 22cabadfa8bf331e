import { constants as osConstants } from 'node:os';
import type { Logger } from 'pino';
import type { DaemonConfig } from '../config/daemon-config.ts';
import { ConfigError, EXIT, type InputProblem, TRANSIENT_CODES } from '../domain/errors.ts';
import { Engine, HISTORY_UNREAD, PAUSED_REASON } from '../engine/engine.ts';
import { type SlotOutcome, snapshotFailureCode } from '../engine/slot-runner.ts';
import { FatalEngineError, errorMessage } from '../engine/error-policy.ts';
import { type KillSwitch, killSwitch } from '../engine/kill-switch.ts';
import { type EngineMetrics, KNOWN_REFUSAL_REASONS } from '../engine/observer.ts';
import { type AccountRouting, DEFAULT_ACCOUNT, LIVE_TIMING, type EngineTiming } from '../engine/runtime.ts';
import type { NotifyMetrics } from '../notify/dispatcher.ts';
import { stackerVersion } from './build-version.ts';
import type { Clock } from '../engine/schedule/clock.ts';
import { CronScheduler } from '../engine/schedule/cron-scheduler.ts';
import type { Scheduler } from '../engine/schedule/scheduler.ts';
import type { Exchange } from '../exchange/port.ts';
import { StoreError } from '../store/errors.ts';
import type { IntentRecord, Journal } from '../store/journal.ts';
import { openDaemonStore } from './daemon-store.ts';
import { DaemonHealth, type JournalStateSink } from './health-state.ts';
import { JournalBehind } from './journal-behind.ts';
import { watchForPauses } from './pause-watch.ts';
import { warnOfLowFdLimit } from './fd-limit.ts';
import { ALREADY_JOURNALLED, settledSince, slotShortfall } from './slot-shortfall.ts';
import { startupProblems, toLedgerInstance, toRuntime } from '../config/instance-runtime.ts';
import { OperatorControls } from './controls.ts';
import { type NotRunningStatus, StatusBuilder } from './status.ts';
import { throttled } from './throttled-log.ts';
import { misdirectedRequests } from './misdirected-requests.ts';
import { trackLoop } from './track-loop.ts';
import { accountCapOf } from '../config/account-cap.ts';
import { openNotifications } from './notifier.ts';
import { marketsAtStart } from './start-markets.ts';
import { ClockWatch } from './clock-watch.ts';
import { foreignOrdersError } from './foreign-findings.ts';
import { orphanedIntentProblems } from './orphaned-intents.ts';
import { instancesWithoutFile } from './instances-without-file.ts';
import type { ExchangeReachability } from './exchange-reachability.ts';
import { lastOrderMs, lastSuccessfulSlotMs } from './journal-metrics.ts';
import { SLOT_LATE_TOLERANCE_MS } from '../engine/schedule/first-occurrence.ts';
import { logRepeatedByClockChange, logSkippedByClockChange } from './clock-change-log.ts';
import { formatDecimal } from '../domain/money.ts';

export interface DaemonOptions {
  readonly config: DaemonConfig;
  readonly logger: Logger;
  /** The exchange of each account of the config (createExchanges). */
  readonly exchanges?: ReadonlyMap<string, Exchange>;
  /** A daemon of one account: its exchange (what `exchanges` holds otherwise). */
  readonly exchange?: Exchange;
  /** Metrics sink; the daemon serves it when the config names a port. */
  readonly metrics: EngineMetrics &
    JournalStateSink &
    NotifyMetrics & {
      render(): Promise<string>;
      readonly contentType: string;
      scheduled(instance: string, refusalReasons: readonly string[]): void;
      accountInUse(account: string): void;
      slotSucceeded(instance: string, slotTimeMs: number): void;
      lastOrder(instance: string, placedAtMs: number): void;
      accountKillSwitch(account: string, on: boolean): void;
      paused(instance: string, on: boolean): void;
      healthy(ok: boolean): void;
    };
  readonly clock?: Clock;
  /** Default: node-cron. Tests and accelerated runs pass a virtual scheduler. */
  readonly scheduler?: Scheduler;
  /** Aborting it stops the daemon like SIGTERM. */
  readonly stop?: AbortSignal;
  /** Listen to SIGINT/SIGTERM (the CLI does; tests don't). */
  readonly handleSignals?: boolean;
  readonly timing?: EngineTiming;
  /** How often open orders are followed and lost answers looked up again. */
  readonly trackIntervalMs?: number;
  /**
   * The data dir's journal is lost (missing, empty or another one): start a new one and fill it
   * from the exchange's order history instead of refusing to start (`run --rebuild-journal`).
   */
  readonly rebuildJournal?: boolean;
  /**
   * `run --standby` (journal in PostgreSQL): while another daemon holds the journal, wait and
   * take over when it ends, instead of refusing. Stopping while waiting exits 0.
   */
  readonly standby?: boolean;
  /**
   * `run --once`: after the start-up checks, run these instances' slot now (the current second),
   * journalled like any slot, follow what they placed until it is final (or 15 s), and stop. No
   * scheduler, no catch-up (a missed slot run late beside this one would buy twice).
   */
  readonly once?: { readonly instances: readonly string[] };
  /** Waits between start-up reads of an exchange that does not answer (START_RETRY_MS when absent). */
  readonly startRetryMs?: readonly number[];
  /** Told once the daemon is scheduling (tests wait for it). */
  readonly onReady?: (info: { readonly metricsUrl: string | null }) => void;
  /** Told once when the daemon starts to stop (a signal, `stop`, trading stopped): the CLI stops its clients' read retries. */
  readonly onStopping?: () => void;
  /** Whether each account's exchange answers, fed by the API clients' requests (the CLI wires it): /healthz and /api/status name one that does not. */
  readonly reachability?: ExchangeReachability;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** How the daemon ended. */
export interface DaemonResult {
  readonly exitCode: number;
  /** `once`: how each instance's slot ended. */
  readonly slots: Readonly<Record<string, SlotOutcome>>;
  /**
   * `once`: what of each slot did not happen: its money intents refused, failed or left unknown,
   * and the strategy's own refusals. A slot is `done` when its guards refused every buy (the kill
   * switch, a budget, the balance): that is the engine's normal course, but not what someone who
   * ran one slot to see it work expects to be told as "done" and nothing more.
   */
  readonly onceNotDone?: Readonly<Record<string, readonly IntentRecord[]>>;
  /** `once`: why a slot ended other than done (the journal's reason, or trading stopped); absent for one that ran. */
  readonly onceWhy?: Readonly<Record<string, string>>;
  /** `once`: the instances whose slot did not end done for a reason that passes by itself (the exchange down, an answer lost): exit 4, not 1. */
  readonly oncePassing?: readonly string[];
  /** Why trading stopped when the exchange refused the credentials or the nonce; null otherwise. */
  readonly fatal: FatalEngineError | null;
}

/**
 * A log rotation's `postrotate kill -HUP`, `systemctl reload` or a terminal hanging up sends it.
 * Stopping on it ended trading with exit 0, which `Restart=on-failure` leaves stopped, and told
 * nobody; there is nothing to reload (settings and instance files are read at start) and the log
 * goes to stderr, which a rotation does not reopen. So it is ignored, and said.
 */
const SIGHUP_IGNORED = 'SIGHUP ignored: stacker has nothing to reload (settings and instance files are read at start: restart it to apply a change) and logs to stderr, which it never reopens; SIGTERM or SIGINT stops it';

/** How often the journal is written while idle, so a full or read-only disk shows in /healthz. */
const HEARTBEAT_MS = 60_000;
/** At most this many slots that fell while the start caught up are handled (the newest matter; a second schedule after a long catch-up has many). */
const MAX_GAP_SLOTS = 1000;

/** How long the missed-slot reports of one wake are gathered before they are handled together. */
const MISSED_GATHER_MS = 250;
/** The exchange's history is read before every slot, and at least this often. */
const LEDGER_INTERVAL_MS = 3_600_000;
/** How far back a new (or rebuilt) journal reads the exchange's history for orders of its instances. */
const FIRST_LOOK_BACK_MS = 30 * 24 * 3_600_000;

/**
 * `stacker run`: the long-lived daemon. Order of start matters for the money rule: lock and
 * open the journal (refusing one that was lost, unless told to rebuild it), refuse while foreign
 * orders are unacknowledged, check every instance against the exchange, reconcile what an
 * earlier run left open, read the exchange's history against the journal (adopting what it
 * lost), journal the slots missed while down (anchoring each instance that has no slot yet, so
 * a first slot a kill cuts off is caught up too), and only then start the scheduler. The status
 * server answers from the journal's opening on (its /healthz says `starting` until the scheduler
 * runs), the controls with it; no slot runs before the scheduler. Stopping reverses it: no new slot, the in-flight slot finishes, the journal closes. Resolves with the
 * process exit code.
 */
export async function runDaemon(options: DaemonOptions): Promise<DaemonResult> {
  const { config } = options;
  const exchanges = accountExchanges(options);
  // Public reads (prices for the status page) go to the first account's endpoint.
  const exchange = exchanges.values().next().value as Exchange;
  const routing = accountRouting(config, exchanges);
  const clock = options.clock ?? { nowMs: () => Date.now() };
  const logger = options.logger.child({ mode: config.mode });
  // From the first moment, the standby's wait included: Node's default for SIGHUP ends the process at once.
  const onHangUp = (): void => logger.warn({ event: 'signal-ignored', signal: 'SIGHUP' }, SIGHUP_IGNORED);
  if (options.handleSignals === true) process.on('SIGHUP', onHangUp);
  if (config.modeNote !== null) logger.warn({ event: 'mode' }, config.modeNote);
  if (config.envFileNote !== null) logger.warn({ event: 'env-file-readable' }, config.envFileNote);

  // Opened first, so that a start refused for any reason (a lost journal, foreign orders) is told too.
  const notifications = await openNotifications(config.notify, logger, options.metrics);
  const store = await openDaemonStore({
    config,
    logger,
    rebuildJournal: options.rebuildJournal === true,
    standby: options.standby === true,
    handleSignals: options.handleSignals === true,
    metrics: options.metrics,
    ...(options.stop === undefined ? {} : { stop: options.stop }),
  }).catch(async (error: unknown) => {
    process.off('SIGHUP', onHangUp);
    notifications.failed(error, config.mode, clock.nowMs());
    await notifications.close();
    throw error;
  });
  if (store === null) {
    // A standby stopped while it waited: it never traded.
    process.off('SIGHUP', onHangUp);
    await notifications.close();
    return { exitCode: EXIT.ok, slots: {}, fatal: null };
  }
  const journal = store.journal;
  if (store.rebuilt !== null) {
    logger.warn(
      { event: 'journal-rebuilt', reason: store.rebuilt.reason, movedAside: store.rebuilt.movedAside },
      `rebuilding the journal from the exchange's order history (the last ${FIRST_LOOK_BACK_MS / 86_400_000} days): ${store.rebuilt.reason}`,
    );
  }
  if (store.olderCopy !== null) {
    logger.warn(
      { event: 'journal-older-copy', reason: store.olderCopy },
      `${store.olderCopy}: the orders of its last slots are in no journal; the exchange's history is read for them, and a slot missed within its settle window is not run late`,
    );
  }
  // Why the journal may lack the newest orders (this start found it, or one within the settle
  // window before it did): a slot missed moments ago may have been bought.
  const settleWindowMs = Math.max(config.orderSettleWindowMs, ...config.instances.map((instance) => instance.orderSettleWindowMs ?? 0));
  const journalBehind = new JournalBehind(store, settleWindowMs, clock.nowMs(), logger);
  let engine: Engine | null = null;
  let controls: OperatorControls | null = null;
  const configuredKillSwitch = killSwitch({ file: config.killSwitchFile, env: config.killSwitchEnv });
  // The operator's switch (status API, journalled) and the configured ones (file, environment): either stops trading.
  // A clock far off the exchange's stops its account's sends as a switch would (ClockWatch.refusal).
  const tradingKillSwitch: KillSwitch = { active: (account) => controls?.killSwitch.active(account) ?? configuredKillSwitch.active() ?? clockWatch?.refusal(account) ?? null };
  const health = new DaemonHealth({
    journal,
    engine: () => engine?.health() ?? null,
    sink: options.metrics,
    // The operator's switch only: the file and STACKER_KILL_SWITCH keep their meaning of a planned stop that /healthz does not flag.
    killSwitches: () => controls?.killSwitchReasons() ?? [],
    clocks: () => clockWatch?.problems() ?? [],
    exchanges: () => options.reachability?.problems(config.accounts.size) ?? [],
  });
  let clockWatch: ClockWatch | null = null;
  let exitCode: number = EXIT.ok;
  let fatal: FatalEngineError | null = null;
  let exitReason = 'stopped';
  let runId: string | null = null;
  let server: { stop(): Promise<void>; url: string; listening: string } | null = null;
  /** The status page's document, when the page is served: told at start what the journal holds of instances that do not run. */
  let statusBuilder: StatusBuilder | null = null;
  // The status server answers from the start, and until the scheduler runs /healthz says why not
  // yet (503, starting): a probe or a scrape that met no server took a daemon waiting out an
  // exchange outage for a dead one, and a liveness probe restarted it, into the same wait.
  let starting = true;
  const waitingFor = new Map<string, { readonly sinceMs: number; readonly error: string }>();
  const startingProblem = (): string | null => {
    if (!starting) return null;
    if (waitingFor.size === 0) return 'starting: checking the instances against the exchange and the journal against its order history; nothing is scheduled yet';
    const waits = [...waitingFor].map(([account, wait]) => `account ${account} since ${new Date(wait.sinceMs).toISOString()} (${wait.error})`);
    return `starting: waiting for the exchange, whose market list could not be read: ${waits.join('; ')}; nothing is scheduled until it answers`;
  };
  // Slots node-cron reports missed in one wake (a paused container resumed: one report per slot),
  // gathered for a moment and handled as a restart would (CATCH_UP), in one log line.
  const missedInWake = new Map<string, { slots: number[]; timer: NodeJS.Timeout }>();
  const scheduler = options.scheduler ?? new CronScheduler({
    onSkippedByClockChange: logSkippedByClockChange(logger),
    onRepeatedByClockChange: logRepeatedByClockChange(logger),
    // Its overlap and missed warnings are onMissed's (journalled and logged as slot-missed): kept at debug.
    onCronLog: (level, message) => logger[level === 'error' ? 'error' : 'debug']({ event: 'node-cron', level }, message),
    onMissed: (instance, slotTimeMs, reason, kind) => {
      const running = engine;
      if (kind === 'missed' && running !== null && !stoppingSignal().aborted) {
        const gathered = missedInWake.get(instance) ?? { slots: [], timer: setTimeout(() => undefined, 0) };
        clearTimeout(gathered.timer);
        gathered.slots.push(slotTimeMs);
        gathered.timer = setTimeout(() => {
          missedInWake.delete(instance);
          if (stoppingSignal().aborted) return;
          void running.catchUpMissed(instance, gathered.slots, clock.nowMs()).catch((error: unknown) => logger.warn({ event: 'engine-error', instance, error: errorMessage(error) }, `the missed slots of ${instance} could not be handled`));
        }, MISSED_GATHER_MS);
        missedInWake.set(instance, gathered);
        return;
      }
      void journal.skipSlot({ instance, slotTimeMs, runId, status: 'missed', reason }).then(
        (added) => {
          if (added) options.metrics.slotFinished(instance, 'missed', 0, slotTimeMs);
        },
        // Unhandled, a journal that cannot be written (a database that stopped answering, so the
        // slot overlapped) crashed the daemon; the journal keeps the failure for /healthz, and a
        // missed slot left unjournalled is one missed while stopped to the next start (CATCH_UP decides).
        (error: unknown) => logger.warn({ event: 'slot-missed-unjournalled', instance, slot: new Date(slotTimeMs).toISOString(), error: errorMessage(error) }, 'a missed slot could not be journalled'),
      );
      logger.warn({ event: 'slot-missed', instance, slot: new Date(slotTimeMs).toISOString(), reason }, `slot missed: ${reason}`);
    },
  });

  const stopping = new AbortController();
  const stoppingSignal = (): AbortSignal => stopping.signal;
  /** What asked the daemon to stop (a signal, `stop`); null while nothing did, or when it stopped for an error (told as that). */
  let askedBy: string | null = null;
  const requestStop = (why: string, asked = false): void => {
    if (stopping.signal.aborted) return;
    exitReason = why;
    if (asked) askedBy = why;
    stopping.abort();
    options.onStopping?.();
  };
  options.stop?.addEventListener('abort', () => requestStop('stop requested', true), { once: true });
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping.signal.aborted) {
      logger.warn({ event: 'forced-exit', signal }, `${signal} again: leaving now; the journal resolves the in-flight slot at the next start`);
      // The shell's code for a process ended by that signal: 130 for SIGINT, 143 for SIGTERM.
      process.exit(128 + osConstants.signals[signal]);
    }
    logger.info({ event: 'stopping', signal }, `${signal}: no new slots; finishing the slot in flight (send ${signal} again to leave at once)`);
    requestStop(signal, true);
  };
  if (options.handleSignals === true) {
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  }

  const lastSlots: Record<string, LastSlot> = {};
  /** A slot ended (scheduled, or run from the status API): /healthz and /metrics hear how. */
  const slotEnded = async (instance: string, slotTimeMs: number, outcome: string): Promise<void> => {
    lastSlots[instance] = { slotTimeMs, outcome };
    health.slotEnded(instance, slotTimeMs, outcome);
    await health.readSlot(instance, slotTimeMs);
    await health.refresh();
  };
  const onceSlots: Record<string, SlotOutcome> = {};
  const onceNotDone: Record<string, IntentRecord[]> = {};
  const onceWhy: Record<string, string> = {};
  const oncePassing: string[] = [];
  // A pause of this process (SIGSTOP, a paused VM) is said before the timeouts it causes.
  const stopWatchingForPauses = watchForPauses(logger);
  warnOfLowFdLimit(logger);
  try {
    // A journal no run has started on: the exchange's history showing orders of its instances
    // (adopted below) says it was lost (a volume recreated, its files deleted with their marker).
    const newJournal = (await journal.listRuns(1)).length === 0;
    const run = await journal.startRun({ mode: config.mode, pid: process.pid, version: stackerVersion() });
    try {
      store.noteRun(run);
    } catch (error) {
      // Only what tells an older copy put back later is lost: nothing to stop trading for.
      logger.warn({ event: 'journal-identity-unwritten', error: errorMessage(error) }, `could not note this run beside the journal (${errorMessage(error)}): an older copy of it put back later would not be told`);
    }
    runId = run.runId;
    logger.info(
      { event: 'starting', runId, version: stackerVersion(), instances: config.instances.length, accounts: routing.names, dataDir: config.dataDir, journal: journal.path, exchange: exchange.kind },
      `stacker ${stackerVersion()} starting in ${config.mode} mode`,
    );

    const operator = await OperatorControls.load({
      journal,
      instances: config.instances,
      accounts: routing.names,
      engine: () => engine,
      stopping: () => stopping.signal.aborted,
      nowMs: () => clock.nowMs(),
      logger,
      onSlot: (instance, slotTimeMs, outcome) => slotEnded(instance, slotTimeMs, outcome),
    });
    controls = operator;
    for (const instance of config.instances.filter((i) => operator.isPaused(i.instance))) {
      logger.warn({ event: 'paused', instance: instance.instance }, `${instance.instance} is paused (from the status API): its slots are skipped until it is resumed`);
    }
    // Every switch the operator left on, the accounts' too: a restart must not hide why an account does not trade.
    for (const operatorKill of operator.killSwitchReasons()) logger.warn({ event: 'kill-switch' }, operatorKill);

    // What the journal knows, and the counters at 0, before the status server answers: it answers
    // from the wait for the exchange on, and a scrape then saw neither the last slot nor the last
    // order (an alert on them had no series for the whole outage) and counters born above 0.
    for (const instance of config.instances.filter((i) => i.enabled)) {
      options.metrics.scheduled(instance.instance, KNOWN_REFUSAL_REASONS);
      const lastSuccessful = await lastSuccessfulSlotMs(journal, instance.instance);
      if (lastSuccessful !== null) options.metrics.slotSucceeded(instance.instance, lastSuccessful);
      const lastOrder = await lastOrderMs(journal, instance.instance);
      if (lastOrder !== null) options.metrics.lastOrder(instance.instance, lastOrder);
    }
    for (const account of routing.names) options.metrics.accountInUse(account);

    if (config.metricsPort !== null) {
      const [{ startHealthServer }, { offLoopbackWarning }] = await Promise.all([import('../observability/health-server.ts'), import('../observability/allowed-hosts.ts')]);
      const startedAtMs = clock.nowMs();
      const metrics = options.metrics;
      const healthNow = (): { problems: string[]; stopping: boolean; starting: boolean } => {
        const wait = startingProblem();
        return { problems: [...(wait === null ? [] : [wait]), ...health.problems()], stopping: stopping.signal.aborted, starting };
      };
      const healthy = (problems: readonly string[]): boolean => problems.length === 0 && !stopping.signal.aborted;
      const failures = statusFailures(logger);
      const status = (statusBuilder = new StatusBuilder({
        mode: config.mode,
        version: stackerVersion(),
        startedAtMs,
        instances: config.instances,
        accounts: [...config.accounts.values()],
        journal,
        exchange,
        engine: () => engine,
        controls: operator,
        configuredKillSwitch: () => configuredKillSwitch.active(),
        controlsEnabled: config.controlToken !== null,
        health: healthNow,
        nowMs: () => clock.nowMs(),
        onUnreadable: failures.unreadable,
        ...(options.reachability === undefined ? {} : { reachability: options.reachability }),
      }));
      server = await startHealthServer({
        host: config.metricsHost,
        ...(config.metricsAllowedHosts === null ? {} : { allowedHosts: config.metricsAllowedHosts }),
        port: config.metricsPort,
        // A scrape sees the journal's state as /healthz does, not as of the last slot.
        metrics: {
          contentType: metrics.contentType,
          render: async () => {
            await health.refresh();
            // The engine sets the gauge only when it is about to send, and a switched-off slot never gets there:
            // without this a switch turned on from the API or the file showed 0 for as long as it stopped trading.
            metrics.killSwitch(tradingKillSwitch.active() !== null);
            for (const account of routing.names) metrics.accountKillSwitch(account, operator.accountKillSwitchSinceMs(account) !== null);
            for (const instance of config.instances) if (instance.enabled) metrics.paused(instance.instance, operator.isPaused(instance.instance));
            // What /healthz would answer, so an alert need not probe it.
            metrics.healthy(healthy(healthNow().problems));
            return metrics.render();
          },
        },
        health: {
          status: () => {
            const { problems } = healthNow();
            return { ok: healthy(problems), mode: config.mode, startedAtMs, lastSlot: { ...lastSlots }, stopping: stopping.signal.aborted, starting, problems };
          },
        },
        status,
        onError: (error) => failures.failed(errorMessage(error)),
        onMisdirected: misdirectedRequests(logger),
        controls: { token: config.controlToken, controls: operator, refused: refusedControls(logger), trustedProxies: config.metricsTrustedProxies },
      }).catch((error: unknown) => {
        throw listenProblem(error, config.metricsHost, config.metricsPort ?? 0) ?? error;
      });
      logger.info(
        { event: 'metrics', url: server.url, listening: server.listening, controls: config.controlToken !== null },
        `serving the status page ${server.url}/ (controls ${config.controlToken === null ? 'off: no STACKER_CONTROL_TOKEN' : 'on'}), ${server.url}/api/status, ${server.url}/healthz and ${server.url}/metrics; listening on ${server.listening}`,
      );
      const exposed = offLoopbackWarning({
        host: config.metricsHost,
        ...(config.metricsAllowedHosts === null ? {} : { allowedHosts: config.metricsAllowedHosts }),
        listening: server.listening,
        controls: config.controlToken !== null,
      });
      if (exposed !== null) logger.warn({ event: 'status-page-exposed', listening: server.listening, controls: config.controlToken !== null }, exposed);
    }

    // Each instance is checked against the markets of its own account's endpoint, before a paper
    // account is created: a start refused for a wrong MARKET must not fix the wallet it was given.
    const marketLists = await marketsAtStart(exchanges, {
      logger,
      stop: stopping.signal,
      wait: options.once === undefined,
      onWaiting: (account, error) => waitingFor.set(account, { sinceMs: waitingFor.get(account)?.sinceMs ?? clock.nowMs(), error: `${error.code}: ${error.message}` }),
      onAnswered: (account) => waitingFor.delete(account),
      ...(options.startRetryMs === undefined ? {} : { retryMs: options.startRetryMs }),
    });
    if (marketLists === null) return { exitCode, fatal, slots: {} };
    const startProblems: InputProblem[] = [];
    for (const [account, markets] of marketLists) startProblems.push(...startupProblems(config.instances.filter((instance) => instance.account === account), markets));
    if (startProblems.length > 0) throw new ConfigError(startProblems);

    for (const [account, own] of exchanges) await keepAccount(own, account, journal, logger);
    // Schedules follow this machine's clock: one far off the exchange's is said at start, and whenever it changes;
    // measured before any slot, run --once's too, since far off it stops the sends (ClockWatch.refusal).
    const watch = new ClockWatch(exchanges, logger, () => clock.nowMs());
    clockWatch = watch;
    await watch.check();

    const foreign = foreignOrdersError(await journal.listFindings({ unacknowledged: true }));
    if (foreign !== null) throw foreign;
    const orphaned = orphanedIntentProblems(await journal.unresolvedIntents(), config);
    if (orphaned.length > 0) throw new ConfigError(orphaned);
    // Before catch-up anchors the new instances: a renamed file still reads as new to the journal.
    const notRunning: NotRunningStatus[] = [];
    for (const found of await instancesWithoutFile(journal, config, clock.nowMs())) {
      const spent = found.spent.map((period) => ({ period: period.period, from: period.from, amount: formatDecimal(period.amount), asset: period.asset, timeZone: period.timeZone }));
      const pausedSince = found.pausedSinceMs === null ? null : new Date(found.pausedSinceMs).toISOString();
      logger.warn({ event: 'instance-without-file', instance: found.instance, state: found.state, file: found.file, spent, unresolved: found.unresolved.length, pausedSince }, found.message);
      notRunning.push({ name: found.instance, state: found.state, file: found.file, spent, unresolved: found.unresolved.length, pausedSince, message: found.message });
    }
    statusBuilder?.noteNotRunning(notRunning);

    const enabled = config.instances.filter((instance) => instance.enabled);
    for (const instance of config.instances.filter((i) => !i.enabled)) logger.info({ instance: instance.instance }, `${instance.instance} is disabled (ENABLED=false)`);

    const runtimes = enabled.map((instance) => toRuntime(instance, config.orderSettleWindowMs));
    function stopTrading(error: FatalEngineError): void {
      health.stopped(error.message);
      fatal = error;
      exitCode = EXIT.failure;
      requestStop(`trading stopped: ${error.code}`);
    }
    engine = new Engine(
      {
        exchange,
        journal,
        mode: config.mode,
        logger,
        metrics: options.metrics,
        notifier: notifications.notifier,
        killSwitch: tradingKillSwitch,
        clock,
        sleep,
        timing: options.timing ?? LIVE_TIMING,
        accounts: routing,
        budgetHold: () => journalBehind.budgetHold(clock.nowMs()),
      },
      runtimes,
      {
        runId,
        paused: (instance) => operator.isPaused(instance),
        stop: stopping.signal,
        onFatal: stopTrading,
        onLateSlotEnded: slotEnded,
        ledger: {
          adoptBeforeMs: run.startedAtMs,
          firstLookBackMs: FIRST_LOOK_BACK_MS,
          acknowledgeAdoptions: store.rebuilt !== null,
          intervalMs: LEDGER_INTERVAL_MS,
          instances: config.instances.map((instance) => toLedgerInstance(instance, config.orderSettleWindowMs)),
        },
      },
    );
    const running = engine;

    await running.reconcile();
    const ledger = stopping.signal.aborted ? null : await running.checkLedger();
    journalBehind.firstHistoryRead(newJournal, ledger, clock.nowMs());
    await health.refresh();
    if (options.once !== undefined) {
      starting = false;
      if (!stopping.signal.aborted) await runOnce(running, options.once.instances, clock, journal, onceSlots, lastSlots, onceNotDone, onceWhy, oncePassing);
      exitReason = 'once';
      return { exitCode, fatal, slots: onceSlots, onceNotDone, onceWhy, oncePassing };
    }
    // From the run's start: a start that waited for an exchange journals the slots of the wait as such.
    const caughtUpToMs = clock.nowMs();
    if (!stopping.signal.aborted) await running.catchUp(caughtUpToMs, run.startedAtMs, journalBehind.behind === null ? {} : { journalBehind: journalBehind.behind });

    // A failed slot found done since counts as a success for the gauge and ends its run of failures for /healthz.
    const onSettled = (instance: string, slotTimeMs: number): void => {
      options.metrics.slotSucceeded(instance, slotTimeMs);
      health.slotEnded(instance, slotTimeMs, 'failed', true);
    };
    let lastHeartbeatMs = clock.nowMs();
    const tracking = trackLoop(
      {
        track: async () => {
          await running.track();
          await settleLastSlots(journal, lastSlots, onSettled);
          await watch.check('due');
          // A standby that took the journal over, or a journal lost under the daemon (a PostgreSQL
          // schema dropped: each slot then fails before its send, where a lost journal is told),
          // stops this daemon now, not at a send that never comes.
          await journal.assertIntact().catch((error: unknown) => {
            // As the engine stops on its own fatal errors: logged, notified, then the daemon stops.
            if (error instanceof StoreError && (error.reason === 'not-owner' || error.reason === 'journal-lost')) running.stopTrading(new FatalEngineError(error.message, error));
          });
          if (clock.nowMs() - lastHeartbeatMs >= HEARTBEAT_MS) {
            lastHeartbeatMs = clock.nowMs();
            // A failure is remembered by the journal and reported by health, which tells why but not where
            // (no database address on an unauthenticated page): the whole message is for the log.
            await journal.recordHeartbeat().catch((error: unknown) =>
              logger.warn({ event: 'journal-heartbeat-failed', error: errorMessage(error) }, `the journal could not be written (${errorMessage(error)}); nothing is sent until it can`),
            );
          }
          await health.refresh();
        },
      },
      options.trackIntervalMs ?? 5000,
      stopping.signal,
    );
    if (!stopping.signal.aborted) {
      const onSlot = async (instance: string, slotTimeMs: number): Promise<void> => {
        if (stopping.signal.aborted) return;
        const outcome = await running.runScheduledSlot(instance, slotTimeMs);
        // Stopped while it waited to be tried again: the slot never ended, and /healthz must not say it did;
        // one the journal already had (an overlap, a restart) did not run now.
        if (outcome === 'stopped' || outcome === 'already') return;
        await slotEnded(instance, slotTimeMs, outcome);
      };
      scheduler.start(
        enabled.map((instance) => ({ instance: instance.instance, schedule: instance.schedule })),
        onSlot,
      );
      // The slots that fell while the start caught up (a slot run late can take seconds, and the
      // process may be paused meanwhile), after what the catch-up planned and before the scheduler's
      // first fire: neither saw them, and they went unjournalled. The newest, when it fell within
      // a late fire's tolerance, runs as one (a slot a moment into a start is not missed, whatever
      // CATCH_UP says: node-cron would have run it that late); the others are handled as the slots of a wake.
      const nowMs = clock.nowMs();
      const scheduledFromMs = Math.floor(nowMs / 1000) * 1000;
      for (const instance of enabled) {
        const gap: number[] = [];
        for (let at = instance.schedule.next(caughtUpToMs); at <= scheduledFromMs; at = instance.schedule.next(at)) gap.push(at);
        const newest = gap.at(-1);
        const lateFire = newest !== undefined && nowMs - newest <= SLOT_LATE_TOLERANCE_MS ? newest : null;
        const older = (lateFire === null ? gap : gap.slice(0, -1)).slice(-MAX_GAP_SLOTS);
        if (older.length > 0) {
          void running
            .catchUpMissed(instance.instance, older, nowMs, { while: 'stacker was starting', newerFires: lateFire !== null })
            .catch((error: unknown) => logger.warn({ event: 'engine-error', instance: instance.instance, error: errorMessage(error) }, `the slots of ${instance.instance} missed while starting could not be handled`));
        }
        // Outside the scheduler, whose stop waits for its own fires only: held by the engine, whose idle() a stop awaits.
        if (lateFire !== null) running.hold(onSlot(instance.instance, lateFire));
      }
      for (const instance of enabled) {
        logger.info(
          { event: 'scheduled', instance: instance.instance, strategy: instance.strategy.name, schedule: instance.schedule.expression, timezone: instance.timezone, next: new Date(instance.schedule.next(clock.nowMs())).toISOString() },
          `${instance.instance}: ${instance.strategy.name} on "${instance.schedule.expression}" (${instance.timezone})`,
        );
      }
      const summarised = config.instances.map((instance) => ({ runtime: toRuntime(instance, config.orderSettleWindowMs), account: instance.account, enabled: instance.enabled }));
      notifications.startSummaries(journal, summarised, config.mode, clock, routing);
      starting = false;
      options.onReady?.({ metricsUrl: server?.url ?? null });
      await new Promise<void>((resolve) => {
        if (stopping.signal.aborted) resolve();
        else stopping.signal.addEventListener('abort', () => resolve(), { once: true });
      });
    }
    await scheduler.stop();
    await tracking;
    // One last look at open orders, so a clean stop leaves as little as possible to the next start.
    await running.track();
  } catch (error) {
    exitReason = `failed: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`;
    askedBy = null;
    await scheduler.stop().catch(() => undefined);
    notifications.failed(error, config.mode, clock.nowMs());
    throw error;
  } finally {
    stopWatchingForPauses();
    if (options.handleSignals === true) {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      process.off('SIGHUP', onHangUp);
    }
    // A slot asked for from the status API, and a history check started by tracking, finish before the journal closes under them,
    // and before the status server closes: while they finish, /healthz says stopping and a kill switch can still be turned on.
    await controls?.idle();
    await engine?.idle();
    await server?.stop().catch(() => undefined);
    // Nothing trades until someone starts it again, and the owner may not be the one who stopped it
    // (a host's shutdown, a deploy, someone else's kill): a run --once was meant to end.
    if (askedBy !== null && fatal === null && options.once === undefined) notifications.stopped(askedBy, config.mode, clock.nowMs());
    // A trading-stopped or daemon-stopped notice is queued by now; a dead receiver costs at most NOTIFY_FLUSH_MS.
    await notifications.close();
    // What fails here (a file system remounted read-only under the daemon) leaves a stop that
    // already happened: a warning of the stop, not a start that failed, and not its exit code.
    const tidyUp =
      (what: string) =>
      (error: unknown): void =>
        logger.warn({ event: 'stop-cleanup-failed', error: errorMessage(error) }, `stopping: ${what}: ${errorMessage(error)}; what the journal holds is kept, and the stop is clean all the same`);
    if (runId !== null) await journal.finishRun(runId, exitReason).catch(tidyUp("the run's end could not be journalled"));
    await store.close().catch(tidyUp('closing the journal and its locks'));
    for (const own of new Set(exchanges.values())) await own.close().catch(() => undefined);
    logger.info({ event: 'stopped', reason: exitReason }, `stopped (${exitReason})`);
  }
  return { exitCode, fatal, slots: onceSlots, onceNotDone, onceWhy, oncePassing };
}

async function runOnce(
  engine: Engine,
  instances: readonly string[],
  clock: Clock,
  journal: Pick<Journal, 'openOrders' | 'listIntents' | 'getSlot'>,
  slots: Record<string, SlotOutcome>,
  lastSlots: Record<string, LastSlot>,
  notDone: Record<string, IntentRecord[]>,
  why: Record<string, string>,
  passing: string[],
): Promise<void> {
  const slotTimeMs = Math.floor(clock.nowMs() / 1000) * 1000;
  for (const instance of instances) {
    const outcome = await engine.runSlot(instance, slotTimeMs);
    slots[instance] = outcome;
    if (outcome !== 'already') lastSlots[instance] = { slotTimeMs, outcome };
  }
  // A market order is final on its answer; a partial fill is followed for a while, then left to the next start.
  for (let poll = 0; poll < 30 && (await journal.openOrders()).length > 0; poll += 1) {
    await sleep(500);
    await engine.track();
  }
  for (const instance of instances) {
    if (slots[instance] === 'already') {
      why[instance] = ALREADY_JOURNALLED;
      continue;
    }
    const journalled = slots[instance] === 'done' ? null : ((await journal.getSlot({ instance, slotTimeMs }))?.reason ?? null);
    if (slots[instance] !== 'done') {
      // Printed beside the outcome: a disabled or failed slot has no intent to say why.
      const reason = journalled ?? (engine.fatal === null ? null : `trading stopped: ${engine.fatal.message}`);
      // A pause is the journal's to keep across runs: say where it is lifted, since --once has no status API of its own.
      if (reason === PAUSED_REASON) why[instance] = `paused from the status API: resume it there (the status page, or POST /api/instances/${instance}/resume) on a running daemon`;
      else if (reason !== null) why[instance] = reason;
    }
    const missed = await slotShortfall(journal, instance, slotTimeMs);
    if (missed.length > 0) notDone[instance] = missed;
    if (passes(slots[instance] as SlotOutcome, journalled, missed)) passing.push(instance);
  }
}

/**
 * Whether a --once slot that did not end done failed for a reason that passes by itself, as exit
 * 4 promises: its reads failed on the exchange (down, slow, rate-limited) or its account's order
 * history could not be read; or every money move it did not complete ended with its answer lost
 * or a failure of that kind. A strategy that failed, a pause or a refusal is not one.
 */
function passes(outcome: SlotOutcome, reason: string | null, missed: readonly IntentRecord[]): boolean {
  if (outcome === 'skipped') {
    if (reason === null) return false;
    const code = snapshotFailureCode(reason);
    return (code !== null && TRANSIENT_CODES.has(code)) || reason.startsWith(HISTORY_UNREAD);
  }
  if (outcome !== 'failed') return false;
  const moves = missed.filter((record) => record.intent.kind !== 'refusal');
  return moves.length > 0 && moves.every((record) => record.status === 'unknown' || record.status === 'sent' || (record.status === 'failed' && record.error !== null && TRANSIENT_CODES.has(record.error.code)));
}

/** An instance's last slot as /healthz shows it: how it ended, and for a failed one whose lost answer was found since, `settled`. */
interface LastSlot {
  slotTimeMs: number;
  outcome: string;
  settled?: 'done';
}

/**
 * Marks the failed last slots whose orders reconciliation has found since (settledSince): /healthz
 * says what became of them, and `onSettled` hears of each (the last-successful-slot gauge counts
 * it, so an alert on it does not fire for a slot whose buy did happen).
 */
async function settleLastSlots(journal: Journal, lastSlots: Record<string, LastSlot>, onSettled: (instance: string, slotTimeMs: number) => void): Promise<void> {
  for (const [instance, slot] of Object.entries(lastSlots)) {
    if (slot.outcome !== 'failed' || slot.settled !== undefined) continue;
    const settled = await settledSince(journal, instance, slot.slotTimeMs).catch(() => null);
    if (settled === null) continue;
    lastSlots[instance] = { ...slot, settled };
    onSettled(instance, slot.slotTimeMs);
  }
}

/** The exchange of every account of the config: as given, or the one exchange of a daemon of one account. */
function accountExchanges(options: DaemonOptions): ReadonlyMap<string, Exchange> {
  const names = [...options.config.accounts.keys()];
  if (options.exchanges !== undefined) {
    const missing = names.filter((name) => !options.exchanges?.has(name));
    if (missing.length > 0) throw new Error(`no exchange for account(s) ${missing.join(', ')}`);
    return options.exchanges;
  }
  if (options.exchange === undefined) throw new Error('runDaemon needs the exchange of each account');
  if (names.length > 1) throw new Error(`the config has ${names.length} accounts (${names.join(', ')}): give runDaemon an exchange per account`);
  return new Map([[names[0] ?? DEFAULT_ACCOUNT, options.exchange]]);
}

/** Which account each configured instance (enabled or not) trades on, each account's exchange and cap. */
function accountRouting(config: DaemonConfig, exchanges: ReadonlyMap<string, Exchange>): AccountRouting {
  const accountOf = new Map(config.instances.map((instance) => [instance.instance, instance.account]));
  const caps = new Map(
    [...config.accounts.values()].flatMap((account) => {
      const cap = accountCapOf(account);
      return cap === null ? [] : [[account.name, cap] as const];
    }),
  );
  return {
    accountOf: (instance) => accountOf.get(instance) ?? DEFAULT_ACCOUNT,
    exchangeOf: (account) => exchanges.get(account),
    capOf: (account) => caps.get(account) ?? null,
    names: Object.freeze([...exchanges.keys()]),
  };
}

/**
 * An account that lives in stacker (dry-run's paper account) continues across restarts: resumed
 * from the journal, saved back after every change; each account keeps its own. The wallet
 * setting seeds a new one only.
 */
async function keepAccount(exchange: Exchange, account: string, journal: Journal & { readonly path: string }, logger: Logger): Promise<void> {
  const kept = exchange.keptAccount;
  if (kept === undefined) return;
  const saved = await journal.accountState(account);
  let resumed: { readonly note: string | null };
  try {
    resumed = kept.resume(saved);
  } catch (error) {
    throw new StoreError('corrupt', `${journal.path}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  if (resumed.note !== null) {
    logger.warn(
      { event: 'paper-account-continues', account },
      `${resumed.note}: STACKER_DRY_RUN_WALLET seeds a new paper account only, and this one continues where the last run left it. To start over, use another data dir, or delete ${journal.path} together with its .id file beside it (the journal alone deleted reads as a journal lost)`,
    );
  } else if (saved !== null) {
    logger.info({ event: 'paper-account-continues', account }, `the paper account${account === DEFAULT_ACCOUNT ? '' : ` ${account}`} continues where the last run left it`);
  }
  await journal.saveAccountState(kept.state(), account);
  kept.onChange((state) => journal.saveAccountState(state, account));
}

/**
 * The metrics endpoint could not listen: a setting the user chose (the port is taken, below
 * 1024 without the right, the host is not an address of this machine), reported as the
 * configuration problem it is, before anything was sent. null for anything else.
 */
function listenProblem(error: unknown, host: string, port: number): ConfigError | null {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  const where = `${host}:${port}`;
  if (code === 'EADDRINUSE') return new ConfigError([{ field: 'STACKER_METRICS_PORT', rule: `port ${port} is already in use on ${host} (another stacker, or another program); pick a free port or leave it unset` }]);
  if (code === 'EACCES') return new ConfigError([{ field: 'STACKER_METRICS_PORT', rule: `not allowed to listen on ${where} (ports below 1024 need privileges); pick a port of 1024 or above` }]);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') return new ConfigError([{ field: 'STACKER_METRICS_HOST', rule: `${host} is not an address of this machine; use 127.0.0.1, 0.0.0.0 or one of its interfaces` }]);
  return null;
}

/**
 * A warning for control requests refused for their token, at most one a minute with how many
 * came since the last: someone is guessing (or a script has an old token), and a log line per
 * request would let them fill the log.
 */
function refusedControls(logger: Logger): (why: string, from: string) => void {
  // Every address since the last line is counted: one line naming only the first hid a guesser changing its address.
  const sources = new Set<string>();
  const write = throttled(60_000, (refused, why: string, from: string) => {
    const others = sources.size - 1;
    sources.clear();
    logger.warn(
      { event: 'control-refused', why, from, refused, addresses: others + 1 },
      `a control request was refused (${why}) from ${from}${others > 0 ? ` and ${others} other address(es)` : ''}; ${refused} refused since the last such line: a wrong token, or someone guessing`,
    );
  });
  const refusedToken = (why: string, from: string): void => {
    if (sources.size < 1000) sources.add(from);
    write(why, from);
  };
  // Held back unread (429) is not a wrong token: counted apart, an operator's own tries while held back do not read as guesses.
  const heldBack = throttled(60_000, (held, _why: string, from: string) =>
    logger.warn({ event: 'control-held-back', from, held }, `control requests from ${from} are held back unread (429) after too many refused tokens; ${held} held back since the last such line`),
  );
  return (why, from) => (why === 'too many refused' ? heldBack(why, from) : refusedToken(why, from));
}

/**
 * A warning for /api/status answered without the journal (503: its database down or not
 * answering) or failing (500), at most one a minute with how many since: a status page polls
 * every 5 s, and an operator looking at the log during the outage must see why the page says so.
 */
function statusFailures(logger: Logger): { readonly unreadable: (message: string) => void; readonly failed: (message: string) => void } {
  return {
    unreadable: throttled(60_000, (answered, message: string) =>
      logger.warn({ event: 'status-journal-unreadable', error: message, answered }, `/api/status answered 503 without the journal, which cannot be read (${message}); ${answered} such answer(s) since the last such line`),
    ),
    failed: throttled(60_000, (answered, message: string) =>
      logger.error({ event: 'status-failed', error: message, answered }, `/api/status failed (${message}); ${answered} failed answer(s) since the last such line`),
    ),
  };
}
