import { Turns } from '../domain/turns.ts';
import { countUncountedBuys } from './uncounted-buys.ts';
import type { CatchUpPolicy } from './schedule/catch-up.ts';
import { planCatchUp } from './schedule/catch-up.ts';
import { SLOT_LATE_TOLERANCE_MS } from './schedule/first-occurrence.ts';
import type { CronSchedule } from './schedule/cron.ts';
import { FatalEngineError, classifyError, errorCode, errorMessage } from './error-policy.ts';
import { ExchangeLedger, type LedgerInstance, type LedgerOptions, type LedgerReport } from './exchange-ledger.ts';
import { type ReconcileSummary, Reconciler, type UnresolvedState } from './reconcile.ts';
import { tell } from './observer.ts';
import { type EngineDeps, accountOfInstance, onInstanceAccount } from './runtime.ts';
import { type SnapshotBooks, snapshotBooks } from './snapshot.ts';
import { ALONE, type AccountTurn, type AttemptOutcome, type InstanceRuntime, type SlotOutcome, type SnapshotRetry, attemptSlot } from './slot-runner.ts';
import { LIVE_SNAPSHOT_RETRY, nextAttemptAt, retryWindowMs, waitUnlessStopped } from './slot-retry.ts';
import { type StuckOrder, StuckOrders } from './stuck-orders.ts';
import { trackOpenOrders } from './tracker.ts';
import { RepeatedErrors } from './repeated-errors.ts';

/** An instance with its schedule: what the scheduler fires and the catch-up policy reads. */
export interface ScheduledRuntime extends InstanceRuntime {
  readonly schedule: CronSchedule;
  readonly catchUp: CatchUpPolicy;
}

export interface EngineOptions {
  readonly runId: string | null;
  /** How long market rules are trusted before they are read again. */
  readonly marketsTtlMs?: number;
  /**
   * Whether an operator paused the instance (the status API): its slots are journalled as
   * skipped with reason `paused`, so the history shows them, and send nothing.
   */
  readonly paused?: (instance: string) => boolean;
  /**
   * The daemon stopping: a scheduled slot waiting to be tried again gives up at once, unjournalled
   * (runScheduledSlot).
   */
  readonly stop?: AbortSignal;
  /** Called once when trading must stop (auth or nonce refused, a lost journal, foreign orders); the daemon exits non-zero. */
  readonly onFatal?: (error: FatalEngineError) => void;
  /**
   * A slot run late ended (CATCH_UP=last, at start or after a pause), as the scheduler's handler
   * hears of the slots it fires: the daemon's /healthz and metrics count it like any other.
   */
  readonly onLateSlotEnded?: (instance: string, slotTimeMs: number, outcome: SlotOutcome) => Promise<void> | void;
  /**
   * The exchange's order history as a second ledger: read at start, before every slot and every
   * `intervalMs`. Absent in a backtest, whose exchange holds nothing the journal did not send.
   */
  readonly ledger?: LedgerOptions & {
    readonly intervalMs: number;
    /** Every configured instance, enabled or not: whose id scheme is ours. */
    readonly instances: readonly LedgerInstance[];
  };
}

/** The same engine error of the same instance is logged once in this long at most (RepeatedErrors). */
const ENGINE_ERROR_EVERY_MS = 60_000;

/** How often track() asks again for the history of an account that could not be read. */
const UNREADABLE_RETRY_MS = 60_000;

/** How a scheduled slot ended; `stopped`: the daemon stopped while it waited to be tried again, and it is left unjournalled. */
export type ScheduledOutcome = SlotOutcome | 'stopped';

/** A scheduled slot whose snapshot failed for now, between its attempts (Engine.retryingSlot). */
export interface SlotRetryState {
  readonly instance: string;
  readonly slotTimeMs: number;
  /** Attempts that failed so far. */
  readonly attempts: number;
  readonly nextTryMs: number;
  /** The last failure's code and message (as logged: no secret). */
  readonly code: string;
  readonly error: string;
}

/** How the reason of a slot skipped because its account's order history could not be read begins. */
/** How long a slot waits to read an account's history again after an answer it could not read. */
const GARBLED_HISTORY_RETRY_MS = 1_000;

export const HISTORY_UNREAD = "not run: the exchange's order history could not be read";

/** The reason journalled for the slots of a paused instance. */
export const PAUSED_REASON = 'paused';

/** What /healthz and /metrics need to know of the engine. */
export interface EngineHealth {
  readonly fatal: FatalEngineError | null;
  readonly unresolved: UnresolvedState;
  /** null until every account's history was read once this run (an account's slots wait for its own). */
  readonly ledgerCheckedAtMs: number | null;
  /** Why the history of one or more accounts could not be read the last time it was asked for; null when it was. */
  readonly ledgerProblem: string | null;
  /** Market orders still open long past when they should have ended (StuckOrders), as the last tracking pass found them. */
  readonly stuckOrders: readonly StuckOrder[];
  /** Instances a failed strategy disabled this run, since which slot and why. */
  readonly disabledInstances?: ReadonlyArray<{ readonly instance: string; readonly slotTimeMs: number; readonly reason: string }>;
}

