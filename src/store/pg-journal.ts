import { REBUILD_COMMAND } from './journal-identity.ts';
import { randomUUID } from 'node:crypto';
import type { Decimal } from '../domain/money.ts';
import type { Order } from '../domain/order.ts';
import { StoreError } from './errors.ts';
import type {
  AdoptedOrder,
  BudgetDecision,
  BudgetReservation,
  BudgetReserveRequest,
  BudgetScope,
  BudgetSpent,
  FlexOperationInput,
  FlexOperationRecord,
  IntentQuery,
  IntentRecord,
  IntentUpdate,
  Journal,
  JournalEntry,
  JournalWriteFailure,
  LedgerFinding,
  OperatorControlChange,
  OperatorControls,
  NewIntent,
  NewLedgerFinding,
  OrderAdoption,
  OrderLink,
  ChangedOrder,
  ChangedOrdersQuery,
  OrderQuery,
  OrderTransition,
  RunRecord,
  RunStart,
  SecondOrder,
  SlotClaim,
  SlotFinish,
  SlotKey,
  SlotQuery,
  SlotRecord,
  SlotSkip,
  StoredOrder,
  TransferInput,
  TransferRecord,
} from './journal.ts';
import { controlTarget, controlsFromRows, runFromRow, slotFromRow } from './journal-rows.ts';
import { accountStateKey, checkAccountState, checkFinishStatus, checkOperatorControl, checkScheduled, checkSkipStatus, checkSlotKey } from './journal-rules.ts';
import * as budgets from './pg-budgets.ts';
import { PG_FAILURE_KINDS, type PgPool, type Tx, asStoreError, describeLocation, inTransaction, isMissingJournal, openPool } from './pg-db.ts';
import { WriteFailureWatch } from './write-failure.ts';
import * as intents from './pg-intents.ts';
import * as ledger from './pg-ledger.ts';
import { PULSE_KEY, formatPulse } from './pg-lease-pulse.ts';
import { PG_MIGRATIONS, migratePg, verifyPgSchema } from './pg-migrations.ts';
import { type JournalMigration, journalMigration } from './migrations.ts';
import * as orders from './pg-orders.ts';

export interface PgJournalOptions {
  /** postgres://… (its password is never printed: `where` shows it redacted). */
  readonly url: string;
  /** The schema of this journal's tables: one per mode, as SQLite keeps one file per mode. */
  readonly schema: string;
  /** Readers such as `stacker orders` beside a running daemon: no migration, no writes. */
  readonly readOnly?: boolean;
  /** false: written but never migrated (SqliteJournalOptions.migrate). */
  readonly migrate?: boolean;
  readonly applicationName?: string;
  /** How long connecting, or any one query, may go unanswered before the operation fails as unwritable (pg-session.ts). */
  readonly timeoutMs?: number;
  readonly clock?: () => number;
  readonly newId?: () => string;
}

/**
 * The Journal in PostgreSQL (node-postgres), applying the same rules (journal-rules.ts) as
 * SqliteJournal over the same tables. Each operation is one transaction, SERIALIZABLE when it
 * writes (see pg-db.ts), committed with synchronous_commit=on: durable when its promise resolves.
 */
export class PgJournal implements Journal {
  /** Where the journal lives, for messages: the URL without its password, and the schema. */
  readonly where: string;
  readonly #options: PgJournalOptions;
  readonly #now: () => number;
  readonly #newId: () => string;
  #pool: PgPool | null = null;
  #journalId: string | null = null;
  readonly #writeFailure: WriteFailureWatch;
  /**
   * A read that could not reach the database. Slots and the daemon's checks read before they
   * write, so an outage would otherwise show only at the next write (the heartbeat, a minute
   * away) while /healthz says all is well. Kept apart from #writeFailure because a read
   * succeeding again proves the database is back, but not that it accepts writes.
   */
  readonly #readFailure: WriteFailureWatch;
  /** Set once this journal owns the database (takeOwnership): every write checks it is still the owner's. */
  #ownerToken: number | null = null;
  /** Pulses written under this ownership (renewLease). */
  #pulses = 0;
  #migrated: JournalMigration | null = null;

