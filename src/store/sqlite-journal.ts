import { REBUILD_COMMAND } from './journal-identity.ts';
import { randomUUID } from 'node:crypto';
import { statSync } from 'node:fs';
import type { DatabaseSync } from 'node:sqlite';
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
  NewIntent,
  NewLedgerFinding,
  OperatorControlChange,
  OperatorControls,
  OrderAdoption,
  OrderLink,
  ChangedOrder,
  ChangedOrdersQuery,
  OrderQuery,
  OrderTransition,
  RunMode,
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
import { accountStateKey, checkAccountState, checkFinishStatus, checkOperatorControl, checkScheduled, checkSkipStatus, checkSlotKey } from './journal-rules.ts';
import { type JournalMigration, MIGRATIONS, SCHEMA_VERSION, journalMigration, migrate, recordedVersion, verifySchema } from './migrations.ts';
import { keepCopyBeforeMigrating } from './sqlite-backup.ts';
import { damagedJournal, isDamagedDatabase, lostJournalForReading, pageDamage } from './journal-identity.ts';
import * as budgets from './sqlite-budgets.ts';
import { asStoreError, openDatabase, sqliteFailureKinds, transaction } from './sqlite-db.ts';
import { WriteFailureWatch } from './write-failure.ts';
import * as intents from './sqlite-intents.ts';
import * as ledger from './sqlite-ledger.ts';
import * as orders from './sqlite-orders.ts';
import { controlTarget, controlsFromRows, runFromRow, slotFromRow } from './journal-rows.ts';

export interface SqliteJournalOptions {
  /** The database file (created when missing), or ':memory:'. */
  readonly path: string;
  /** Readers such as `stacker orders` beside a running daemon: no migration, no writes. */
  readonly readOnly?: boolean;
  /**
   * false: written but never migrated (a human's verdict, `journal acknowledge`, beside whatever
   * daemon runs on it: an older build's journal changed under it would be refused by it).
   */
  readonly migrate?: boolean;
  /**
   * Check every page when opened (SQLite's quick_check, ~40 ms for 30 MB): a reader would
   * otherwise report from a damaged journal, which `stacker run` refuses (it checks at start).
   */
  readonly checkPages?: boolean;
  readonly busyTimeoutMs?: number;
  /** SQLite's page cache limit (see SqliteOpenOptions.cacheKiB); SQLite's default when absent. */
  readonly cacheKiB?: number;
  /** See SqliteOpenOptions.synchronous: FULL unless a benchmark or a backtest asks otherwise. */
  readonly synchronous?: 'FULL' | 'NORMAL' | 'OFF';
  /** Unix ms for every recorded time; Date.now by default. */
  readonly clock?: () => number;
  /** Run ids; randomUUID by default. */
  readonly newId?: () => string;
  /**
   * Before migrating a journal of an older schema, keep a copy of the file as it was
   * (sqlite-backup.ts): for a daemon's journal, opened under its lock, so no other stacker
   * writes it meanwhile.
   */
  readonly backupBeforeMigrating?: boolean;
}

/** Which file a path named when the journal was opened: a different one later means deleted or replaced. */
interface FileIdentity {
  readonly path: string;
  readonly dev: number;
  readonly ino: number;
}

/**
 * The Journal over one SQLite file via the runtime's `node:sqlite` (no native build). Every
 * operation is one synchronous transaction behind an async signature, so operations never
 * interleave and each is durable when its promise resolves.
 */
export class SqliteJournal implements Journal {
  readonly path: string;
  readonly #options: SqliteJournalOptions;
  readonly #now: () => number;
  readonly #newId: () => string;
  #db: DatabaseSync | null = null;
  #files: readonly FileIdentity[] = [];
  readonly #writeFailure: WriteFailureWatch;
  #migrated: JournalMigration | null = null;

  constructor(options: SqliteJournalOptions) {
    this.path = options.path;
    this.#options = options;
    this.#now = options.clock ?? Date.now;
    this.#writeFailure = new WriteFailureWatch(sqliteFailureKinds(options.path), this.#now);
    this.#newId = options.newId ?? randomUUID;
  }

