import type { Intent } from '../domain/intent.ts';
import type { Decimal } from '../domain/money.ts';
import type { Order, OrderStatus } from '../domain/order.ts';

/**
 * The journal: everything stacker must remember across a crash to keep the money rule
 * (docs/exactly-once.md). The engine depends on this interface only; SqliteJournal
 * implements it over one file, and a PostgreSQL store can follow without touching the engine,
 * which is why every operation is async even though SQLite answers synchronously.
 *
 * Each operation is one transaction: it happens entirely or not at all, and when its promise
 * resolves the change is durable (fsynced). Amounts go in and come out as Decimal; times are
 * Unix milliseconds. Failures are StoreError (E_STORE) with a stable `reason`.
 */
export interface Journal {
  /** Open the store, migrate its schema; refuses a schema newer than the code (SchemaTooNewError). */
  open(): Promise<void>;
  close(): Promise<void>;

  // Runs: one per daemon or command start.
  /** Records the run; marks runs that never finished as `interrupted`. Refuses a mode other than the journal's first run's. */
  startRun(run: RunStart): Promise<RunRecord>;
  finishRun(runId: string, exitReason: string): Promise<void>;
  listRuns(limit?: number): Promise<RunRecord[]>;

  // Slots: "a journalled slot never runs twice".
  /**
   * Claim a slot for running, atomically with its intents when given. false when the slot was
   * ever journalled (claimed, done, failed, skipped or missed), by this run or any before it.
   */
  claimSlot(claim: SlotClaim): Promise<boolean>;
  /** Journal a slot that will not run (catch-up policy); false when it was already journalled. */
  skipSlot(skip: SlotSkip): Promise<boolean>;
  /** Close a claimed slot. A slot is finished once; finishing it again is `illegal-transition`. */
  finishSlot(finish: SlotFinish): Promise<SlotRecord>;
  getSlot(key: SlotKey): Promise<SlotRecord | null>;
  /** The latest journalled slot of an instance (any status): where catch-up starts counting (scheduledSince until there is one). */
  lastSlot(instance: string): Promise<SlotRecord | null>;
  /** Newest first. `status: 'claimed'` lists slots a crash left open. */
  listSlots(query?: SlotQuery): Promise<SlotRecord[]>;
  /**
   * When the daemon first scheduled the instance (markScheduled); null when it never did. Catch-up
   * counts an instance's missed slots from here while it has no journalled slot: a first slot a
   * kill -9 left unjournalled (the claim comes after the snapshot) is missed, not never due.
   */
  scheduledSince(instance: string): Promise<number | null>;
  /**
   * Remember that the instance is scheduled from `sinceMs` on, unless the journal already holds a
   * time for it: the first one stays, since a later start must not move the anchor past a slot
   * that fell in between. Returns the time kept.
   */
  markScheduled(instance: string, sinceMs: number): Promise<number>;

  // Intents.
  /**
   * Journal intents of a claimed slot. Money intents (buy, flex-withdraw, transfer) start
   * `pending` (or `refused` when a guard refusal is given); a `note` is `done`; a `refusal` is
   * `refused` with its reason as error code; a `set-state` is applied to the strategy state in
   * the same transaction and is `done`.
   */
  addIntents(slot: SlotKey, intents: readonly NewIntent[]): Promise<IntentRecord[]>;
  /** Move an intent along pending → sent → done | refused | failed | unknown (see INTENT_TRANSITIONS). */
  updateIntent(intentId: string, update: IntentUpdate): Promise<IntentRecord>;
  getIntent(intentId: string): Promise<IntentRecord | null>;
  findIntentByClientOrderId(clientOrderId: string): Promise<IntentRecord | null>;
  /** Newest slot first, then by index. */
  listIntents(query?: IntentQuery): Promise<IntentRecord[]>;
  /** pending, sent and unknown intents, oldest first: what reconciliation must resolve on start. */
  unresolvedIntents(): Promise<IntentRecord[]>;
  /**
   * Whether anything is left to follow: an order not yet terminal, an unresolved intent or a
   * claimed slot. One question asked between slots instead of three lists (nearly always empty).
   */
  hasOpenWork(): Promise<boolean>;

