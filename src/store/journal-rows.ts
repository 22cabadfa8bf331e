import { type Decimal, parseDecimalStrict } from '../domain/money.ts';
import { ORDER_STATUSES, type Order, type OrderSide, type OrderStatus, STP_MODES, type Stp, readStp } from '../domain/order.ts';
import { StoreError } from './errors.ts';
import { decodeIntent, decodeTextMap } from './intent-codec.ts';
import { checkOrder, orderMoney } from './journal-rules.ts';
import {
  FINDING_KINDS,
  type FindingKind,
  INTENT_ORIGINS,
  type IntentOrigin,
  type LedgerFinding,
  type BudgetReservation,
  type BudgetReservationState,
  type FlexOperationRecord,
  INTENT_STATUSES,
  type IntentRecord,
  type IntentStatus,
  OPERATION_STATUSES,
  type ChangedOrder,
  type OperationStatus,
  type OperatorControlChange,
  type OperatorControls,
  type OrderTransition,
  type RunMode,
  type RunRecord,
  SLOT_STATUSES,
  type SlotRecord,
  type SlotStatus,
  type StoredOrder,
  type TransferRecord,
} from './journal.ts';

/**
 * One row as a store returns it: SQLite (node:sqlite) and PostgreSQL (pg, with int8 read as a
 * safe Number and numeric as text) both give text, numbers and nulls, so one reader checks both.
 */
export type Row = Readonly<Record<string, unknown>>;

/** Typed, checked access to one row; `where` names the row in any error. */
export class RowReader {
  readonly #row: Row;
  readonly #where: string;
  constructor(row: Row, where: string) {
    this.#row = row;
    this.#where = where;
  }
  text(column: string): string {
    const value = this.#row[column];
    if (typeof value !== 'string') throw this.corrupt(column, 'is not text');
    return value;
  }
  optionalText(column: string): string | null {
    return this.#row[column] === null ? null : this.text(column);
  }
  int(column: string): number {
    const value = this.#row[column];
    if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw this.corrupt(column, 'is not an integer');
    return value;
  }
  optionalInt(column: string): number | null {
    return this.#row[column] === null ? null : this.int(column);
  }
  real(column: string): number {
    const value = this.#row[column];
    if (typeof value !== 'number' || !Number.isFinite(value)) throw this.corrupt(column, 'is not a number');
    return value;
  }
  decimal(column: string): Decimal {
    const text = this.text(column);
    try {
      return parseDecimalStrict(text, column);
    } catch {
      throw this.corrupt(column, `${JSON.stringify(text)} is not a plain decimal`);
    }
  }
  optionalDecimal(column: string): Decimal | null {
    return this.#row[column] === null ? null : this.decimal(column);
  }
  oneOf<T extends string>(column: string, allowed: readonly T[]): T {
    const value = this.text(column);
    if (!(allowed as readonly string[]).includes(value)) throw this.corrupt(column, `${JSON.stringify(value)} is not one of ${allowed.join(', ')}`);
    return value as T;
  }
  corrupt(column: string, what: string): StoreError {
    return new StoreError('corrupt', `${this.#where} column ${column} ${what}`);
  }
}

const RUN_MODES: readonly RunMode[] = ['live', 'dry-run', 'backtest'];
const RESERVATION_STATES: readonly BudgetReservationState[] = ['held', 'released', 'settled'];

/** The operator_controls table's rows (control, target, since_ms) as the controls they hold. */
export function controlsFromRows(rows: Iterable<Row>): OperatorControls {
  const paused = new Map<string, number>();
  const accountKillSwitches = new Map<string, number>();
  let killSwitchSinceMs: number | null = null;
  for (const row of rows) {
    const target = String(row['target']);
    if (row['control'] === 'pause') paused.set(target, Number(row['since_ms']));
    else if (target === '') killSwitchSinceMs = Number(row['since_ms']);
    else accountKillSwitches.set(target, Number(row['since_ms']));
  }
  return { paused, killSwitchSinceMs, accountKillSwitches };
}

/** The operator_controls row a change is about: (control, target). */
export function controlTarget(change: OperatorControlChange): string {
  return change.control === 'pause' ? change.instance : (change.account ?? '');
}

