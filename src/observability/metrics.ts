import pkg from '../../package.json' with { type: 'json' };
import { type ErrorCode, TRANSIENT_CODES } from '../domain/errors.ts';
import { Counter, EXPOSITION_CONTENT_TYPE, Gauge, Histogram, Registry } from './exposition.ts';

/**
 * The daemon's Prometheus metrics behind a typed facade: the engine reports events
 * (`orderPlaced`, `refusal`, …) and never names a metric. Every metric name lives in this file.
 *
 * Label values are instance names, order statuses, refusal reasons, error codes and request
 * paths — never a query string, a body, a header or an amount. Paths are reduced to their
 * pathname and anything that does not look like one becomes `other`.
 */

/** What the engine reports; `src/engine/observer.ts` declares the subset the engine calls. */
export interface EngineMetrics {
  orderTransition(instance: string, status: string): void;
  orderPlaced(instance: string, placedAtMs: number): void;
  refusal(instance: string, reason: string): void;
  apiRequest(event: ApiRequestEvent): void;
  slotFinished(instance: string, outcome: FinishedSlotStatus, durationMs: number, slotTimeMs: number): void;
  strategyDisabled(instance: string): void;
  killSwitch(active: boolean): void;
  slotRetried?(instance: string, code: string): void;
}

/** How a slot ended (or was journalled as not run), as the slot metrics count it. */
export type FinishedSlotStatus = 'done' | 'failed' | 'skipped' | 'missed';

const SLOT_OUTCOMES: readonly FinishedSlotStatus[] = ['done', 'failed', 'skipped', 'missed'];

/** What a request to the exchange fails with: the API client's error codes, and E_UNEXPECTED for anything else. */
const API_ERROR_CLASSES: readonly ErrorCode[] = ['E_AUTH', 'E_NONCE', 'E_RATE_LIMIT', 'E_UNAVAILABLE', 'E_NETWORK', 'E_TIMEOUT', 'E_PROTOCOL', 'E_EXCHANGE_VALIDATION', 'E_EXCHANGE_REFUSED', 'E_UNEXPECTED'];

/** One HTTP attempt as the API client reports it (`RequestEvent` in src/api/requester.ts fits). */
export interface ApiRequestEvent {
  readonly path: string;
  readonly status: number | null;
  readonly durationMs: number;
  /** The StackerError code when the attempt failed; null on success. */
  readonly errorCode: string | null;
  /** The account (API key) it was made for: rate limits and nonce refusals are per key. */
  readonly account?: string;
}

/** Process figures read at scrape time; injectable so tests see fixed numbers. */
export interface ProcessStats {
  readonly rssBytes: number;
  readonly heapUsedBytes: number;
  readonly heapTotalBytes: number;
  readonly externalBytes: number;
  readonly cpuUserMicros: number;
  readonly cpuSystemMicros: number;
}

export interface MetricsOptions {
  /** `dry-run` or `live`; shown in `stacker_info`. */
  readonly mode: string;
  /** Default: package.json's version. */
  readonly version?: string;
  /** Default: Date.now. */
  readonly nowMs?: () => number;
  /** When the process started (ms since epoch). Default: now minus process.uptime(). */
  readonly processStartMs?: number;
  /** Default: process.memoryUsage() and process.cpuUsage(). */
  readonly processStats?: () => ProcessStats;
}

export const METRICS_DEFAULTS = {
  /** API calls: a healthy exchange answers in tens of milliseconds; the client times out at seconds. */
  apiBucketsSec: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  /** A slot is a snapshot, a decision and a few calls, or a tracked order: up to minutes when the exchange is slow. */
  slotBucketsSec: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
  mode: 'dry-run',
} as const;

/**
 * The label naming a strategy instance, on every metric that has one. Not `instance`: Prometheus
 * puts its own `instance` (the scraped host:port) on every series, and with the default
 * honor_labels: false stores ours as `exported_instance`, so a rule written `{instance="dca-btc"}`
 * would match nothing.
 */
export const INSTANCE_LABEL = 'strategy_instance';

const API_PATH = /^\/[A-Za-z0-9._~\-/]{0,200}$/;
const ERROR_CODE = /^E_[A-Z][A-Z0-9_]*$/;

