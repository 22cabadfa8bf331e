import { randomUUID } from 'node:crypto';
import { type Decimal, ZERO, formatDecimal } from '../domain/money.ts';
import { type Order, isTerminalStatus } from '../domain/order.ts';
import { periodStarts, periodWindows } from './budget-periods.ts';
import { StoreError } from './errors.ts';
import { canonicalIntent } from './intent-codec.ts';
import {
  BUDGET_PERIODS,
  type BudgetPeriod,
  type AdoptedOrder,
  type BudgetDecision,
  type BudgetReservation,
  type BudgetReserveRequest,
  type BudgetScope,
  type BudgetSpent,
  type ChangedOrder,
  type ChangedOrdersQuery,
  type FlexOperationInput,
  type FlexOperationRecord,
  type IntentQuery,
  type IntentRecord,
  type IntentStatus,
  type IntentUpdate,
  type Journal,
  type JournalEntry,
  type JournalWriteFailure,
  type LedgerFinding,
  type NewIntent,
  type NewLedgerFinding,
  type OperatorControlChange,
  type OperatorControls,
  type OrderAdoption,
  type OrderLink,
  type OrderQuery,
  type OrderTransition,
  type PeriodStarts,
  type RunMode,
  type RunRecord,
  type RunStart,
  type SecondOrder,
  type SlotClaim,
  type SlotFinish,
  type SlotKey,
  type SlotQuery,
  type SlotRecord,
  type SlotSkip,
  type StoredOrder,
  type TransferInput,
  type TransferRecord,
  secondOrderReservationId,
} from './journal.ts';
import {
  adoptedFinding,
  adoptedIntent,
  adoptedSpends,
  budgetExcesses,
  spentFromReservations,
  transitionOf,
  applyIntentUpdate,
  accountStateKey,
  checkAccountState,
  checkChangedOrdersQuery,
  checkFinding,
  checkSecondOrder,
  checkFinishStatus,
  checkLedgerTime,
  checkOperationStatus,
  checkOperatorControl,
  checkOrder,
  checkReserveRequest,
  checkScheduled,
  checkScope,
  checkSkipStatus,
  checkSlotKey,
  checkSpentAmount,
  checkStateChange,
  compareText,
  checkSameOrder,
  leavesOrderAsIs,
  newIntentFields,
  oldestOrderFirst,
  operationMoney,
  settledAgainBy,
  snapshotMoved,
} from './journal-rules.ts';
import { firstAtLeast } from '../domain/sorted.ts';
import { controlTarget, controlsFromRows } from './journal-rows.ts';

export interface MemoryJournalOptions {
  /** Unix ms for every recorded time; Date.now by default. */
  readonly clock?: () => number;
  /** Run ids; randomUUID by default. */
  readonly newId?: () => string;
}

const UNRESOLVED: readonly IntentStatus[] = ['pending', 'sent', 'unknown'];
const MODE_KEY = 'mode';
const CHECKED_THROUGH_KEY = 'ledger_checked_through_ms';
const SPEND_COUNTED_KEY = 'spend_counted_through_ms';
const ALIVE_KEY = 'alive_at_ms';
/** Between a control and its target in #operatorControls' keys: below every character, so keys sort as (control, target). */
const CONTROL_KEY_SEPARATOR = '\u0000';

/**
 * The Journal kept in the process's memory, for backtests: the same rules as SqliteJournal
 * (src/store/journal-rules.ts, and the same contract tests), with every per-slot lookup a map
 * read instead of an SQL statement, so a backtest's cost per slot does not grow with its history.
 * It lives as long as the process: nothing here survives a crash, which a backtest does not need.
 *
 * Each operation is all or nothing: changes are made through #set/#delete/#add, which remember
 * how to undo them, and a failure part-way undoes the operation's changes in reverse.
 */
export class MemoryJournal implements Journal {
  readonly path = ':memory:';
  readonly #now: () => number;
  readonly #newId: () => string;
  #open = false;
  /** While an operation runs: how to take back each change it made (see #op), four slots a step. */
  readonly #undoLog: unknown[] = [];
  #undoLength = 0;
  #recording = false;

  readonly #meta = new Map<string, string>();
  readonly #runs = new Map<string, RunRecord>();
  readonly #slots = new Map<string, SlotRecord>();
  /** Slot times per instance, ascending. */
  readonly #slotTimes = new Map<string, number[]>();
  readonly #claimed = new Set<string>();
  readonly #intents = new Map<string, IntentRecord>();
  /** Intent ids per slot, by index. */
  readonly #slotIntents = new Map<string, string[]>();
  readonly #byClientOrderId = new Map<string, string>();
  readonly #byStatus = new Map<IntentStatus, Set<string>>();
  readonly #orders = new Map<string, StoredOrder>();
  readonly #openOrders = new Set<string>();
  readonly #intentOrders = new Map<string, string[]>();
  readonly #transitions = new Map<string, OrderTransition[]>();
  readonly #flex = new Map<string, FlexOperationRecord>();
  readonly #transfers = new Map<string, TransferRecord>();
  readonly #state = new Map<string, Map<string, string>>();
  readonly #spent = new Map<string, Decimal>();
  readonly #reservations = new Map<string, BudgetReservation>();
  /** Per budget scope (instance and asset), the time zones its reservations were made under: more than one, and its counters are not enough. */
  readonly #zones = new Map<string, Set<string>>();
  /** Budget scopes some of whose reservations retireSettled forgot. */
  readonly #retiredScopes = new Set<string>();
  readonly #held = new Set<string>();
  readonly #findings: LedgerFinding[] = [];
  /** Slots retired by retireSettled(), by instance: only their times stay, so they can never be claimed again. */
  readonly #retired = new Map<string, SlotTimes>();
  /** Finished slots not yet retired, oldest first. */
  readonly #finished: string[] = [];
  /** Instance → when it was first scheduled (the scheduled_instances table). */
  readonly #scheduledSince = new Map<string, number>();
  /** `CONTROL␀TARGET` (an operator_controls row's key) → since when. */
  readonly #operatorControls = new Map<string, number>();

  constructor(options: MemoryJournalOptions = {}) {
    this.#now = options.clock ?? Date.now;
    this.#newId = options.newId ?? randomUUID;
  }

  async open(): Promise<void> {
    this.#open = true;
  }

  async close(): Promise<void> {
    this.#open = false;
  }

  startRun(run: RunStart): Promise<RunRecord> {
    return this.#op('starting a run', () => {
      this.#checkMode(run.mode);
      for (const existing of this.#runs.values()) {
        if (existing.endedAtMs === null && existing.exitReason === null) this.#set(this.#runs, existing.runId, { ...existing, exitReason: 'interrupted' });
      }
      const record: RunRecord = { runId: this.#newId(), mode: run.mode, startedAtMs: this.#now(), endedAtMs: null, pid: run.pid, version: run.version, exitReason: null };
      if (this.#runs.has(record.runId)) throw new StoreError('conflict', `starting a run: run ${record.runId} exists`);
      this.#set(this.#runs, record.runId, record);
      return record;
    });
  }