  async open(): Promise<void> {
    if (this.#db !== null) return;
    const db = openDatabase({
      path: this.path,
      ...(this.#options.readOnly === undefined ? {} : { readOnly: this.#options.readOnly }),
      ...(this.#options.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: this.#options.busyTimeoutMs }),
      ...(this.#options.cacheKiB === undefined ? {} : { cacheKiB: this.#options.cacheKiB }),
      ...(this.#options.synchronous === undefined ? {} : { synchronous: this.#options.synchronous }),
    });
    try {
      if (this.#options.readOnly === true || this.#options.migrate === false) verifySchema(db, this.path);
      else {
        const from = recordedVersion(db);
        const older = from > 0 && from < SCHEMA_VERSION && this.path !== ':memory:';
        const backup = older && this.#options.backupBeforeMigrating === true ? keepCopyBeforeMigrating(db, this.path, from, this.#now()) : null;
        this.#migrated = journalMigration(migrate(db, this.path, this.#now), MIGRATIONS, backup);
      }
      const damage = this.#options.checkPages === true ? pageDamage(db) : null;
      if (damage !== null) throw lostJournalForReading(damagedJournal(this.path, damage), this.path);
    } catch (error) {
      db.close();
      if (this.#options.checkPages === true && isDamagedDatabase(error)) throw lostJournalForReading(damagedJournal(this.path, error instanceof Error ? error.message : String(error)), this.path);
      throw asStoreError(error, `opening the journal ${this.path}`);
    }
    this.#db = db;
    this.#files = this.path === ':memory:' || this.#options.readOnly === true ? [] : [this.path, `${this.path}-wal`].flatMap(identityOf);
  }

  /** What opening this journal migrated (from which schema, the copy kept); null when it needed nothing or was new. */
  get migrated(): JournalMigration | null {
    return this.#migrated;
  }

  async close(): Promise<void> {
    const db = this.#db;
    if (db === null) return;
    this.#db = null;
    try {
      // Fold the WAL into the main file, so the .db alone is complete when copied after a stop.
      if (this.#options.readOnly !== true && this.path !== ':memory:') db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    } catch {
      // A full disk: every commit is in the WAL, which stays beside the file and is read at the
      // next open. A stop is not a failure for it.
    } finally {
      db.close();
    }
  }

  /** This journal's identity (journal_meta `journal_id`, assigned by migration 3). */
  journalId(): Promise<string> {
    return this.#run('reading the journal id', (db) => {
      const row = db.prepare("SELECT value FROM journal_meta WHERE key = 'journal_id'").get();
      if (row === undefined) throw new StoreError('corrupt', `${this.path} has no journal id`);
      return String(row['value']);
    });
  }

  startRun(run: RunStart): Promise<RunRecord> {
    return this.#write('starting a run', (db) =>
      transaction(db, () => {
        this.#checkMode(db, run.mode);
        db.prepare("UPDATE runs SET exit_reason = 'interrupted' WHERE ended_at_ms IS NULL AND exit_reason IS NULL").run();
        const runId = this.#newId();
        db.prepare('INSERT INTO runs (run_id, mode, started_at_ms, ended_at_ms, pid, version, exit_reason) VALUES (?, ?, ?, NULL, ?, ?, NULL)').run(
          runId,
          run.mode,
          this.#now(),
          run.pid,
          run.version,
        );
        return requireRun(db, runId);
      }),
    );
  }

  finishRun(runId: string, exitReason: string): Promise<void> {
    return this.#write('finishing a run', (db) =>
      transaction(db, () => {
        const run = requireRun(db, runId);
        if (run.endedAtMs !== null) throw new StoreError('illegal-transition', `run ${runId} already finished (${run.exitReason ?? ''})`);
        db.prepare('UPDATE runs SET ended_at_ms = ?, exit_reason = ? WHERE run_id = ?').run(this.#now(), exitReason, runId);
      }),
    );
  }

  listRuns(limit = 20): Promise<RunRecord[]> {
    return this.#run('listing runs', (db) => db.prepare('SELECT * FROM runs ORDER BY started_at_ms DESC, run_id LIMIT ?').all(limit).map(runFromRow));
  }

  claimSlot(claim: SlotClaim): Promise<boolean> {
    return this.#write(`claiming slot ${claim.instance}@${claim.slotTimeMs}`, (db) => {
      checkSlotKey(claim);
      const now = this.#now();
      return transaction(db, () => {
        const inserted = db
          .prepare(
            `INSERT INTO slots (instance, slot_time_ms, status, reason, run_id, claimed_at_ms, finished_at_ms) VALUES (?, ?, 'claimed', NULL, ?, ?, NULL)
             ON CONFLICT (instance, slot_time_ms) DO NOTHING`,
          )
          .run(claim.instance, claim.slotTimeMs, claim.runId, now);
        if (Number(inserted.changes) !== 1) return false;
        if (claim.intents !== undefined) intents.insertIntents(db, claim, claim.intents, now);
        return true;
      });
    });
  }

  skipSlot(skip: SlotSkip): Promise<boolean> {
    return this.#write(`journalling ${skip.status} slot ${skip.instance}@${skip.slotTimeMs}`, (db) => {
      checkSlotKey(skip);
      checkSkipStatus(skip);
      const now = this.#now();
      const inserted = db
        .prepare(
          `INSERT INTO slots (instance, slot_time_ms, status, reason, run_id, claimed_at_ms, finished_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (instance, slot_time_ms) DO NOTHING`,
        )
        .run(skip.instance, skip.slotTimeMs, skip.status, skip.reason, skip.runId, now, now);
      return Number(inserted.changes) === 1;
    });
  }

  finishSlot(finish: SlotFinish): Promise<SlotRecord> {
    return this.#write(`finishing slot ${finish.instance}@${finish.slotTimeMs}`, (db) =>
      transaction(db, () => {
        checkFinishStatus(finish);
        const current = findSlot(db, finish);
        if (current === null) throw new StoreError('not-found', `slot ${finish.instance}@${finish.slotTimeMs} was never claimed`);
        if (current.status !== 'claimed') throw new StoreError('illegal-transition', `slot ${finish.instance}@${finish.slotTimeMs} is already ${current.status}`);
        db.prepare('UPDATE slots SET status = ?, reason = ?, finished_at_ms = ? WHERE instance = ? AND slot_time_ms = ?').run(
          finish.status,
          finish.reason ?? null,
          this.#now(),
          finish.instance,
          finish.slotTimeMs,
        );
        const done = findSlot(db, finish);
        if (done === null) throw new StoreError('not-found', `slot ${finish.instance}@${finish.slotTimeMs} vanished`);
        return done;
      }),
    );
  }