  constructor(options: PgJournalOptions) {
    this.#options = options;
    this.where = describeLocation(options.url, options.schema);
    this.#now = options.clock ?? Date.now;
    this.#writeFailure = new WriteFailureWatch(PG_FAILURE_KINDS, this.#now);
    this.#readFailure = new WriteFailureWatch(PG_FAILURE_KINDS, this.#now);
    this.#newId = options.newId ?? randomUUID;
  }

  /** SqliteJournal's name for `where`, so readers print either the same way. */
  get path(): string {
    return this.where;
  }

  async open(): Promise<void> {
    if (this.#pool !== null) return;
    const pool = openPool({
      url: this.#options.url,
      schema: this.#options.schema,
      ...(this.#options.readOnly === undefined ? {} : { readOnly: this.#options.readOnly }),
      ...(this.#options.applicationName === undefined ? {} : { applicationName: this.#options.applicationName }),
      ...(this.#options.timeoutMs === undefined ? {} : { timeoutMs: this.#options.timeoutMs }),
    });
    try {
      if (this.#options.readOnly === true || this.#options.migrate === false) await verifyPgSchema(pool, this.#options.schema, this.where);
      else this.#migrated = journalMigration(await migratePg(pool, this.#options.schema, this.where, this.#now), PG_MIGRATIONS, null);
      this.#pool = pool;
      this.#journalId = await this.journalId();
    } catch (error) {
      this.#pool = null;
      await pool.end().catch(() => undefined);
      throw asStoreError(error, `opening the journal ${this.where}`, this.#options.readOnly === true ? 'read' : 'write');
    }
  }

  /** What opening this journal migrated (from which schema); null when it needed nothing or was new. The copy to go back to is the operator's pg_dump. */
  get migrated(): JournalMigration | null {
    return this.#migrated;
  }

  async close(): Promise<void> {
    const pool = this.#pool;
    if (pool === null) return;
    this.#pool = null;
    await pool.end();
  }

  /**
   * Become the journal's owner: raise the lease token and keep it. From then on every write
   * transaction first checks the token is still ours, so once another daemon takes over, this
   * one journals nothing (StoreError `not-owner`) and, since nothing is sent that is not
   * journalled first, sends nothing. Under SERIALIZABLE the check and the takeover cannot
   * interleave: a write either happened before the takeover, where the new owner sees it, or fails.
   */
  takeOwnership(holder: string): Promise<number> {
    return this.#transaction('taking the journal over', 'write', async (tx) => {
      const row = await tx.one(
        `INSERT INTO journal_lease (id, token, holder, acquired_at_ms) VALUES (1, 1, $1, $2)
         ON CONFLICT (id) DO UPDATE SET token = journal_lease.token + 1, holder = excluded.holder, acquired_at_ms = excluded.acquired_at_ms
         RETURNING token`,
        [holder, this.#now()],
      );
      const token = Number(row?.['token']);
      this.#ownerToken = token;
      return token;
    });
  }

  /** This journal's identity (journal_meta `journal_id`, assigned by migration 3). */
  journalId(): Promise<string> {
    return this.#read('reading the journal id', async (tx) => {
      const id = await ledger.getMeta(tx, 'journal_id');
      if (id === null) throw new StoreError('corrupt', `${this.where} has no journal id`);
      return id;
    });
  }

  startRun(run: RunStart): Promise<RunRecord> {
    return this.#write('starting a run', async (tx) => {
      const mode = await ledger.getMeta(tx, 'mode');
      if (mode === null) await ledger.setMeta(tx, 'mode', run.mode);
      else if (mode !== run.mode) throw new StoreError('mode-mismatch', `${this.where} is the ${mode} journal; a ${run.mode} run must use its own schema`);
      await tx.run("UPDATE runs SET exit_reason = 'interrupted' WHERE ended_at_ms IS NULL AND exit_reason IS NULL");
      const runId = this.#newId();
      await tx.run('INSERT INTO runs (run_id, mode, started_at_ms, ended_at_ms, pid, version, exit_reason) VALUES ($1, $2, $3, NULL, $4, $5, NULL)', [
        runId,
        run.mode,
        this.#now(),
        run.pid,
        run.version,
      ]);
      return requireRun(tx, runId);
    });
  }

  finishRun(runId: string, exitReason: string): Promise<void> {
    return this.#write('finishing a run', async (tx) => {
      const run = await requireRun(tx, runId);
      if (run.endedAtMs !== null) throw new StoreError('illegal-transition', `run ${runId} already finished (${run.exitReason ?? ''})`);
      await tx.run('UPDATE runs SET ended_at_ms = $1, exit_reason = $2 WHERE run_id = $3', [this.#now(), exitReason, runId]);
    });
  }

  listRuns(limit = 20): Promise<RunRecord[]> {
    return this.#read('listing runs', async (tx) => (await tx.rows('SELECT * FROM runs ORDER BY started_at_ms DESC, run_id LIMIT $1', [intents.limitOrAll(limit)])).map(runFromRow));
  }

  claimSlot(claim: SlotClaim): Promise<boolean> {
    return this.#write(`claiming slot ${claim.instance}@${claim.slotTimeMs}`, async (tx) => {
      checkSlotKey(claim);
      const now = this.#now();
      // Two daemons racing for a slot: the unique key lets one insert; the other inserts nothing and is told false.
      const inserted = await tx.run(
        `INSERT INTO slots (instance, slot_time_ms, status, reason, run_id, claimed_at_ms, finished_at_ms) VALUES ($1, $2, 'claimed', NULL, $3, $4, NULL)
         ON CONFLICT (instance, slot_time_ms) DO NOTHING`,
        [claim.instance, claim.slotTimeMs, claim.runId, now],
      );
      if (inserted !== 1) return false;
      if (claim.intents !== undefined) await intents.insertIntents(tx, claim, claim.intents, now);
      return true;
    });
  }

  skipSlot(skip: SlotSkip): Promise<boolean> {
    return this.#write(`journalling ${skip.status} slot ${skip.instance}@${skip.slotTimeMs}`, async (tx) => {
      checkSlotKey(skip);
      checkSkipStatus(skip);
      const now = this.#now();
      const inserted = await tx.run(
        `INSERT INTO slots (instance, slot_time_ms, status, reason, run_id, claimed_at_ms, finished_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $6)
         ON CONFLICT (instance, slot_time_ms) DO NOTHING`,
        [skip.instance, skip.slotTimeMs, skip.status, skip.reason, skip.runId, now],
      );
      return inserted === 1;
    });
  }

  finishSlot(finish: SlotFinish): Promise<SlotRecord> {
    return this.#write(`finishing slot ${finish.instance}@${finish.slotTimeMs}`, async (tx) => {
      checkFinishStatus(finish);
      const current = await findSlot(tx, finish);
      if (current === null) throw new StoreError('not-found', `slot ${finish.instance}@${finish.slotTimeMs} was never claimed`);
      if (current.status !== 'claimed') throw new StoreError('illegal-transition', `slot ${finish.instance}@${finish.slotTimeMs} is already ${current.status}`);
      await tx.run('UPDATE slots SET status = $1, reason = $2, finished_at_ms = $3 WHERE instance = $4 AND slot_time_ms = $5', [
        finish.status,
        finish.reason ?? null,
        this.#now(),
        finish.instance,
        finish.slotTimeMs,
      ]);
      const done = await findSlot(tx, finish);
      if (done === null) throw new StoreError('not-found', `slot ${finish.instance}@${finish.slotTimeMs} vanished`);
      return done;
    });
  }

  getSlot(key: SlotKey): Promise<SlotRecord | null> {
    return this.#read('reading a slot', (tx) => findSlot(tx, key));
  }

  lastSlot(instance: string): Promise<SlotRecord | null> {
    return this.#read('reading the last slot', async (tx) => {
      const row = await tx.one('SELECT * FROM slots WHERE instance = $1 ORDER BY slot_time_ms DESC LIMIT 1', [instance]);
      return row === null ? null : slotFromRow(row);
    });
  }

  scheduledSince(instance: string): Promise<number | null> {
    return this.#read('reading when the instance was first scheduled', (tx) => readScheduledSince(tx, instance));
  }

  markScheduled(instance: string, sinceMs: number): Promise<number> {
    return this.#write(`recording that ${instance} is scheduled`, async (tx) => {
      checkScheduled(instance, sinceMs);
      await tx.run('INSERT INTO scheduled_instances (instance, since_ms) VALUES ($1, $2) ON CONFLICT (instance) DO NOTHING', [instance, sinceMs]);
      const kept = await readScheduledSince(tx, instance);
      if (kept === null) throw new StoreError('not-found', `${instance}'s scheduled-since time vanished`);
      return kept;
    });
  }

  listSlots(query: SlotQuery = {}): Promise<SlotRecord[]> {
    return this.#read('listing slots', async (tx) => {
      const where: string[] = [];
      const params: unknown[] = [];
      const add = (condition: (n: string) => string, value: unknown): void => {
        if (value === undefined) return;
        params.push(value);
        where.push(condition(`$${params.length}`));
      };
      add((n) => `status = ${n}`, query.status);
      add((n) => `instance = ${n}`, query.instance);
      add((n) => `slot_time_ms >= ${n}`, query.sinceMs);
      add((n) => `slot_time_ms < ${n}`, query.untilMs);
      params.push(intents.limitOrAll(query.limit));
      const rows = await tx.rows(`SELECT * FROM slots ${where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`} ORDER BY slot_time_ms DESC, instance LIMIT $${params.length}`, params);
      return rows.map(slotFromRow);
    });
  }

  addIntents(slot: SlotKey, entries: readonly NewIntent[]): Promise<IntentRecord[]> {
    return this.#write(`journalling intents of ${slot.instance}@${slot.slotTimeMs}`, (tx) => intents.insertIntents(tx, slot, entries, this.#now()));
  }

  updateIntent(intentId: string, update: IntentUpdate): Promise<IntentRecord> {
    return this.#write(`marking intent ${intentId} ${update.status}`, (tx) => intents.updateIntent(tx, intentId, update, this.#now()));
  }

  getIntent(intentId: string): Promise<IntentRecord | null> {
    return this.#read('reading an intent', (tx) => intents.getIntent(tx, intentId));
  }

  findIntentByClientOrderId(clientOrderId: string): Promise<IntentRecord | null> {
    return this.#read('reading an intent', (tx) => intents.findIntentByClientOrderId(tx, clientOrderId));
  }

  listIntents(query: IntentQuery = {}): Promise<IntentRecord[]> {
    return this.#read('listing intents', (tx) => intents.listIntents(tx, query));
  }

  hasOpenWork(): Promise<boolean> {
    return this.#read('looking for open work', async (tx) => (await orders.hasOpenOrders(tx)) || (await intents.hasUnresolvedIntents(tx)) || (await hasClaimedSlot(tx)));
  }

  unresolvedIntents(): Promise<IntentRecord[]> {
    return this.#read('listing unresolved intents', (tx) => intents.unresolvedIntents(tx));
  }

  recordOrderSnapshot(order: Order, link?: OrderLink): Promise<OrderTransition | null> {
    return this.#write(`recording order ${order.orderId}`, (tx) => orders.recordOrderSnapshot(tx, order, link, this.#now()));
  }

  getOrder(orderId: string): Promise<StoredOrder | null> {
    return this.#read('reading an order', (tx) => orders.getOrder(tx, orderId));
  }

  openOrders(): Promise<StoredOrder[]> {
    return this.#read('listing open orders', (tx) => orders.openOrders(tx));
  }

  listOrders(query: OrderQuery = {}): Promise<StoredOrder[]> {
    return this.#read('listing orders', (tx) => orders.listOrders(tx, query));
  }

  changedOrders(query: ChangedOrdersQuery): Promise<ChangedOrder[]> {
    return this.#read('listing changed orders', (tx) => orders.changedOrders(tx, query));
  }

  orderTransitions(orderId: string): Promise<OrderTransition[]> {
    return this.#read('listing order transitions', (tx) => orders.orderTransitions(tx, orderId));
  }

  recordFlexOperation(operation: FlexOperationInput): Promise<FlexOperationRecord> {
    return this.#write(`recording flex operation ${operation.intentId}`, (tx) => intents.recordFlexOperation(tx, operation, this.#now()));
  }

  recordTransfer(transfer: TransferInput): Promise<TransferRecord> {
    return this.#write(`recording transfer ${transfer.intentId}`, (tx) => intents.recordTransfer(tx, transfer, this.#now()));
  }

  getState(instance: string): Promise<ReadonlyMap<string, string>> {
    return this.#read('reading strategy state', async (tx) => {
      const rows = await tx.rows('SELECT key, value FROM strategy_state WHERE instance = $1 ORDER BY key', [instance]);
      return new Map(rows.map((row) => [String(row['key']), String(row['value'])]));
    });
  }

  setState(instance: string, changes: Readonly<Record<string, string | null>>): Promise<void> {
    return this.#write('writing strategy state', (tx) => intents.applyState(tx, instance, changes, this.#now()));
  }

  reserveBudget(request: BudgetReserveRequest): Promise<BudgetDecision> {
    return this.#write(`reserving budget ${request.reservationId}`, (tx) => budgets.reserveBudget(tx, request, this.#now()));
  }

  settleBudget(reservationId: string, actualQuote: Decimal): Promise<BudgetReservation> {
    return this.#write(`settling budget ${reservationId}`, (tx) => budgets.settleBudget(tx, reservationId, actualQuote, this.#now()));
  }

  releaseBudget(reservationId: string): Promise<boolean> {
    return this.#write(`releasing budget ${reservationId}`, (tx) => budgets.releaseBudget(tx, reservationId, this.#now()));
  }

  budgetSpent(scope: BudgetScope, atMs: number): Promise<BudgetSpent> {
    return this.#read('reading budget spending', (tx) => budgets.budgetSpent(tx, scope, atMs));
  }

  heldBudgetReservations(instance?: string): Promise<BudgetReservation[]> {
    return this.#read('listing held budget reservations', (tx) => budgets.heldBudgetReservations(tx, instance));
  }

  budgetReservation(reservationId: string): Promise<BudgetReservation | null> {
    return this.#read(`reading budget reservation ${reservationId}`, (tx) => budgets.findReservation(tx, reservationId));
  }

  recentJournal(query: IntentQuery = {}): Promise<JournalEntry[]> {
    return this.#read('reading the journal', async (tx) => {
      const entries: JournalEntry[] = [];
      for (const intent of await intents.listIntents(tx, { limit: 50, ...query })) {
        entries.push({
          intent,
          orders: await orders.ordersOfIntent(tx, intent.intentId),
          flexOperation: await intents.flexOperationOf(tx, intent.intentId),
          transfer: await intents.transferOf(tx, intent.intentId),
        });
      }
      return entries;
    });
  }

  adoptOrder(adoption: OrderAdoption): Promise<AdoptedOrder> {
    return this.#write(`adopting order ${adoption.order.orderId}`, (tx) => ledger.adoptOrder(tx, adoption, this.#now()));
  }

  recordSecondOrder(second: SecondOrder): Promise<OrderTransition | null> {
    return this.#write(`recording order ${second.order.orderId}, a second order of intent ${second.intentId}`, (tx) => ledger.recordSecondOrder(tx, second, this.#now()));
  }

  recordFinding(finding: NewLedgerFinding): Promise<LedgerFinding> {
    return this.#write(`recording a ${finding.kind} finding`, (tx) => ledger.insertFinding(tx, finding, this.#now()));
  }

  listFindings(query: { readonly unacknowledged?: boolean; readonly limit?: number } = {}): Promise<LedgerFinding[]> {
    return this.#read('listing findings', (tx) => ledger.listFindings(tx, query));
  }

  acknowledgeFindings(): Promise<number> {
    return this.#write('acknowledging findings', (tx) => ledger.acknowledgeFindings(tx, this.#now()));
  }

  ledgerCheckedThrough(): Promise<number | null> {
    return this.#read('reading when the exchange history was last checked', (tx) => ledger.ledgerCheckedThrough(tx));
  }

  setLedgerCheckedThrough(atMs: number): Promise<void> {
    return this.#write('recording the exchange history check', (tx) => ledger.setLedgerCheckedThrough(tx, atMs));
  }

  spendCountedThrough(): Promise<number | null> {
    return this.#read('reading when the buys were last counted', (tx) => ledger.spendCountedThrough(tx));
  }

  setSpendCountedThrough(atMs: number): Promise<void> {
    return this.#write('recording that the buys are counted', (tx) => ledger.setSpendCountedThrough(tx, atMs));
  }

  operatorControls(): Promise<OperatorControls> {
    return this.#read('reading the operator controls', (tx) => readControls(tx));
  }

  setOperatorControl(change: OperatorControlChange): Promise<OperatorControls> {
    return this.#write(`turning ${change.control} ${change.on ? 'on' : 'off'}`, async (tx) => {
      checkOperatorControl(change);
      const target = controlTarget(change);
      if (change.on) await tx.run('INSERT INTO operator_controls (control, target, since_ms) VALUES ($1, $2, $3) ON CONFLICT (control, target) DO NOTHING', [change.control, target, this.#now()]);
      else await tx.run('DELETE FROM operator_controls WHERE control = $1 AND target = $2', [change.control, target]);
      return readControls(tx);
    });
  }

  /**
   * The owner's pulse (pg-lease-pulse.ts): a write checked against the lease like any other, so
   * an owner replaced meanwhile fails it with `not-owner`. Only an owner pulses.
   */
  renewLease(intervalMs: number): Promise<void> {
    const token = this.#ownerToken;
    if (token === null) return Promise.reject(new StoreError('illegal-transition', 'only the journal\'s owner renews its lease'));
    this.#pulses += 1;
    const pulse = formatPulse({ token, count: this.#pulses, intervalMs });
    return this.#write('renewing the journal\'s lease', (tx) => ledger.setMeta(tx, PULSE_KEY, pulse));
  }

  recordHeartbeat(): Promise<void> {
    return this.#write('writing the heartbeat', (tx) => ledger.setMeta(tx, 'alive_at_ms', String(this.#now())));
  }

  accountState(account?: string): Promise<string | null> {
    return this.#read('reading the kept account', (tx) => ledger.getMeta(tx, accountStateKey(account)));
  }

  saveAccountState(state: string, account?: string): Promise<void> {
    return this.#write('saving the kept account', async (tx) => {
      checkAccountState(state);
      await ledger.setMeta(tx, accountStateKey(account), state);
    });
  }

  /**
   * The database a restart would read must still hold this journal: a schema dropped and
   * recreated, or a URL now leading to another database, shows as a missing or different
   * journal id. Unreachable is not "lost": it fails as unwritable, which also stops the send.
   */
  async assertIntact(): Promise<void> {
    const opened = this.#journalId;
    if (opened === null) return;
    let now: string | null;
    try {
      now = await this.#read('checking the journal is still there', (tx) => ledger.getMeta(tx, 'journal_id'));
    } catch (error) {
      if (!isMissingJournal(error)) throw error;
      now = null;
    }
    if (now === opened) {
      if (this.#ownerToken !== null) await this.#read('checking this daemon still owns the journal', (tx) => this.#checkOwner(tx));
      return;
    }
    throw new StoreError(
      'journal-lost',
      `the journal ${this.where} ${now === null ? 'was dropped' : `now holds another journal (${now}, not ${opened})`} while stacker was running: what it journals now reaches no journal a restart would read, so nothing more is sent and trading stops. ` +
        `Restore the database from a backup before starting again, or rebuild the journal from the exchange's order history: ${REBUILD_COMMAND}.`,
    );
  }

  writeFailure(): JournalWriteFailure | null {
    return this.#writeFailure.current ?? this.#readFailure.current;
  }

  /**
   * A write transaction: a database that refuses it (unreachable, disk full, a privilege gone, the
   * login refused) is remembered until a write succeeds; a full disk or a missing privilege until
   * the operation that failed succeeds (write-failure.ts).
   */
  async #write<T>(doing: string, work: (tx: Tx) => Promise<T>): Promise<T> {
    try {
      const result = await this.#transaction(doing, 'write', async (tx) => {
        if (this.#ownerToken !== null) await this.#checkOwner(tx);
        return work(tx);
      });
      this.#writeFailure.succeeded(doing);
      this.#readFailure.succeeded(doing);
      return result;
    } catch (error) {
      this.#writeFailure.failed(error, doing);
      throw error;
    }
  }

  async #checkOwner(tx: Tx): Promise<void> {
    const lease = await tx.one('SELECT token, holder, acquired_at_ms FROM journal_lease WHERE id = 1');
    if (lease !== null && Number(lease['token']) === this.#ownerToken) return;
    const by = lease === null ? 'nobody (the lease is gone)' : `${String(lease['holder'])} since ${new Date(Number(lease['acquired_at_ms'])).toISOString()}`;
    throw new StoreError(
      'not-owner',
      `the journal ${this.where} was taken over by ${by}: this daemon lost its lock and was replaced, so it journals and sends nothing more. Restart it to wait as a standby.`,
    );
  }

  async #read<T>(doing: string, work: (tx: Tx) => Promise<T>): Promise<T> {
    try {
      const result = await this.#transaction(doing, 'read', work);
      this.#readFailure.succeeded(doing);
      return result;
    } catch (error) {
      this.#readFailure.failed(error, doing);
      throw error;
    }
  }

  async #transaction<T>(doing: string, kind: 'write' | 'read', work: (tx: Tx) => Promise<T>): Promise<T> {
    const pool = this.#pool;
    if (pool === null) throw new StoreError('closed', `${doing}: the journal ${this.where} is not open`);
    try {
      return await inTransaction(pool, kind, work);
    } catch (error) {
      throw asStoreError(error, doing, kind);
    }
  }
}

async function hasClaimedSlot(tx: Tx): Promise<boolean> {
  return (await tx.rows("SELECT 1 FROM slots WHERE status = 'claimed' LIMIT 1")).length > 0;
}

async function findSlot(tx: Tx, key: SlotKey): Promise<SlotRecord | null> {
  const row = await tx.one('SELECT * FROM slots WHERE instance = $1 AND slot_time_ms = $2', [key.instance, key.slotTimeMs]);
  return row === null ? null : slotFromRow(row);
}

async function requireRun(tx: Tx, runId: string): Promise<RunRecord> {
  const row = await tx.one('SELECT * FROM runs WHERE run_id = $1', [runId]);
  if (row === null) throw new StoreError('not-found', `no run ${runId}`);
  return runFromRow(row);
}

async function readScheduledSince(tx: Tx, instance: string): Promise<number | null> {
  const row = await tx.one('SELECT since_ms FROM scheduled_instances WHERE instance = $1', [instance]);
  return row === null ? null : Number(row['since_ms']);
}

async function readControls(tx: Tx): Promise<OperatorControls> {
  return controlsFromRows(await tx.rows('SELECT control, target, since_ms FROM operator_controls ORDER BY control, target'));
}
