import type { DatabaseSync, SQLInputValue } from 'node:sqlite';
import { formatDecimal } from '../domain/money.ts';
import { ORDER_STATUSES, type Order, type OrderStatus, isTerminalStatus } from '../domain/order.ts';
import { StoreError } from './errors.ts';
import type { ChangedOrder, ChangedOrdersQuery, OrderLink, OrderQuery, OrderTransition, StoredOrder } from './journal.ts';
import { checkChangedOrdersQuery, checkSameOrder, leavesOrderAsIs, snapshotMoved, transitionOf } from './journal-rules.ts';
import { ORDER_COLUMNS, type Row, changedOrderFromRow, orderColumns, orderFromRow, transitionFromRow } from './journal-rows.ts';
import { transaction } from './sqlite-db.ts';

/**
 * The statuses an order can still leave, listed rather than "not terminal": `status IN (…)` is
 * answered from the status index, where `NOT IN` reads every order ever placed (per slot, in a
 * backtest of years).
 */
const OPEN_SQL = ORDER_STATUSES.filter((status) => !isTerminalStatus(status))
  .map((status) => `'${status}'`)
  .join(', ');


/**
 * Store a snapshot and log its transition in one transaction (Journal.recordOrderSnapshot).
 * Polls repeat, and a history endpoint may lag behind the active list, so a snapshot that
 * changes nothing, or that is older than what is stored, records nothing.
 */
export function recordOrderSnapshot(db: DatabaseSync, order: Order, link: OrderLink | undefined, nowMs: number): OrderTransition | null {
  return transaction(db, () => recordOrderSnapshotIn(db, order, link, nowMs));
}

