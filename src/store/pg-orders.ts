import { type Decimal, formatDecimal } from '../domain/money.ts';
import { ORDER_STATUSES, type Order, type OrderStatus, isTerminalStatus } from '../domain/order.ts';
import { StoreError } from './errors.ts';
import type { ChangedOrder, ChangedOrdersQuery, OrderLink, OrderQuery, OrderTransition, StoredOrder } from './journal.ts';
import { ORDER_COLUMNS, changedOrderFromRow, orderColumns, orderFromRow, transitionFromRow } from './journal-rows.ts';
import { checkChangedOrdersQuery, checkSameOrder, leavesOrderAsIs, snapshotMoved, transitionOf } from './journal-rules.ts';
import { limitOrAll } from './pg-intents.ts';
import type { Tx } from './pg-db.ts';

/** Orders and their transitions in the PostgreSQL journal; each function runs inside the caller's transaction. */

const OPEN_STATUSES = ORDER_STATUSES.filter((status) => !isTerminalStatus(status));

/**
 * Store a snapshot and log its transition (Journal.recordOrderSnapshot). A snapshot that changes
 * nothing, or that is older than what is stored, records nothing.
 */
export async function recordOrderSnapshot(tx: Tx, order: Order, link: OrderLink | undefined, nowMs: number): Promise<OrderTransition | null> {
  const columns = orderColumns(order);
  const row = await tx.one('SELECT * FROM orders WHERE order_id = $1 FOR UPDATE', [order.orderId]);
  if (row === null) {
    const intentId = await resolveIntent(tx, order, link);
    await tx.run(
      `INSERT INTO orders (order_id, intent_id, ${ORDER_COLUMNS.join(', ')}, first_seen_at_ms, updated_at_ms)
       VALUES ($1, $2, ${ORDER_COLUMNS.map((_, i) => `$${i + 3}`).join(', ')}, $${ORDER_COLUMNS.length + 3}, $${ORDER_COLUMNS.length + 3})`,
      [order.orderId, intentId, ...columns, nowMs],
    );
    return insertTransition(tx, order, null, 1, nowMs);
  }
  const stored = orderFromRow(row);
  checkSameOrder(order, stored);
  if (leavesOrderAsIs(order, stored)) return null;
  const moved = snapshotMoved(order, stored);
  const intentId = stored.intentId ?? (await resolveIntent(tx, order, link));
  if (!moved && intentId === stored.intentId && sameColumns(stored, order)) return null;
  await tx.run(
    `UPDATE orders SET intent_id = $2, ${ORDER_COLUMNS.map((name, i) => `${name} = $${i + 3}`).join(', ')}, updated_at_ms = $${ORDER_COLUMNS.length + 3}
     WHERE order_id = $1`,
    [order.orderId, intentId, ...columns, nowMs],
  );
  if (!moved) return null;
  const last = await tx.one('SELECT max(seq) AS seq FROM order_transitions WHERE order_id = $1', [order.orderId]);
  return insertTransition(tx, order, stored.status, Number(last?.['seq'] ?? 0) + 1, nowMs);
}

export async function getOrder(tx: Tx, orderId: string): Promise<StoredOrder | null> {
  const row = await tx.one('SELECT * FROM orders WHERE order_id = $1', [orderId]);
  return row === null ? null : orderFromRow(row);
}

export async function hasOpenOrders(tx: Tx): Promise<boolean> {
  return (await tx.rows('SELECT 1 FROM orders WHERE status = ANY($1::text[]) LIMIT 1', [OPEN_STATUSES])).length > 0;
}

export async function openOrders(tx: Tx): Promise<StoredOrder[]> {
  return (await tx.rows('SELECT * FROM orders WHERE status = ANY($1::text[]) ORDER BY first_seen_at_ms, order_id', [OPEN_STATUSES])).map(orderFromRow);
}

export async function listOrders(tx: Tx, query: OrderQuery): Promise<StoredOrder[]> {
  const rows = await tx.rows(
    `SELECT o.* FROM orders o LEFT JOIN intents i ON i.intent_id = o.intent_id
     WHERE ($1::text IS NULL OR i.instance = $1) AND ($2::text IS NULL OR o.market = $2) AND ($4::bigint IS NULL OR o.first_seen_at_ms >= $4) AND ($5::bigint IS NULL OR o.updated_at_ms >= $5)
       AND ($6::text IS NULL OR o.status = $6)
     ORDER BY o.first_seen_at_ms DESC, o.order_id DESC LIMIT $3`,
    [query.instance ?? null, query.market ?? null, limitOrAll(query.limit ?? 50), query.firstSeenFromMs ?? null, query.updatedFromMs ?? null, query.status ?? null],
  );
  return rows.map(orderFromRow);
}

