import { keepConfirmed, takeConfirmed } from './confirmed-moves.ts';
import { type IntentRecord, reservationIntentId } from '../store/journal.ts';
import { isMoneyIntent } from '../domain/intent.ts';
import { FatalEngineError, classifyError, errorMessage } from './error-policy.ts';
import { orderResult, releaseReservation } from './executor.ts';
import { tellUnknown } from './intent-events.ts';
import { recordOrder } from './order-log.ts';
import { type EngineDeps, accountPrefix, onIntentAccount } from './runtime.ts';

export interface ReconcileSummary {
  /** Intents whose outcome is now known (found, never sent, or not found over the whole window). */
  readonly resolved: number;
  /** Intents still open: being looked up, or a transfer/withdrawal that cannot be looked up. */
  readonly unresolved: number;
  /** Claimed slots a crash left open, now closed. */
  readonly slotsClosed: number;
}

/** What is still open after a pass, for /healthz and /metrics. */
export interface UnresolvedState {
  readonly count: number;
  /** When the oldest open intent was sent (or journalled, if never sent); null when none. */
  readonly oldestSentAtMs: number | null;
  /** Open intents older than their settle window: a human has to look (a transfer, a lookup that keeps failing). */
  readonly pastWindow: readonly { readonly intentId: string; readonly instance: string; readonly kind: string; readonly sentAtMs: number }[];
}

export const NOTHING_UNRESOLVED: UnresolvedState = { count: 0, oldestSentAtMs: null, pastWindow: [] };

/**
 * Resolves what a lost answer or a crash left open (docs/exactly-once.md), with the same rule at
 * start and while running: a buy is looked up by its clientOrderId, again and again over its
 * instance's settle window counted from when it was sent (never from a restart), and only a
 * lookup after the window has passed may call it `not-found`. Nothing is ever sent again here.
 *
 * - `pending` (only at start) never left, because intents are marked `sent` first: failed, and
 *   not sent late (its slot's moment has passed; the next slot decides afresh);
 * - `sent` at start: its request may have landed before the crash; from here on like `unknown`.
 *   While running, the intents of a slot in flight are left alone;
 * - `unknown` buys: looked up when due; found → done and tracked; past the window with nothing
 *   found → `not-found`, its budget still counted until the exchange's history check clears it;
 * - transfers and flex withdrawals have no lookup by id: they stay `unknown` (health reports
 *   them once past the window) and are never resent.
 */
export class Reconciler {
  readonly #deps: EngineDeps;
  readonly #windowOf: (instance: string) => number;
  readonly #inFlight: (instance: string, slotTimeMs: number) => boolean;
  /** intentId → when to look it up next. Lost on restart, which only means an early lookup. */
  readonly #nextLookup = new Map<string, number>();
  #state: UnresolvedState = NOTHING_UNRESOLVED;

  /** `inFlight`: whether a slot is being run by this process right now (its intents are its own business). */
  constructor(deps: EngineDeps, windowOf: (instance: string) => number, inFlight: (instance: string, slotTimeMs: number) => boolean = () => false) {
    this.#deps = deps;
    this.#windowOf = windowOf;
    this.#inFlight = inFlight;
  }

  get state(): UnresolvedState {
    return this.#state;
  }

  /** Before any slot of a run: everything open is looked at now, and claimed slots are closed. */
  async atStart(): Promise<ReconcileSummary> {
    await this.releaseOrphanedHolds();
    return this.#pass(true);
  }

  /**
   * A budget held for a buy that ended failed or refused without being sent spent nothing: it is
   * given back. Every path that ends a buy so gives it back itself; a stop at the wrong moment (the
   * journal taken away between the reservation and the send) once left it held for good, every
   * later buy judged against a budget that much smaller; so does a write failing meanwhile (a
   * full disk): then the engine calls this once writes work again, as a restart would.
   */
  async releaseOrphanedHolds(): Promise<void> {
    const deps = this.#deps;
    const intentIds = new Set((await deps.journal.heldBudgetReservations()).map((held) => reservationIntentId(held.reservationId)));
    for (const intentId of intentIds) {
      const record = await deps.journal.getIntent(intentId);
      if (record === null || record.sentAtMs !== null || (record.status !== 'failed' && record.status !== 'refused')) continue;
      await releaseReservation(deps, record);
      deps.logger.warn({ event: 'budget-released', instance: record.instance, intentId }, `the budget held for ${intentId}, ${record.status} without being sent, is given back`);
    }
  }

  /**
   * While running: the lookups that are due, and what a slot of this process left open without
   * being in flight any more (its journal writes failed, say on a full disk): resolved as a
   * restart would resolve it.
   */
  async pass(): Promise<ReconcileSummary> {
    return this.#pass(false);
  }