  finishRun(runId: string, exitReason: string): Promise<void> {
    return this.#op('finishing a run', () => {
      const run = this.#runs.get(runId);
      if (run === undefined) throw new StoreError('not-found', `no run ${runId}`);
      if (run.endedAtMs !== null) throw new StoreError('illegal-transition', `run ${runId} already finished (${run.exitReason ?? ''})`);
      this.#set(this.#runs, runId, { ...run, endedAtMs: this.#now(), exitReason });
    });
  }

  listRuns(limit = 20): Promise<RunRecord[]> {
    return this.#read('listing runs', () =>
      take([...this.#runs.values()].sort((a, b) => b.startedAtMs - a.startedAtMs || compareText(a.runId, b.runId)), limit),
    );
  }

  claimSlot(claim: SlotClaim): Promise<boolean> {
    return this.#op(() => `claiming slot ${claim.instance}@${claim.slotTimeMs}`, () => {
      checkSlotKey(claim);
      const now = this.#now();
      if (this.#journalled(claim)) return false;
      this.#checkRun(claim.runId);
      this.#insertSlot({ instance: claim.instance, slotTimeMs: claim.slotTimeMs, status: 'claimed', reason: null, runId: claim.runId, claimedAtMs: now, finishedAtMs: null });
      if (claim.intents !== undefined) this.#insertIntents(claim, claim.intents, now);
      return true;
    });
  }

  skipSlot(skip: SlotSkip): Promise<boolean> {
    return this.#op(() => `journalling ${skip.status} slot ${skip.instance}@${skip.slotTimeMs}`, () => {
      checkSlotKey(skip);
      checkSkipStatus(skip);
      const now = this.#now();
      if (this.#journalled(skip)) return false;
      this.#checkRun(skip.runId);
      this.#insertSlot({ instance: skip.instance, slotTimeMs: skip.slotTimeMs, status: skip.status, reason: skip.reason, runId: skip.runId, claimedAtMs: now, finishedAtMs: now });
      return true;
    });
  }

  finishSlot(finish: SlotFinish): Promise<SlotRecord> {
    return this.#op(() => `finishing slot ${finish.instance}@${finish.slotTimeMs}`, () => {
      checkFinishStatus(finish);
      const key = slotKey(finish);
      const current = this.#slots.get(key);
      if (current === undefined) throw new StoreError('not-found', `slot ${finish.instance}@${finish.slotTimeMs} was never claimed`);
      if (current.status !== 'claimed') throw new StoreError('illegal-transition', `slot ${finish.instance}@${finish.slotTimeMs} is already ${current.status}`);
      const done: SlotRecord = { ...current, status: finish.status, reason: finish.reason ?? null, finishedAtMs: this.#now() };
      this.#set(this.#slots, key, done);
      this.#delete(this.#claimed, key);
      this.#push(this.#finished, key);
      return done;
    });
  }

  getSlot(key: SlotKey): Promise<SlotRecord | null> {
    return this.#read('reading a slot', () => this.#slots.get(slotKey(key)) ?? null);
  }

  lastSlot(instance: string): Promise<SlotRecord | null> {
    return this.#read('reading the last slot', () => {
      const times = this.#slotTimes.get(instance);
      const last = times?.[times.length - 1];
      return last === undefined ? null : (this.#slots.get(slotKey({ instance, slotTimeMs: last })) ?? null);
    });
  }

  scheduledSince(instance: string): Promise<number | null> {
    return this.#read('reading when the instance was first scheduled', () => this.#scheduledSince.get(instance) ?? null);
  }

  markScheduled(instance: string, sinceMs: number): Promise<number> {
    return this.#op(() => `recording that ${instance} is scheduled`, () => {
      checkScheduled(instance, sinceMs);
      const kept = this.#scheduledSince.get(instance);
      if (kept !== undefined) return kept;
      this.#set(this.#scheduledSince, instance, sinceMs);
      return sinceMs;
    });
  }

  listSlots(query: SlotQuery = {}): Promise<SlotRecord[]> {
    return this.#read('listing slots', () => {
      let candidates: Iterable<SlotRecord>;
      if (query.status === 'claimed' && this.#claimed.size === 0) return [];
      if (query.status === 'claimed') candidates = [...this.#claimed].map((key) => this.#slots.get(key) as SlotRecord);
      else if (query.instance !== undefined) {
        const instance = query.instance;
        candidates = (this.#slotTimes.get(instance) ?? []).map((slotTimeMs) => this.#slots.get(slotKey({ instance, slotTimeMs })) as SlotRecord);
      } else candidates = this.#slots.values();
      const found = [...candidates].filter(
        (slot) =>
          (query.status === undefined || slot.status === query.status) &&
          (query.instance === undefined || slot.instance === query.instance) &&
          (query.sinceMs === undefined || slot.slotTimeMs >= query.sinceMs) &&
          (query.untilMs === undefined || slot.slotTimeMs < query.untilMs),
      );
      return take(found.sort((a, b) => b.slotTimeMs - a.slotTimeMs || compareText(a.instance, b.instance)), query.limit ?? -1);
    });
  }

  addIntents(slot: SlotKey, entries: readonly NewIntent[]): Promise<IntentRecord[]> {
    return this.#op(() => `journalling intents of ${slot.instance}@${slot.slotTimeMs}`, () => this.#insertIntents(slot, entries, this.#now()));
  }

  updateIntent(intentId: string, update: IntentUpdate): Promise<IntentRecord> {
    return this.#op(() => `marking intent ${intentId} ${update.status}`, () => {
      const current = this.#requireIntent(intentId);
      const { status, error, result, sent } = applyIntentUpdate(current, update);
      const now = this.#now();
      const next: IntentRecord = {
        ...current,
        status,
        attempts: current.attempts + (sent ? 1 : 0),
        result,
        error,
        updatedAtMs: now,
        sentAtMs: current.sentAtMs ?? (sent ? now : null),
      };
      this.#putIntent(next, current);
      return next;
    });
  }

  getIntent(intentId: string): Promise<IntentRecord | null> {
    return this.#read('reading an intent', () => this.#intents.get(intentId) ?? null);
  }

  findIntentByClientOrderId(clientOrderId: string): Promise<IntentRecord | null> {
    return this.#read('reading an intent', () => {
      const id = this.#byClientOrderId.get(clientOrderId);
      return id === undefined ? null : (this.#intents.get(id) ?? null);
    });
  }

  listIntents(query: IntentQuery = {}): Promise<IntentRecord[]> {
    return this.#read('listing intents', () => this.#listIntents(query));
  }

  hasOpenWork(): Promise<boolean> {
    return this.#read('looking for open work', () => this.#openOrders.size > 0 || this.#claimed.size > 0 || UNRESOLVED.some((status) => (this.#byStatus.get(status)?.size ?? 0) > 0));
  }

  unresolvedIntents(): Promise<IntentRecord[]> {
    return this.#read('listing unresolved intents', () =>
      // Nearly always empty between a backtest's slots: asked after every one of them.
      UNRESOLVED.every((status) => (this.#byStatus.get(status)?.size ?? 0) === 0) ? [] : this.#withStatuses(UNRESOLVED).sort(
        (a, b) => a.createdAtMs - b.createdAtMs || a.slotTimeMs - b.slotTimeMs || compareText(a.instance, b.instance) || a.index - b.index,
      ),
    );
  }

  recordOrderSnapshot(order: Order, link?: OrderLink): Promise<OrderTransition | null> {
    return this.#op(() => `recording order ${order.orderId}`, () => this.#recordOrder(order, link, this.#now()));
  }

  getOrder(orderId: string): Promise<StoredOrder | null> {
    return this.#read('reading an order', () => this.#orders.get(orderId) ?? null);
  }

  openOrders(): Promise<StoredOrder[]> {
    return this.#read('listing open orders', () => (this.#openOrders.size === 0 ? [] : [...this.#openOrders].map((id) => this.#orders.get(id) as StoredOrder).sort(oldestOrderFirst)));
  }

  listOrders(query: OrderQuery = {}): Promise<StoredOrder[]> {
    return this.#read('listing orders', () => {
      const found = [...this.#orders.values()].filter(
        (order) =>
          (query.instance === undefined || (order.intentId !== null && this.#intents.get(order.intentId)?.instance === query.instance)) &&
          (query.market === undefined || order.market === query.market) &&
          (query.firstSeenFromMs === undefined || order.firstSeenAtMs >= query.firstSeenFromMs) &&
          (query.updatedFromMs === undefined || order.updatedAtMs >= query.updatedFromMs) &&
          (query.status === undefined || order.status === query.status),
      );
      return take(found.sort((a, b) => oldestOrderFirst(b, a)), query.limit ?? 50);
    });
  }

  changedOrders(query: ChangedOrdersQuery): Promise<ChangedOrder[]> {
    return this.#read('listing changed orders', () => {
      const { fromMs, after } = checkChangedOrdersQuery(query);
      const found = [...this.#orders.values()].filter(
        (order) => order.updatedAtMs >= fromMs && (after === undefined || order.updatedAtMs > after.updatedAtMs || (order.updatedAtMs === after.updatedAtMs && compareText(order.orderId, after.orderId) > 0)),
      );
      return found
        .sort((a, b) => a.updatedAtMs - b.updatedAtMs || compareText(a.orderId, b.orderId))
        .slice(0, query.limit)
        .map((order) => {
          const intent = order.intentId === null ? undefined : this.#intents.get(order.intentId);
          return { ...order, instance: intent?.instance ?? null, account: intent?.account ?? null };
        });
    });
  }

  orderTransitions(orderId: string): Promise<OrderTransition[]> {
    return this.#read('listing order transitions', () => [...(this.#transitions.get(orderId) ?? [])]);
  }

  recordFlexOperation(operation: FlexOperationInput): Promise<FlexOperationRecord> {
    return this.#op(() => `recording flex operation ${operation.intentId}`, () => {
      this.#checkOperation(operation.intentId, 'flex-withdraw', operation.status);
      operationMoney(operation.amount);
      const now = this.#now();
      const existing = this.#flex.get(operation.intentId);
      const record: FlexOperationRecord = {
        intentId: operation.intentId,
        plan: operation.plan,
        amount: operation.amount,
        transactionId: operation.transactionId ?? existing?.transactionId ?? null,
        status: operation.status,
        createdAtMs: existing?.createdAtMs ?? now,
        updatedAtMs: now,
      };
      this.#set(this.#flex, operation.intentId, record);
      return record;
    });
  }

  recordTransfer(transfer: TransferInput): Promise<TransferRecord> {
    return this.#op(() => `recording transfer ${transfer.intentId}`, () => {
      this.#checkOperation(transfer.intentId, 'transfer', transfer.status);
      operationMoney(transfer.amount);
      const now = this.#now();
      const existing = this.#transfers.get(transfer.intentId);
      const record: TransferRecord = {
        intentId: transfer.intentId,
        ticker: transfer.ticker,
        amount: transfer.amount,
        from: transfer.from,
        to: transfer.to,
        status: transfer.status,
        createdAtMs: existing?.createdAtMs ?? now,
        updatedAtMs: now,
      };
      this.#set(this.#transfers, transfer.intentId, record);
      return record;
    });
  }

  getState(instance: string): Promise<ReadonlyMap<string, string>> {
    return this.#read('reading strategy state', () => {
      const state = this.#state.get(instance);
      return state === undefined || state.size === 0 ? new Map<string, string>() : new Map([...state].sort(([a], [b]) => compareText(a, b)));
    });
  }

  setState(instance: string, changes: Readonly<Record<string, string | null>>): Promise<void> {
    return this.#op('writing strategy state', () => this.#applyState(instance, changes));
  }

  reserveBudget(request: BudgetReserveRequest): Promise<BudgetDecision> {
    return this.#op(() => `reserving budget ${request.reservationId}`, () => {
      const amount = checkReserveRequest(request);
      const starts = periodStarts(request.atMs, request.timeZone);
      const existing = this.#reservations.get(request.reservationId);
      if (existing !== undefined) {
        if (existing.instance !== request.instance || existing.asset !== request.asset) {
          throw new StoreError('conflict', `budget reservation ${request.reservationId} belongs to ${existing.instance}/${existing.asset}`);
        }
        return { ok: true, reservation: existing, repeated: true };
      }
      const spent = this.#spentAround(request, request.atMs);
      const exceeded = budgetExcesses(request, starts, amount, (period) => spent[period]);
      if (exceeded.length > 0) return { ok: false, exceeded };
      const reservation = this.#recordSpend({ ...request, amountQuote: amount, state: 'held' }, starts);
      return { ok: true, reservation, repeated: false };
    });
  }

  settleBudget(reservationId: string, actualQuote: Decimal): Promise<BudgetReservation> {
    return this.#op(() => `settling budget ${reservationId}`, () => {
      checkSpentAmount(actualQuote, 'actualQuote');
      const reservation = this.#requireReservation(reservationId);
      if (reservation.state === 'settled') {
        const more = settledAgainBy(reservation, actualQuote);
        if (more.isZero()) return reservation;
        this.#addToPeriods(reservation, reservation.periodStarts, more);
        return this.#putReservation({ ...reservation, amountQuote: actualQuote, updatedAtMs: this.#now() });
      }
      // A released reservation settles too: its order turned up after the budget was given back.
      const counted = reservation.state === 'released' ? ZERO : reservation.amountQuote;
      this.#addToPeriods(reservation, reservation.periodStarts, actualQuote.minus(counted));
      return this.#putReservation({ ...reservation, amountQuote: actualQuote, state: 'settled', updatedAtMs: this.#now() });
    });
  }

  releaseBudget(reservationId: string): Promise<boolean> {
    return this.#op(() => `releasing budget ${reservationId}`, () => {
      const reservation = this.#reservations.get(reservationId);
      if (reservation === undefined || reservation.state === 'released') return false;
      if (reservation.state === 'settled') throw new StoreError('illegal-transition', `budget reservation ${reservationId} was settled: the money was spent`);
      this.#addToPeriods(reservation, reservation.periodStarts, reservation.amountQuote.neg());
      this.#putReservation({ ...reservation, state: 'released', updatedAtMs: this.#now() });
      return true;
    });
  }

  budgetSpent(scope: BudgetScope, atMs: number): Promise<BudgetSpent> {
    return this.#read('reading budget spending', () => {
      checkScope(scope);
      return { ...this.#spentAround(scope, atMs), periodStarts: periodStarts(atMs, scope.timeZone) };
    });
  }

  heldBudgetReservations(instance?: string): Promise<BudgetReservation[]> {
    return this.#read('listing held budget reservations', () =>
      [...this.#held]
        .map((id) => this.#reservations.get(id) as BudgetReservation)
        .filter((r) => instance === undefined || r.instance === instance)
        .sort((a, b) => a.createdAtMs - b.createdAtMs || compareText(a.reservationId, b.reservationId)),
    );
  }

  budgetReservation(reservationId: string): Promise<BudgetReservation | null> {
    return this.#read(`reading budget reservation ${reservationId}`, () => this.#reservations.get(reservationId) ?? null);
  }

  recentJournal(query: IntentQuery = {}): Promise<JournalEntry[]> {
    return this.#read('reading the journal', () =>
      this.#listIntents({ limit: 50, ...query }).map((intent) => ({
        intent,
        orders: (this.#intentOrders.get(intent.intentId) ?? []).map((id) => this.#orders.get(id) as StoredOrder).sort(oldestOrderFirst),
        flexOperation: this.#flex.get(intent.intentId) ?? null,
        transfer: this.#transfers.get(intent.intentId) ?? null,
      })),
    );
  }

  adoptOrder(adoption: OrderAdoption): Promise<AdoptedOrder> {
    return this.#op(() => `adopting order ${adoption.order.orderId}`, () => {
      const { order, instance, slotTimeMs, index } = adoption;
      const { intentId, intent, result } = adoptedIntent(adoption);
      const now = this.#now();
      const journalled = this.#slots.get(slotKey(adoption))?.status ?? (this.#retired.get(instance)?.has(slotTimeMs) === true ? 'retired' : null);
      if (journalled !== null) {
        throw new StoreError('conflict', `slot ${instance}@${slotTimeMs} is journalled (${journalled}): order ${order.orderId} (${order.clientOrderId}) is not this journal's to adopt`);
      }
      this.#insertSlot({ instance, slotTimeMs, status: 'done', reason: adoption.reason, runId: null, claimedAtMs: now, finishedAtMs: now });
      const record: IntentRecord = {
        intentId,
        instance,
        slotTimeMs,
        index,
        intent: canonicalIntent(intent),
        clientOrderId: order.clientOrderId,
        status: 'done',
        attempts: 0,
        result,
        error: null,
        createdAtMs: now,
        updatedAtMs: now,
        sentAtMs: Math.round(order.createdAtSec * 1000),
        origin: 'adopted',
        account: adoption.account ?? null,
      };
      this.#addIntent(record);
      const transition = this.#recordOrder(order, { intentId }, now);
      for (const spend of adoptedSpends(adoption, intentId)) {
        checkScope(spend);
        checkSpentAmount(spend.amountQuote, 'amountQuote');
        if (this.#reservations.has(spend.reservationId)) throw new StoreError('conflict', `budget reservation ${spend.reservationId} already exists`);
        this.#recordSpend(spend, periodStarts(slotTimeMs, spend.timeZone));
      }
      const finding = this.#insertFinding(adoptedFinding(adoption));
      return { intent: record, transition, finding };
    });
  }

  recordSecondOrder(second: SecondOrder): Promise<OrderTransition | null> {
    return this.#op(() => `recording order ${second.order.orderId}, a second order of intent ${second.intentId}`, () => {
      checkSecondOrder(second, this.#intents.get(second.intentId) ?? null);
      const now = this.#now();
      const spends = adoptedSpends(second, secondOrderReservationId(second.intentId, second.order.orderId));
      for (const spend of spends) {
        checkScope(spend);
        checkSpentAmount(spend.amountQuote, 'amountQuote');
        if (this.#reservations.has(spend.reservationId)) throw new StoreError('conflict', `budget reservation ${spend.reservationId} already exists`);
      }
      const transition = this.#recordOrder(second.order, { intentId: second.intentId }, now);
      for (const spend of spends) this.#recordSpend(spend, periodStarts(second.slotTimeMs, spend.timeZone));
      if (second.finding !== null) this.#insertFinding(second.finding);
      return transition;
    });
  }

  recordFinding(finding: NewLedgerFinding): Promise<LedgerFinding> {
    return this.#op(() => `recording a ${finding.kind} finding`, () => this.#insertFinding(finding));
  }

  listFindings(query: { readonly unacknowledged?: boolean; readonly limit?: number } = {}): Promise<LedgerFinding[]> {
    return this.#read('listing findings', () =>
      take(
        this.#findings.filter((f) => query.unacknowledged !== true || f.acknowledgedAtMs === null).sort((a, b) => b.foundAtMs - a.foundAtMs || b.findingId - a.findingId),
        query.limit ?? -1,
      ),
    );
  }

  acknowledgeFindings(): Promise<number> {
    return this.#op('acknowledging findings', () => {
      const now = this.#now();
      let count = 0;
      this.#findings.forEach((finding, i) => {
        if (finding.acknowledgedAtMs !== null) return;
        this.#replaceAt(this.#findings, i, { ...finding, acknowledgedAtMs: now });
        count += 1;
      });
      return count;
    });
  }

  ledgerCheckedThrough(): Promise<number | null> {
    return this.#metaTime('reading when the exchange history was last checked', CHECKED_THROUGH_KEY);
  }

  setLedgerCheckedThrough(atMs: number): Promise<void> {
    return this.#setMetaTime('recording the exchange history check', CHECKED_THROUGH_KEY, atMs);
  }

  spendCountedThrough(): Promise<number | null> {
    return this.#metaTime('reading when the buys were last counted', SPEND_COUNTED_KEY);
  }

  setSpendCountedThrough(atMs: number): Promise<void> {
    return this.#setMetaTime('recording that the buys are counted', SPEND_COUNTED_KEY, atMs);
  }

  #metaTime(doing: string, key: string): Promise<number | null> {
    return this.#read(doing, () => {
      const value = this.#meta.get(key);
      return value === undefined ? null : Number(value);
    });
  }

  #setMetaTime(doing: string, key: string, atMs: number): Promise<void> {
    return this.#op(doing, () => {
      checkLedgerTime(atMs);
      this.#set(this.#meta, key, String(atMs));
    });
  }

  recordHeartbeat(): Promise<void> {
    return this.#op('writing the heartbeat', () => this.#set(this.#meta, ALIVE_KEY, String(this.#now())));
  }

  accountState(account?: string): Promise<string | null> {
    return this.#read('reading the kept account', () => this.#meta.get(accountStateKey(account)) ?? null);
  }

  saveAccountState(state: string, account?: string): Promise<void> {
    return this.#op('saving the kept account', () => {
      checkAccountState(state);
      this.#set(this.#meta, accountStateKey(account), state);
    });
  }

  operatorControls(): Promise<OperatorControls> {
    return this.#read('reading the operator controls', () => this.#controls());
  }

  setOperatorControl(change: OperatorControlChange): Promise<OperatorControls> {
    return this.#op(() => `turning ${change.control} ${change.on ? 'on' : 'off'}`, () => {
      checkOperatorControl(change);
      const key = `${change.control}${CONTROL_KEY_SEPARATOR}${controlTarget(change)}`;
      if (!change.on) this.#delete(this.#operatorControls, key);
      else if (!this.#operatorControls.has(key)) this.#set(this.#operatorControls, key, this.#now());
      return this.#controls();
    });
  }

  /** The kept controls as the SQL tables' rows, in their order (control, target), read by the same rule. */
  #controls(): OperatorControls {
    const rows = [...this.#operatorControls].sort(([a], [b]) => compareText(a, b)).map(([key, sinceMs]) => {
      const [control, target] = key.split(CONTROL_KEY_SEPARATOR) as [string, string];
      return { control, target, since_ms: sinceMs };
    });
    return controlsFromRows(rows);
  }

  /** Memory cannot be deleted or replaced under the process. */
  async assertIntact(): Promise<void> {}

  writeFailure(): JournalWriteFailure | null {
    return null;
  }

  /**
   * Forget the slots that are over, for a backtest over years whose cost per slot must not grow
   * with its history: a slot is over when it is finished, every intent of it is settled (done,
   * refused or failed), every order of it is terminal and no budget of it is held. What it
   * journalled is returned (in recentJournal's shape, newest first) for the caller to keep what
   * it needs; the journal keeps only the slot's key, so the slot is never claimed again, and the
   * budget totals it counted. The latest slot of each instance is kept (lastSlot reads it), and
   * nothing unresolved is ever forgotten: reconciliation and the tracker see what they always see.
   * Only the backtest calls this; a journal read by `stacker journal` keeps everything.
   */
  retireSettled(): Promise<JournalEntry[]> {
    return this.#op('retiring settled slots', () => {
      const retired: JournalEntry[] = [];
      const keep: string[] = [];
      for (const key of this.#finished) {
        const entries = this.#settledEntries(key);
        if (entries === null) keep.push(key);
        else {
          this.#forgetSlot(key, entries);
          retired.push(...entries);
        }
      }
      this.#finished.length = 0;
      this.#finished.push(...keep);
      return retired.sort((a, b) => b.intent.slotTimeMs - a.intent.slotTimeMs || compareText(a.intent.instance, b.intent.instance) || a.intent.index - b.intent.index);
    });
  }

  /** The slot's entries when it is over (see retireSettled), else null. */
  #settledEntries(key: string): JournalEntry[] | null {
    const slot = this.#slots.get(key);
    if (slot === undefined || slot.status === 'claimed') return null;
    const times = this.#slotTimes.get(slot.instance);
    if (times !== undefined && times[times.length - 1] === slot.slotTimeMs) return null;
    const entries: JournalEntry[] = [];
    for (const id of this.#slotIntents.get(key) ?? []) {
      const intent = this.#intents.get(id) as IntentRecord;
      if (UNRESOLVED.includes(intent.status) || this.#held.has(id)) return null;
      const orders = (this.#intentOrders.get(id) ?? []).map((orderId) => this.#orders.get(orderId) as StoredOrder);
      if (orders.some((order) => !isTerminalStatus(order.status))) return null;
      entries.push({ intent, orders: orders.sort(oldestOrderFirst), flexOperation: this.#flex.get(id) ?? null, transfer: this.#transfers.get(id) ?? null });
    }
    return entries;
  }

  /** Not undone on failure: retiring runs alone in its operation and cannot fail half-way. */
  #forgetSlot(key: string, entries: readonly JournalEntry[]): void {
    const slot = this.#slots.get(key) as SlotRecord;
    this.#slots.delete(key);
    let retired = this.#retired.get(slot.instance);
    if (retired === undefined) {
      retired = new SlotTimes();
      this.#retired.set(slot.instance, retired);
    }
    retired.add(slot.slotTimeMs);
    const times = this.#slotTimes.get(slot.instance);
    if (times !== undefined) times.splice(times.indexOf(slot.slotTimeMs), 1);
    this.#slotIntents.delete(key);
    for (const { intent, orders } of entries) {
      this.#intents.delete(intent.intentId);
      this.#statusSet(intent.status).delete(intent.intentId);
      if (intent.clientOrderId !== null) this.#byClientOrderId.delete(intent.clientOrderId);
      this.#intentOrders.delete(intent.intentId);
      this.#flex.delete(intent.intentId);
      this.#transfers.delete(intent.intentId);
      const reservation = this.#reservations.get(intent.intentId);
      if (reservation !== undefined) this.#retiredScopes.add(scopeKey(reservation));
      this.#reservations.delete(intent.intentId);
      for (const order of orders) {
        this.#orders.delete(order.orderId);
        this.#transitions.delete(order.orderId);
      }
    }
  }

  #journalled(key: SlotKey): boolean {
    return this.#retired.get(key.instance)?.has(key.slotTimeMs) === true || this.#slots.has(slotKey(key));
  }

  // One operation: all of its changes, or none.

  /** A read: nothing to undo, so no undo log (a backtest reads several times a slot). */
  async #read<T>(doing: string, work: () => T): Promise<T> {
    if (!this.#open) throw new StoreError('closed', `${doing}: the journal in memory is not open`);
    return work();
  }

  /**
   * `doing` says what the operation was, for the error when the journal is closed (a function
   * when it costs something to say). Each change is logged as a step that takes it back, and a
   * failing operation takes back its steps in reverse: all of its changes or none. The log is
   * one array reused by every operation (a backtest makes dozens a slot), emptied after each so
   * that it keeps nothing alive.
   */
  async #op<T>(doing: string | (() => string), work: () => T): Promise<T> {
    if (!this.#open) throw new StoreError('closed', `${typeof doing === 'string' ? doing : doing()}: the journal in memory is not open`);
    const log = this.#undoLog;
    this.#undoLength = 0;
    this.#recording = true;
    try {
      return work();
    } catch (error) {
      for (let i = this.#undoLength - 4; i >= 0; i -= 4) undoStep(log[i] as UndoKind, log[i + 1], log[i + 2], log[i + 3]);
      throw error;
    } finally {
      this.#recording = false;
      log.fill(undefined, 0, this.#undoLength);
      this.#undoLength = 0;
    }
  }

  #log(kind: UndoKind, where: unknown, key: unknown, old: unknown): void {
    if (!this.#recording) return;
    const log = this.#undoLog;
    const at = this.#undoLength;
    log[at] = kind;
    log[at + 1] = where;
    log[at + 2] = key;
    log[at + 3] = old;
    this.#undoLength = at + 4;
  }

  #set<K, V>(map: Map<K, V>, key: K, value: V): void {
    const had = map.has(key);
    const old = had ? map.get(key) : undefined;
    map.set(key, value);
    this.#log(had ? UNDO.restore : UNDO.remove, map, key, old);
  }

  #delete<K>(collection: Map<K, unknown> | Set<K>, key: K): void {
    if (!collection.has(key)) return;
    if (collection instanceof Set) {
      collection.delete(key);
      this.#log(UNDO.addBack, collection, key, undefined);
      return;
    }
    const old = collection.get(key);
    collection.delete(key);
    this.#log(UNDO.restore, collection, key, old);
  }

  #add<K>(set: Set<K>, key: K): void {
    if (set.has(key)) return;
    set.add(key);
    this.#log(UNDO.remove, set, key, undefined);
  }

  #push<T>(array: T[], item: T): void {
    array.push(item);
    this.#log(UNDO.unpush, array, item, undefined);
  }

  /** Insert into an array kept in order, after any equal element. */
  #insertSorted<T>(array: T[], item: T, before: (a: T, b: T) => boolean): void {
    let at = array.length;
    while (at > 0 && before(item, array[at - 1] as T)) at -= 1;
    array.splice(at, 0, item);
    this.#log(UNDO.uninsert, array, item, undefined);
  }

  #replaceAt<T>(array: T[], index: number, item: T): void {
    const old = array[index] as T;
    array[index] = item;
    this.#log(UNDO.replace, array, index, old);
  }

  // Slots and intents.

  #checkMode(mode: RunMode): void {
    const recorded = this.#meta.get(MODE_KEY);
    if (recorded === undefined) this.#set(this.#meta, MODE_KEY, mode);
    else if (recorded !== mode) throw new StoreError('mode-mismatch', `this is the ${recorded} journal; a ${mode} run must use its own`);
  }

  #checkRun(runId: string | null): void {
    if (runId !== null && !this.#runs.has(runId)) throw new StoreError('conflict', `no run ${runId}: a slot belongs to a run of this journal`);
  }

  #insertSlot(slot: SlotRecord): void {
    const key = slotKey(slot);
    this.#set(this.#slots, key, slot);
    if (slot.status === 'claimed') this.#add(this.#claimed, key);
    let times = this.#slotTimes.get(slot.instance);
    if (times === undefined) {
      times = [];
      this.#set(this.#slotTimes, slot.instance, times);
    }
    this.#insertSorted(times, slot.slotTimeMs, (a, b) => a < b);
  }

  #insertIntents(slot: SlotKey, entries: readonly NewIntent[], now: number): IntentRecord[] {
    const current = this.#slots.get(slotKey(slot));
    if (current === undefined) throw new StoreError('not-found', `slot ${slot.instance}@${slot.slotTimeMs} was never claimed`);
    if (current.status !== 'claimed') throw new StoreError('illegal-transition', `slot ${slot.instance}@${slot.slotTimeMs} is ${current.status}: intents go only into a claimed slot`);
    return entries.map((entry) => {
      const { intentId, clientOrderId, status, error, account } = newIntentFields(slot, entry);
      const intent = canonicalIntent(entry.intent);
      if (intent.kind === 'set-state') this.#applyState(slot.instance, { [intent.key]: intent.value });
      const record: IntentRecord = {
        intentId,
        instance: slot.instance,
        slotTimeMs: slot.slotTimeMs,
        index: entry.index,
        intent,
        clientOrderId,
        status,
        attempts: 0,
        result: null,
        error,
        createdAtMs: now,
        updatedAtMs: now,
        sentAtMs: null,
        origin: 'engine',
        account,
      };
      this.#addIntent(record);
      return record;
    });
  }

  #addIntent(record: IntentRecord): void {
    if (this.#intents.has(record.intentId)) throw new StoreError('conflict', `intent ${record.intentId} is already journalled`);
    if (record.clientOrderId !== null && this.#byClientOrderId.has(record.clientOrderId)) {
      throw new StoreError('conflict', `clientOrderId ${record.clientOrderId} is already journalled`);
    }
    this.#putIntent(record, undefined);
    const key = slotKey(record);
    let ids = this.#slotIntents.get(key);
    if (ids === undefined) {
      ids = [];
      this.#set(this.#slotIntents, key, ids);
    }
    const byIndex = (id: string): number => (this.#intents.get(id) as IntentRecord).index;
    this.#insertSorted(ids, record.intentId, (a, b) => byIndex(a) < byIndex(b));
    if (record.clientOrderId !== null) this.#set(this.#byClientOrderId, record.clientOrderId, record.intentId);
  }

  #putIntent(next: IntentRecord, previous: IntentRecord | undefined): void {
    this.#set(this.#intents, next.intentId, next);
    if (previous !== undefined && previous.status === next.status) return;
    if (previous !== undefined) this.#delete(this.#statusSet(previous.status), previous.intentId);
    this.#add(this.#statusSet(next.status), next.intentId);
  }

  #statusSet(status: IntentStatus): Set<string> {
    let set = this.#byStatus.get(status);
    if (set === undefined) {
      set = new Set();
      this.#byStatus.set(status, set);
    }
    return set;
  }

  #requireIntent(intentId: string): IntentRecord {
    const found = this.#intents.get(intentId);
    if (found === undefined) throw new StoreError('not-found', `no intent ${intentId}`);
    return found;
  }

  #withStatuses(statuses: readonly IntentStatus[]): IntentRecord[] {
    return [...new Set(statuses)].flatMap((status) => [...this.#statusSet(status)].map((id) => this.#intents.get(id) as IntentRecord));
  }

  #listIntents(query: IntentQuery): IntentRecord[] {
    let candidates: IntentRecord[];
    if (query.instance !== undefined && query.slotTimeMs !== undefined) {
      candidates = (this.#slotIntents.get(slotKey({ instance: query.instance, slotTimeMs: query.slotTimeMs })) ?? []).map((id) => this.#intents.get(id) as IntentRecord);
    } else if (query.statuses !== undefined) candidates = this.#withStatuses(query.statuses);
    else candidates = [...this.#intents.values()];
    const found = candidates.filter(
      (intent) =>
        (query.instance === undefined || intent.instance === query.instance) &&
        (query.slotTimeMs === undefined || intent.slotTimeMs === query.slotTimeMs) &&
        (query.statuses === undefined || query.statuses.includes(intent.status)),
    );
    return take(found.sort((a, b) => b.slotTimeMs - a.slotTimeMs || compareText(a.instance, b.instance) || a.index - b.index), query.limit ?? -1);
  }

  #applyState(instance: string, changes: Readonly<Record<string, string | null>>): void {
    let state = this.#state.get(instance);
    if (state === undefined) {
      state = new Map();
      this.#set(this.#state, instance, state);
    }
    for (const [key, value] of Object.entries(changes)) {
      checkStateChange(key, value);
      if (value === null) this.#delete(state, key);
      else this.#set(state, key, value);
    }
  }

  #checkOperation(intentId: string, kind: 'flex-withdraw' | 'transfer', status: string): void {
    const intent = this.#requireIntent(intentId);
    if (intent.intent.kind !== kind) throw new StoreError('invalid-argument', `intent ${intentId} is a ${intent.intent.kind}, not a ${kind}`);
    checkOperationStatus(status);
  }

  // Orders.

  #recordOrder(order: Order, link: OrderLink | undefined, now: number): OrderTransition | null {
    checkOrder(order);
    const stored = this.#orders.get(order.orderId);
    if (stored === undefined) {
      const intentId = this.#resolveIntent(order, link);
      this.#putOrder(storedOrder(order, intentId, now, now));
      if (intentId !== null) {
        let ids = this.#intentOrders.get(intentId);
        if (ids === undefined) {
          ids = [];
          this.#set(this.#intentOrders, intentId, ids);
        }
        this.#insertSorted(ids, order.orderId, () => false);
      }
      return this.#insertTransition(order, null, 1, now);
    }
    checkSameOrder(order, stored);
    if (leavesOrderAsIs(order, stored)) return null;
    const moved = snapshotMoved(order, stored);
    const intentId = stored.intentId ?? this.#resolveIntent(order, link);
    const next = storedOrder(order, intentId, stored.firstSeenAtMs, now);
    if (!moved && intentId === stored.intentId && sameSnapshot(stored, next)) return null;
    if (intentId !== stored.intentId && intentId !== null) {
      let ids = this.#intentOrders.get(intentId);
      if (ids === undefined) {
        ids = [];
        this.#set(this.#intentOrders, intentId, ids);
      }
      this.#insertSorted(ids, order.orderId, () => false);
    }
    this.#putOrder(next);
    if (!moved) return null;
    const seq = (this.#transitions.get(order.orderId)?.length ?? 0) + 1;
    return this.#insertTransition(order, stored.status, seq, now);
  }

  #putOrder(order: StoredOrder): void {
    this.#set(this.#orders, order.orderId, order);
    if (isTerminalStatus(order.status)) this.#delete(this.#openOrders, order.orderId);
    else this.#add(this.#openOrders, order.orderId);
  }

  #resolveIntent(order: Order, link: OrderLink | undefined): string | null {
    if (link?.intentId === null) return null;
    if (link?.intentId !== undefined) {
      if (!this.#intents.has(link.intentId)) throw new StoreError('not-found', `order ${order.orderId}: no intent ${link.intentId}`);
      return link.intentId;
    }
    if (order.clientOrderId === '') return null;
    return this.#byClientOrderId.get(order.clientOrderId) ?? null;
  }

  /** A transition already logged with the same status, fills and activation is not logged twice. */
  #insertTransition(order: Order, from: StoredOrder['status'] | null, seq: number, now: number): OrderTransition | null {
    const transition = transitionOf(order, from, seq, now);
    let list = this.#transitions.get(order.orderId);
    if (list === undefined) {
      list = [];
      this.#set(this.#transitions, order.orderId, list);
    }
    const repeated = list.some(
      (t) =>
        t.toStatus === transition.toStatus &&
        t.filledBase.eq(transition.filledBase) &&
        t.filledQuote.eq(transition.filledQuote) &&
        t.fee.eq(transition.fee) &&
        t.stopActivated === transition.stopActivated,
    );
    if (repeated) return null;
    this.#insertSorted(list, transition, () => false);
    return transition;
  }

  // Budgets.

  /**
   * What was spent in the day, week and month around `atMs` in the scope's zone: the counters
   * while every reservation of the scope was made under that zone; after a zone change, summed
   * from the reservations, each counted where its instant falls (as the SQL journals do).
   */
  #spentAround(scope: BudgetScope, atMs: number): Record<BudgetPeriod, Decimal> {
    const key = scopeKey(scope);
    const zones = this.#zones.get(key);
    if (zones === undefined || (zones.size === 1 && zones.has(scope.timeZone))) {
      const starts = periodStarts(atMs, scope.timeZone);
      return { day: this.#readSpent(scope, 'day', starts.day), week: this.#readSpent(scope, 'week', starts.week), month: this.#readSpent(scope, 'month', starts.month) };
    }
    if (this.#retiredScopes.has(key)) {
      throw new StoreError('invalid-argument', `budget ${scope.instance}/${scope.asset}: its time zone changed to ${scope.timeZone} after settled slots were retired, so its spending cannot be recounted (a backtest keeps one zone per instance)`);
    }
    const reservations = [...this.#reservations.values()].filter((r) => r.instance === scope.instance && r.asset === scope.asset);
    return spentFromReservations(reservations, periodWindows(atMs, scope.timeZone));
  }

  #readSpent(scope: BudgetScope, period: string, startMs: number): Decimal {
    return this.#spent.get(budgetKey(scope, period, startMs)) ?? ZERO;
  }

  /** Add a (possibly negative) amount to the three periods; a counter below zero means a broken journal. */
  #addToPeriods(scope: BudgetScope, starts: PeriodStarts, delta: Decimal): void {
    for (const period of BUDGET_PERIODS) {
      const next = this.#readSpent(scope, period, starts[period]).plus(delta);
      if (next.isNegative()) throw new StoreError('corrupt', `budget ${scope.instance}/${scope.asset} per ${period} from ${starts[period]} would go below zero`);
      this.#set(this.#spent, budgetKey(scope, period, starts[period]), next);
    }
  }

  #recordSpend(
    spend: BudgetScope & { readonly reservationId: string; readonly atMs: number; readonly amountQuote: Decimal; readonly state: 'held' | 'settled' },
    starts: PeriodStarts,
  ): BudgetReservation {
    this.#addToPeriods(spend, starts, spend.amountQuote);
    const key = scopeKey(spend);
    let zones = this.#zones.get(key);
    if (zones === undefined) {
      zones = new Set();
      this.#set(this.#zones, key, zones);
    }
    this.#add(zones, spend.timeZone);
    const now = this.#now();
    return this.#putReservation({
      reservationId: spend.reservationId,
      instance: spend.instance,
      asset: spend.asset,
      timeZone: spend.timeZone,
      atMs: spend.atMs,
      amountQuote: spend.amountQuote,
      periodStarts: starts,
      state: spend.state,
      createdAtMs: now,
      updatedAtMs: now,
    });
  }

  #putReservation(reservation: BudgetReservation): BudgetReservation {
    this.#set(this.#reservations, reservation.reservationId, reservation);
    if (reservation.state === 'held') this.#add(this.#held, reservation.reservationId);
    else this.#delete(this.#held, reservation.reservationId);
    return reservation;
  }

  #requireReservation(reservationId: string): BudgetReservation {
    const found = this.#reservations.get(reservationId);
    if (found === undefined) throw new StoreError('not-found', `no budget reservation ${reservationId}`);
    return found;
  }

  #insertFinding(finding: NewLedgerFinding): LedgerFinding {
    checkFinding(finding);
    const now = this.#now();
    const record: LedgerFinding = {
      findingId: this.#findings.length + 1,
      kind: finding.kind,
      instance: finding.instance,
      clientOrderId: finding.clientOrderId,
      orderId: finding.orderId,
      market: finding.market,
      detail: finding.detail,
      foundAtMs: now,
      acknowledgedAtMs: finding.acknowledged === true ? now : null,
    };
    this.#insertSorted(this.#findings, record, () => false);
    return record;
  }
}

