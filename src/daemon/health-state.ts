import { type EngineHealth, HISTORY_UNREAD } from '../engine/engine.ts';
import { SNAPSHOT_FAILED, refusedForItsMarket } from '../engine/slot-runner.ts';
import { BUDGET_TOO_SMALL } from '../engine/money-plan.ts';
import type { JournalState } from '../observability/metrics.ts';
import type { Journal, LedgerFinding } from '../store/journal.ts';

/** What the metrics registry shows of the journal's state (Metrics fits). */
export interface JournalStateSink {
  journalState(state: JournalState): void;
}

/** Slots of one instance failed in a row before /healthz calls it a problem. */
export const FAILED_SLOTS_UNHEALTHY = 3;

/**
 * The daemon's health, as /healthz reports it: healthy only while stacker can keep its promise.
 * Each problem is a sentence a human can act on:
 * - trading stopped (credentials, nonce, a lost journal, foreign orders);
 * - the journal cannot be written (disk full, read-only): slots send nothing until it can;
 * - an intent stayed unresolved past its settle window (a transfer whose answer was lost, a
 *   lookup that keeps failing): a human checks the balances and resolves it;
 * - reconciliation found orders at the exchange the journal did not know (adopted) or could not
 *   have sent (foreign): reported until `stacker journal acknowledge`;
 * - a market order still open long after it should have ended (the exchange keeps answering it
 *   open, does not find it, or cannot be read): a human checks it at the exchange; it is listed
 *   until it turns final;
 * - the exchange's order history could not be read since start: slots wait for it;
 * - the kill switch was turned on from the status API: nothing that moves money is sent until
 *   an operator turns it off (the file and STACKER_KILL_SWITCH are planned stops, not reported);
 * - an account's exchange has given no usable answer for two minutes (timeouts, resets, 5xx,
 *   throttling), named at once: its instances' own count of skipped slots takes days on a daily schedule;
 * - an instance's last slot refused its buy as larger than its smallest budget limit: no period
 *   lets it through, so it buys nothing while its slots end done, until a setting changes;
 * - an instance's buy was refused for its market (by the exchange against the rules read, the
 *   market not listed or not trading, the amount below its minimum) in each of its last
 *   FAILED_SLOTS_UNHEALTHY slots, while its slots end done;
 * - an instance's last FAILED_SLOTS_UNHEALTHY slots all failed (an exchange failing every order,
 *   a transfer that never goes through): one failure is a bad moment, several in a row are not.
 */
export class DaemonHealth {
  readonly #journal: Journal;
  readonly #engine: () => EngineHealth | null;
  readonly #sink: JournalStateSink | null;
  readonly #killSwitches: () => readonly string[];
  readonly #stopped: string[] = [];
  #findings: readonly LedgerFinding[] = [];
  /** Per instance: its slots that failed in a row, up to the latest, and when the latest was. */
  readonly #failedInARow = new Map<string, { count: number; latestMs: number }>();
  /** Per instance: its slots skipped in a row because its exchange could not be read, and the latest reason. */
  readonly #unreadInARow = new Map<string, { count: number; latestMs: number; reason: string }>();
  /** Per instance whose last slot's buy is above its smallest budget limit: why, and since which slot. */
  readonly #tooSmall = new Map<string, { sinceMs: number; message: string }>();
  /** Per instance: its slots in a row whose buy was refused for its market (not its wallet or budget), and the latest refusal. */
  readonly #marketRefusedInARow = new Map<string, { count: number; latestMs: number; reason: string; message: string }>();

  readonly #clocks: () => readonly string[];
  readonly #exchanges: () => readonly string[];
  constructor(options: {
    readonly journal: Journal;
    readonly engine: () => EngineHealth | null;
    readonly sink?: JournalStateSink;
    readonly killSwitches?: () => readonly string[];
    readonly clocks?: () => readonly string[];
    /** Accounts whose exchange gives no usable answer for a while (ExchangeReachability.problems). */
    readonly exchanges?: () => readonly string[];
  }) {
    this.#journal = options.journal;
    this.#killSwitches = options.killSwitches ?? (() => []);
    this.#clocks = options.clocks ?? (() => []);
    this.#exchanges = options.exchanges ?? (() => []);
    this.#engine = options.engine;
    this.#sink = options.sink ?? null;
  }

