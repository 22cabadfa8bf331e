import type { DatabaseSync } from 'node:sqlite';
import type { Intent } from '../domain/intent.ts';
import { StoreError } from './errors.ts';
import { encodeIntentParams } from './intent-codec.ts';
import type {
  FlexOperationInput,
  FlexOperationRecord,
  IntentQuery,
  IntentRecord,
  IntentUpdate,
  NewIntent,
  SlotKey,
  TransferInput,
  TransferRecord,
} from './journal.ts';
import { applyIntentUpdate, checkOperationStatus, checkStateChange, newIntentFields, operationMoney } from './journal-rules.ts';
import { flexFromRow, intentFromRow, transferFromRow } from './journal-rows.ts';
import { transaction } from './sqlite-db.ts';

/**
 * Journal intents of a claimed slot. Runs inside the caller's transaction (the claim's, or
 * addIntents'): the slot row is checked here so an intent can never be added to a finished slot.
 */
export function insertIntents(db: DatabaseSync, slot: SlotKey, intents: readonly NewIntent[], nowMs: number): IntentRecord[] {
  const slotRow = db.prepare('SELECT status FROM slots WHERE instance = ? AND slot_time_ms = ?').get(slot.instance, slot.slotTimeMs);
  if (slotRow === undefined) throw new StoreError('not-found', `slot ${slot.instance}@${slot.slotTimeMs} was never claimed`);
  if (slotRow['status'] !== 'claimed') {
    throw new StoreError('illegal-transition', `slot ${slot.instance}@${slot.slotTimeMs} is ${String(slotRow['status'])}: intents go only into a claimed slot`);
  }
  const insert = db.prepare(
    `INSERT INTO intents (intent_id, instance, slot_time_ms, idx, kind, params, client_order_id, status, attempts, result, error_code,
       error_message, created_at_ms, updated_at_ms, account)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, NULL, ?, ?, ?, ?, ?)`,
  );
  const ids: string[] = [];
  for (const entry of intents) {
    const { intent } = entry;
    const { intentId, clientOrderId, status, error, account } = newIntentFields(slot, entry);
    if (intent.kind === 'set-state') applyState(db, slot.instance, { [intent.key]: intent.value }, nowMs);
    insert.run(
      intentId,
      slot.instance,
      slot.slotTimeMs,
      entry.index,
      intent.kind,
      encodeIntentParams(intent),
      clientOrderId,
      status,
      error?.code ?? null,
      error?.message ?? null,
      nowMs,
      nowMs,
      account,
    );
    ids.push(intentId);
  }
  return ids.map((id) => requireIntent(db, id));
}

export function updateIntent(db: DatabaseSync, intentId: string, update: IntentUpdate, nowMs: number): IntentRecord {
  return transaction(db, () => {
    const current = requireIntent(db, intentId);
    const { error, result: next, sent } = applyIntentUpdate(current, update);
    const result = next === null ? null : JSON.stringify(next);
    db.prepare(
      `UPDATE intents SET status = ?, attempts = attempts + ?, result = ?, error_code = ?, error_message = ?, updated_at_ms = ?,
         sent_at_ms = coalesce(sent_at_ms, ?)
       WHERE intent_id = ?`,
    ).run(update.status, sent ? 1 : 0, result, error?.code ?? null, error?.message ?? null, nowMs, sent ? nowMs : null, intentId);
    return requireIntent(db, intentId);
  });
}

export function getIntent(db: DatabaseSync, intentId: string): IntentRecord | null {
  const row = db.prepare('SELECT * FROM intents WHERE intent_id = ?').get(intentId);
  return row === undefined ? null : intentFromRow(row);
}

export function findIntentByClientOrderId(db: DatabaseSync, clientOrderId: string): IntentRecord | null {
  const row = db.prepare('SELECT * FROM intents WHERE client_order_id = ?').get(clientOrderId);
  return row === undefined ? null : intentFromRow(row);
}