  // The exchange as the second ledger (docs/exactly-once.md).
  /**
   * Journal an order found in the exchange's history that no intent of this journal sent (a
   * lost journal, lost WAL frames): its slot (when the journal has none), a `done` intent of
   * origin `adopted`, the order and its first transition, a budget reservation at what it
   * spent, and an `adopted` finding, all in one transaction. Refuses (`conflict`) when the slot
   * or the intent is already journalled: that order is not ours to adopt.
   */
  adoptOrder(adoption: OrderAdoption): Promise<AdoptedOrder>;
  /**
   * Journal a second order the exchange holds under the clientOrderId of an intent this journal
   * sent and recorded an order for (an older stacker sent it again, or two stackers on the key):
   * the order linked to that intent, its spend counted against the intent's instance (and its
   * account cap) in the slot's periods under a reservation of its own, and the finding when given,
   * all in one transaction. The money was spent: a budget, a report or P&L without it under-counts.
   */
  recordSecondOrder(second: SecondOrder): Promise<OrderTransition | null>;
  /** Remember something reconciliation found at the exchange (health reports it until acknowledged). */
  recordFinding(finding: NewLedgerFinding): Promise<LedgerFinding>;
  listFindings(query?: { readonly unacknowledged?: boolean; readonly limit?: number }): Promise<LedgerFinding[]>;
  /** Mark every finding not yet acknowledged as seen by a human; returns how many. */
  acknowledgeFindings(): Promise<number>;
  /** Up to when the exchange's order history was last read completely; null for a journal that never read it. */
  ledgerCheckedThrough(): Promise<number | null>;
  setLedgerCheckedThrough(atMs: number): Promise<void>;
  /** Up to when the journal's buys were last checked for a budget count (uncounted-buys.ts); null for never. */
  spendCountedThrough(): Promise<number | null>;
  setSpendCountedThrough(atMs: number): Promise<void>;

  // Orders and their transitions.
  /**
   * Store what the exchange says about an order and, when its status or filled amounts (base,
   * quote, fee) changed, log the transition, both in one transaction. Returns the new
   * transition, or null when the snapshot changed nothing, is older than what is stored (fills
   * never shrink, status never goes back), or the stored order is already terminal. Links the
   * order to `link.intentId`, or when absent to the intent with the same clientOrderId.
   */
  recordOrderSnapshot(order: Order, link?: OrderLink): Promise<OrderTransition | null>;
  getOrder(orderId: string): Promise<StoredOrder | null>;
  /** Orders not yet in a terminal status, oldest first: what the tracker follows. */
  openOrders(): Promise<StoredOrder[]>;
  /** Newest first. */
  listOrders(query?: OrderQuery): Promise<StoredOrder[]>;
  /**
   * Orders recorded or updated at or after `fromMs`, oldest change first (by updatedAtMs, then
   * order id), each with its intent's instance: a page of what changed, for a reader that keeps
   * up with the journal page by page (`after`: the last order of the page before).
   */
  changedOrders(query: ChangedOrdersQuery): Promise<ChangedOrder[]>;
  orderTransitions(orderId: string): Promise<OrderTransition[]>;

  // Flex withdrawals and transfers (one record per intent; recording again updates it).
  recordFlexOperation(operation: FlexOperationInput): Promise<FlexOperationRecord>;
  recordTransfer(transfer: TransferInput): Promise<TransferRecord>;

  // Strategy state.
  getState(instance: string): Promise<ReadonlyMap<string, string>>;
  /** Set (text) or delete (null) keys, all in one transaction. */
  setState(instance: string, changes: Readonly<Record<string, string | null>>): Promise<void>;