  /**
   * A slot of an instance ended (`settled`: a failed one whose lost answer was found done since).
   * A slot that did not fail ends the run of failures; one that ran no exchange call (paused,
   * skipped) leaves it as it is.
   */
  slotEnded(instance: string, slotTimeMs: number, outcome: string, settled = false): void {
    if (outcome === 'failed' && !settled) {
      const run = this.#failedInARow.get(instance);
      this.#failedInARow.set(instance, { count: (run?.count ?? 0) + 1, latestMs: Math.max(run?.latestMs ?? slotTimeMs, slotTimeMs) });
    } else if (outcome === 'done' || settled) this.#failedInARow.delete(instance);
  }

  /**
   * Read what a slot that ended refused for its settings: a buy above the smallest budget limit
   * itself (`budget-too-small`) passes in no period, so the instance buys nothing until a setting
   * changes, while its slots end done. Listed until a slot of the instance no longer says so.
   */
  async readSlot(instance: string, slotTimeMs: number): Promise<void> {
    let records: Awaited<ReturnType<Journal['listIntents']>>;
    let slot: Awaited<ReturnType<Journal['getSlot']>>;
    try {
      records = await this.#journal.listIntents({ instance, slotTimeMs });
      slot = await this.#journal.getSlot({ instance, slotTimeMs });
    } catch {
      return;
    }
    // A slot skipped because its exchange could not be read (tried again within its window
    // first) ran nothing: in a row, its account's exchange is down, which no failed slot says.
    const reason = slot?.reason ?? '';
    if (slot?.status === 'skipped' && (reason.startsWith(SNAPSHOT_FAILED) || reason.startsWith(HISTORY_UNREAD))) {
      const run = this.#unreadInARow.get(instance);
      this.#unreadInARow.set(instance, { count: (run?.count ?? 0) + 1, latestMs: Math.max(run?.latestMs ?? slotTimeMs, slotTimeMs), reason });
    } else if (slot?.status === 'done' || slot?.status === 'failed') this.#unreadInARow.delete(instance);
    // A buy refused for its market (the exchange refusing it against the rules read, the market
    // gone or closed, the amount below its minimum): one is a bad moment (the rules are read
    // again), every slot in a row a market changed or closed, and the instance buys nothing while its slots end done.
    // The strategy's own refusal for its market counts as the guard's: a built-in one refuses a market it cannot find before the guard sees it.
    const byMarket = records.find((record) => record.status === 'refused' && (record.intent.kind === 'buy-stock-market' || record.intent.kind === 'refusal') && refusedForItsMarket(record.error?.code ?? ''));
    if (byMarket !== undefined) {
      const run = this.#marketRefusedInARow.get(instance);
      this.#marketRefusedInARow.set(instance, { count: (run?.count ?? 0) + 1, latestMs: Math.max(run?.latestMs ?? slotTimeMs, slotTimeMs), reason: byMarket.error?.code ?? '', message: byMarket.error?.message ?? '' });
    } else if (slot?.status === 'done') this.#marketRefusedInARow.delete(instance);
    const refused = records.find((record) => record.status === 'refused' && record.error?.code === BUDGET_TOO_SMALL);
    if (refused === undefined) {
      this.#tooSmall.delete(instance);
      return;
    }
    const since = this.#tooSmall.get(instance)?.sinceMs ?? slotTimeMs;
    this.#tooSmall.set(instance, { sinceMs: since, message: refused.error?.message ?? BUDGET_TOO_SMALL });
  }

  /** Trading stopped for this reason (kept for the rest of the run). */
  stopped(reason: string): void {
    this.#stopped.push(`trading stopped: ${reason}`);
  }