/**
 * The engine: one per run, the same in live, dry-run and backtest (the worlds differ only in
 * the Exchange and the scheduler handed in). It owns which instances are still enabled, whether
 * trading has been stopped, the lookups of lost answers and the check against the exchange's
 * history; each slot is `runSlot`.
 */
export class Engine {
  readonly #deps: EngineDeps;
  readonly #instances: ReadonlyMap<string, ScheduledRuntime>;
  readonly #disabled = new Set<string>();
  /** Why and since when each disabled instance is: its failed slot's journalled reason. */
  readonly #disabledWhy = new Map<string, { readonly slotTimeMs: number; readonly reason: string }>();
  /** Per account: market rules and candles are read from the account's own endpoint. */
  readonly #books = new Map<string, SnapshotBooks>();
  readonly #options: EngineOptions;
  readonly #reconciler: Reconciler;
  /** A journal write failed since the last release of orphaned holds (track releases them once writes work again). */
  #holdsMayBeOrphaned = false;
  readonly #stuck: StuckOrders;
  readonly #errorLines: RepeatedErrors;
  readonly #ledger: ExchangeLedger | null;
  /** Slots this process is running now (instance@slot time): reconciliation leaves their intents alone. */
  readonly #running = new Map<string, number>();
  /** Scheduled slots waiting to be tried again (instance@slot time): the operator asks why a slot has not bought yet. */
  readonly #retrying = new Map<string, SlotRetryState>();
  /** Slots whose journal could not be written when they fell (a full disk, a database out of reach): journalled as missed once it can be. */
  readonly #unjournalled = new Map<string, { readonly instance: string; readonly slotTimeMs: number; readonly error: string }>();
  /** Per account, why its history could not be read the last time; absent once it is read again. */
  readonly #ledgerProblems = new Map<string, string>();
  /**
   * Accounts whose last history read came back in a form stacker cannot read (E_PROTOCOL): their
   * slots send nothing until it reads again. A lost answer is resolved by looking the order up in
   * that history; with the format changed under it, every slot placed an order that was never
   * recorded. A network failure does not stop them: it passes, and a lost answer waits for it.
   */
  readonly #garbledHistory = new Map<string, string>();
  /** Per account, when track() last started a check of its history. */
  readonly #triedAtMs = new Map<string, number>();
  /** The checks track() started and nobody awaits yet (checkLedger never rejects). */
  readonly #background = new Set<Promise<unknown>>();
  /** Each account's slots, one at a time from their plan to their last send (AccountTurn). */
  readonly #accountTurns = new Turns();
  /** Per account, how many times its slots have sent money (AccountTurn.moves). */
  readonly #accountMoves = new Map<string, number>();
  readonly #turns = new Map<string, AccountTurn>();
  #fatal: FatalEngineError | null = null;

  constructor(deps: EngineDeps, instances: readonly ScheduledRuntime[], options: EngineOptions) {
    this.#deps = deps;
    this.#instances = new Map(instances.map((instance) => [instance.instance, instance]));
    this.#options = options;
    const windows = new Map((options.ledger?.instances ?? instances).map((instance) => [instance.instance, instance.orderSettleWindowMs]));
    const longest = Math.max(0, ...windows.values());
    this.#reconciler = new Reconciler(deps, (instance) => windows.get(instance) ?? longest, (instance, slotTimeMs) => (this.#running.get(`${instance}@${slotTimeMs}`) ?? 0) > 0);
    this.#ledger = options.ledger === undefined ? null : new ExchangeLedger(deps, options.ledger.instances, options.ledger);
    this.#stuck = new StuckOrders(deps);
    this.#errorLines = new RepeatedErrors(ENGINE_ERROR_EVERY_MS, () => deps.clock.nowMs());
  }

  get fatal(): FatalEngineError | null {
    return this.#fatal;
  }

  health(): EngineHealth {
    return {
      fatal: this.#fatal,
      unresolved: this.#reconciler.state,
      ledgerCheckedAtMs: this.#ledger?.lastCheckedAtMs ?? null,
      ledgerProblem: this.#ledgerProblems.size === 0 ? null : [...this.#ledgerProblems.values()].join('; '),
      stuckOrders: this.#stuck.list,
      disabledInstances: this.disabledInstances,
    };
  }

