import type { DatabaseSync } from 'node:sqlite';
import { StoreError } from './errors.ts';
import { encodeIntentParams } from './intent-codec.ts';
import { type AdoptedOrder, type LedgerFinding, type NewLedgerFinding, type OrderAdoption, type OrderTransition, type SecondOrder, secondOrderReservationId } from './journal.ts';
import { adoptedFinding, adoptedIntent, adoptedSpends, checkFinding, checkLedgerTime, checkSecondOrder } from './journal-rules.ts';
import { recordSpendIn } from './sqlite-budgets.ts';
import { transaction } from './sqlite-db.ts';
import { recordOrderSnapshotIn } from './sqlite-orders.ts';
import { findingFromRow, intentFromRow } from './journal-rows.ts';

/**
 * The journal's side of "the exchange is the second ledger": orders adopted from the exchange's
 * history, what reconciliation found there, and up to when that history was read.
 */

const CHECKED_THROUGH_KEY = 'ledger_checked_through_ms';
const SPEND_COUNTED_KEY = 'spend_counted_through_ms';

export function adoptOrder(db: DatabaseSync, adoption: OrderAdoption, nowMs: number): AdoptedOrder {
  const { order, instance, slotTimeMs, index } = adoption;
  const { intentId, intent, result } = adoptedIntent(adoption);
  return transaction(db, () => {
    const slot = db.prepare('SELECT status FROM slots WHERE instance = ? AND slot_time_ms = ?').get(instance, slotTimeMs);
    if (slot !== undefined) {
      throw new StoreError('conflict', `slot ${instance}@${slotTimeMs} is journalled (${String(slot['status'])}): order ${order.orderId} (${order.clientOrderId}) is not this journal's to adopt`);
    }
    db.prepare(
      `INSERT INTO slots (instance, slot_time_ms, status, reason, run_id, claimed_at_ms, finished_at_ms) VALUES (?, ?, 'done', ?, NULL, ?, ?)`,
    ).run(instance, slotTimeMs, adoption.reason, nowMs, nowMs);
    db.prepare(
      `INSERT INTO intents (intent_id, instance, slot_time_ms, idx, kind, params, client_order_id, status, attempts, result, error_code,
         error_message, created_at_ms, updated_at_ms, sent_at_ms, origin, account)
       VALUES (?, ?, ?, ?, 'buy-stock-market', ?, ?, 'done', 0, ?, NULL, NULL, ?, ?, ?, 'adopted', ?)`,
    ).run(
      intentId,
      instance,
      slotTimeMs,
      index,
      encodeIntentParams(intent),
      order.clientOrderId,
      JSON.stringify(result),
      nowMs,
      nowMs,
      Math.round(order.createdAtSec * 1000),
      adoption.account ?? null,
    );
    const transition = recordOrderSnapshotIn(db, order, { intentId }, nowMs);
    for (const spend of adoptedSpends(adoption, intentId)) recordSpendIn(db, spend, nowMs);
    const finding = insertFinding(db, adoptedFinding(adoption), nowMs);
    const row = db.prepare('SELECT * FROM intents WHERE intent_id = ?').get(intentId);
    if (row === undefined) throw new StoreError('not-found', `adopted intent ${intentId} vanished`);
    return { intent: intentFromRow(row), transition, finding };
  });
}

export function recordSecondOrder(db: DatabaseSync, second: SecondOrder, nowMs: number): OrderTransition | null {
  return transaction(db, () => {
    const row = db.prepare('SELECT client_order_id FROM intents WHERE intent_id = ?').get(second.intentId);
    checkSecondOrder(second, row === undefined ? null : { clientOrderId: row['client_order_id'] === null ? null : String(row['client_order_id']) });
    const transition = recordOrderSnapshotIn(db, second.order, { intentId: second.intentId }, nowMs);
    for (const spend of adoptedSpends(second, secondOrderReservationId(second.intentId, second.order.orderId))) recordSpendIn(db, spend, nowMs);
    if (second.finding !== null) insertFinding(db, second.finding, nowMs);
    return transition;
  });
}

export function recordFinding(db: DatabaseSync, finding: NewLedgerFinding, nowMs: number): LedgerFinding {
  return transaction(db, () => insertFinding(db, finding, nowMs));
}

export function listFindings(db: DatabaseSync, query: { readonly unacknowledged?: boolean; readonly limit?: number }): LedgerFinding[] {
  return db
    .prepare(
      `SELECT * FROM ledger_findings WHERE (:open = 0 OR acknowledged_at_ms IS NULL)
       ORDER BY found_at_ms DESC, finding_id DESC LIMIT :limit`,
    )
    .all({ open: query.unacknowledged === true ? 1 : 0, limit: query.limit ?? -1 })
    .map(findingFromRow);
}

export function acknowledgeFindings(db: DatabaseSync, nowMs: number): number {
  return transaction(db, () => Number(db.prepare('UPDATE ledger_findings SET acknowledged_at_ms = ? WHERE acknowledged_at_ms IS NULL').run(nowMs).changes));
}

export function ledgerCheckedThrough(db: DatabaseSync): number | null {
  return metaTime(db, CHECKED_THROUGH_KEY);
}

export function setLedgerCheckedThrough(db: DatabaseSync, atMs: number): void {
  setMetaTime(db, CHECKED_THROUGH_KEY, atMs);
}

export function spendCountedThrough(db: DatabaseSync): number | null {
  return metaTime(db, SPEND_COUNTED_KEY);
}

export function setSpendCountedThrough(db: DatabaseSync, atMs: number): void {
  setMetaTime(db, SPEND_COUNTED_KEY, atMs);
}

function metaTime(db: DatabaseSync, key: string): number | null {
  const row = db.prepare('SELECT value FROM journal_meta WHERE key = ?').get(key);
  if (row === undefined) return null;
  const value = Number(row['value']);
  if (!Number.isSafeInteger(value)) throw new StoreError('corrupt', `journal_meta ${key} is not a time: ${String(row['value'])}`);
  return value;
}

function setMetaTime(db: DatabaseSync, key: string, atMs: number): void {
  checkLedgerTime(atMs);
  transaction(db, () => {
    db.prepare('INSERT INTO journal_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(key, String(atMs));
  });
}

function insertFinding(db: DatabaseSync, finding: NewLedgerFinding, nowMs: number): LedgerFinding {
  checkFinding(finding);
  const inserted = db
    .prepare(
      `INSERT INTO ledger_findings (kind, instance, client_order_id, order_id, market, detail, found_at_ms, acknowledged_at_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(finding.kind, finding.instance, finding.clientOrderId, finding.orderId, finding.market, finding.detail, nowMs, finding.acknowledged === true ? nowMs : null);
  const row = db.prepare('SELECT * FROM ledger_findings WHERE finding_id = ?').get(Number(inserted.lastInsertRowid));
  if (row === undefined) throw new StoreError('not-found', 'a finding vanished as it was written');
  return findingFromRow(row);
}

