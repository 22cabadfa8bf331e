import type { DatabaseSync } from 'node:sqlite';
import { type Decimal, ZERO, formatDecimal } from '../domain/money.ts';
import { periodStarts, periodWindows } from './budget-periods.ts';
import { StoreError } from './errors.ts';
import {
  BUDGET_PERIODS,
  type BudgetDecision,
  type BudgetPeriod,
  type BudgetReservation,
  type BudgetReserveRequest,
  type BudgetScope,
  type BudgetSpent,
  type PeriodStarts,
} from './journal.ts';
import { budgetExcesses, budgetSpan, checkReserveRequest, checkScope, checkSpentAmount, settledAgainBy, spentFromReservations } from './journal-rules.ts';
import { RowReader, reservationFromRow } from './journal-rows.ts';
import { transaction } from './sqlite-db.ts';

/**
 * Budget counters. SQLite has no decimal type, so spending is read as text, added with Decimal
 * in JS and written back as text, all inside one write transaction: no SUM() over text, no REAL.
 */
export function reserveBudget(db: DatabaseSync, request: BudgetReserveRequest, nowMs: number): BudgetDecision {
  const amount = checkReserveRequest(request);
  const starts = periodStarts(request.atMs, request.timeZone);
  return transaction(db, () => {
    const existing = findReservation(db, request.reservationId);
    if (existing !== null) {
      if (existing.instance !== request.instance || existing.asset !== request.asset) {
        throw new StoreError('conflict', `budget reservation ${request.reservationId} belongs to ${existing.instance}/${existing.asset}`);
      }
      return { ok: true, reservation: existing, repeated: true };
    }
    const spent = spentAround(db, request, request.atMs);
    const exceeded = budgetExcesses(request, starts, amount, (period) => spent[period]);
    if (exceeded.length > 0) return { ok: false, exceeded };
    addToPeriods(db, request, starts, amount, nowMs);
    db.prepare(
      `INSERT INTO budget_reservations (reservation_id, instance, asset, time_zone, at_ms, amount_quote, day_start_ms, week_start_ms,
         month_start_ms, state, created_at_ms, updated_at_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'held', ?, ?)`,
    ).run(request.reservationId, request.instance, request.asset, request.timeZone, request.atMs, formatDecimal(amount), starts.day, starts.week, starts.month, nowMs, nowMs);
    return { ok: true, reservation: requireReservation(db, request.reservationId), repeated: false };
  });
}

export function settleBudget(db: DatabaseSync, reservationId: string, actualQuote: Decimal, nowMs: number): BudgetReservation {
  checkSpentAmount(actualQuote, 'actualQuote');
  return transaction(db, () => {
    const reservation = requireReservation(db, reservationId);
    if (reservation.state === 'settled' && settledAgainBy(reservation, actualQuote).isZero()) return reservation;
    // A released reservation settles too: its order turned up after the budget was given back
    // (an answer lost for longer than the settle window). It happened, so it counts in full.
    const counted = reservation.state === 'released' ? ZERO : reservation.amountQuote;
    addToPeriods(db, reservation, reservation.periodStarts, actualQuote.minus(counted), nowMs);
    db.prepare("UPDATE budget_reservations SET amount_quote = ?, state = 'settled', updated_at_ms = ? WHERE reservation_id = ?").run(
      formatDecimal(actualQuote),
      nowMs,
      reservationId,
    );
    return requireReservation(db, reservationId);
  });
}

/**
 * Count money that was spent without a reservation first (an order adopted from the exchange's
 * history): `settled` at what it spent, or `held` while the order is still filling (the tracker
 * settles it). Runs inside the caller's transaction; may exceed the limits: it happened.
 */