  /** The instances a failed strategy disabled this run: which, since which slot, and why. */
  get disabledInstances(): ReadonlyArray<{ readonly instance: string; readonly slotTimeMs: number; readonly reason: string }> {
    return [...this.#disabledWhy].map(([instance, why]) => ({ instance, ...why }));
  }

  isEnabled(instance: string): boolean {
    return this.#instances.has(instance) && !this.#disabled.has(instance);
  }

  /** A slot of the instance is being run by this process now (scheduled, caught up or asked for). */
  isRunning(instance: string): boolean {
    for (const key of this.#running.keys()) if (key.startsWith(`${instance}@`)) return true;
    return false;
  }

  /** The instance's slot that waits to be tried again after a transient failure (the newest, if several); null when none does. */
  retryingSlot(instance: string): SlotRetryState | null {
    let found: SlotRetryState | null = null;
    for (const state of this.#retrying.values()) if (state.instance === instance && (found === null || state.slotTimeMs > found.slotTimeMs)) found = state;
    return found;
  }

  /** Resolve what an earlier run left open. Run it before any slot. */
  async reconcile(): Promise<ReconcileSummary> {
    return this.#guard(async () => {
      await countUncountedBuys(this.#deps, [...this.#instances.values()], this.#deps.clock.nowMs());
      return this.#reconciler.atStart();
    }, { resolved: 0, unresolved: 0, slotsClosed: 0 });
  }

  /**
   * Read the exchange's order history against the journal (ExchangeLedger): every account's, or
   * one account's (before a slot of its instances). Run at start after reconcile() and before
   * catchUp(): an adopted order journals its slot, so catch-up cannot run that slot again. An
   * account that cannot be read is logged and its slots wait; null when there is no ledger, or
   * trading stopped.
   */
  async checkLedger(account?: string): Promise<LedgerReport | null> {
    const ledger = this.#ledger;
    if (ledger === null || this.#fatal !== null) return null;
    return this.#guard(async () => {
      const report = account === undefined ? await ledger.check() : await ledger.checkAccount(account);
      for (const read of report.accounts) {
        this.#ledgerProblems.delete(read);
        this.#garbledHistory.delete(read);
      }
      for (const failed of report.unreadable) {
        this.#ledgerProblems.set(failed.account, failed.message);
        if (failed.code === 'E_PROTOCOL') this.#garbledHistory.set(failed.account, errorMessage(failed.cause));
        this.#deps.logger.warn({ event: 'ledger-check-failed', ...(this.#deps.accounts === undefined ? {} : { account: failed.account }), code: failed.code, error: errorMessage(failed.cause) }, failed.message);
      }
      return report;
    }, null);
  }

  /**
   * Slots missed while stacker was stopped: journalled as missed (CATCH_UP=skip), or the latest
   * run late when within the window (CATCH_UP=last). Journalling them is what keeps a second
   * restart from catching the same slot up again. Run it before the scheduler starts: it also
   * anchors each instance that has no journalled slot yet at `nowMs` (Journal.markScheduled), so
   * a first slot a kill leaves unjournalled counts as missed at the next start, while the slots
   * before an instance was first scheduled never do.
   *
   * `startedAtMs`: when this run started, when that was before `nowMs` (its start waited for an
   * exchange): the slots since fell while stacker was starting, not while it was stopped, and are
   * journalled saying so; an instance without a slot is anchored there, so they count for it too.
   * `journalBehind`: why, and since when, the journal may lack the newest orders (rebuilt from the exchange's
   * history this start, an older copy put back); a missed slot within its settle window is not
   * run late, and left unjournalled for the history check to adopt its order if it shows.
   */
  async catchUp(nowMs: number, startedAtMs: number = nowMs, options: { readonly journalBehind?: { readonly reason: string; readonly sinceMs: number } } = {}): Promise<void> {
    const behind = options.journalBehind;
    // Only a slot up to when the journal was found behind can have been bought by what it lost:
    // one after it fell while a start on this journal was stopped, as any other missed slot.
    const mayHaveBeenBought = (slotTimeMs: number, windowMs: number): boolean => behind !== undefined && nowMs - slotTimeMs < windowMs && slotTimeMs <= behind.sinceMs;
    const startedMs = Math.min(startedAtMs, nowMs);
    for (const instance of this.#instances.values()) {
      if (!this.isEnabled(instance.instance) || this.#fatal !== null) continue;
      const journal = this.#deps.journal;
      const last = await journal.lastSlot(instance.instance);
      // Once written the anchor is only read: moving it to a later start would drop a first slot
      // that fell while stacker was stopped in between.
      const since = last === null ? await journal.markScheduled(instance.instance, startedMs) : await journal.scheduledSince(instance.instance);
      // The later of the two: a slot journalled from before the anchor (an order adopted from the
      // exchange's history) must not make the slots before the instance was scheduled count as missed.
      const from = last === null ? since : since === null ? last.slotTimeMs : Math.max(last.slotTimeMs, since);
      const planned = planCatchUp(instance.schedule, from, nowMs, instance.catchUp);
      // The newest slot that fell while this process was starting, moments ago (within a late
      // fire's minute), is run as a late fire whatever CATCH_UP says: the process was not
      // stopped then, and node-cron would have run it that late. Not one the journal may lack.
      const newest = planned.skip[0];
      const startFire =
        planned.run === null && newest !== undefined && newest >= startedMs && nowMs - newest <= SLOT_LATE_TOLERANCE_MS && !mayHaveBeenBought(newest, instance.orderSettleWindowMs) ? newest : null;
      const plan = startFire === null ? planned : { run: startFire, skip: planned.skip.slice(1), skippedTotal: planned.skippedTotal - 1 };
      const rule = catchUpRule(instance);
      let withheld = 0;
      for (const slotTimeMs of plan.skip) {
        // A journal that may lack the newest orders leaves a slot within its settle window
        // unjournalled, as the one it does not run late: journalled missed, its order showing late
        // stopped trading as another client's.
        if (mayHaveBeenBought(slotTimeMs, instance.orderSettleWindowMs)) {
          withheld += 1;
          continue;
        }
        // Before this run started no stacker journalled it: stopped, or running but its journal out of
        // reach (a database outage a standby took over after); "not running" alone misled then.
        const why = slotTimeMs < startedMs ? 'no stacker journalled it (stopped, or its journal out of reach)' : 'stacker was starting (waiting for the exchange to check the configuration against)';
        await this.#journalMissed(instance.instance, slotTimeMs, `${why}; ${rule}`);
      }
      if (plan.skippedTotal > 0) {
        const starting = plan.skip.filter((slotTimeMs) => slotTimeMs >= startedMs).length;
        const when = starting === 0 ? 'while no stacker journalled slots' : starting === plan.skippedTotal ? 'while stacker was starting' : 'while no stacker journalled slots or this one was starting';
        this.#deps.logger.warn(
          { event: 'slots-missed', instance: instance.instance, missed: plan.skippedTotal, catchUp: instance.catchUp.policy },
          `${plan.skippedTotal} slot(s) of ${instance.instance} fell ${when}; journalled as missed${withheld === 0 ? '' : `, but for the ${withheld} within the settle window, left for the exchange's history to show their orders`}`,
        );
      }
      // A last slot that is none of the schedule's was fired by another SCHEDULE or TIMEZONE (or run
      // by hand): the "missed" slot belongs to a schedule the instance was not on, and may fall in
      // the period that last slot already bought for (09:00 bought, moved to 09:30, restarted at 10:00).
      const scheduleChanged = last !== null && from === last.slotTimeMs && !instance.schedule.matches(last.slotTimeMs);
      // A journal rebuilt from the exchange's history knows only what the history showed: an order
      // of a slot sent moments before may not show yet (it may lag up to the settle window), and
      // running that slot late would buy it again.
      if (plan.run !== null && mayHaveBeenBought(plan.run, instance.orderSettleWindowMs)) {
        // Left unjournalled, as a recent slot is above: if its order shows, the history check adopts it.
        const reason = `${behind?.reason ?? ''}, and the exchange's order history may not show an order of this slot yet (ORDER_SETTLE_WINDOW ${Math.round(instance.orderSettleWindowMs / 1000)} s): not run late, so it cannot be bought twice; an order of it that shows is adopted`;
        this.#deps.logger.warn({ event: 'catch-up-withheld', instance: instance.instance, slot: new Date(plan.run).toISOString() }, `the missed slot is not run late: ${reason}`);
      } else if (plan.run !== null && scheduleChanged) {
        const why = `SCHEDULE changed since the last slot (${new Date(from).toISOString()} is not a slot of "${instance.schedule.expression}" in ${instance.schedule.timezone}, or it was run by hand): missed slots are not run late`;
        this.#deps.logger.warn({ event: 'catch-up-schedule-changed', instance: instance.instance, slot: new Date(plan.run).toISOString(), lastSlot: new Date(from).toISOString() }, why);
        await this.#journalMissed(instance.instance, plan.run, why);
      } else if (plan.run !== null) {
        await this.#runLate(instance.instance, plan.run, startFire === null ? 'running the missed slot late (CATCH_UP=last)' : 'running late the slot that fell while stacker was starting, moments ago, as node-cron runs a late fire');
      }
    }
  }

  /** A missed slot journalled so, counted in the metrics; false when it was journalled already. */
  async #journalMissed(instanceName: string, slotTimeMs: number, reason: string): Promise<boolean> {
    const added = await this.#deps.journal.skipSlot({ instance: instanceName, slotTimeMs, runId: this.#options.runId, status: 'missed', reason });
    if (added) this.#deps.metrics.slotFinished(instanceName, 'missed', 0, slotTimeMs);
    return added;
  }