  getSlot(key: SlotKey): Promise<SlotRecord | null> {
    return this.#run('reading a slot', (db) => findSlot(db, key));
  }

  lastSlot(instance: string): Promise<SlotRecord | null> {
    return this.#run('reading the last slot', (db) => {
      const row = db.prepare('SELECT * FROM slots WHERE instance = ? ORDER BY slot_time_ms DESC LIMIT 1').get(instance);
      return row === undefined ? null : slotFromRow(row);
    });
  }

  scheduledSince(instance: string): Promise<number | null> {
    return this.#run('reading when the instance was first scheduled', (db) => readScheduledSince(db, instance));
  }

  markScheduled(instance: string, sinceMs: number): Promise<number> {
    return this.#write(`recording that ${instance} is scheduled`, (db) =>
      transaction(db, () => {
        checkScheduled(instance, sinceMs);
        db.prepare('INSERT OR IGNORE INTO scheduled_instances (instance, since_ms) VALUES (?, ?)').run(instance, sinceMs);
        const kept = readScheduledSince(db, instance);
        if (kept === null) throw new StoreError('not-found', `${instance}'s scheduled-since time vanished`);
        return kept;
      }),
    );
  }

  listSlots(query: SlotQuery = {}): Promise<SlotRecord[]> {
    // Only the conditions given go into the SQL, so SQLite can use the status index: the
    // claimed slots are looked for on every reconciliation pass, and a scan grows with the journal.
    return this.#run('listing slots', (db) => {
      const where: string[] = [];
      const params: Record<string, string | number> = { limit: query.limit ?? -1 };
      const add = (condition: string, name: string, value: string | number | undefined): void => {
        if (value === undefined) return;
        where.push(condition);
        params[name] = value;
      };
      add('status = :status', 'status', query.status);
      add('instance = :instance', 'instance', query.instance);
      add('slot_time_ms >= :since', 'since', query.sinceMs);
      add('slot_time_ms < :until', 'until', query.untilMs);
      return db
        .prepare(`SELECT * FROM slots ${where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`} ORDER BY slot_time_ms DESC, instance LIMIT :limit`)
        .all(params)
        .map(slotFromRow);
    });
  }

  addIntents(slot: SlotKey, entries: readonly NewIntent[]): Promise<IntentRecord[]> {
    return this.#write(`journalling intents of ${slot.instance}@${slot.slotTimeMs}`, (db) =>
      transaction(db, () => intents.insertIntents(db, slot, entries, this.#now())),
    );
  }

  updateIntent(intentId: string, update: IntentUpdate): Promise<IntentRecord> {
    return this.#write(`marking intent ${intentId} ${update.status}`, (db) => intents.updateIntent(db, intentId, update, this.#now()));
  }

  getIntent(intentId: string): Promise<IntentRecord | null> {
    return this.#run('reading an intent', (db) => intents.getIntent(db, intentId));
  }

  findIntentByClientOrderId(clientOrderId: string): Promise<IntentRecord | null> {
    return this.#run('reading an intent', (db) => intents.findIntentByClientOrderId(db, clientOrderId));
  }

  listIntents(query: IntentQuery = {}): Promise<IntentRecord[]> {
    return this.#run('listing intents', (db) => intents.listIntents(db, query));
  }

  hasOpenWork(): Promise<boolean> {
    return this.#run('looking for open work', (db) => orders.hasOpenOrders(db) || intents.hasUnresolvedIntents(db) || hasClaimedSlot(db));
  }

  unresolvedIntents(): Promise<IntentRecord[]> {
    return this.#run('listing unresolved intents', (db) => intents.unresolvedIntents(db));
  }

  recordOrderSnapshot(order: Order, link?: OrderLink): Promise<OrderTransition | null> {
    return this.#write(`recording order ${order.orderId}`, (db) => orders.recordOrderSnapshot(db, order, link, this.#now()));
  }

  getOrder(orderId: string): Promise<StoredOrder | null> {
    return this.#run('reading an order', (db) => orders.getOrder(db, orderId));
  }

  openOrders(): Promise<StoredOrder[]> {
    return this.#run('listing open orders', (db) => orders.openOrders(db));
  }

  listOrders(query: OrderQuery = {}): Promise<StoredOrder[]> {
    return this.#run('listing orders', (db) => orders.listOrders(db, query));
  }

  changedOrders(query: ChangedOrdersQuery): Promise<ChangedOrder[]> {
    return this.#run('listing changed orders', (db) => orders.changedOrders(db, query));
  }

  orderTransitions(orderId: string): Promise<OrderTransition[]> {
    return this.#run('listing order transitions', (db) => orders.orderTransitions(db, orderId));
  }

  recordFlexOperation(operation: FlexOperationInput): Promise<FlexOperationRecord> {
    return this.#write(`recording flex operation ${operation.intentId}`, (db) => intents.recordFlexOperation(db, operation, this.#now()));
  }

  recordTransfer(transfer: TransferInput): Promise<TransferRecord> {
    return this.#write(`recording transfer ${transfer.intentId}`, (db) => intents.recordTransfer(db, transfer, this.#now()));
  }

  getState(instance: string): Promise<ReadonlyMap<string, string>> {
    return this.#run('reading strategy state', (db) => {
      const rows = db.prepare('SELECT key, value FROM strategy_state WHERE instance = ? ORDER BY key').all(instance);
      return new Map(rows.map((row) => [String(row['key']), String(row['value'])]));
    });
  }

  setState(instance: string, changes: Readonly<Record<string, string | null>>): Promise<void> {
    return this.#write('writing strategy state', (db) => transaction(db, () => intents.applyState(db, instance, changes, this.#now())));
  }

  reserveBudget(request: BudgetReserveRequest): Promise<BudgetDecision> {
    return this.#write(`reserving budget ${request.reservationId}`, (db) => budgets.reserveBudget(db, request, this.#now()));
  }

  settleBudget(reservationId: string, actualQuote: Decimal): Promise<BudgetReservation> {
    return this.#write(`settling budget ${reservationId}`, (db) => budgets.settleBudget(db, reservationId, actualQuote, this.#now()));
  }

  releaseBudget(reservationId: string): Promise<boolean> {
    return this.#write(`releasing budget ${reservationId}`, (db) => budgets.releaseBudget(db, reservationId, this.#now()));
  }

  budgetSpent(scope: BudgetScope, atMs: number): Promise<BudgetSpent> {
    return this.#run('reading budget spending', (db) => budgets.budgetSpent(db, scope, atMs));
  }

  heldBudgetReservations(instance?: string): Promise<BudgetReservation[]> {
    return this.#run('listing held budget reservations', (db) => budgets.heldBudgetReservations(db, instance));
  }

  budgetReservation(reservationId: string): Promise<BudgetReservation | null> {
    return this.#run(`reading budget reservation ${reservationId}`, (db) => budgets.findReservation(db, reservationId));
  }

  recentJournal(query: IntentQuery = {}): Promise<JournalEntry[]> {
    return this.#run('reading the journal', (db) =>
      intents.listIntents(db, { limit: 50, ...query }).map((intent) => ({
        intent,
        orders: orders.ordersOfIntent(db, intent.intentId),
        flexOperation: intents.flexOperationOf(db, intent.intentId),
        transfer: intents.transferOf(db, intent.intentId),
      })),
    );
  }

  adoptOrder(adoption: OrderAdoption): Promise<AdoptedOrder> {
    return this.#write(`adopting order ${adoption.order.orderId}`, (db) => ledger.adoptOrder(db, adoption, this.#now()));
  }

  recordSecondOrder(second: SecondOrder): Promise<OrderTransition | null> {
    return this.#write(`recording order ${second.order.orderId}, a second order of intent ${second.intentId}`, (db) => ledger.recordSecondOrder(db, second, this.#now()));
  }

  recordFinding(finding: NewLedgerFinding): Promise<LedgerFinding> {
    return this.#write(`recording a ${finding.kind} finding`, (db) => ledger.recordFinding(db, finding, this.#now()));
  }

  listFindings(query: { readonly unacknowledged?: boolean; readonly limit?: number } = {}): Promise<LedgerFinding[]> {
    return this.#run('listing findings', (db) => ledger.listFindings(db, query));
  }

  acknowledgeFindings(): Promise<number> {
    return this.#write('acknowledging findings', (db) => ledger.acknowledgeFindings(db, this.#now()));
  }

  ledgerCheckedThrough(): Promise<number | null> {
    return this.#run('reading when the exchange history was last checked', (db) => ledger.ledgerCheckedThrough(db));
  }

  setLedgerCheckedThrough(atMs: number): Promise<void> {
    return this.#write('recording the exchange history check', (db) => ledger.setLedgerCheckedThrough(db, atMs));
  }

  spendCountedThrough(): Promise<number | null> {
    return this.#run('reading when the buys were last counted', (db) => ledger.spendCountedThrough(db));
  }

  setSpendCountedThrough(atMs: number): Promise<void> {
    return this.#write('recording that the buys are counted', (db) => ledger.setSpendCountedThrough(db, atMs));
  }

  /** A write that changes nothing, so a full or read-only disk shows even while no slot runs. */
  recordHeartbeat(): Promise<void> {
    return this.#write('writing the heartbeat', (db) =>
      transaction(db, () => {
        db.prepare("INSERT INTO journal_meta (key, value) VALUES ('alive_at_ms', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(String(this.#now()));
      }),
    );
  }

  accountState(account?: string): Promise<string | null> {
    return this.#run('reading the kept account', (db) => {
      const row = db.prepare('SELECT value FROM journal_meta WHERE key = ?').get(accountStateKey(account));
      return row === undefined ? null : String(row['value']);
    });
  }

  saveAccountState(state: string, account?: string): Promise<void> {
    return this.#write('saving the kept account', (db) =>
      transaction(db, () => {
        checkAccountState(state);
        db.prepare('INSERT INTO journal_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(accountStateKey(account), state);
      }),
    );
  }

  operatorControls(): Promise<OperatorControls> {
    return this.#run('reading the operator controls', (db) => readControls(db));
  }

  setOperatorControl(change: OperatorControlChange): Promise<OperatorControls> {
    return this.#write(`turning ${change.control} ${change.on ? 'on' : 'off'}`, (db) =>
      transaction(db, () => {
        checkOperatorControl(change);
        const target = controlTarget(change);
        if (change.on) db.prepare('INSERT OR IGNORE INTO operator_controls (control, target, since_ms) VALUES (?, ?, ?)').run(change.control, target, this.#now());
        else db.prepare('DELETE FROM operator_controls WHERE control = ? AND target = ?').run(change.control, target);
        return readControls(db);
      }),
    );
  }

  async assertIntact(): Promise<void> {
    for (const opened of this.#files) {
      const now = identityOf(opened.path)[0];
      if (now !== undefined && now.dev === opened.dev && now.ino === opened.ino) continue;
      const what = now === undefined ? 'was deleted' : 'was replaced by another file';
      throw new StoreError(
        'journal-lost',
        `the journal file ${opened.path} ${what} while stacker was running: what it journals now reaches no file a restart would read, so nothing more is sent and trading stops. ` +
          `Restore the file from a backup before starting again, or rebuild the journal from the exchange's order history: ${REBUILD_COMMAND}.`,
      );
    }
  }

  writeFailure(): JournalWriteFailure | null {
    return this.#writeFailure.current;
  }

  /**
   * A write: a file system that refuses it is remembered (health reports it) until a write
   * succeeds; a full disk until the operation that failed succeeds (write-failure.ts).
   */
  async #write<T>(doing: string, work: (db: DatabaseSync) => T): Promise<T> {
    try {
      const result = await this.#run(doing, work);
      this.#writeFailure.succeeded(doing);
      return result;
    } catch (error) {
      this.#writeFailure.failed(error, doing);
      throw error;
    }
  }

  /** One journal operation: our errors pass, SQLite's become StoreError naming what was being done. */
  async #run<T>(doing: string, work: (db: DatabaseSync) => T): Promise<T> {
    const db = this.#db;
    if (db === null) throw new StoreError('closed', `${doing}: the journal ${this.path} is not open`);
    try {
      return work(db);
    } catch (error) {
      throw asStoreError(error, doing);
    }
  }

  /** A journal belongs to one mode: a dry-run claiming slots in the live file would make live skip them. */
  #checkMode(db: DatabaseSync, mode: RunMode): void {
    const row = db.prepare("SELECT value FROM journal_meta WHERE key = 'mode'").get();
    if (row === undefined) {
      db.prepare("INSERT INTO journal_meta (key, value) VALUES ('mode', ?)").run(mode);
      return;
    }
    if (row['value'] !== mode) {
      throw new StoreError('mode-mismatch', `${this.path} is the ${String(row['value'])} journal; a ${mode} run must use its own file`);
    }
  }
}