export function recordSpendIn(
  db: DatabaseSync,
  spend: BudgetScope & { readonly reservationId: string; readonly atMs: number; readonly amountQuote: Decimal; readonly state: 'held' | 'settled' },
  nowMs: number,
): BudgetReservation {
  checkScope(spend);
  checkSpentAmount(spend.amountQuote, 'amountQuote');
  const starts = periodStarts(spend.atMs, spend.timeZone);
  if (findReservation(db, spend.reservationId) !== null) throw new StoreError('conflict', `budget reservation ${spend.reservationId} already exists`);
  addToPeriods(db, spend, starts, spend.amountQuote, nowMs);
  db.prepare(
    `INSERT INTO budget_reservations (reservation_id, instance, asset, time_zone, at_ms, amount_quote, day_start_ms, week_start_ms,
       month_start_ms, state, created_at_ms, updated_at_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(spend.reservationId, spend.instance, spend.asset, spend.timeZone, spend.atMs, formatDecimal(spend.amountQuote), starts.day, starts.week, starts.month, spend.state, nowMs, nowMs);
  return requireReservation(db, spend.reservationId);
}

export function releaseBudget(db: DatabaseSync, reservationId: string, nowMs: number): boolean {
  return transaction(db, () => {
    const reservation = findReservation(db, reservationId);
    if (reservation === null || reservation.state === 'released') return false;
    if (reservation.state === 'settled') throw new StoreError('illegal-transition', `budget reservation ${reservationId} was settled: the money was spent`);
    addToPeriods(db, reservation, reservation.periodStarts, reservation.amountQuote.neg(), nowMs);
    db.prepare("UPDATE budget_reservations SET state = 'released', updated_at_ms = ? WHERE reservation_id = ?").run(nowMs, reservationId);
    return true;
  });
}

export function budgetSpent(db: DatabaseSync, scope: BudgetScope, atMs: number): BudgetSpent {
  checkScope(scope);
  return { ...spentAround(db, scope, atMs), periodStarts: periodStarts(atMs, scope.timeZone) };
}

export function heldBudgetReservations(db: DatabaseSync, instance: string | undefined): BudgetReservation[] {
  return db
    .prepare("SELECT * FROM budget_reservations WHERE state = 'held' AND (:instance IS NULL OR instance = :instance) ORDER BY created_at_ms, reservation_id")
    .all({ instance: instance ?? null })
    .map(reservationFromRow);
}

/**
 * What was spent in the day, week and month around `atMs` in the scope's zone. The counters hold
 * it when every reservation in those periods was made under that zone (always, unless the zone
 * changed); otherwise it is summed from the reservations, each counted where its instant falls.
 */
function spentAround(db: DatabaseSync, scope: BudgetScope, atMs: number): Record<BudgetPeriod, Decimal> {
  const windows = periodWindows(atMs, scope.timeZone);
  const { fromMs, toMs } = budgetSpan(windows);
  const otherZone = db
    .prepare('SELECT 1 FROM budget_reservations WHERE instance = ? AND asset = ? AND at_ms >= ? AND at_ms < ? AND time_zone <> ? LIMIT 1')
    .get(scope.instance, scope.asset, fromMs, toMs, scope.timeZone);
  if (otherZone === undefined) {
    const { starts } = windows;
    return { day: readSpent(db, scope, 'day', starts.day), week: readSpent(db, scope, 'week', starts.week), month: readSpent(db, scope, 'month', starts.month) };
  }
  const rows = db
    .prepare("SELECT * FROM budget_reservations WHERE instance = ? AND asset = ? AND at_ms >= ? AND at_ms < ? AND state <> 'released'")
    .all(scope.instance, scope.asset, fromMs, toMs);
  return spentFromReservations(rows.map(reservationFromRow), windows);
}

function readSpent(db: DatabaseSync, scope: BudgetScope, period: BudgetPeriod, startMs: number): Decimal {
  const row = db
    .prepare('SELECT spent_quote FROM budgets WHERE instance = ? AND asset = ? AND period = ? AND period_start_ms = ?')
    .get(scope.instance, scope.asset, period, startMs);
  if (row === undefined) return ZERO;
  return new RowReader(row, `budgets row ${scope.instance}/${scope.asset}/${period}@${startMs}`).decimal('spent_quote');
}

/** Add a (possibly negative) amount to the three periods; a counter below zero means the journal was edited. */
function addToPeriods(db: DatabaseSync, scope: BudgetScope, starts: PeriodStarts, delta: Decimal, nowMs: number): void {
  const upsert = db.prepare(
    `INSERT INTO budgets (instance, asset, period, period_start_ms, spent_quote, updated_at_ms) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (instance, asset, period, period_start_ms) DO UPDATE SET spent_quote = excluded.spent_quote, updated_at_ms = excluded.updated_at_ms`,
  );
  for (const period of BUDGET_PERIODS) {
    const next = readSpent(db, scope, period, starts[period]).plus(delta);
    if (next.isNegative()) {
      throw new StoreError('corrupt', `budget ${scope.instance}/${scope.asset} per ${period} from ${starts[period]} would go below zero`);
    }
    upsert.run(scope.instance, scope.asset, period, starts[period], formatDecimal(next), nowMs);
  }
}

export function findReservation(db: DatabaseSync, reservationId: string): BudgetReservation | null {
  const row = db.prepare('SELECT * FROM budget_reservations WHERE reservation_id = ?').get(reservationId);
  return row === undefined ? null : reservationFromRow(row);
}

function requireReservation(db: DatabaseSync, reservationId: string): BudgetReservation {
  const found = findReservation(db, reservationId);
  if (found === null) throw new StoreError('not-found', `no budget reservation ${reservationId}`);
  return found;
}