  /** CATCH_UP=last's newest missed slot, or one that fell as this process started, run late. */
  async #runLate(instanceName: string, slotTimeMs: number, why = 'running the missed slot late (CATCH_UP=last)'): Promise<void> {
    this.#deps.logger.info({ event: 'catch-up', instance: instanceName, slot: new Date(slotTimeMs).toISOString() }, why);
    const outcome = await this.runSlot(instanceName, slotTimeMs);
    const ended = this.#options.onLateSlotEnded;
    // One the journal already had did not run now.
    if (ended !== undefined && outcome !== 'already') await this.#guard(async () => ended(instanceName, slotTimeMs, outcome), undefined, instanceName);
  }

  /** The latest slot of the instance running now; -Infinity when none is. */
  #newestRunning(instanceName: string): number {
    let newest = Number.NEGATIVE_INFINITY;
    for (const key of this.#running.keys()) {
      const at = key.lastIndexOf('@');
      if (key.slice(0, at) === instanceName) newest = Math.max(newest, Number(key.slice(at + 1)));
    }
    return newest;
  }

  /**
   * Slots of an instance node-cron reported missed while this daemon ran (their time passed
   * without them firing: a paused container, a suspended machine, a blocked process), handled as
   * a restart handles the slots missed while stopped: with CATCH_UP=last the newest runs late when
   * within CATCH_UP_WINDOW, the others are journalled as missed, and one line says how many.
   * Background work of the engine, which idle() waits for: a stop meanwhile closed the journal
   * under the late slot's send, whose answer went unjournalled.
   */
  catchUpMissed(instanceName: string, missedSlotTimesMs: readonly number[], nowMs: number, how: MissedHow = WOKEN): Promise<void> {
    const work: Promise<void> = this.#catchUpMissed(instanceName, missedSlotTimesMs, nowMs, how).finally(() => this.#background.delete(work));
    this.#background.add(work);
    return work;
  }

  async #catchUpMissed(instanceName: string, missedSlotTimesMs: readonly number[], nowMs: number, how: MissedHow): Promise<void> {
    const instance = this.#instances.get(instanceName);
    if (instance === undefined || !this.isEnabled(instanceName) || this.#fatal !== null || missedSlotTimesMs.length === 0) return;
    const missed = [...new Set(missedSlotTimesMs)].sort((a, b) => b - a);
    const newest = missed[0] as number;
    // A slot after them already fired (the wake came just after a slot's time, which node-cron
    // still ran), or fires now: it is the newest, as a restart then would have run it alone, so none runs late.
    const later = Math.max(this.#newestRunning(instanceName), (await this.#guard(() => this.#deps.journal.lastSlot(instanceName), null, instanceName))?.slotTimeMs ?? Number.NEGATIVE_INFINITY);
    const run = !how.newerFires && instance.catchUp.policy === 'last' && nowMs - newest <= instance.catchUp.windowMs && later < newest ? newest : null;
    const skip = run === null ? missed : missed.slice(1);
    const reason = `its time passed without it firing (${how.while}); ${catchUpRule(instance)}`;
    let journalled = 0;
    for (const slotTimeMs of skip) {
      if (await this.#guard(() => this.#journalMissed(instanceName, slotTimeMs, reason), false, instanceName)) journalled += 1;
    }
    if (journalled > 0) {
      this.#deps.logger.warn(
        { event: 'slots-missed', instance: instanceName, missed: journalled, catchUp: instance.catchUp.policy, from: new Date(missed.at(-1) as number).toISOString() },
        `${journalled} slot(s) of ${instanceName} passed while ${how.while}; journalled as missed`,
      );
    }
    if (run !== null) await this.#runLate(instanceName, run);
  }

  /**
   * The scheduler's handler: never throws; a fatal error stops all further slots and calls
   * onFatal. With a ledger, the exchange's history is read first, so orders another stacker
   * placed with our ids stop trading before this slot buys again; a slot is skipped while the
   * history has not been read once this run.
   */
  runSlot(instanceName: string, slotTimeMs: number): Promise<SlotOutcome> {
    return this.#runSlot(instanceName, slotTimeMs, null) as Promise<SlotOutcome>;
  }

  /**
   * runSlot for a slot the scheduler fired: a snapshot that failed for now (transient) is tried
   * again with backoff, within the retry window (CATCH_UP_WINDOW with CATCH_UP=last, a few
   * minutes with skip) and before the instance's next slot; only then is the slot journalled as
   * skipped. Each attempt is a whole runSlot (paused, disabled, trading stopped, the journal's
   * claim: all asked again). Catch-up, `run --once` and the API's run now try once: their
   * caller waits for the answer. The slot counts as running meanwhile (isRunning).
   */
  async runScheduledSlot(instanceName: string, slotTimeMs: number): Promise<ScheduledOutcome> {
    const instance = this.#instances.get(instanceName);
    if (instance === undefined) return 'disabled';
    const timing = this.#deps.timing.snapshotRetry ?? LIVE_SNAPSHOT_RETRY;
    const key = `${instanceName}@${slotTimeMs}`;
    this.#running.set(key, (this.#running.get(key) ?? 0) + 1);
    try {
      for (let failed = 0; ; failed += 1) {
        let next = null as { readonly atMs: number; readonly error: unknown } | null;
        const retry: SnapshotRetry = {
          failedBefore: failed,
          again: (error) => {
            const atMs = nextAttemptAt({ slotTimeMs, nextSlotMs: instance.schedule.next(slotTimeMs), windowMs: retryWindowMs(instance.catchUp), failed: failed + 1, nowMs: this.#deps.clock.nowMs(), timing });
            // A stop that came during this attempt leaves a slot that would be tried again
            // unjournalled, as a stop during the backoff does (the wait below ends at once).
            if (atMs !== null) next = { atMs, error };
            return next !== null;
          },
        };
        // A stop does not wait for a decide that has not answered: nothing is sent for the slot before it.
        const outcome = await this.#runSlot(instanceName, slotTimeMs, retry, this.#options.stop);
        if (outcome !== 'retry' || next === null) return outcome === 'retry' ? 'skipped' : outcome;
        const { atMs, error } = next;
        const stopping = this.#options.stop?.aborted === true;
        if (!stopping) {
          const code = errorCode(error);
          this.#deps.metrics.slotRetried?.(instanceName, code);
          this.#deps.logger.warn(
            { event: 'slot-retry', instance: instanceName, slot: new Date(slotTimeMs).toISOString(), attempt: failed + 1, nextTry: new Date(atMs).toISOString(), code, error: errorMessage(error) },
            `snapshot failed (${code}): ${errorMessage(error)}; nothing sent, trying the slot again at ${new Date(atMs).toISOString()}`,
          );
        }
        this.#retrying.set(key, { instance: instanceName, slotTimeMs, attempts: failed + 1, nextTryMs: atMs, code: errorCode(error), error: errorMessage(error) });
        let waited = false;
        try {
          waited = !stopping && (await waitUnlessStopped(atMs - this.#deps.clock.nowMs(), this.#options.stop));
        } finally {
          this.#retrying.delete(key);
        }
        if (!waited) {
          this.#deps.logger.info(
            { event: 'slot-retry-abandoned', instance: instanceName, slot: new Date(slotTimeMs).toISOString(), attempts: failed + 1 },
            'stopping: the slot waiting to be tried again is left unjournalled, for the next start to catch up (CATCH_UP) or journal as missed',
          );
          return 'stopped';
        }
      }
    } finally {
      this.#release(key);
    }
  }

  async #runSlot(instanceName: string, slotTimeMs: number, retry: SnapshotRetry | null, stop?: AbortSignal): Promise<AttemptOutcome> {
    const instance = this.#instances.get(instanceName);
    if (instance === undefined || this.#disabled.has(instanceName)) return 'disabled';
    if (this.#fatal !== null) return 'skipped';
    if (this.#unjournalled.size > 0) await this.#journalUnjournalled();
    if (this.#options.paused?.(instanceName) === true) return this.#skipPaused(instanceName, slotTimeMs);
    const account = accountOfInstance(this.#deps, instanceName);
    if (this.#ledger !== null) {
      // Its own account's history only: another account's exchange failing or hanging must not hold this slot.
      await this.checkLedger(account);
      if (this.#fatal !== null) return 'skipped';
      if (this.#ledger.accountCheckedAtMs(account) === null) return this.#skipUnchecked(instanceName, slotTimeMs);
      let garbled = this.#garbledHistory.get(account);
      if (garbled !== undefined) {
        // Read once more before giving the slot up: one garbled answer (a proxy's hiccup) cost a
        // day's buy, where a 503 is tried again within the read.
        await this.#deps.sleep(GARBLED_HISTORY_RETRY_MS);
        await this.checkLedger(account);
        if (this.#fatal !== null) return 'skipped';
        garbled = this.#garbledHistory.get(account);
      }
      if (garbled !== undefined) {
        return this.#skipUnread(
          instanceName,
          slotTimeMs,
          `${HISTORY_UNREAD}: it answers in a form stacker cannot read (${garbled}), so an order whose answer was lost could not be looked up; nothing is sent until it reads again`,
        );
      }
    }
    const key = `${instanceName}@${slotTimeMs}`;
    this.#running.set(key, (this.#running.get(key) ?? 0) + 1);
    try {
      const outcome = await this.#guard(async () => {
        try {
          return await attemptSlot(this.#deps, this.#booksOf(instanceName), instance, slotTimeMs, this.#options.runId, retry, this.#turnOf(account), stop);
        } catch (error) {
          if (errorCode(error) === 'E_STORE' && classifyError(error) === 'transient') this.#unjournalled.set(key, { instance: instanceName, slotTimeMs, error: errorMessage(error) });
          throw error;
        }
      }, 'failed' as AttemptOutcome, instanceName);
      if (outcome === 'disabled' && !this.#disabled.has(instanceName)) {
        this.#disabled.add(instanceName);
        const slot = await this.#deps.journal.getSlot({ instance: instanceName, slotTimeMs }).catch(() => null);
        this.#disabledWhy.set(instanceName, { slotTimeMs, reason: slot?.reason ?? 'its strategy failed' });
      }
      return outcome;
    } finally {
      this.#release(key);
    }
  }

  /** The account's turn for its slots (AccountTurn), made once per account; trading stopped while a slot waited for it sends nothing. */
  #turnOf(account: string): AccountTurn {
    // A backtest runs one slot at a time (its scheduler awaits each): no turn to wait for.
    if (this.#deps.mode === 'backtest') return ALONE;
    let turn = this.#turns.get(account);
    if (turn === undefined) {
      turn = {
        moves: () => this.#accountMoves.get(account) ?? 0,
        moved: () => void this.#accountMoves.set(account, (this.#accountMoves.get(account) ?? 0) + 1),
        take: (work) => this.#accountTurns.take(account, () => (this.#fatal === null ? work() : Promise.resolve('skipped' as const))),
      };
      this.#turns.set(account, turn);
    }
    return turn;
  }

  /**
   * The slots that fell while the journal could not be written, journalled as missed now that it
   * can be: the engine sends nothing it has not journalled, so a slot with no row sent nothing. A
   * slot that got a row before the failure keeps it (reconciliation closes it). Stops at the
   * first write that still fails, for the next slot or tracking round to try again.
   */
  async #journalUnjournalled(): Promise<void> {
    for (const [key, slot] of this.#unjournalled) {
      let journalled: boolean;
      try {
        journalled = await this.#deps.journal.skipSlot({ instance: slot.instance, slotTimeMs: slot.slotTimeMs, runId: this.#options.runId, status: 'missed', reason: `the journal could not be written at its time (${slot.error}); nothing was sent` });
      } catch {
        return;
      }
      this.#unjournalled.delete(key);
      if (journalled) this.#deps.metrics.slotFinished(slot.instance, 'missed', 0, slot.slotTimeMs);
    }
  }

  #release(key: string): void {
    const left = (this.#running.get(key) ?? 1) - 1;
    if (left > 0) this.#running.set(key, left);
    else this.#running.delete(key);
  }

  /** One round of order tracking, of lookups of lost answers, and (when due) of the history check. */
  async track(): Promise<void> {
    if (this.#fatal !== null) return;
    if (this.#unjournalled.size > 0) await this.#journalUnjournalled();
    await this.#guard(async () => {
      // Between slots there is nearly always nothing to follow: one question, not three lists.
      if (!(await this.#deps.journal.hasOpenWork())) {
        this.#reconciler.nothingOpen();
        this.#stuck.nothingOpen();
        return;
      }
      await trackOpenOrders(this.#deps, this.#stuck);
      await this.#reconciler.pass();
    }, undefined);
    if (this.#holdsMayBeOrphaned && this.#deps.journal.writeFailure() === null) {
      // As the next start would, once the pass above has ended what the failed writes left open:
      // a buy that failed without being sent while writes failed kept its budget held.
      this.#holdsMayBeOrphaned = false;
      await this.#guard(() => this.#reconciler.releaseOrphanedHolds(), undefined);
    }
    this.#startDueChecks();
  }

  /** The history checks track() started in the background, settled: await before the journal closes. */
  /**
   * Work the daemon starts outside the scheduler (a slot run as a late fire as it starts):
   * background work idle() waits for, as a catch-up's late slot is, so a stop never closes the
   * journal under its send. Its failure is the work's own to report.
   */
  hold(work: Promise<unknown>): void {
    const held: Promise<void> = work.then(
      () => undefined,
      () => undefined,
    ).finally(() => this.#background.delete(held));
    this.#background.add(held);
  }

  async idle(): Promise<void> {
    while (this.#background.size > 0) await Promise.allSettled([...this.#background]);
  }

  /**
   * The periodic history check, per account and in the background: an account's history is read
   * again once its last read is `intervalMs` old, or, while it cannot be read, once a minute
   * (not at every pass, and without reading the accounts that can be read again each time). The
   * tracking pass does not wait for it: one account's exchange hanging would otherwise hold
   * every account's order tracking, the heartbeat and the health refresh for its timeouts.
   */
  #startDueChecks(): void {
    const ledger = this.#ledger;
    const every = this.#options.ledger?.intervalMs;
    if (ledger === null || every === undefined || this.#fatal !== null) return;
    const now = this.#deps.clock.nowMs();
    for (const account of ledger.accounts) {
      const checked = ledger.accountCheckedAtMs(account);
      if (checked !== null && now - checked < every) continue;
      const tried = this.#triedAtMs.get(account);
      if (tried !== undefined && now - tried < Math.min(every, UNREADABLE_RETRY_MS)) continue;
      this.#triedAtMs.set(account, now);
      const check: Promise<unknown> = this.checkLedger(account).finally(() => this.#background.delete(check));
      this.#background.add(check);
    }
  }

  #booksOf(instance: string): SnapshotBooks {
    const account = accountOfInstance(this.#deps, instance);
    let books = this.#books.get(account);
    if (books === undefined) {
      const deps = this.#deps;
      books = snapshotBooks(onInstanceAccount(deps, instance).exchange, { ttlMs: this.#options.marketsTtlMs ?? 10 * 60_000, nowMs: () => deps.clock.nowMs() });
      this.#books.set(account, books);
    }
    return books;
  }

  async #skipPaused(instance: string, slotTimeMs: number): Promise<SlotOutcome> {
    await this.#guard(async () => {
      if (await this.#deps.journal.skipSlot({ instance, slotTimeMs, runId: this.#options.runId, status: 'skipped', reason: PAUSED_REASON })) {
        this.#deps.metrics.slotFinished(instance, 'skipped', 0, slotTimeMs);
      }
    }, undefined, instance);
    this.#deps.logger.info({ event: 'slot-skipped', instance, slot: new Date(slotTimeMs).toISOString(), reason: PAUSED_REASON }, `${instance} is paused: slot journalled as skipped, nothing sent`);
    return 'skipped';
  }

  async #skipUnchecked(instance: string, slotTimeMs: number): Promise<SlotOutcome> {
    const problem = this.#ledgerProblems.get(accountOfInstance(this.#deps, instance)) ?? 'not read yet';
    return this.#skipUnread(instance, slotTimeMs, `${HISTORY_UNREAD} since stacker started (${problem}), so orders lost by the journal or placed by another client could not be ruled out`);
  }

  async #skipUnread(instance: string, slotTimeMs: number, reason: string): Promise<SlotOutcome> {
    await this.#guard(async () => {
      if (await this.#deps.journal.skipSlot({ instance, slotTimeMs, runId: this.#options.runId, status: 'skipped', reason })) {
        this.#deps.metrics.slotFinished(instance, 'skipped', 0, slotTimeMs);
      }
    }, undefined, instance);
    this.#deps.logger.warn({ event: 'slot-skipped', instance, slot: new Date(slotTimeMs).toISOString() }, reason);
    return 'skipped';
  }

  /**
   * Trading stops for good this run (once: a second reason is not told): logged, the operator
   * notified (trading-stopped) and the daemon told (onFatal). The engine's own fatal errors come
   * here, and so does what the daemon finds between slots (a standby took the journal over).
   */
  stopTrading(fatal: FatalEngineError): void {
    if (this.#fatal !== null) return;
    this.#fatal = fatal;
    this.#deps.logger.error({ event: 'trading-stopped', code: fatal.code, error: fatal.message }, `trading stopped: ${fatal.message}`);
    tell(this.#deps, () => ({ kind: 'trading-stopped', atMs: this.#deps.clock.nowMs(), mode: this.#deps.mode, code: fatal.code, reason: fatal.message }));
    this.#options.onFatal?.(fatal);
  }

  /** `instance`: whose work it is, when it is one instance's (named in the log line, and throttled apart). */
  async #guard<T>(work: () => Promise<T>, fallback: T, instance?: string): Promise<T> {
    try {
      return await work();
    } catch (error) {
      const fatal = error instanceof FatalEngineError ? error : classifyError(error) === 'fatal' ? new FatalEngineError(errorMessage(error), error) : null;
      if (fatal !== null) {
        this.stopTrading(fatal);
        return fallback;
      }
      // A write that failed (a full disk) may have left a never-sent buy's budget held: given back once writes work again.
      if (this.#deps.journal.writeFailure() !== null) this.#holdsMayBeOrphaned = true;
      const code = errorCode(error);
      const message = errorMessage(error);
      // Numbers aside (a slot's time, an id): a full disk fails each slot's claim naming its slot.
      const count = this.#errorLines.due(`${instance ?? ''}\0${code}\0${message.replace(/\d+/g, '#')}`);
      if (count !== null) {
        const since = count === 1 ? '' : `; ${count} such errors since the last such line (one a minute at most)`;
        this.#deps.logger.error({ event: 'engine-error', ...(instance === undefined ? {} : { instance }), code, error: message, count }, `engine error${instance === undefined ? '' : ` (${instance})`}: ${message}${since}`);
      }
      return fallback;
    }
  }
}

/** Why a missed slot is not run late, as its journal row says. */
/** How slots came to be missed while the daemon ran (catchUpMissed): said in their reason and line. */
export interface MissedHow {
  /** What the process was doing meanwhile, as the reason and the line say it. */
  readonly while: string;
  /** A newer slot of the instance fires now (run as a late fire): none of these runs late. */
  readonly newerFires: boolean;
}

/** Slots node-cron reported missed: the process did not run, or the clock jumped. */
export const WOKEN: MissedHow = { while: "the process did not run slots (paused, suspended or too busy, or this machine's clock stepped forward)", newerFires: false };

function catchUpRule(instance: { readonly catchUp: { readonly policy: string } }): string {
  return instance.catchUp.policy === 'skip' ? 'CATCH_UP=skip' : 'older than the newest missed slot or CATCH_UP_WINDOW';
}