export function runFromRow(row: Row): RunRecord {
  const r = new RowReader(row, `runs row ${String(row['run_id'])}`);
  return {
    runId: r.text('run_id'),
    mode: r.oneOf('mode', RUN_MODES),
    startedAtMs: r.int('started_at_ms'),
    endedAtMs: r.optionalInt('ended_at_ms'),
    pid: r.int('pid'),
    version: r.text('version'),
    exitReason: r.optionalText('exit_reason'),
  };
}

export function slotFromRow(row: Row): SlotRecord {
  const r = new RowReader(row, `slots row ${String(row['instance'])}@${String(row['slot_time_ms'])}`);
  return {
    instance: r.text('instance'),
    slotTimeMs: r.int('slot_time_ms'),
    status: r.oneOf<SlotStatus>('status', SLOT_STATUSES),
    reason: r.optionalText('reason'),
    runId: r.optionalText('run_id'),
    claimedAtMs: r.int('claimed_at_ms'),
    finishedAtMs: r.optionalInt('finished_at_ms'),
  };
}

export function intentFromRow(row: Row): IntentRecord {
  const where = `intents row ${String(row['intent_id'])}`;
  const r = new RowReader(row, where);
  const resultJson = r.optionalText('result');
  const errorCode = r.optionalText('error_code');
  return {
    intentId: r.text('intent_id'),
    instance: r.text('instance'),
    slotTimeMs: r.int('slot_time_ms'),
    index: r.int('idx'),
    intent: decodeIntent(r.text('kind'), r.text('params'), `${where} params`),
    clientOrderId: r.optionalText('client_order_id'),
    status: r.oneOf<IntentStatus>('status', INTENT_STATUSES),
    attempts: r.int('attempts'),
    result: resultJson === null ? null : decodeTextMap(resultJson, `${where} result`),
    error: errorCode === null ? null : { code: errorCode, message: r.optionalText('error_message') ?? '' },
    createdAtMs: r.int('created_at_ms'),
    updatedAtMs: r.int('updated_at_ms'),
    sentAtMs: r.optionalInt('sent_at_ms'),
    origin: r.oneOf<IntentOrigin>('origin', INTENT_ORIGINS),
    account: r.optionalText('account'),
  };
}

export function findingFromRow(row: Row): LedgerFinding {
  const r = new RowReader(row, `ledger_findings row ${String(row['finding_id'])}`);
  return {
    findingId: r.int('finding_id'),
    kind: r.oneOf<FindingKind>('kind', FINDING_KINDS),
    instance: r.optionalText('instance'),
    clientOrderId: r.text('client_order_id'),
    orderId: r.optionalText('order_id'),
    market: r.optionalText('market'),
    detail: r.text('detail'),
    foundAtMs: r.int('found_at_ms'),
    acknowledgedAtMs: r.optionalInt('acknowledged_at_ms'),
  };
}

export function orderFromRow(row: Row): StoredOrder {
  const r = new RowReader(row, `orders row ${String(row['order_id'])}`);
  const stopActivated = r.optionalInt('stop_activated');
  if (stopActivated !== null && stopActivated !== 0 && stopActivated !== 1) throw r.corrupt('stop_activated', 'is not 0 or 1');
  return {
    orderId: r.text('order_id'),
    clientOrderId: r.text('client_order_id'),
    intentId: r.optionalText('intent_id'),
    market: r.text('market'),
    side: r.oneOf<OrderSide>('side', ['buy', 'sell']),
    type: r.text('type'),
    createdAtSec: r.real('exchange_created_at_sec'),
    amount: r.decimal('amount'),
    left: r.decimal('left_amount'),
    filledBase: r.decimal('filled_base'),
    filledQuote: r.decimal('filled_quote'),
    fee: r.decimal('fee'),
    feeAsset: r.optionalText('fee_asset'),
    price: r.optionalDecimal('price'),
    status: r.oneOf<OrderStatus>('status', ORDER_STATUSES),
    statusDerived: r.int('status_derived') === 1,
    // Journals written before the short spellings hold the long ones.
    stp: readStp(r.text('stp')) ?? r.oneOf<Stp>('stp', STP_MODES),
    stopActivated,
    firstSeenAtMs: r.int('first_seen_at_ms'),
    updatedAtMs: r.int('updated_at_ms'),
  };
}