/** Journal.changedOrders: a range read of the orders_by_update index. */
export async function changedOrders(tx: Tx, query: ChangedOrdersQuery): Promise<ChangedOrder[]> {
  const { fromMs, after, limit } = checkChangedOrdersQuery(query);
  const rows = await tx.rows(
    `SELECT o.*, i.instance AS intent_instance, i.account AS intent_account FROM orders o LEFT JOIN intents i ON i.intent_id = o.intent_id
     WHERE o.updated_at_ms >= $1 AND ($2::bigint IS NULL OR (o.updated_at_ms, o.order_id) > ($2::bigint, $3::text))
     ORDER BY o.updated_at_ms, o.order_id LIMIT $4`,
    [Math.max(fromMs, after?.updatedAtMs ?? fromMs), after?.updatedAtMs ?? null, after?.orderId ?? null, limit],
  );
  return rows.map(changedOrderFromRow);
}

export async function ordersOfIntent(tx: Tx, intentId: string): Promise<StoredOrder[]> {
  return (await tx.rows('SELECT * FROM orders WHERE intent_id = $1 ORDER BY first_seen_at_ms, order_id', [intentId])).map(orderFromRow);
}

export async function orderTransitions(tx: Tx, orderId: string): Promise<OrderTransition[]> {
  return (await tx.rows('SELECT * FROM order_transitions WHERE order_id = $1 ORDER BY seq', [orderId])).map(transitionFromRow);
}

async function insertTransition(tx: Tx, order: Order, from: OrderStatus | null, seq: number, nowMs: number): Promise<OrderTransition | null> {
  const transition = transitionOf(order, from, seq, nowMs);
  const inserted = await tx.run(
    `INSERT INTO order_transitions (order_id, seq, from_status, to_status, filled_base, filled_quote, fee, at_ms, stop_activated)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (order_id, to_status, filled_base, filled_quote, fee, stop_activated) DO NOTHING`,
    [order.orderId, seq, from, order.status, formatDecimal(order.filledBase), formatDecimal(order.filledQuote), formatDecimal(order.fee), nowMs, order.stopActivated === 1 ? 1 : 0],
  );
  return inserted === 1 ? transition : null;
}

/** The intent an order belongs to: the one named, else the one that sent its clientOrderId. */
async function resolveIntent(tx: Tx, order: Order, link: OrderLink | undefined): Promise<string | null> {
  if (link?.intentId === null) return null;
  if (link?.intentId !== undefined) {
    const named = await tx.one('SELECT intent_id FROM intents WHERE intent_id = $1', [link.intentId]);
    if (named === null) throw new StoreError('not-found', `order ${order.orderId}: no intent ${link.intentId}`);
    return link.intentId;
  }
  if (order.clientOrderId === '') return null;
  const byClientId = await tx.one('SELECT intent_id FROM intents WHERE client_order_id = $1', [order.clientOrderId]);
  return byClientId === null ? null : String(byClientId['intent_id']);
}

/** Whether the stored order already says everything the snapshot says (money compared as numbers: numeric keeps no formatting). */
function sameColumns(stored: StoredOrder, order: Order): boolean {
  const sameMoney = (a: Decimal | null, b: Decimal | null): boolean => (a === null || b === null ? a === b : a.eq(b));
  return (
    stored.clientOrderId === order.clientOrderId &&
    stored.market === order.market &&
    stored.side === order.side &&
    stored.type === order.type &&
    sameMoney(stored.amount, order.amount) &&
    sameMoney(stored.left, order.left) &&
    sameMoney(stored.price, order.price) &&
    sameMoney(stored.filledBase, order.filledBase) &&
    sameMoney(stored.filledQuote, order.filledQuote) &&
    sameMoney(stored.fee, order.fee) &&
    stored.feeAsset === order.feeAsset &&
    stored.status === order.status &&
    stored.statusDerived === order.statusDerived &&
    stored.stp === order.stp &&
    stored.stopActivated === order.stopActivated &&
    stored.createdAtSec === order.createdAtSec
  );
}
