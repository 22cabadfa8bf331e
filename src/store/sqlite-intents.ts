import type { DatabaseSync } from 'node:sqlite';
import { deriveClientOrderId } from '../domain/client-order-id.ts';
import type { Intent } from '../domain/intent.ts';
import { isMoneyIntent } from '../domain/intent.ts';
import { type Decimal, formatDecimal, isDecimal } from '../domain/money.ts';
import { StoreError } from './errors.ts';
import { encodeIntentParams, encodeTextMap } from './intent-codec.ts';
import {
  type FlexOperationInput,
  type FlexOperationRecord,
  INTENT_TRANSITIONS,
  type IntentError,
  type IntentQuery,
  type IntentRecord,
  type IntentStatus,
  type IntentUpdate,
  type NewIntent,
  OPERATION_STATUSES,
  type SlotKey,
  type TransferInput,
  type TransferRecord,
} from './journal.ts';
import { flexFromRow, intentFromRow, transferFromRow } from './sqlite-rows.ts';
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
       error_message, created_at_ms, updated_at_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, NULL, ?, ?, ?, ?)`,
  );
  const ids: string[] = [];
  for (const entry of intents) {
    const { intent } = entry;
    const intentId = derive(slot, entry.index, undefined);
    const clientOrderId = intent.kind === 'buy-stock-market' ? derive(slot, entry.index, intent.tag ?? entry.clientOrderIdPrefix) : null;
    const { status, error } = initialStatus(entry);
    if (entry.refusal !== undefined) checkError(entry.refusal);
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
    );
    ids.push(intentId);
  }
  return ids.map((id) => requireIntent(db, id));
}

export function updateIntent(db: DatabaseSync, intentId: string, update: IntentUpdate, nowMs: number): IntentRecord {
  return transaction(db, () => {
    const current = requireIntent(db, intentId);
    if (!INTENT_TRANSITIONS[current.status].includes(update.status)) {
      throw new StoreError('illegal-transition', `intent ${intentId} is ${current.status}; it cannot become ${update.status}`);
    }
    const error = 'error' in update ? checkError(update.error) : update.status === 'done' ? null : current.error;
    const result = 'result' in update && update.result !== undefined ? encodeTextMap(update.result, 'result') : current.result === null ? null : JSON.stringify(current.result);
    const sent = update.status === 'sent';
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
    if (key === '') throw new StoreError('invalid-argument', 'a state key must be non-empty');
    if (value === null) remove.run(instance, key);
    else if (typeof value === 'string') upsert.run(instance, key, value, nowMs);
    else throw new StoreError('invalid-argument', `state ${key} must be text or null`);
  }
}

export function recordFlexOperation(db: DatabaseSync, op: FlexOperationInput, nowMs: number): FlexOperationRecord {
  checkOperation(db, op.intentId, 'flex-withdraw', op.status);
  return transaction(db, () => {
    db.prepare(
      `INSERT INTO flex_operations (intent_id, plan, amount, transaction_id, status, created_at_ms, updated_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (intent_id) DO UPDATE SET plan = excluded.plan, amount = excluded.amount,
         transaction_id = coalesce(excluded.transaction_id, transaction_id), status = excluded.status, updated_at_ms = excluded.updated_at_ms`,
    ).run(op.intentId, op.plan, money(op.amount), op.transactionId, op.status, nowMs, nowMs);
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
    ).run(transfer.intentId, transfer.ticker, money(transfer.amount), transfer.from, transfer.to, transfer.status, nowMs, nowMs);
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

function derive(slot: SlotKey, index: number, prefix: string | undefined): string {
  try {
    return deriveClientOrderId(slot.instance, slot.slotTimeMs, index, prefix);
  } catch (error) {
    throw new StoreError('invalid-argument', `intent ${index} of ${slot.instance}@${slot.slotTimeMs}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function initialStatus(entry: NewIntent): { status: IntentStatus; error: IntentError | null } {
  const intent: Intent = entry.intent;
  if (isMoneyIntent(intent)) return entry.refusal === undefined ? { status: 'pending', error: null } : { status: 'refused', error: entry.refusal };
  if (intent.kind === 'refusal') return { status: 'refused', error: { code: intent.reason, message: intent.message } };
  return { status: 'done', error: null };
}

function checkError(error: IntentError): IntentError {
  if (typeof error.code !== 'string' || error.code === '' || typeof error.message !== 'string') {
    throw new StoreError('invalid-argument', 'an intent error needs a non-empty code and a message');
  }
  return error;
}

function checkOperation(db: DatabaseSync, intentId: string, kind: Intent['kind'], status: string): void {
  const row = db.prepare('SELECT kind FROM intents WHERE intent_id = ?').get(intentId);
  if (row === undefined) throw new StoreError('not-found', `no intent ${intentId}`);
  if (row['kind'] !== kind) throw new StoreError('invalid-argument', `intent ${intentId} is a ${String(row['kind'])}, not a ${kind}`);
  if (!(OPERATION_STATUSES as readonly string[]).includes(status)) throw new StoreError('invalid-argument', `unknown operation status ${JSON.stringify(status)}`);
}

function money(value: Decimal): string {
  if (!isDecimal(value) || !value.isFinite()) throw new StoreError('invalid-argument', 'amount must be a finite Decimal');
  return formatDecimal(value);
}