/** Only the pathname of a request path; `other` when it does not look like one. */
export function pathLabel(path: string): string {
  const cut = path.search(/[?#]/);
  const pathname = cut === -1 ? path : path.slice(0, cut);
  return API_PATH.test(pathname) ? pathname : 'other';
}

/** An error class label: the stable StackerError code, or E_UNEXPECTED for anything else. */
export function errorClassLabel(code: string): string {
  return ERROR_CODE.test(code) ? code : 'E_UNEXPECTED';
}

function readProcessStats(): ProcessStats {
  const memory = process.memoryUsage();
  const cpu = process.cpuUsage();
  return { rssBytes: memory.rss, heapUsedBytes: memory.heapUsed, heapTotalBytes: memory.heapTotal, externalBytes: memory.external, cpuUserMicros: cpu.user, cpuSystemMicros: cpu.system };
}

/** The journal's state as /metrics shows it (the daemon's health publishes it). */
export interface JournalState {
  readonly unresolved: number;
  readonly oldestUnresolvedSentAtMs: number | null;
  readonly writable: boolean;
  readonly findings: Readonly<Record<string, number>>;
  readonly stuckOrders: number;
}

export class Metrics implements EngineMetrics {
  readonly contentType: string = EXPOSITION_CONTENT_TYPE;
  readonly #registry = new Registry();
  readonly #nowMs: () => number;
  readonly #processStartMs: number;
  readonly #processStats: () => ProcessStats;
  readonly #disabled = new Set<string>();

  readonly #info: Gauge;
  readonly #orderTransitions: Counter;
  readonly #ordersPlaced: Counter;
  readonly #refusals: Counter;
  readonly #apiRequests: Counter;
  readonly #apiErrors: Counter;
  readonly #apiDuration: Histogram;
  readonly #slotDuration: Histogram;
  readonly #slots: Counter;
  readonly #slotRetries: Counter;
  readonly #lastSuccessfulSlot: Gauge;
  readonly #lastOrder: Gauge;
  readonly #strategyEnabled: Gauge;
  readonly #killSwitch: Gauge;
  readonly #accountKillSwitch: Gauge;
  readonly #paused: Gauge;
  readonly #healthy: Gauge;
  readonly #unresolved: Gauge;
  readonly #oldestUnresolvedAge: Gauge;
  readonly #journalWritable: Gauge;
  readonly #findings: Gauge;
  readonly #stuckOrders: Gauge;
  readonly #notifications: Counter;
  #oldestUnresolvedSentAtMs: number | null = null;
  readonly #uptime: Gauge;
  readonly #processStart: Gauge;
  readonly #rss: Gauge;
  readonly #heapUsed: Gauge;
  readonly #heapTotal: Gauge;
  readonly #external: Gauge;
  readonly #cpuUser: Counter;
  readonly #cpuSystem: Counter;
  readonly #cpuTotal: Counter;

  constructor(options: MetricsOptions = { mode: METRICS_DEFAULTS.mode }) {
    this.#nowMs = options.nowMs ?? Date.now;
    this.#processStartMs = options.processStartMs ?? this.#nowMs() - process.uptime() * 1000;
    this.#processStats = options.processStats ?? readProcessStats;
    const r = this.#registry;

    this.#info = r.register(new Gauge({ name: 'stacker_info', help: 'Always 1; the labels say which stacker runs and in which mode.', labelNames: ['version', 'mode'] }));
    this.#info.set({ version: options.version ?? pkg.version, mode: options.mode }, 1);

    this.#ordersPlaced = r.register(new Counter({ name: 'stacker_orders_placed_total', help: 'Orders the exchange accepted.', labelNames: [INSTANCE_LABEL] }));
    this.#orderTransitions = r.register(new Counter({ name: 'stacker_order_transitions_total', help: 'Order status transitions, counted once each, by the status reached.', labelNames: [INSTANCE_LABEL, 'status'] }));
    this.#refusals = r.register(new Counter({ name: 'stacker_refusals_total', help: 'Intents refused (by a guard, a strategy or the exchange), by reason.', labelNames: [INSTANCE_LABEL, 'reason'] }));

    this.#apiRequests = r.register(new Counter({ name: 'stacker_api_requests_total', help: 'HTTP attempts to the exchange API, by account, path and outcome (ok or error).', labelNames: ['account', 'path', 'outcome'] }));
    this.#apiErrors = r.register(new Counter({ name: 'stacker_api_errors_total', help: 'Failed HTTP attempts to the exchange API, by account and error class (the stable error code).', labelNames: ['account', 'class'] }));
    this.#apiDuration = r.register(new Histogram({ name: 'stacker_api_request_duration_seconds', help: 'Time from sending an API request to its answer (or failure), by account and path.', labelNames: ['account', 'path'], buckets: METRICS_DEFAULTS.apiBucketsSec }));

    this.#slotDuration = r.register(new Histogram({ name: 'stacker_slot_duration_seconds', help: 'Time to run one scheduled slot (snapshot, decision, guards, orders).', labelNames: [INSTANCE_LABEL], buckets: METRICS_DEFAULTS.slotBucketsSec }));
    this.#slots = r.register(new Counter({ name: 'stacker_slots_total', help: 'Scheduled slots by outcome: done, failed, skipped, missed (never ran).', labelNames: [INSTANCE_LABEL, 'outcome'] }));
    this.#slotRetries = r.register(
      new Counter({ name: 'stacker_slot_retries_total', help: 'Scheduled slots put off for another attempt because their snapshot failed for now, by the error code.', labelNames: [INSTANCE_LABEL, 'code'] }),
    );
    this.#lastSuccessfulSlot = r.register(
      new Gauge({
        name: 'stacker_last_successful_slot_timestamp_seconds',
        help: 'Scheduled time (Unix seconds) of the latest slot that ended done, or failed on a lost answer whose order was found since; from the journal at start. A slot whose buy the guards refused (kill switch, budget, balance) ends done and counts: buying stopped shows in stacker_last_order_timestamp_seconds.',
        labelNames: [INSTANCE_LABEL],
      }),
    );
    this.#lastOrder = r.register(
      new Gauge({
        name: 'stacker_last_order_timestamp_seconds',
        help: 'When the exchange accepted the latest order of the instance (Unix seconds, the order\'s time at the exchange), whatever it filled since; from the journal at start. Stops moving when buys are refused or fail.',
        labelNames: [INSTANCE_LABEL],
      }),
    );
    this.#strategyEnabled = r.register(new Gauge({ name: 'stacker_strategy_enabled', help: '1 while a strategy instance trades; 0 once it was disabled after failing.', labelNames: [INSTANCE_LABEL] }));
    this.#paused = r.register(new Gauge({ name: 'stacker_strategy_paused', help: '1 while the instance is paused from the status API (its slots are skipped, nothing sent); 0 otherwise.', labelNames: [INSTANCE_LABEL] }));
    this.#killSwitch = r.register(
      new Gauge({
        name: 'stacker_kill_switch',
        help: '1 while the kill switch of every account stops what moves money: STACKER_KILL_SWITCH, the kill-switch file or the status API\'s /api/kill-switch. An account\'s own switch is stacker_account_kill_switch.',
      }),
    );
    this.#killSwitch.set({}, 0);
    this.#accountKillSwitch = r.register(
      new Gauge({
        name: 'stacker_account_kill_switch',
        help: '1 while the account\'s own kill switch (the status API\'s /api/accounts/NAME/kill-switch) stops what its instances send; the switch of every account is stacker_kill_switch.',
        labelNames: ['account'],
      }),
    );
    this.#healthy = r.register(new Gauge({ name: 'stacker_healthy', help: '1 while /healthz answers 200; 0 while it answers 503 (a problem it names, or stacker stopping).' }));

    this.#unresolved = r.register(new Gauge({ name: 'stacker_unresolved_intents', help: 'Intents whose outcome is not yet known (a lost answer being looked up, a transfer that cannot be).' }));
    this.#unresolved.set({}, 0);
    this.#oldestUnresolvedAge = r.register(new Gauge({ name: 'stacker_oldest_unresolved_intent_age_seconds', help: 'Age of the oldest unresolved intent since it was sent; 0 when none.' }));
    this.#oldestUnresolvedAge.set({}, 0);
    this.#journalWritable = r.register(new Gauge({ name: 'stacker_journal_writable', help: '1 while the journal accepts writes; 0 after a write failed (disk full, read-only) until one succeeds.' }));
    this.#journalWritable.set({}, 1);
    this.#findings = r.register(new Gauge({ name: 'stacker_unacknowledged_findings', help: 'Orders reconciliation found at the exchange that a human has not acknowledged, by kind (adopted, foreign).', labelNames: ['kind'] }));
    for (const kind of ['adopted', 'foreign']) this.#findings.set({ kind }, 0);
    this.#stuckOrders = r.register(
      new Gauge({ name: 'stacker_stuck_orders', help: 'Market orders still open long after a market order ends (the exchange keeps answering them open, does not find them, or cannot be read): check them at the exchange.' }),
    );
    this.#stuckOrders.set({}, 0);

    this.#notifications = r.register(
      new Counter({ name: 'stacker_notifications_total', help: 'Notifications by channel and outcome: sent, failed (after its retries), dropped (queue full, or still queued at stop).', labelNames: ['channel', 'outcome'] }),
    );

    this.#uptime = r.register(new Gauge({ name: 'stacker_uptime_seconds', help: 'Seconds since the process started.' }));
    this.#processStart = r.register(new Gauge({ name: 'process_start_time_seconds', help: 'Start time of the process since unix epoch in seconds.' }));
    this.#rss = r.register(new Gauge({ name: 'process_resident_memory_bytes', help: 'Resident memory size in bytes.' }));
    this.#heapUsed = r.register(new Gauge({ name: 'nodejs_heap_size_used_bytes', help: 'Process heap size used from Node.js in bytes.' }));
    this.#heapTotal = r.register(new Gauge({ name: 'nodejs_heap_size_total_bytes', help: 'Process heap size from Node.js in bytes.' }));
    this.#external = r.register(new Gauge({ name: 'nodejs_external_memory_bytes', help: 'Node.js external memory size in bytes.' }));
    this.#cpuUser = r.register(new Counter({ name: 'process_cpu_user_seconds_total', help: 'Total user CPU time spent in seconds.' }));
    this.#cpuSystem = r.register(new Counter({ name: 'process_cpu_system_seconds_total', help: 'Total system CPU time spent in seconds.' }));
    this.#cpuTotal = r.register(new Counter({ name: 'process_cpu_seconds_total', help: 'Total user and system CPU time spent in seconds.' }));
  }

  orderTransition(instance: string, status: string): void {
    this.#seen(instance);
    this.#orderTransitions.inc({ [INSTANCE_LABEL]: instance, status });
  }

  orderPlaced(instance: string, placedAtMs: number): void {
    this.#seen(instance);
    this.#ordersPlaced.inc({ [INSTANCE_LABEL]: instance });
    this.lastOrder(instance, placedAtMs);
  }

  /** When the exchange accepted an order of this instance; the daemon also gives, at start, the latest the journal holds. */
  lastOrder(instance: string, placedAtMs: number): void {
    // A lost answer found later, or an order found in the history, may be older than one placed since.
    this.#lastOrder.setMax({ [INSTANCE_LABEL]: instance }, placedAtMs / 1000);
  }

  refusal(instance: string, reason: string): void {
    this.#seen(instance);
    this.#refusals.inc({ [INSTANCE_LABEL]: instance, reason });
  }

  apiRequest(event: ApiRequestEvent): void {
    const path = pathLabel(event.path);
    const account = event.account ?? 'default';
    this.#apiRequests.inc({ account, path, outcome: event.errorCode === null ? 'ok' : 'error' });
    if (event.errorCode !== null) this.#apiErrors.inc({ account, class: errorClassLabel(event.errorCode) });
    this.#apiDuration.observe({ account, path }, Math.max(0, event.durationMs) / 1000);
  }

  slotFinished(instance: string, outcome: FinishedSlotStatus, durationMs: number, slotTimeMs: number): void {
    this.#seen(instance);
    this.#slots.inc({ [INSTANCE_LABEL]: instance, outcome });
    // A missed slot never ran: it has no duration to count.
    if (outcome !== 'missed') this.#slotDuration.observe({ [INSTANCE_LABEL]: instance }, Math.max(0, durationMs) / 1000);
    // Catch-up may finish an older slot after a newer one: the gauge keeps the latest slot time.
    if (outcome === 'done') this.#lastSuccessfulSlot.setMax({ [INSTANCE_LABEL]: instance }, slotTimeMs / 1000);
  }

  /**
   * A slot counts as successful that slotFinished did not see end done: one that failed on a lost
   * answer whose order was found since, or, at start, the latest the journal holds (a restart
   * must not leave a staleness alert without a series until the next slot).
   */
  slotSucceeded(instance: string, slotTimeMs: number): void {
    this.#seen(instance);
    this.#lastSuccessfulSlot.setMax({ [INSTANCE_LABEL]: instance }, slotTimeMs / 1000);
  }

  slotRetried(instance: string, code: string): void {
    this.#seen(instance);
    this.#slotRetries.inc({ [INSTANCE_LABEL]: instance, code });
  }

  strategyDisabled(instance: string): void {
    this.#disabled.add(instance);
    this.#strategyEnabled.set({ [INSTANCE_LABEL]: instance }, 0);
  }

  strategyEnabled(instance: string): void {
    this.#disabled.delete(instance);
    this.#strategyEnabled.set({ [INSTANCE_LABEL]: instance }, 1);
  }

  /**
   * The daemon schedules this instance: it shows as enabled, and its counters whose label values
   * are known up front start at 0. A series born at its first event starts at 1, and rate() and
   * increase() see no rise in it: the first failed slot or refusal would go unalerted. The
   * refusal reasons are the engine's fixed ones (a strategy's own reason still appears at its
   * first use); the retry codes are the failures that pass by themselves.
   */
  scheduled(instance: string, refusalReasons: readonly string[]): void {
    this.strategyEnabled(instance);
    const labels = { [INSTANCE_LABEL]: instance };
    this.#ordersPlaced.touch(labels);
    for (const outcome of SLOT_OUTCOMES) this.#slots.touch({ ...labels, outcome });
    for (const reason of refusalReasons) this.#refusals.touch({ ...labels, reason });
    for (const code of TRANSIENT_CODES) this.#slotRetries.touch({ ...labels, code });
  }

  /** The daemon trades on this account: its API error classes start at 0, as an instance's counters do. */
  accountInUse(account: string): void {
    for (const errorClass of API_ERROR_CLASSES) this.#apiErrors.touch({ account, class: errorClass });
  }

  killSwitch(active: boolean): void {
    this.#killSwitch.set({}, active ? 1 : 0);
  }

  accountKillSwitch(account: string, on: boolean): void {
    this.#accountKillSwitch.set({ account }, on ? 1 : 0);
  }

  paused(instance: string, on: boolean): void {
    this.#paused.set({ [INSTANCE_LABEL]: instance }, on ? 1 : 0);
  }

  healthy(ok: boolean): void {
    this.#healthy.set({}, ok ? 1 : 0);
  }

  notificationSent(channel: string): void {
    this.#notifications.inc({ channel, outcome: 'sent' });
  }

  notificationFailed(channel: string): void {
    this.#notifications.inc({ channel, outcome: 'failed' });
  }

  notificationDropped(channel: string): void {
    this.#notifications.inc({ channel, outcome: 'dropped' });
  }

  /** The journal's state, as the daemon's health sees it (DaemonHealth.refresh). */
  journalState(state: JournalState): void {
    this.#unresolved.set({}, state.unresolved);
    this.#oldestUnresolvedSentAtMs = state.oldestUnresolvedSentAtMs;
    this.#journalWritable.set({}, state.writable ? 1 : 0);
    for (const [kind, count] of Object.entries(state.findings)) this.#findings.set({ kind }, count);
    this.#stuckOrders.set({}, state.stuckOrders);
  }

  async render(): Promise<string> {
    const nowMs = this.#nowMs();
    const oldest = this.#oldestUnresolvedSentAtMs;
    this.#oldestUnresolvedAge.set({}, oldest === null ? 0 : Math.max(0, (nowMs - oldest) / 1000));
    const stats = this.#processStats();
    this.#uptime.set({}, Math.max(0, (nowMs - this.#processStartMs) / 1000));
    this.#processStart.set({}, Math.round(this.#processStartMs / 1000));
    this.#rss.set({}, stats.rssBytes);
    this.#heapUsed.set({}, stats.heapUsedBytes);
    this.#heapTotal.set({}, stats.heapTotalBytes);
    this.#external.set({}, stats.externalBytes);
    this.#cpuUser.setTotal({}, stats.cpuUserMicros / 1e6);
    this.#cpuSystem.setTotal({}, stats.cpuSystemMicros / 1e6);
    this.#cpuTotal.setTotal({}, (stats.cpuUserMicros + stats.cpuSystemMicros) / 1e6);
    return this.#registry.render();
  }

  /** An instance first seen is enabled unless it was disabled; only strategyEnabled turns it back on. */
  #seen(instance: string): void {
    if (this.#disabled.has(instance) || this.#strategyEnabled.peek({ [INSTANCE_LABEL]: instance }) !== undefined) return;
    this.#strategyEnabled.set({ [INSTANCE_LABEL]: instance }, 1);
  }
}

/** Does nothing: backtests and tests that do not look at metrics. */
export const noMetrics: EngineMetrics = {
  orderTransition() {},
  orderPlaced() {},
  refusal() {},
  apiRequest() {},
  slotFinished() {},
  strategyDisabled() {},
  killSwitch() {},
};