/** An orders row read with its intent's instance and account (as `intent_instance`, `intent_account`). */
export function changedOrderFromRow(row: Row): ChangedOrder {
  const r = new RowReader(row, `orders row ${String(row['order_id'])}`);
  return { ...orderFromRow(row), instance: r.optionalText('intent_instance'), account: r.optionalText('intent_account') };
}

export function transitionFromRow(row: Row): OrderTransition {
  const r = new RowReader(row, `order_transitions row ${String(row['order_id'])}#${String(row['seq'])}`);
  return {
    orderId: r.text('order_id'),
    seq: r.int('seq'),
    fromStatus: row['from_status'] === null ? null : r.oneOf<OrderStatus>('from_status', ORDER_STATUSES),
    toStatus: r.oneOf<OrderStatus>('to_status', ORDER_STATUSES),
    filledBase: r.decimal('filled_base'),
    filledQuote: r.decimal('filled_quote'),
    fee: r.decimal('fee'),
    atMs: r.int('at_ms'),
    stopActivated: r.int('stop_activated') === 1,
  };
}

export function flexFromRow(row: Row): FlexOperationRecord {
  const r = new RowReader(row, `flex_operations row ${String(row['intent_id'])}`);
  return {
    intentId: r.text('intent_id'),
    plan: r.text('plan'),
    amount: r.decimal('amount'),
    transactionId: r.optionalText('transaction_id'),
    status: r.oneOf<OperationStatus>('status', OPERATION_STATUSES),
    createdAtMs: r.int('created_at_ms'),
    updatedAtMs: r.int('updated_at_ms'),
  };
}

export function transferFromRow(row: Row): TransferRecord {
  const r = new RowReader(row, `transfers row ${String(row['intent_id'])}`);
  return {
    intentId: r.text('intent_id'),
    ticker: r.text('ticker'),
    amount: r.decimal('amount'),
    from: r.text('from_account'),
    to: r.text('to_account'),
    status: r.oneOf<OperationStatus>('status', OPERATION_STATUSES),
    createdAtMs: r.int('created_at_ms'),
    updatedAtMs: r.int('updated_at_ms'),
  };
}

export function reservationFromRow(row: Row): BudgetReservation {
  const r = new RowReader(row, `budget_reservations row ${String(row['reservation_id'])}`);
  return {
    reservationId: r.text('reservation_id'),
    instance: r.text('instance'),
    asset: r.text('asset'),
    timeZone: r.text('time_zone'),
    atMs: r.int('at_ms'),
    amountQuote: r.decimal('amount_quote'),
    periodStarts: { day: r.int('day_start_ms'), week: r.int('week_start_ms'), month: r.int('month_start_ms') },
    state: r.oneOf('state', RESERVATION_STATES),
    createdAtMs: r.int('created_at_ms'),
    updatedAtMs: r.int('updated_at_ms'),
  };
}

/** The columns of `orders` a snapshot writes (all but order_id, intent_id and the times), in the order orderColumns gives them. */
export const ORDER_COLUMNS = [
  'client_order_id', 'market', 'side', 'type', 'amount', 'left_amount', 'price', 'filled_base', 'filled_quote',
  'fee', 'fee_asset', 'status', 'status_derived', 'stp', 'stop_activated', 'exchange_created_at_sec',
] as const;

/** A snapshot's values for ORDER_COLUMNS, money formatted; validates the order first. */
export function orderColumns(order: Order): Array<string | number | null> {
  checkOrder(order);
  const money = (value: Decimal, field: string): string => orderMoney(order, value, field);
  return [
    order.clientOrderId,
    order.market,
    order.side,
    order.type,
    money(order.amount, 'amount'),
    money(order.left, 'left'),
    order.price === null ? null : money(order.price, 'price'),
    money(order.filledBase, 'filledBase'),
    money(order.filledQuote, 'filledQuote'),
    money(order.fee, 'fee'),
    order.feeAsset,
    order.status,
    order.statusDerived ? 1 : 0,
    order.stp,
    order.stopActivated,
    order.createdAtSec,
  ];
}