  // Budgets per day, ISO week and month, in a time zone.
  /**
   * Check every configured limit and, when all hold, add the amount to the day, week and month
   * of `atMs`, in one transaction. Idempotent per reservationId: a repeat returns the recorded
   * reservation and adds nothing.
   */
  reserveBudget(request: BudgetReserveRequest): Promise<BudgetDecision>;
  /**
   * Replace a held reservation's amount by what was really spent (may exceed the limit: it
   * happened). Idempotent for the same amount; a settled one settles again at more (the
   * exchange's history corrected the order's fill), never at less (settledAgainBy).
   */
  settleBudget(reservationId: string, actualQuote: Decimal): Promise<BudgetReservation>;
  /** Give a held reservation back (nothing was spent). false when it was already released. */
  releaseBudget(reservationId: string): Promise<boolean>;
  budgetSpent(scope: BudgetScope, atMs: number): Promise<BudgetSpent>;
  /** Reservations neither settled nor released, oldest first: reconcile them on start. */
  heldBudgetReservations(instance?: string): Promise<BudgetReservation[]>;
  /** One reservation in whatever state it is; null when none was made under that id. */
  budgetReservation(reservationId: string): Promise<BudgetReservation | null>;

  // Reading for `stacker journal`.
  /** Intents newest first, each with its orders, flex operation and transfer. */
  recentJournal(query?: IntentQuery): Promise<JournalEntry[]>;

  // Durability.
  /**
   * Throws StoreError (`journal-lost`) when what this journal writes no longer reaches the
   * journal a restart would read: its file was deleted or replaced since it was opened. Called
   * before every send: a money journal that is written nowhere must stop trading.
   */
  assertIntact(): Promise<void>;
  /** The last write failure (disk full, read-only file system; a database that cannot be reached, even by a read) when no write has succeeded since; null when writes succeed. */
  writeFailure(): JournalWriteFailure | null;
  /** A small write, so a full or read-only disk shows in writeFailure() even while no slot runs. */
  recordHeartbeat(): Promise<void>;

  // An account kept by stacker (dry-run's paper account), as the exchange adapter writes it; one
  // per account name (absent: the default account, whose state predates accounts).
  accountState(account?: string): Promise<string | null>;
  saveAccountState(state: string, account?: string): Promise<void>;

  // What an operator switched from the status API; kept here so it survives a restart.
  operatorControls(): Promise<OperatorControls>;
  /**
   * Pause or resume an instance, or turn the operator's kill switch on or off, and return the
   * controls as they are now. Turning on what is already on keeps its first time; turning off
   * what is off changes nothing.
   */
  setOperatorControl(change: OperatorControlChange): Promise<OperatorControls>;
}

export interface OperatorControls {
  /** Paused instances → since when (Unix ms). */
  readonly paused: ReadonlyMap<string, number>;
  /** Since when the operator's kill switch for every account is on; null while off. */
  readonly killSwitchSinceMs: number | null;
  /** Accounts whose own kill switch is on → since when (Unix ms). */
  readonly accountKillSwitches: ReadonlyMap<string, number>;
}

export type OperatorControlChange =
  | { readonly control: 'pause'; readonly instance: string; readonly on: boolean }
  /** Without `account`: the kill switch of every account; with it, that account's own. */
  | { readonly control: 'kill-switch'; readonly on: boolean; readonly account?: string };

export interface JournalWriteFailure {
  /** The first failure since the last write that succeeded. */
  readonly atMs: number;
  readonly message: string;
  /**
   * Its cause outlives other writes' success (a full disk, a privilege taken from the role on one
   * table): it holds until the operation that failed succeeds again, and nothing is sent meanwhile,
   * since what a send must write next may be what fails (write-failure.ts).
   */
  readonly lasting?: boolean;
}

export type { RunMode } from '../domain/run-mode.ts';
import type { RunMode } from '../domain/run-mode.ts';

export interface RunStart {
  readonly mode: RunMode;
  readonly pid: number;
  /** stacker's version. */
  readonly version: string;
}

export interface RunRecord {
  readonly runId: string;
  readonly mode: RunMode;
  readonly startedAtMs: number;
  readonly endedAtMs: number | null;
  readonly pid: number;
  readonly version: string;
  /** null while running; `interrupted` when the process died without finishing the run. */
  readonly exitReason: string | null;
}

export const SLOT_STATUSES = ['claimed', 'done', 'failed', 'skipped', 'missed'] as const;
export type SlotStatus = (typeof SLOT_STATUSES)[number];

export interface SlotKey {
  readonly instance: string;
  readonly slotTimeMs: number;
}