/**
 * A slot's map key. One slot is journalled at a time, and each of its operations asks for its
 * key again: the last key is kept, so a slot's time is turned into text (and its key hashed) once.
 */
let lastKey = { instance: '', slotTimeMs: Number.NaN, key: '' };
/** What a step of the undo log does to take its change back. */
const UNDO = { restore: 0, remove: 1, addBack: 2, unpush: 3, uninsert: 4, replace: 5 } as const;
type UndoKind = (typeof UNDO)[keyof typeof UNDO];

function undoStep(kind: UndoKind, where: unknown, key: unknown, old: unknown): void {
  switch (kind) {
    case UNDO.restore:
      (where as Map<unknown, unknown>).set(key, old);
      return;
    case UNDO.remove:
      (where as Map<unknown, unknown> | Set<unknown>).delete(key);
      return;
    case UNDO.addBack:
      (where as Set<unknown>).add(key);
      return;
    case UNDO.unpush: {
      const array = where as unknown[];
      array.splice(array.lastIndexOf(key), 1);
      return;
    }
    case UNDO.uninsert: {
      const array = where as unknown[];
      array.splice(array.indexOf(key), 1);
      return;
    }
    case UNDO.replace:
      (where as unknown[])[key as number] = old;
      return;
  }
}

/**
 * The times of an instance's retired slots: a sorted array of numbers, which a backtest fills in
 * time order (one push) and asks about its newest slot (one comparison with the last). Half the
 * memory of a set of numbers, and no hashing of each lookup.
 */
