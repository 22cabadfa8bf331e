import { deriveClientOrderId } from '../domain/client-order-id.ts';
import type { BuyStockMarketIntent, Intent } from '../domain/intent.ts';
import { isMoneyIntent } from '../domain/intent.ts';
import { type Decimal, ZERO, formatDecimal, isAboveZero, isDecimal } from '../domain/money.ts';
import { ORDER_STATUSES, type Order, type OrderStatus, isTerminalStatus } from '../domain/order.ts';
import type { PeriodWindows } from './budget-periods.ts';
import { StoreError } from './errors.ts';
import { checkTextMap } from './intent-codec.ts';
import {
  BUDGET_PERIODS,
  INTENT_TRANSITIONS,
  type BudgetExcess,
  type BudgetPeriod,
  type BudgetReservation,
  type OrderTransition,
  type PeriodStarts,
  type BudgetReserveRequest,
  type BudgetScope,
  type ChangedOrdersQuery,
  type IntentError,
  type IntentRecord,
  type IntentResult,
  type IntentStatus,
  type IntentUpdate,
  type NewIntent,
  type NewLedgerFinding,
  OPERATION_STATUSES,
  type OperatorControlChange,
  type OrderAdoption,
  type SecondOrder,
  type SlotKey,
  type SlotSkip,
  type SlotFinish,
  type StoredOrder,
  accountReservationId,
} from './journal.ts';

/**
 * The journal's rules that do not depend on where it is kept: what may be journalled, which
 * status changes are allowed, when an order snapshot is news. SqliteJournal and MemoryJournal
 * both apply exactly these, so the two differ only in storage.
 */

export function checkSlotKey(key: SlotKey): void {
  if (typeof key.instance !== 'string' || key.instance === '') throw new StoreError('invalid-argument', 'a slot needs an instance name');
  if (!Number.isSafeInteger(key.slotTimeMs) || key.slotTimeMs < 0) {
    throw new StoreError('invalid-argument', `slotTimeMs must be a non-negative integer of milliseconds (got ${key.slotTimeMs})`);
  }
}

export function checkScheduled(instance: string, sinceMs: number): void {
  if (typeof instance !== 'string' || instance === '') throw new StoreError('invalid-argument', 'an instance needs a name');
  if (!Number.isSafeInteger(sinceMs) || sinceMs < 0) throw new StoreError('invalid-argument', `a scheduled-since time must be non-negative integer milliseconds (got ${sinceMs})`);
}

export function checkSkipStatus(skip: SlotSkip): void {
  if (skip.status !== 'skipped' && skip.status !== 'missed') throw new StoreError('invalid-argument', `a slot is skipped or missed, not ${String(skip.status)}`);
}

export function checkFinishStatus(finish: SlotFinish): void {
  if (!['done', 'failed', 'skipped'].includes(finish.status)) throw new StoreError('invalid-argument', `a slot finishes done, failed or skipped, not ${String(finish.status)}`);
}

export function checkError(error: IntentError): IntentError {
  if (typeof error.code !== 'string' || error.code === '' || typeof error.message !== 'string') {
    throw new StoreError('invalid-argument', 'an intent error needs a non-empty code and a message');
  }
  return error;
}