export interface SlotClaim extends SlotKey {
  readonly runId: string | null;
  readonly intents?: readonly NewIntent[];
}

export interface SlotSkip extends SlotKey {
  readonly runId: string | null;
  readonly status: 'skipped' | 'missed';
  readonly reason: string;
}

export interface SlotFinish extends SlotKey {
  readonly status: 'done' | 'failed' | 'skipped';
  readonly reason?: string;
}

export interface SlotRecord extends SlotKey {
  readonly status: SlotStatus;
  readonly reason: string | null;
  readonly runId: string | null;
  readonly claimedAtMs: number;
  readonly finishedAtMs: number | null;
}

export interface SlotQuery {
  readonly instance?: string;
  readonly status?: SlotStatus;
  /** Inclusive. */
  readonly sinceMs?: number;
  /** Exclusive. */
  readonly untilMs?: number;
  readonly limit?: number;
}

/**
 * - `pending`: journalled, not yet sent. Send only after marking it `sent`.
 * - `sent`: the request may have left; its outcome is not yet recorded.
 * - `done`: the exchange accepted it (a buy's order is then followed in `orders`).
 * - `refused`: a guard or the exchange said no; nothing happened.
 * - `failed`: it provably did not happen (connection refused, validation).
 * - `unknown`: the answer was lost; it is looked up, never sent again.
 * - `not-found`: a buy whose lookups found nothing for its whole settle window. Its budget
 *   stays counted until the exchange's history check clears it; an order that turns up later
 *   still makes it `done`.
 */
export const INTENT_STATUSES = ['pending', 'sent', 'done', 'refused', 'failed', 'unknown', 'not-found'] as const;
export type IntentStatus = (typeof INTENT_STATUSES)[number];

/**
 * The status changes updateIntent allows. Nothing leads back to `sent`: an intent is sent once
 * (the exchange does not deduplicate market orders, so a second send could be a second order).
 */
export const INTENT_TRANSITIONS: Readonly<Record<IntentStatus, readonly IntentStatus[]>> = {
  pending: ['sent', 'done', 'refused', 'failed', 'unknown'],
  sent: ['done', 'refused', 'failed', 'unknown', 'not-found'],
  unknown: ['done', 'refused', 'failed', 'unknown', 'not-found'],
  'not-found': ['done'],
  done: [],
  refused: [],
  failed: [],
};

/** Who put an intent in the journal: the engine deciding a slot, or reconciliation adopting an order it found at the exchange. */
export const INTENT_ORIGINS = ['engine', 'adopted'] as const;
export type IntentOrigin = (typeof INTENT_ORIGINS)[number];

export interface IntentError {
  /** Stable: an error code (E_…) or a refusal reason (kebab-case). */
  readonly code: string;
  readonly message: string;
}

/** What an intent produced (order id, transaction id…). Text values only: money via formatDecimal. */
export type IntentResult = Readonly<Record<string, string>>;

export interface NewIntent {
  /** Position in the strategy's answer; part of the clientOrderId. */
  readonly index: number;
  readonly intent: Intent;
  /** A guard refused it before anything was sent: journalled as `refused`. */
  readonly refusal?: IntentError;
  /** Prefix of the derived clientOrderId when the intent has no `tag` (the configured CLIENT_ORDER_PREFIX). */
  readonly clientOrderIdPrefix?: string;
  /** The account (API key) it is sent on; absent in a world of one account (backtests). */
  readonly account?: string;
}

export interface IntentRecord {
  /** Derived from (instance, slot time, index) like the clientOrderId: stable across restarts. */
  readonly intentId: string;
  readonly instance: string;
  readonly slotTimeMs: number;
  readonly index: number;
  readonly intent: Intent;
  /** Buys only: the id sent to the exchange. */
  readonly clientOrderId: string | null;
  readonly status: IntentStatus;
  /** How many times it was marked `sent` (0 or 1: nothing is sent twice). */
  readonly attempts: number;
  /** When it was first marked `sent`: the settle window of a lost answer counts from here. */
  readonly sentAtMs: number | null;
  readonly origin: IntentOrigin;
  /** The account it was sent on, as journalled then; null for intents journalled before accounts (the one key of their time). */
  readonly account: string | null;
  readonly result: IntentResult | null;
  readonly error: IntentError | null;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
}