class SlotTimes {
  readonly #times: number[] = [];

  add(timeMs: number): void {
    const times = this.#times;
    if (times.length === 0 || timeMs > (times[times.length - 1] as number)) {
      times.push(timeMs);
      return;
    }
    const at = firstAtLeast(times, timeMs);
    if (times[at] !== timeMs) times.splice(at, 0, timeMs);
  }

  has(timeMs: number): boolean {
    const times = this.#times;
    if (times.length === 0 || timeMs > (times[times.length - 1] as number)) return false;
    return times[firstAtLeast(times, timeMs)] === timeMs;
  }
}

function slotKey(key: SlotKey): string {
  if (key.slotTimeMs !== lastKey.slotTimeMs || key.instance !== lastKey.instance) {
    lastKey = { instance: key.instance, slotTimeMs: key.slotTimeMs, key: `${key.instance}\u0000${key.slotTimeMs}` };
  }
  return lastKey.key;
}

function scopeKey(scope: BudgetScope): string {
  return `${scope.instance}\u0000${scope.asset}`;
}

function budgetKey(scope: BudgetScope, period: string, startMs: number): string {
  return `${scope.instance}\u0000${scope.asset}\u0000${period}\u0000${startMs}`;
}

/** SQL's LIMIT: a negative limit means all. */
function take<T>(items: T[], limit: number): T[] {
  return limit < 0 ? items : items.slice(0, limit);
}


