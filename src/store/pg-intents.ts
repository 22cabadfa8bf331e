import type { Intent } from '../domain/intent.ts';
import { StoreError } from './errors.ts';
import { encodeIntentParams } from './intent-codec.ts';
import type { FlexOperationInput, FlexOperationRecord, IntentQuery, IntentRecord, IntentUpdate, NewIntent, SlotKey, TransferInput, TransferRecord } from './journal.ts';
import { flexFromRow, intentFromRow, transferFromRow } from './journal-rows.ts';
import { applyIntentUpdate, checkOperationStatus, checkStateChange, newIntentFields, operationMoney } from './journal-rules.ts';
import type { Tx } from './pg-db.ts';

/** Intents, strategy state, flex operations and transfers of the PostgreSQL journal; each function runs inside the caller's transaction. */

/** Journal intents of a claimed slot: the slot row is checked (and locked) here so an intent never joins a finished slot. */
export async function insertIntents(tx: Tx, slot: SlotKey, intents: readonly NewIntent[], nowMs: number): Promise<IntentRecord[]> {
  const slotRow = await tx.one('SELECT status FROM slots WHERE instance = $1 AND slot_time_ms = $2 FOR UPDATE', [slot.instance, slot.slotTimeMs]);
  if (slotRow === null) throw new StoreError('not-found', `slot ${slot.instance}@${slot.slotTimeMs} was never claimed`);
  if (slotRow['status'] !== 'claimed') {
    throw new StoreError('illegal-transition', `slot ${slot.instance}@${slot.slotTimeMs} is ${String(slotRow['status'])}: intents go only into a claimed slot`);
  }
  const ids: string[] = [];
  for (const entry of intents) {
    const { intent } = entry;
    const { intentId, clientOrderId, status, error, account } = newIntentFields(slot, entry);
    if (intent.kind === 'set-state') await applyState(tx, slot.instance, { [intent.key]: intent.value }, nowMs);
    await tx.run(
      `INSERT INTO intents (intent_id, instance, slot_time_ms, idx, kind, params, client_order_id, status, attempts, result, error_code,
         error_message, created_at_ms, updated_at_ms, account)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0, NULL, $9, $10, $11, $11, $12)`,
      [intentId, slot.instance, slot.slotTimeMs, entry.index, intent.kind, encodeIntentParams(intent), clientOrderId, status, error?.code ?? null, error?.message ?? null, nowMs, account],
    );
    ids.push(intentId);
  }
  const records: IntentRecord[] = [];
  for (const id of ids) records.push(await requireIntent(tx, id));
  return records;
}

export async function updateIntent(tx: Tx, intentId: string, update: IntentUpdate, nowMs: number): Promise<IntentRecord> {
  const current = await requireIntent(tx, intentId);
  const { error, result: next, sent } = applyIntentUpdate(current, update);
  await tx.run(
    `UPDATE intents SET status = $1, attempts = attempts + $2, result = $3, error_code = $4, error_message = $5, updated_at_ms = $6,
       sent_at_ms = coalesce(sent_at_ms, $7)
     WHERE intent_id = $8`,
    [update.status, sent ? 1 : 0, next === null ? null : JSON.stringify(next), error?.code ?? null, error?.message ?? null, nowMs, sent ? nowMs : null, intentId],
  );
  return requireIntent(tx, intentId);
}

export async function getIntent(tx: Tx, intentId: string): Promise<IntentRecord | null> {
  const row = await tx.one('SELECT * FROM intents WHERE intent_id = $1', [intentId]);
  return row === null ? null : intentFromRow(row);
}

export async function findIntentByClientOrderId(tx: Tx, clientOrderId: string): Promise<IntentRecord | null> {
  const row = await tx.one('SELECT * FROM intents WHERE client_order_id = $1', [clientOrderId]);
  return row === null ? null : intentFromRow(row);
}