export type IntentUpdate =
  | { readonly status: 'sent' }
  | { readonly status: 'done'; readonly result?: IntentResult }
  | { readonly status: 'refused' | 'failed'; readonly error: IntentError; readonly result?: IntentResult }
  | { readonly status: 'unknown' | 'not-found'; readonly error: IntentError };

export interface IntentQuery {
  readonly instance?: string;
  readonly slotTimeMs?: number;
  readonly statuses?: readonly IntentStatus[];
  readonly limit?: number;
}

export interface OrderLink {
  /** null: store the order unlinked even if an intent has its clientOrderId. */
  readonly intentId?: string | null;
}

export interface StoredOrder extends Order {
  readonly intentId: string | null;
  readonly firstSeenAtMs: number;
  readonly updatedAtMs: number;
}

export interface OrderTransition {
  readonly orderId: string;
  /** 1 for the first status seen. */
  readonly seq: number;
  /** null for the first status seen. */
  readonly fromStatus: OrderStatus | null;
  readonly toStatus: OrderStatus;
  readonly filledBase: Decimal;
  readonly filledQuote: Decimal;
  readonly fee: Decimal;
  readonly atMs: number;
  /** A stop order that was activated (0 → 1) at or before this transition. */
  readonly stopActivated: boolean;
}

export interface OrderQuery {
  readonly instance?: string;
  readonly market?: string;
  /** Orders the journal first saw at or after this time only. */
  readonly firstSeenFromMs?: number;
  /** Orders the journal recorded or updated at or after this time only (what changed since a read). */
  readonly updatedFromMs?: number;
  /** Orders in this status only. */
  readonly status?: OrderStatus;
  /** At most this many, newest first (50 when absent; a negative number: all). */
  readonly limit?: number;
}

export interface ChangedOrdersQuery {
  readonly fromMs: number;
  /** Only orders after this one in the reading order: the last order of the page before. */
  readonly after?: { readonly updatedAtMs: number; readonly orderId: string };
  readonly limit: number;
}

/** An order with the instance and account of the intent it belongs to (null: no intent, or an intent from before accounts). */
export interface ChangedOrder extends StoredOrder {
  readonly instance: string | null;
  readonly account: string | null;
}

export const OPERATION_STATUSES = ['sent', 'done', 'failed', 'unknown'] as const;
export type OperationStatus = (typeof OPERATION_STATUSES)[number];

export interface FlexOperationInput {
  readonly intentId: string;
  readonly plan: string;
  readonly amount: Decimal;
  readonly transactionId: string | null;
  readonly status: OperationStatus;
}

export interface FlexOperationRecord extends FlexOperationInput {
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
}

export interface TransferInput {
  readonly intentId: string;
  readonly ticker: string;
  readonly amount: Decimal;
  readonly from: string;
  readonly to: string;
  readonly status: OperationStatus;
}

export interface TransferRecord extends TransferInput {
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
}

export const BUDGET_PERIODS = ['day', 'week', 'month'] as const;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];
export type BudgetLimits = Readonly<Partial<Record<BudgetPeriod, Decimal>>>;
export type PeriodStarts = Readonly<Record<BudgetPeriod, number>>;

/** Budgets are counted per instance and quote asset; periods are calendar periods in `timeZone` (IANA). */
export interface BudgetScope {
  readonly instance: string;
  readonly asset: string;
  readonly timeZone: string;
}

export interface BudgetReserveRequest extends BudgetScope {
  /** Use the intent's id: a retried guard step then never counts twice. */
  readonly reservationId: string;
  /** The time the spend belongs to (the slot time), which picks the periods. */
  readonly atMs: number;
  readonly amountQuote: Decimal;
  readonly limits: BudgetLimits;
}

export type BudgetReservationState = 'held' | 'released' | 'settled';

export interface BudgetReservation extends BudgetScope {
  readonly reservationId: string;
  readonly atMs: number;
  readonly amountQuote: Decimal;
  readonly periodStarts: PeriodStarts;
  readonly state: BudgetReservationState;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
}