/** What the journal keeps of an order: the exchange's fields it stores, and when it saw them. */
function storedOrder(order: Order, intentId: string | null, firstSeenAtMs: number, updatedAtMs: number): StoredOrder {
  return {
    orderId: order.orderId,
    clientOrderId: order.clientOrderId,
    intentId,
    market: order.market,
    side: order.side,
    type: order.type,
    createdAtSec: order.createdAtSec,
    amount: order.amount,
    left: order.left,
    filledBase: order.filledBase,
    filledQuote: order.filledQuote,
    fee: order.fee,
    feeAsset: order.feeAsset,
    price: order.price,
    status: order.status,
    statusDerived: order.statusDerived,
    stp: order.stp,
    stopActivated: order.stopActivated,
    firstSeenAtMs,
    updatedAtMs,
  };
}

const SNAPSHOT_FIELDS = ['clientOrderId', 'market', 'side', 'type', 'feeAsset', 'status', 'statusDerived', 'stp', 'stopActivated', 'createdAtSec'] as const;
const SNAPSHOT_MONEY = ['amount', 'left', 'filledBase', 'filledQuote', 'fee'] as const;

function sameSnapshot(a: StoredOrder, b: StoredOrder): boolean {
  return (
    SNAPSHOT_FIELDS.every((field) => a[field] === b[field]) &&
    SNAPSHOT_MONEY.every((field) => a[field].eq(b[field])) &&
    (a.price === null ? b.price === null : b.price !== null && a.price.eq(b.price))
  );
}