export async function listIntents(tx: Tx, query: IntentQuery): Promise<IntentRecord[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (condition: (n: string) => string, value: unknown): void => {
    params.push(value);
    where.push(condition(`$${params.length}`));
  };
  if (query.instance !== undefined) add((n) => `instance = ${n}`, query.instance);
  if (query.slotTimeMs !== undefined) add((n) => `slot_time_ms = ${n}`, query.slotTimeMs);
  if (query.statuses !== undefined) add((n) => `status = ANY(${n}::text[])`, [...query.statuses]);
  params.push(limitOrAll(query.limit));
  const rows = await tx.rows(
    `SELECT * FROM intents ${where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`} ORDER BY slot_time_ms DESC, instance, idx LIMIT $${params.length}`,
    params,
  );
  return rows.map(intentFromRow);
}

export async function hasUnresolvedIntents(tx: Tx): Promise<boolean> {
  return (await tx.rows("SELECT 1 FROM intents WHERE status IN ('pending', 'sent', 'unknown') LIMIT 1")).length > 0;
}

export async function unresolvedIntents(tx: Tx): Promise<IntentRecord[]> {
  const rows = await tx.rows("SELECT * FROM intents WHERE status IN ('pending', 'sent', 'unknown') ORDER BY created_at_ms, slot_time_ms, instance, idx");
  return rows.map(intentFromRow);
}

/** Set (text) or delete (null) strategy state keys. */
export async function applyState(tx: Tx, instance: string, changes: Readonly<Record<string, string | null>>, nowMs: number): Promise<void> {
  for (const [key, value] of Object.entries(changes)) {
    checkStateChange(key, value);
    if (value === null) await tx.run('DELETE FROM strategy_state WHERE instance = $1 AND key = $2', [instance, key]);
    else {
      await tx.run(
        `INSERT INTO strategy_state (instance, key, value, updated_at_ms) VALUES ($1, $2, $3, $4)
         ON CONFLICT (instance, key) DO UPDATE SET value = excluded.value, updated_at_ms = excluded.updated_at_ms`,
        [instance, key, value, nowMs],
      );
    }
  }
}

export async function recordFlexOperation(tx: Tx, op: FlexOperationInput, nowMs: number): Promise<FlexOperationRecord> {
  await checkOperation(tx, op.intentId, 'flex-withdraw', op.status);
  await tx.run(
    `INSERT INTO flex_operations (intent_id, plan, amount, transaction_id, status, created_at_ms, updated_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $6)
     ON CONFLICT (intent_id) DO UPDATE SET plan = excluded.plan, amount = excluded.amount,
       transaction_id = coalesce(excluded.transaction_id, flex_operations.transaction_id), status = excluded.status, updated_at_ms = excluded.updated_at_ms`,
    [op.intentId, op.plan, operationMoney(op.amount), op.transactionId, op.status, nowMs],
  );
  const found = await flexOperationOf(tx, op.intentId);
  if (found === null) throw new StoreError('not-found', `flex operation ${op.intentId} vanished`);
  return found;
}

export async function recordTransfer(tx: Tx, transfer: TransferInput, nowMs: number): Promise<TransferRecord> {
  await checkOperation(tx, transfer.intentId, 'transfer', transfer.status);
  await tx.run(
    `INSERT INTO transfers (intent_id, ticker, amount, from_account, to_account, status, created_at_ms, updated_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
     ON CONFLICT (intent_id) DO UPDATE SET ticker = excluded.ticker, amount = excluded.amount, from_account = excluded.from_account,
       to_account = excluded.to_account, status = excluded.status, updated_at_ms = excluded.updated_at_ms`,
    [transfer.intentId, transfer.ticker, operationMoney(transfer.amount), transfer.from, transfer.to, transfer.status, nowMs],
  );
  const found = await transferOf(tx, transfer.intentId);
  if (found === null) throw new StoreError('not-found', `transfer ${transfer.intentId} vanished`);
  return found;
}

export async function flexOperationOf(tx: Tx, intentId: string): Promise<FlexOperationRecord | null> {
  const row = await tx.one('SELECT * FROM flex_operations WHERE intent_id = $1', [intentId]);
  return row === null ? null : flexFromRow(row);
}

export async function transferOf(tx: Tx, intentId: string): Promise<TransferRecord | null> {
  const row = await tx.one('SELECT * FROM transfers WHERE intent_id = $1', [intentId]);
  return row === null ? null : transferFromRow(row);
}

export async function requireIntent(tx: Tx, intentId: string): Promise<IntentRecord> {
  const found = await getIntent(tx, intentId);
  if (found === null) throw new StoreError('not-found', `no intent ${intentId}`);
  return found;
}

/** A LIMIT parameter: a missing or negative limit (SQLite's -1) lists everything (LIMIT NULL). */
export function limitOrAll(limit: number | undefined): number | null {
  return limit === undefined || limit < 0 ? null : limit;
}

async function checkOperation(tx: Tx, intentId: string, kind: Intent['kind'], status: string): Promise<void> {
  const row = await tx.one('SELECT kind FROM intents WHERE intent_id = $1', [intentId]);
  if (row === null) throw new StoreError('not-found', `no intent ${intentId}`);
  if (row['kind'] !== kind) throw new StoreError('invalid-argument', `intent ${intentId} is a ${String(row['kind'])}, not a ${kind}`);
  checkOperationStatus(status);
}
