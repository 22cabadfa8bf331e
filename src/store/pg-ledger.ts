import { StoreError } from './errors.ts';
import { encodeIntentParams } from './intent-codec.ts';
import { type AdoptedOrder, type LedgerFinding, type NewLedgerFinding, type OrderAdoption, type OrderTransition, type SecondOrder, secondOrderReservationId } from './journal.ts';
import { findingFromRow } from './journal-rows.ts';
import { adoptedFinding, adoptedIntent, adoptedSpends, checkFinding, checkLedgerTime, checkSecondOrder } from './journal-rules.ts';
import { recordSpend } from './pg-budgets.ts';
import type { Tx } from './pg-db.ts';
import { requireIntent } from './pg-intents.ts';
import { recordOrderSnapshot } from './pg-orders.ts';

/** The PostgreSQL journal's side of "the exchange is the second ledger"; each function runs inside the caller's transaction. */

const CHECKED_THROUGH_KEY = 'ledger_checked_through_ms';
const SPEND_COUNTED_KEY = 'spend_counted_through_ms';

export async function adoptOrder(tx: Tx, adoption: OrderAdoption, nowMs: number): Promise<AdoptedOrder> {
  const { order, instance, slotTimeMs, index } = adoption;
  const { intentId, intent, result } = adoptedIntent(adoption);
  const slot = await tx.one('SELECT status FROM slots WHERE instance = $1 AND slot_time_ms = $2', [instance, slotTimeMs]);
  if (slot !== null) {
    throw new StoreError('conflict', `slot ${instance}@${slotTimeMs} is journalled (${String(slot['status'])}): order ${order.orderId} (${order.clientOrderId}) is not this journal's to adopt`);
  }
  await tx.run(`INSERT INTO slots (instance, slot_time_ms, status, reason, run_id, claimed_at_ms, finished_at_ms) VALUES ($1, $2, 'done', $3, NULL, $4, $4)`, [instance, slotTimeMs, adoption.reason, nowMs]);
  await tx.run(
    `INSERT INTO intents (intent_id, instance, slot_time_ms, idx, kind, params, client_order_id, status, attempts, result, error_code,
       error_message, created_at_ms, updated_at_ms, sent_at_ms, origin, account)
     VALUES ($1, $2, $3, $4, 'buy-stock-market', $5, $6, 'done', 0, $7, NULL, NULL, $8, $8, $9, 'adopted', $10)`,
    [intentId, instance, slotTimeMs, index, encodeIntentParams(intent), order.clientOrderId, JSON.stringify(result), nowMs, Math.round(order.createdAtSec * 1000), adoption.account ?? null],
  );
  const transition = await recordOrderSnapshot(tx, order, { intentId }, nowMs);
  for (const spend of adoptedSpends(adoption, intentId)) await recordSpend(tx, spend, nowMs);
  const finding = await insertFinding(tx, adoptedFinding(adoption), nowMs);
  return { intent: await requireIntent(tx, intentId), transition, finding };
}

export async function recordSecondOrder(tx: Tx, second: SecondOrder, nowMs: number): Promise<OrderTransition | null> {
  const row = await tx.one('SELECT client_order_id FROM intents WHERE intent_id = $1', [second.intentId]);
  checkSecondOrder(second, row === null ? null : { clientOrderId: row['client_order_id'] === null ? null : String(row['client_order_id']) });
  const transition = await recordOrderSnapshot(tx, second.order, { intentId: second.intentId }, nowMs);
  for (const spend of adoptedSpends(second, secondOrderReservationId(second.intentId, second.order.orderId))) await recordSpend(tx, spend, nowMs);
  if (second.finding !== null) await insertFinding(tx, second.finding, nowMs);
  return transition;
}

export async function insertFinding(tx: Tx, finding: NewLedgerFinding, nowMs: number): Promise<LedgerFinding> {
  checkFinding(finding);
  const row = await tx.one(
    `INSERT INTO ledger_findings (kind, instance, client_order_id, order_id, market, detail, found_at_ms, acknowledged_at_ms)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
    [finding.kind, finding.instance, finding.clientOrderId, finding.orderId, finding.market, finding.detail, nowMs, finding.acknowledged === true ? nowMs : null],
  );
  if (row === null) throw new StoreError('not-found', 'a finding vanished as it was written');
  return findingFromRow(row);
}

export async function listFindings(tx: Tx, query: { readonly unacknowledged?: boolean; readonly limit?: number }): Promise<LedgerFinding[]> {
  const rows = await tx.rows(
    `SELECT * FROM ledger_findings WHERE (NOT $1::boolean OR acknowledged_at_ms IS NULL)
     ORDER BY found_at_ms DESC, finding_id DESC LIMIT $2`,
    [query.unacknowledged === true, query.limit === undefined || query.limit < 0 ? null : query.limit],
  );
  return rows.map(findingFromRow);
}

export async function acknowledgeFindings(tx: Tx, nowMs: number): Promise<number> {
  return tx.run('UPDATE ledger_findings SET acknowledged_at_ms = $1 WHERE acknowledged_at_ms IS NULL', [nowMs]);
}

export function ledgerCheckedThrough(tx: Tx): Promise<number | null> {
  return metaTime(tx, CHECKED_THROUGH_KEY);
}

export function setLedgerCheckedThrough(tx: Tx, atMs: number): Promise<void> {
  return setMetaTime(tx, CHECKED_THROUGH_KEY, atMs);
}

export function spendCountedThrough(tx: Tx): Promise<number | null> {
  return metaTime(tx, SPEND_COUNTED_KEY);
}

export function setSpendCountedThrough(tx: Tx, atMs: number): Promise<void> {
  return setMetaTime(tx, SPEND_COUNTED_KEY, atMs);
}

async function metaTime(tx: Tx, key: string): Promise<number | null> {
  const row = await tx.one('SELECT value FROM journal_meta WHERE key = $1', [key]);
  if (row === null) return null;
  const value = Number(row['value']);
  if (!Number.isSafeInteger(value)) throw new StoreError('corrupt', `journal_meta ${key} is not a time: ${String(row['value'])}`);
  return value;
}

async function setMetaTime(tx: Tx, key: string, atMs: number): Promise<void> {
  checkLedgerTime(atMs);
  await setMeta(tx, key, String(atMs));
}

export async function setMeta(tx: Tx, key: string, value: string): Promise<void> {
  await tx.run('INSERT INTO journal_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [key, value]);
}

export async function getMeta(tx: Tx, key: string): Promise<string | null> {
  const row = await tx.one('SELECT value FROM journal_meta WHERE key = $1', [key]);
  return row === null ? null : String(row['value']);
}