function identityOf(path: string): FileIdentity[] {
  try {
    const stat = statSync(path);
    return [{ path, dev: stat.dev, ino: stat.ino }];
  } catch {
    return [];
  }
}


function readScheduledSince(db: DatabaseSync, instance: string): number | null {
  const row = db.prepare('SELECT since_ms FROM scheduled_instances WHERE instance = ?').get(instance);
  return row === undefined ? null : Number(row['since_ms']);
}

function readControls(db: DatabaseSync): OperatorControls {
  return controlsFromRows(db.prepare('SELECT control, target, since_ms FROM operator_controls ORDER BY control, target').all());
}

function hasClaimedSlot(db: DatabaseSync): boolean {
  return db.prepare("SELECT 1 FROM slots WHERE status = 'claimed' LIMIT 1").get() !== undefined;
}

function findSlot(db: DatabaseSync, key: SlotKey): SlotRecord | null {
  const row = db.prepare('SELECT * FROM slots WHERE instance = ? AND slot_time_ms = ?').get(key.instance, key.slotTimeMs);
  return row === undefined ? null : slotFromRow(row);
}

function requireRun(db: DatabaseSync, runId: string): RunRecord {
  const row = db.prepare('SELECT * FROM runs WHERE run_id = ?').get(runId);
  if (row === undefined) throw new StoreError('not-found', `no run ${runId}`);
  return runFromRow(row);
}