/** recordOrderSnapshot inside the caller's transaction. */
export function recordOrderSnapshotIn(db: DatabaseSync, order: Order, link: OrderLink | undefined, nowMs: number): OrderTransition | null {
  const columns: SnapshotColumns = orderColumns(order);
  {
    const row = db.prepare('SELECT * FROM orders WHERE order_id = ?').get(order.orderId);
    if (row === undefined) {
      const intentId = resolveIntent(db, order, link);
      db.prepare(
        `INSERT INTO orders (order_id, client_order_id, market, side, type, intent_id, amount, left_amount, price, filled_base, filled_quote,
           fee, fee_asset, status, status_derived, stp, stop_activated, exchange_created_at_sec, first_seen_at_ms, updated_at_ms)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(order.orderId, ...columnsBeforeIntent(columns), intentId, ...columnsAfterIntent(columns), nowMs, nowMs);
      return insertTransition(db, order, null, 1, nowMs);
    }
    const stored = orderFromRow(row);
    checkSameOrder(order, stored);
    if (leavesOrderAsIs(order, stored)) return null;
    const moved = snapshotMoved(order, stored);
    const intentId = stored.intentId ?? resolveIntent(db, order, link);
    if (!moved && intentId === stored.intentId && sameColumns(row, columns)) return null;
    db.prepare(
      `UPDATE orders SET client_order_id = ?, market = ?, side = ?, type = ?, intent_id = ?, amount = ?, left_amount = ?, price = ?,
         filled_base = ?, filled_quote = ?, fee = ?, fee_asset = ?, status = ?, status_derived = ?, stp = ?, stop_activated = ?,
         exchange_created_at_sec = ?, updated_at_ms = ?
       WHERE order_id = ?`,
    ).run(...columnsBeforeIntent(columns), intentId, ...columnsAfterIntent(columns), nowMs, order.orderId);
    if (!moved) return null;
    const last = db.prepare('SELECT max(seq) AS seq FROM order_transitions WHERE order_id = ?').get(order.orderId);
    return insertTransition(db, order, stored.status, Number(last?.['seq'] ?? 0) + 1, nowMs);
  }
}

export function getOrder(db: DatabaseSync, orderId: string): StoredOrder | null {
  const row = db.prepare('SELECT * FROM orders WHERE order_id = ?').get(orderId);
  return row === undefined ? null : orderFromRow(row);
}

export function hasOpenOrders(db: DatabaseSync): boolean {
  return db.prepare(`SELECT 1 FROM orders WHERE status IN (${OPEN_SQL}) LIMIT 1`).get() !== undefined;
}

export function openOrders(db: DatabaseSync): StoredOrder[] {
  return db
    .prepare(`SELECT * FROM orders WHERE status IN (${OPEN_SQL}) ORDER BY first_seen_at_ms, order_id`)
    .all()
    .map(orderFromRow);
}

export function listOrders(db: DatabaseSync, query: OrderQuery): StoredOrder[] {
  return db
    .prepare(
      `SELECT o.* FROM orders o LEFT JOIN intents i ON i.intent_id = o.intent_id
       WHERE (:instance IS NULL OR i.instance = :instance) AND (:market IS NULL OR o.market = :market) AND (:from IS NULL OR o.first_seen_at_ms >= :from) AND (:updated IS NULL OR o.updated_at_ms >= :updated)
         AND (:status IS NULL OR o.status = :status)
       ORDER BY o.first_seen_at_ms DESC, o.order_id DESC LIMIT :limit`,
    )
    .all({ instance: query.instance ?? null, market: query.market ?? null, from: query.firstSeenFromMs ?? null, updated: query.updatedFromMs ?? null, status: query.status ?? null, limit: query.limit ?? 50 })
    .map(orderFromRow);
}

/** Journal.changedOrders: a range read of the orders_by_update index, however many orders the journal holds. */
export function changedOrders(db: DatabaseSync, query: ChangedOrdersQuery): ChangedOrder[] {
  const { fromMs, after, limit } = checkChangedOrdersQuery(query);
  return db
    .prepare(
      `SELECT o.*, i.instance AS intent_instance, i.account AS intent_account FROM orders o LEFT JOIN intents i ON i.intent_id = o.intent_id
       WHERE o.updated_at_ms >= :from AND (:afterMs IS NULL OR o.updated_at_ms > :afterMs OR (o.updated_at_ms = :afterMs AND o.order_id > :afterId))
       ORDER BY o.updated_at_ms, o.order_id LIMIT :limit`,
    )
    .all({ from: Math.max(fromMs, after?.updatedAtMs ?? fromMs), afterMs: after?.updatedAtMs ?? null, afterId: after?.orderId ?? null, limit })
    .map(changedOrderFromRow);
}

export function ordersOfIntent(db: DatabaseSync, intentId: string): StoredOrder[] {
  return db.prepare('SELECT * FROM orders WHERE intent_id = ? ORDER BY first_seen_at_ms, order_id').all(intentId).map(orderFromRow);
}

export function orderTransitions(db: DatabaseSync, orderId: string): OrderTransition[] {
  return db.prepare('SELECT * FROM order_transitions WHERE order_id = ? ORDER BY seq').all(orderId).map(transitionFromRow);
}


function insertTransition(db: DatabaseSync, order: Order, from: OrderStatus | null, seq: number, nowMs: number): OrderTransition | null {
  const transition = transitionOf(order, from, seq, nowMs);
  const inserted = db
    .prepare(
      `INSERT INTO order_transitions (order_id, seq, from_status, to_status, filled_base, filled_quote, fee, at_ms, stop_activated)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (order_id, to_status, filled_base, filled_quote, fee, stop_activated) DO NOTHING`,
    )
    .run(order.orderId, seq, from, order.status, formatDecimal(order.filledBase), formatDecimal(order.filledQuote), formatDecimal(order.fee), nowMs, order.stopActivated === 1 ? 1 : 0);
  return Number(inserted.changes) === 1 ? transition : null;
}

/** The intent an order belongs to: the one named, else the one that sent its clientOrderId. */
function resolveIntent(db: DatabaseSync, order: Order, link: OrderLink | undefined): string | null {
  if (link?.intentId === null) return null;
  if (link?.intentId !== undefined) {
    const named = db.prepare('SELECT intent_id FROM intents WHERE intent_id = ?').get(link.intentId);
    if (named === undefined) throw new StoreError('not-found', `order ${order.orderId}: no intent ${link.intentId}`);
    return link.intentId;
  }
  if (order.clientOrderId === '') return null;
  const byClientId = db.prepare('SELECT intent_id FROM intents WHERE client_order_id = ?').get(order.clientOrderId);
  return byClientId === undefined ? null : String(byClientId['intent_id']);
}

type SnapshotColumns = readonly SQLInputValue[];

/** intent_id sits after `type` in both statements. */
const INTENT_POSITION = 4;

function columnsBeforeIntent(columns: SnapshotColumns): SQLInputValue[] {
  return columns.slice(0, INTENT_POSITION);
}

function columnsAfterIntent(columns: SnapshotColumns): SQLInputValue[] {
  return columns.slice(INTENT_POSITION);
}

function sameColumns(row: Row, columns: SnapshotColumns): boolean {
  return ORDER_COLUMNS.every((name, i) => row[name] === columns[i]);
}