  /** Re-read what only the journal knows (findings), and publish the journal's state as metrics. */
  async refresh(): Promise<void> {
    try {
      this.#findings = await this.#journal.listFindings({ unacknowledged: true, limit: 100 });
    } catch {
      // A journal that cannot be read shows as its write failure or as a stop; keep the last findings.
    }
    const engine = this.#engine();
    const counts: Record<string, number> = { adopted: 0, foreign: 0 };
    for (const finding of this.#findings) counts[finding.kind] = (counts[finding.kind] ?? 0) + 1;
    this.#sink?.journalState({
      unresolved: engine?.unresolved.count ?? 0,
      oldestUnresolvedSentAtMs: engine?.unresolved.oldestSentAtMs ?? null,
      writable: this.#journal.writeFailure() === null,
      findings: counts,
      stuckOrders: engine?.stuckOrders.length ?? 0,
    });
  }

  problems(): string[] {
    const problems = [...this.#stopped];
    const failure = this.#journal.writeFailure();
    if (failure !== null) {
      // A lasting failure may be of a write that comes after a send (an order's record): slots go on, and what they leave unrecorded is recorded from the exchange once it can.
      const then = failure.lasting === true ? 'each slot that needs that write fails until it can, and an order it could not record is recorded from the exchange once it can' : 'nothing is sent until it can';
      problems.push(`the journal cannot be written since ${new Date(failure.atMs).toISOString()} (${failure.message}); ${then}`);
    }
    problems.push(...this.#killSwitches());
    problems.push(...this.#clocks());
    problems.push(...this.#exchanges());
    const engine = this.#engine();
    const stuck = engine?.unresolved.pastWindow ?? [];
    if (stuck.length > 0) {
      const shown = stuck.slice(0, 3).map((s) => `${s.kind} of ${s.instance} sent ${new Date(s.sentAtMs).toISOString()} (${s.intentId})`);
      problems.push(
        `${stuck.length} intent(s) still unknown past their settle window: ${shown.join('; ')}${stuck.length > 3 ? '; …' : ''}. ` +
          'Check the exchange balances, then `stacker journal resolve --intent ID --as done|failed`',
      );
    }
    const orders = engine?.stuckOrders ?? [];
    if (orders.length > 0) {
      const shown = orders
        .slice(0, 3)
        .map((o) => `${o.clientOrderId} (order ${o.orderId}${o.instance === null ? '' : ` of ${o.instance}`}, ${o.market}) ${o.status} since ${new Date(o.sinceMs).toISOString()}: ${o.why}`);
      // Tracking stops with trading: the order is not read again before a restart.
      const followed = engine?.fatal === null ? 'stacker keeps following it' : 'it is not read while trading is stopped';
      problems.push(
        `${orders.length} market order(s) still open long after a market order ends: ${shown.join('; ')}${orders.length > 3 ? '; …' : ''}. ` +
          `Check each at the exchange; ${followed}; nothing is cancelled or sent again, and its budget stays counted`,
      );
    }
    for (const [instance, run] of this.#failedInARow) {
      if (run.count < FAILED_SLOTS_UNHEALTHY) continue;
      problems.push(`${instance}: its last ${run.count} slots failed, the latest at ${new Date(run.latestMs).toISOString()}; \`stacker journal --instance ${instance}\` says why`);
    }
    for (const [instance, run] of this.#unreadInARow) {
      if (run.count < FAILED_SLOTS_UNHEALTHY) continue;
      problems.push(`${instance}: its last ${run.count} slots were skipped, its exchange not read, the latest at ${new Date(run.latestMs).toISOString()}: ${run.reason}`);
    }
    for (const [instance, run] of this.#marketRefusedInARow) {
      if (run.count < FAILED_SLOTS_UNHEALTHY) continue;
      problems.push(
        `${instance}: its buy was refused for its market in each of its last ${run.count} slots, the latest at ${new Date(run.latestMs).toISOString()} (${run.reason}: ${run.message}); ` +
          'it buys nothing meanwhile: the market may be closed or gone, its rules changed (`stacker markets`), or the amount is below its minimum',
      );
    }
    for (const [instance, tooSmall] of this.#tooSmall) {
      problems.push(`${instance}: buys nothing since its slot of ${new Date(tooSmall.sinceMs).toISOString()}, its buy refused in every period: ${tooSmall.message}`);
    }
    // A strategy that failed stops its instance for good: a slot nobody runs is not healthy, and an alert on /healthz is how its operator hears of it.
    for (const disabled of engine?.disabledInstances ?? []) {
      problems.push(`${disabled.instance} is disabled since its slot of ${new Date(disabled.slotTimeMs).toISOString()}: ${disabled.reason}. Fix the strategy or its instance file and restart stacker`);
    }
    const foreign = this.#findings.filter((f) => f.kind === 'foreign');
    if (foreign.length > 0) {
      problems.push(
        `${foreign.length} order(s) at the exchange carry this stacker's ids but were placed by another client (${foreign
          .slice(0, 3)
          .map((f) => f.clientOrderId)
          .join(', ')}): another stacker uses this API key`,
      );
    }
    const adopted = this.#findings.filter((f) => f.kind === 'adopted');
    if (adopted.length > 0) {
      problems.push(
        `${adopted.length} order(s) were adopted from the exchange's history that the journal had lost (${adopted
          .slice(0, 3)
          .map((f) => f.clientOrderId)
          .join(', ')}); they now count against budgets. Acknowledge with \`stacker journal acknowledge\``,
      );
    }
    if (engine !== null && engine.ledgerCheckedAtMs === null && engine.ledgerProblem !== null) {
      problems.push(`slots wait: ${engine.ledgerProblem}`);
    }
    return problems;
  }
}