/** The id (and for a buy, the clientOrderId) an intent of (instance, slot, index) gets: stable across restarts. */
export function deriveIntentKey(slot: SlotKey, index: number, prefix: string | undefined): string {
  try {
    return deriveClientOrderId(slot.instance, slot.slotTimeMs, index, prefix);
  } catch (error) {
    throw new StoreError('invalid-argument', `intent ${index} of ${slot.instance}@${slot.slotTimeMs}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** How a new intent enters the journal: its ids, first status and error. */
export function newIntentFields(slot: SlotKey, entry: NewIntent): { intentId: string; clientOrderId: string | null; status: IntentStatus; error: IntentError | null; account: string | null } {
  const { intent } = entry;
  const intentId = deriveIntentKey(slot, entry.index, undefined);
  const clientOrderId = intent.kind === 'buy-stock-market' ? deriveIntentKey(slot, entry.index, intent.tag ?? entry.clientOrderIdPrefix) : null;
  if (entry.refusal !== undefined) checkError(entry.refusal);
  if (entry.account === '') throw new StoreError('invalid-argument', 'an intent\'s account must be a name, not empty');
  return { intentId, clientOrderId, ...initialStatus(intent, entry.refusal), account: entry.account ?? null };
}

function initialStatus(intent: Intent, refusal: IntentError | undefined): { status: IntentStatus; error: IntentError | null } {
  if (isMoneyIntent(intent)) return refusal === undefined ? { status: 'pending', error: null } : { status: 'refused', error: refusal };
  if (intent.kind === 'refusal') return { status: 'refused', error: { code: intent.reason, message: intent.message } };
  return { status: 'done', error: null };
}

/** What an update makes of an intent's status, error and result; refuses a change INTENT_TRANSITIONS forbids. */
export function applyIntentUpdate(
  current: IntentRecord,
  update: IntentUpdate,
): { status: IntentStatus; error: IntentError | null; result: IntentResult | null; sent: boolean } {
  if (!INTENT_TRANSITIONS[current.status].includes(update.status)) {
    throw new StoreError('illegal-transition', `intent ${current.intentId} is ${current.status}; it cannot become ${update.status}`);
  }
  const error = 'error' in update ? checkError(update.error) : update.status === 'done' ? null : current.error;
  const result = 'result' in update && update.result !== undefined ? textMap(update.result, 'result') : current.result;
  return { status: update.status, error, result, sent: update.status === 'sent' };
}

/** A copy of a text map after checking every value is text (results, finding details). */
export function textMap(map: Readonly<Record<string, string>>, field: string): Readonly<Record<string, string>> {
  checkTextMap(map, field);
  return { ...map };
}

export function checkOperationStatus(status: string): void {
  if (!(OPERATION_STATUSES as readonly string[]).includes(status)) throw new StoreError('invalid-argument', `unknown operation status ${JSON.stringify(status)}`);
}

/** An amount a flex operation or transfer records. */
export function operationMoney(value: Decimal): string {
  if (!isDecimal(value) || !value.isFinite()) throw new StoreError('invalid-argument', 'amount must be a finite Decimal');
  return formatDecimal(value);
}

export function checkStateChange(key: string, value: unknown): void {
  if (key === '') throw new StoreError('invalid-argument', 'a state key must be non-empty');
  if (value !== null && typeof value !== 'string') throw new StoreError('invalid-argument', `state ${key} must be text or null`);
}

/**
 * Where a kept (paper) account's state lives in journal_meta: the default account keeps the key
 * it had before accounts, so a dry-run journal of an earlier stacker continues; a named account
 * has its own key, so the balances of two accounts never mix.
 */
export function accountStateKey(account: string | undefined): string {
  if (account === '') throw new StoreError('invalid-argument', 'an account name must not be empty');
  return account === undefined || account === 'default' ? 'account_state' : `account_state:${account}`;
}

export function checkAccountState(state: string): void {
  try {
    JSON.parse(state);
  } catch {
    throw new StoreError('invalid-argument', 'a kept account state must be JSON text');
  }
}

export function checkLedgerTime(atMs: number): void {
  if (!Number.isSafeInteger(atMs) || atMs < 0) throw new StoreError('invalid-argument', `a ledger time must be non-negative integer milliseconds (got ${atMs})`);
}

export function checkFinding(finding: NewLedgerFinding): void {
  if (finding.clientOrderId === '' || finding.detail === '') throw new StoreError('invalid-argument', 'a finding needs a clientOrderId and a detail');
}

/** The journal's intent for an order adopted from the exchange's history: the id the engine would have given it. */
export function adoptedIntent(adoption: OrderAdoption): { intentId: string; intent: BuyStockMarketIntent; result: IntentResult } {
  const { order } = adoption;
  if (order.clientOrderId === '') throw new StoreError('invalid-argument', `order ${order.orderId} has no clientOrderId: nothing ties it to an instance`);
  const intentId = deriveIntentKey(adoption, adoption.index, undefined);
  // A market-by-quote order's amount is quote: its base is what it filled.
  const base = order.type === 'stock market' || order.filledBase.isZero() ? order.amount : order.filledBase;
  return {
    intentId,
    // The order history carries no STP mode (it reads as `no`): only a mode an answer did carry is journalled as the order's.
    intent: { kind: 'buy-stock-market', market: order.market, amount: base, ...(order.stp === 'no' ? {} : { stp: order.stp }) },
    result: textMap({ orderId: order.orderId, status: order.status, adopted: adoption.reason }, 'result'),
  };
}

/** The finding an adopted order records. */
export function adoptedFinding(adoption: OrderAdoption): NewLedgerFinding {
  const { order } = adoption;
  return {
    kind: 'adopted',
    instance: adoption.instance,
    clientOrderId: order.clientOrderId,
    orderId: order.orderId,
    market: order.market,
    detail: adoption.reason,
    ...(adoption.acknowledged === undefined ? {} : { acknowledged: adoption.acknowledged }),
  };
}

/** What an adopted order counts against the budgets: settled at what it spent, or held while it still fills (the tracker settles it). */
type AdoptedSpend = BudgetScope & { reservationId: string; atMs: number; amountQuote: Decimal; state: 'held' | 'settled' };

/**
 * What an adopted order spent, as the budget records its adoption writes: the instance's (under
 * the intent's id), and its account cap's when it has one and the order spent anything.
 */
export function adoptedSpends(adoption: Pick<OrderAdoption, 'instance' | 'slotTimeMs' | 'order' | 'asset' | 'timeZone' | 'accountCap'>, intentId: string): AdoptedSpend[] {
  const { order } = adoption;
  const common = { atMs: adoption.slotTimeMs, amountQuote: order.filledQuote, state: isTerminalStatus(order.status) ? 'settled' : 'held' } as const;
  const spends: AdoptedSpend[] = [{ reservationId: intentId, instance: adoption.instance, asset: adoption.asset, timeZone: adoption.timeZone, ...common }];
  const cap = adoption.accountCap;
  if (cap !== undefined && isAboveZero(order.filledQuote)) spends.push({ reservationId: accountReservationId(intentId), instance: cap.scope, asset: cap.asset, timeZone: cap.timeZone, ...common });
  return spends;
}

/** Checks a second order before it is journalled: the intent must be there and carry the order's id. */
export function checkSecondOrder(second: SecondOrder, intent: { readonly clientOrderId: string | null } | null): void {
  if (intent === null) throw new StoreError('not-found', `intent ${second.intentId} is not journalled: order ${second.order.orderId} cannot be its second order`);
  if (intent.clientOrderId === null || intent.clientOrderId.toLowerCase() !== second.order.clientOrderId.toLowerCase()) {
    throw new StoreError('conflict', `order ${second.order.orderId} carries ${second.order.clientOrderId}, not the id of intent ${second.intentId}`);
  }
}

// Orders.

/** The transition a snapshot logs: from `from` (null for the first status seen) to the snapshot's status and fills. */
export function transitionOf(order: Order, from: OrderStatus | null, seq: number, nowMs: number): OrderTransition {
  return {
    orderId: order.orderId,
    seq,
    fromStatus: from,
    toStatus: order.status,
    filledBase: order.filledBase,
    filledQuote: order.filledQuote,
    fee: order.fee,
    atMs: nowMs,
    stopActivated: order.stopActivated === 1,
  };
}

/** Checks what the journal stores of an order. */
export function checkOrder(order: Order): void {
  if (typeof order.orderId !== 'string' || order.orderId === '') throw invalidOrder(order, 'orderId must be non-empty text');
  if (!(ORDER_STATUSES as readonly string[]).includes(order.status)) throw invalidOrder(order, `unknown status ${JSON.stringify(order.status)}`);
  if (!Number.isFinite(order.createdAtSec)) throw invalidOrder(order, 'createdAtSec must be a finite number');
  for (const field of ['amount', 'left', 'filledBase', 'filledQuote', 'fee'] as const) checkOrderMoney(order, order[field], field);
  if (order.price !== null) checkOrderMoney(order, order.price, 'price');
}

function checkOrderMoney(order: Order, value: Decimal, field: string): void {
  if (!isDecimal(value) || !value.isFinite()) throw invalidOrder(order, `${field} must be a finite Decimal`);
}

/** A money field of an order as the journal writes it (checked, then formatted). */
export function orderMoney(order: Order, value: Decimal, field: string): string {
  checkOrderMoney(order, value, field);
  return formatDecimal(value);
}

function invalidOrder(order: Order, what: string): StoreError {
  return new StoreError('invalid-argument', `order ${String(order.orderId)}: ${what}`);
}

/** NEW, then PARTIAL_FILLED, then any terminal status: an order never goes back. */
function statusRank(status: OrderStatus): number {
  if (status === 'NEW') return 0;
  if (status === 'PARTIAL_FILLED') return 1;
  return 2;
}

/**
 * The journal keys an order by the exchange's order id. A snapshot under a stored id but with
 * another clientOrderId or market is another order (two paper accounts counting ids alike, two
 * exchanges whose ids meet): taken for the stored one, it would be dropped without a word, and
 * its fill never counted. Refused instead, naming both.
 */
export function checkSameOrder(order: Order, stored: StoredOrder): void {
  const otherClientId = order.clientOrderId !== '' && stored.clientOrderId !== '' && order.clientOrderId !== stored.clientOrderId;
  if (!otherClientId && order.market === stored.market) return;
  throw new StoreError(
    'order-id-clash',
    `order id ${order.orderId} is journalled for ${stored.market} ${JSON.stringify(stored.clientOrderId)}, and an order of ${order.market} ${JSON.stringify(order.clientOrderId)} came with the same id: ` +
      'two orders cannot share one id in the journal, so the second is not recorded. Either the exchange gave an id out twice (an exchange whose state was reset under this journal, such as a sandbox restarted: this journal no longer matches it, so start this exchange on a data dir of its own), ' +
      'or two accounts on exchanges whose order ids meet share this journal (run them in daemons of their own, each its own data dir or database)',
  );
}

/** A snapshot older than what is stored (a lagging history endpoint): fills never shrink, status never goes back. */
export function isOlderSnapshot(order: Order, stored: StoredOrder): boolean {
  return (
    statusRank(order.status) < statusRank(stored.status) ||
    order.filledBase.lt(stored.filledBase) ||
    order.filledQuote.lt(stored.filledQuote) ||
    order.fee.lt(stored.fee)
  );
}

/**
 * A snapshot that changes nothing stored: older than what is stored, or of a final order whose
 * money it leaves as it is. A final order moves again only when the exchange shows it spent more
 * than first answered (its history with a fill or fee the answer did not have: one answered
 * without a status and nothing filled, later shown FILLED), never back, and never for a status
 * word alone.
 */
export function leavesOrderAsIs(order: Order, stored: StoredOrder): boolean {
  if (isOlderSnapshot(order, stored)) return true;
  if (!isTerminalStatus(stored.status)) return false;
  return order.filledBase.eq(stored.filledBase) && order.filledQuote.eq(stored.filledQuote) && order.fee.eq(stored.fee);
}

/**
 * Whether a snapshot is a transition: a new status or new fills, or a stop order's activation
 * (0 → 1, never back), which is the moment the order starts to trade even when it stays NEW.
 */
export function snapshotMoved(order: Order, stored: StoredOrder): boolean {
  return (
    (stored.stopActivated === 0 && order.stopActivated === 1) ||
    order.status !== stored.status ||
    !order.filledBase.eq(stored.filledBase) ||
    !order.filledQuote.eq(stored.filledQuote) ||
    !order.fee.eq(stored.fee)
  );
}

// Budgets.

export function checkScope(scope: BudgetScope): void {
  if (scope.instance === '' || scope.asset === '') throw new StoreError('invalid-argument', 'a budget needs an instance and an asset');
}

/** A reservation request's amount after checking the request (limits, id, scope). */
export function checkReserveRequest(request: BudgetReserveRequest): Decimal {
  checkScope(request);
  const amount = request.amountQuote;
  if (!isDecimal(amount) || !amount.isFinite() || amount.lte(0)) throw new StoreError('invalid-argument', 'amountQuote must be a finite Decimal > 0');
  for (const period of BUDGET_PERIODS) {
    const limit = request.limits[period];
    if (limit !== undefined && (!isDecimal(limit) || !limit.isFinite() || limit.isNegative())) {
      throw new StoreError('invalid-argument', `budget limit per ${period} must be a finite Decimal ≥ 0`);
    }
  }
  if (request.reservationId === '') throw new StoreError('invalid-argument', 'reservationId must be non-empty');
  return amount;
}

/** The periods a reservation of `amount` would take over their limit, given what each has spent. */
export function budgetExcesses(request: BudgetReserveRequest, starts: PeriodStarts, amount: Decimal, spentIn: (period: BudgetPeriod, startMs: number) => Decimal): BudgetExcess[] {
  const exceeded: BudgetExcess[] = [];
  for (const period of BUDGET_PERIODS) {
    const limit = request.limits[period];
    if (limit === undefined) continue;
    const spent = spentIn(period, starts[period]);
    if (spent.plus(amount).gt(limit)) exceeded.push({ period, periodStartMs: starts[period], limitQuote: limit, spentQuote: spent, requestedQuote: amount });
  }
  return exceeded;
}

/** The span of instants the day, week and month of `windows` cover together: where a budget read looks for reservations. */
export function budgetSpan(windows: PeriodWindows): { readonly fromMs: number; readonly toMs: number } {
  return { fromMs: Math.min(windows.starts.week, windows.starts.month), toMs: Math.max(windows.ends.week, windows.ends.month) };
}

/**
 * Spending per period counted from the reservations themselves, for when some of them were made
 * under another time zone than the one asked for (the instance's TIMEZONE changed): each counts
 * in the periods its instant falls in, a held one at what it holds, a settled one at what was
 * spent, a released one not at all. The same sums the counters keep for one zone.
 */
export function spentFromReservations(
  reservations: Iterable<Pick<BudgetReservation, 'atMs' | 'amountQuote' | 'state'>>,
  windows: PeriodWindows,
): Record<BudgetPeriod, Decimal> {
  const spent: Record<BudgetPeriod, Decimal> = { day: ZERO, week: ZERO, month: ZERO };
  for (const reservation of reservations) {
    if (reservation.state === 'released') continue;
    for (const period of BUDGET_PERIODS) {
      if (reservation.atMs >= windows.starts[period] && reservation.atMs < windows.ends[period]) spent[period] = spent[period].plus(reservation.amountQuote);
    }
  }
  return spent;
}

/** An amount really spent (settling, or counting an adopted order): finite and not negative. */
/**
 * What a settled reservation adds when settled again at `actualQuote`: zero for the same amount,
 * the difference for more (an order the exchange's history shows filled past the answer it gave,
 * say one answered without a status and nothing filled), and a conflict for less: what an order
 * spent never shrinks, and a history lagging behind the answer shows less.
 */
export function settledAgainBy(reservation: BudgetReservation, actualQuote: Decimal): Decimal {
  if (actualQuote.gte(reservation.amountQuote)) return actualQuote.minus(reservation.amountQuote);
  throw new StoreError('conflict', `budget reservation ${reservation.reservationId} was settled at ${formatDecimal(reservation.amountQuote)}, more than ${formatDecimal(actualQuote)}: what an order spent never shrinks`);
}

export function checkSpentAmount(value: Decimal, field: string): void {
  if (!isDecimal(value) || !value.isFinite() || value.isNegative()) throw new StoreError('invalid-argument', `${field} must be a finite Decimal ≥ 0`);
}

/** Locale-free text order, as SQLite's BINARY collation sorts ASCII: the same on every machine. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The journals' order of orders: first seen, then id (SQL: first_seen_at_ms, order_id). */
export function oldestOrderFirst(a: StoredOrder, b: StoredOrder): number {
  return a.firstSeenAtMs - b.firstSeenAtMs || compareText(a.orderId, b.orderId);
}

/** A page of changed orders asks for a positive count from a time, after an order of the page before when one is named. */
export function checkChangedOrdersQuery(query: ChangedOrdersQuery): ChangedOrdersQuery {
  if (!Number.isSafeInteger(query.fromMs)) throw new StoreError('invalid-argument', `changed orders are read from a time in whole milliseconds, not ${String(query.fromMs)}`);
  if (!Number.isSafeInteger(query.limit) || query.limit < 1) throw new StoreError('invalid-argument', `a page of changed orders holds at least one order, not ${String(query.limit)}`);
  const after = query.after;
  if (after !== undefined && (!Number.isSafeInteger(after.updatedAtMs) || typeof after.orderId !== 'string' || after.orderId === '')) {
    throw new StoreError('invalid-argument', 'a page of changed orders starts after an order named by its updatedAtMs and orderId');
  }
  return query;
}

export function checkOperatorControl(change: OperatorControlChange): void {
  if (typeof change.on !== 'boolean') throw new StoreError('invalid-argument', 'an operator control is turned on (true) or off (false)');
  if (change.control === 'kill-switch') {
    if (change.account !== undefined && (typeof change.account !== 'string' || change.account === '')) throw new StoreError('invalid-argument', 'an account kill switch needs an account name');
    return;
  }
  if (change.control !== 'pause') throw new StoreError('invalid-argument', `unknown operator control ${JSON.stringify((change as { control: unknown }).control)}`);
  if (typeof change.instance !== 'string' || change.instance === '') throw new StoreError('invalid-argument', 'a pause needs an instance name');
}