  /** The journal has nothing open: what a pass would find, without one. */
  nothingOpen(): void {
    this.#state = NOTHING_UNRESOLVED;
  }

  async #pass(atStart: boolean): Promise<ReconcileSummary> {
    const deps = this.#deps;
    let resolved = 0;
    let unresolved = 0;
    const open = await deps.journal.unresolvedIntents();
    // Measured before anything is resolved too: a pass whose writes fail (a full disk) ends early,
    // and the gauge kept saying 0 while an intent was sent with its order unrecorded.
    this.#state = this.#measure(open);
    for (const record of open) {
      const due = (this.#nextLookup.get(record.intentId) ?? 0) <= deps.clock.nowMs();
      if (this.#inFlight(record.instance, record.slotTimeMs) || !due) {
        unresolved += 1;
        continue;
      }
      if (await this.#resolve(record, atStart || record.status === 'pending' || record.status === 'sent', atStart)) resolved += 1;
      else unresolved += 1;
    }
    const slotsClosed = await closeInterruptedSlots(deps, this.#inFlight);
    if (resolved + slotsClosed > 0 || (atStart && unresolved > 0)) {
      deps.logger.info({ event: 'reconciled', resolved, unresolved, slotsClosed }, `reconciliation: ${resolved} resolved, ${unresolved} still open, ${slotsClosed} interrupted slots closed`);
    }
    // Read again only when this pass changed something: a backtest passes once per slot.
    this.#state = this.#measure(resolved > 0 || open.some((record) => record.status !== 'unknown') ? await deps.journal.unresolvedIntents() : open);
    return { resolved, unresolved, slotsClosed };
  }

  /**
   * `warnUnknowable`: say that a transfer or withdrawal left sent may or may not have happened.
   * `starting`: the pass at start (or takeover), where what is open was left by a stacker that
   * stopped; otherwise by a slot of this one.
   */
  async #resolve(record: IntentRecord, warnUnknowable: boolean, starting: boolean): Promise<boolean> {
    const deps = this.#deps;
    const log = { event: 'reconcile', instance: record.instance, intentId: record.intentId, intent: record.intent.kind };
    if (record.status === 'pending') {
      // A post-mortem reads this: a stop that never happened sent its reader looking for a restart.
      const why = starting
        ? 'the stacker that journalled it stopped, or lost the journal, before sending it'
        : 'its slot ended before sending it (a journal write failed or did not answer in time)';
      await deps.journal.updateIntent(record.intentId, { status: 'failed', error: { code: 'E_INTERRUPTED', message: `${why}; not sent (its slot has passed)` } });
      await releaseReservation(deps, record);
      deps.logger.warn(log, starting ? 'an intent journalled before a stop was never sent; marked failed' : 'an intent whose slot ended early was never sent; marked failed');
      return true;
    }
    const intent = record.intent;
    if (intent.kind !== 'buy-stock-market' || record.clientOrderId === null) {
      // The exchange confirmed it to this process, whose journal record failed: written now.
      const confirmed = record.status === 'sent' ? takeConfirmed(deps.journal, record.intentId) : undefined;
      if (confirmed !== undefined) {
        try {
          await confirmed();
        } catch (error) {
          keepConfirmed(deps.journal, record.intentId, confirmed);
          throw error;
        }
        deps.logger.warn(log, `the ${intent.kind} the exchange confirmed is journalled done now that the journal takes writes again`);
        return true;
      }
      if (record.status === 'sent') {
        const lost = { code: 'E_OUTCOME_UNKNOWN', message: `its outcome was never journalled (stacker stopped, or the journal could not be written, while the ${intent.kind} was in flight); it cannot be looked up by id; not resent` };
        await deps.journal.updateIntent(record.intentId, { status: 'unknown', error: lost });
        tellUnknown(deps, record, lost);
      }
      if (warnUnknowable) deps.logger.warn(log, `a ${intent.kind} may or may not have happened (no lookup by id exists); check the balances — it is never resent`);
      this.#nextLookup.set(record.intentId, Number.POSITIVE_INFINITY);
      return false;
    }

    const nowMs = deps.clock.nowMs();
    const sentAtMs = record.sentAtMs ?? record.updatedAtMs;
    const windowEndMs = sentAtMs + this.#windowOf(record.instance);
    const own = onIntentAccount(deps, record);
    let found;
    try {
      if (own === null) throw new Error(`it was sent on account ${record.account ?? '?'}, which is not configured now`);
      found = await own.exchange.findOrder({ market: intent.market, clientOrderId: record.clientOrderId });
    } catch (error) {
      if (classifyError(error) === 'fatal') throw new FatalEngineError(`${own === null ? '' : accountPrefix(own)}looking up ${record.clientOrderId}: ${errorMessage(error)}`, error);
      deps.logger.warn({ ...log, error: errorMessage(error) }, 'could not look the order up; will try again');
      this.#schedule(record.intentId, sentAtMs, windowEndMs, nowMs);
      return false;
    }
    if (found !== null) {
      this.#nextLookup.delete(record.intentId);
      await recordOrder(deps, record.instance, found, record.intentId);
      await deps.journal.updateIntent(record.intentId, { status: 'done', result: orderResult(found) });
      // The exchange accepted it: counted as an answered order is (stacker_orders_placed_total).
      deps.metrics.orderPlaced(record.instance, found.createdAtSec * 1000);
      deps.logger.info({ ...log, clientOrderId: record.clientOrderId, orderId: found.orderId }, 'the order of a lost answer exists; recorded');
      return true;
    }
    if (nowMs >= windowEndMs) {
      this.#nextLookup.delete(record.intentId);
      const windowSec = Math.round((windowEndMs - sentAtMs) / 1000);
      await deps.journal.updateIntent(record.intentId, {
        status: 'not-found',
        error: {
          code: 'E_NOT_FOUND',
          message: `no order ${record.clientOrderId} at the exchange ${windowSec} s after it was sent; not resent; its budget stays counted until the exchange's history check clears it`,
        },
      });
      deps.logger.warn({ ...log, event: 'order-not-found', clientOrderId: record.clientOrderId, windowSec }, `no order ${record.clientOrderId} after its ${windowSec} s settle window; marked not-found (never resent)`);
      return true;
    }
    if (record.status === 'sent') {
      const lost = { code: 'E_OUTCOME_UNKNOWN', message: `its outcome was never journalled (stacker stopped, or the journal could not be written, while the order was in flight); looking it up until ${new Date(windowEndMs).toISOString()}; never resent` };
      await deps.journal.updateIntent(record.intentId, { status: 'unknown', error: lost });
      tellUnknown(deps, record, lost);
    }
    this.#schedule(record.intentId, sentAtMs, windowEndMs, nowMs);
    return false;
  }

  /** Next lookup after half the intent's age (within the timing's bounds), and one at the window's end. */
  #schedule(intentId: string, sentAtMs: number, windowEndMs: number, nowMs: number): void {
    const { min, max } = this.#deps.timing.lookupSpacingMs;
    const spacing = Math.min(max, Math.max(min, (nowMs - sentAtMs) / 2));
    this.#nextLookup.set(intentId, Math.min(nowMs + spacing, Math.max(windowEndMs, nowMs)));
  }