export function listIntents(db: DatabaseSync, query: IntentQuery): IntentRecord[] {
  // Only the conditions given go into the SQL, so SQLite can use the (instance, slot, idx)
  // index: a slot's intents are read on every slot, and a scan would grow with the journal.
  const where: string[] = [];
  const params: Record<string, string | number> = { limit: query.limit ?? -1 };
  if (query.instance !== undefined) {
    where.push('instance = :instance');
    params['instance'] = query.instance;
  }
  if (query.slotTimeMs !== undefined) {
    where.push('slot_time_ms = :slot');
    params['slot'] = query.slotTimeMs;
  }
  if (query.statuses !== undefined) {
    where.push('status IN (SELECT value FROM json_each(:statuses))');
    params['statuses'] = JSON.stringify(query.statuses);
  }
  return db
    .prepare(`SELECT * FROM intents ${where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`} ORDER BY slot_time_ms DESC, instance, idx LIMIT :limit`)
    .all(params)
    .map(intentFromRow);
}

export function hasUnresolvedIntents(db: DatabaseSync): boolean {
  return db.prepare("SELECT 1 FROM intents WHERE status IN ('pending', 'sent', 'unknown') LIMIT 1").get() !== undefined;
}

export function unresolvedIntents(db: DatabaseSync): IntentRecord[] {
  return db
    .prepare("SELECT * FROM intents WHERE status IN ('pending', 'sent', 'unknown') ORDER BY created_at_ms, slot_time_ms, instance, idx")
    .all()
    .map(intentFromRow);
}

/** Set (text) or delete (null) strategy state keys; runs inside the caller's transaction. */
export function applyState(db: DatabaseSync, instance: string, changes: Readonly<Record<string, string | null>>, nowMs: number): void {
  const upsert = db.prepare(
    `INSERT INTO strategy_state (instance, key, value, updated_at_ms) VALUES (?, ?, ?, ?)
     ON CONFLICT (instance, key) DO UPDATE SET value = excluded.value, updated_at_ms = excluded.updated_at_ms`,
  );
  const remove = db.prepare('DELETE FROM strategy_state WHERE instance = ? AND key = ?');
  for (const [key, value] of Object.entries(changes)) {
    checkStateChange(key, value);
    if (value === null) remove.run(instance, key);
    else upsert.run(instance, key, value, nowMs);
  }
}

export function recordFlexOperation(db: DatabaseSync, op: FlexOperationInput, nowMs: number): FlexOperationRecord {
  checkOperation(db, op.intentId, 'flex-withdraw', op.status);
  return transaction(db, () => {
    db.prepare(
      `INSERT INTO flex_operations (intent_id, plan, amount, transaction_id, status, created_at_ms, updated_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (intent_id) DO UPDATE SET plan = excluded.plan, amount = excluded.amount,
         transaction_id = coalesce(excluded.transaction_id, transaction_id), status = excluded.status, updated_at_ms = excluded.updated_at_ms`,
    ).run(op.intentId, op.plan, operationMoney(op.amount), op.transactionId, op.status, nowMs, nowMs);
    const row = db.prepare('SELECT * FROM flex_operations WHERE intent_id = ?').get(op.intentId);
    if (row === undefined) throw new StoreError('not-found', `flex operation ${op.intentId} vanished`);
    return flexFromRow(row);
  });
}

export function recordTransfer(db: DatabaseSync, transfer: TransferInput, nowMs: number): TransferRecord {
  checkOperation(db, transfer.intentId, 'transfer', transfer.status);
  return transaction(db, () => {
    db.prepare(
      `INSERT INTO transfers (intent_id, ticker, amount, from_account, to_account, status, created_at_ms, updated_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (intent_id) DO UPDATE SET ticker = excluded.ticker, amount = excluded.amount, from_account = excluded.from_account,
         to_account = excluded.to_account, status = excluded.status, updated_at_ms = excluded.updated_at_ms`,
    ).run(transfer.intentId, transfer.ticker, operationMoney(transfer.amount), transfer.from, transfer.to, transfer.status, nowMs, nowMs);
    return requireTransfer(db, transfer.intentId);
  });
}

export function flexOperationOf(db: DatabaseSync, intentId: string): FlexOperationRecord | null {
  const row = db.prepare('SELECT * FROM flex_operations WHERE intent_id = ?').get(intentId);
  return row === undefined ? null : flexFromRow(row);
}

export function transferOf(db: DatabaseSync, intentId: string): TransferRecord | null {
  const row = db.prepare('SELECT * FROM transfers WHERE intent_id = ?').get(intentId);
  return row === undefined ? null : transferFromRow(row);
}

function requireTransfer(db: DatabaseSync, intentId: string): TransferRecord {
  const found = transferOf(db, intentId);
  if (found === null) throw new StoreError('not-found', `transfer ${intentId} vanished`);
  return found;
}

function requireIntent(db: DatabaseSync, intentId: string): IntentRecord {
  const found = getIntent(db, intentId);
  if (found === null) throw new StoreError('not-found', `no intent ${intentId}`);
  return found;
}




function checkOperation(db: DatabaseSync, intentId: string, kind: Intent['kind'], status: string): void {
  const row = db.prepare('SELECT kind FROM intents WHERE intent_id = ?').get(intentId);
  if (row === undefined) throw new StoreError('not-found', `no intent ${intentId}`);
  if (row['kind'] !== kind) throw new StoreError('invalid-argument', `intent ${intentId} is a ${String(row['kind'])}, not a ${kind}`);
  checkOperationStatus(status);
}