export interface BudgetExcess {
  readonly period: BudgetPeriod;
  readonly periodStartMs: number;
  readonly limitQuote: Decimal;
  readonly spentQuote: Decimal;
  readonly requestedQuote: Decimal;
}

export type BudgetDecision =
  | { readonly ok: true; readonly reservation: BudgetReservation; readonly repeated: boolean }
  | { readonly ok: false; readonly exceeded: readonly BudgetExcess[] };

export interface BudgetSpent {
  readonly day: Decimal;
  readonly week: Decimal;
  readonly month: Decimal;
  readonly periodStarts: PeriodStarts;
}

/** A buy the exchange holds and this journal never sent (OrderAdoption's intent is derived from it). */
export interface OrderAdoption {
  readonly instance: string;
  readonly slotTimeMs: number;
  readonly index: number;
  /** The order as the exchange's history shows it; its clientOrderId carries the instance's id scheme. */
  readonly order: Order;
  /** Budget scope of the instance: the spend is counted in the slot's periods. */
  readonly asset: string;
  readonly timeZone: string;
  readonly reason: string;
  /** Record the finding as already acknowledged (a rebuild the user asked for). */
  readonly acknowledged?: boolean;
  /** The account whose history showed it. */
  readonly account?: string;
  /**
   * The account's cap, when it has one: the order's spend is counted there too, in the same
   * transaction as the adoption (under accountReservationId of the intent, held while the
   * order still fills), so a crash can never leave an adopted order the cap does not count.
   */
  readonly accountCap?: { readonly scope: string; readonly asset: string; readonly timeZone: string };
}

/** A second order of one intent: what OrderAdoption says of an order, for an intent the journal has. */
export interface SecondOrder extends Pick<OrderAdoption, 'instance' | 'slotTimeMs' | 'order' | 'asset' | 'timeZone' | 'accountCap'> {
  readonly intentId: string;
  /** The finding that stops trading until a human has read it; null when one was recorded before. */
  readonly finding: NewLedgerFinding | null;
}

/** The budget reservation a second order of an intent is counted under (its first order's is the intent's id). */
export function secondOrderReservationId(intentId: string, orderId: string): string {
  return `${intentId}#order-${orderId}`;
}

const ACCOUNT_RESERVATION_SUFFIX = '#account';

/** The reservation an account cap holds for an intent (its instance's reservation is the intent's id). */
export function accountReservationId(intentId: string): string {
  return `${intentId}${ACCOUNT_RESERVATION_SUFFIX}`;
}

/** The intent a reservation is held for: its own id, or the one its account cap's reservation names. */
export function reservationIntentId(reservationId: string): string {
  return reservationId.endsWith(ACCOUNT_RESERVATION_SUFFIX) ? reservationId.slice(0, -ACCOUNT_RESERVATION_SUFFIX.length) : reservationId;
}

export interface AdoptedOrder {
  readonly intent: IntentRecord;
  readonly transition: OrderTransition | null;
  readonly finding: LedgerFinding;
}

/**
 * - `adopted`: an order of ours the journal did not know, now journalled and counted.
 * - `foreign`: an order carrying an instance's id scheme that this journal did not send and
 *   cannot be ours (another stacker on the same key): trading stops.
 * - `cleared`: a `not-found` buy the history check confirmed absent; its budget was given back.
 */
export const FINDING_KINDS = ['adopted', 'foreign', 'cleared'] as const;
export type FindingKind = (typeof FINDING_KINDS)[number];

export interface NewLedgerFinding {
  readonly kind: FindingKind;
  readonly instance: string | null;
  readonly clientOrderId: string;
  readonly orderId: string | null;
  readonly market: string | null;
  readonly detail: string;
  readonly acknowledged?: boolean;
}

export interface LedgerFinding extends Omit<NewLedgerFinding, 'acknowledged'> {
  readonly findingId: number;
  readonly foundAtMs: number;
  readonly acknowledgedAtMs: number | null;
}

export interface JournalEntry {
  readonly intent: IntentRecord;
  readonly orders: readonly StoredOrder[];
  readonly flexOperation: FlexOperationRecord | null;
  readonly transfer: TransferRecord | null;
}