  #measure(open: readonly IntentRecord[]): UnresolvedState {
    if (open.length === 0) return NOTHING_UNRESOLVED;
    const nowMs = this.#deps.clock.nowMs();
    let oldest: number | null = null;
    const pastWindow: UnresolvedState['pastWindow'][number][] = [];
    for (const record of open) {
      const sentAtMs = record.sentAtMs ?? record.createdAtMs;
      if (oldest === null || sentAtMs < oldest) oldest = sentAtMs;
      if (record.status === 'unknown' && nowMs > sentAtMs + this.#windowOf(record.instance)) {
        pastWindow.push({ intentId: record.intentId, instance: record.instance, kind: record.intent.kind, sentAtMs });
      }
    }
    return { count: open.length, oldestSentAtMs: oldest, pastWindow };
  }
}

/** Slots a crash (or a failed write) left `claimed`: done when a money intent went through and nothing is open, else failed. */
async function closeInterruptedSlots(deps: EngineDeps, inFlight: (instance: string, slotTimeMs: number) => boolean): Promise<number> {
  let closed = 0;
  for (const slot of await deps.journal.listSlots({ status: 'claimed' })) {
    if (inFlight(slot.instance, slot.slotTimeMs)) continue;
    const intents = await deps.journal.listIntents({ instance: slot.instance, slotTimeMs: slot.slotTimeMs });
    const open = intents.some((intent) => intent.status === 'pending' || intent.status === 'sent' || intent.status === 'unknown');
    const anyDone = intents.some((intent) => isMoneyIntent(intent.intent) && intent.status === 'done');
    await deps.journal.finishSlot({
      instance: slot.instance,
      slotTimeMs: slot.slotTimeMs,
      status: anyDone && !open ? 'done' : 'failed',
      reason: 'interrupted: stacker stopped during this slot; closed by reconciliation',
    });
    closed += 1;
  }
  return closed;
}
