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
import { RowReader, reservationFromRow } from './journal-rows.ts';
import { budgetExcesses, budgetSpan, checkReserveRequest, checkScope, checkSpentAmount, settledAgainBy, spentFromReservations } from './journal-rules.ts';
import type { Tx } from './pg-db.ts';

/**
 * Budget counters of the PostgreSQL journal: read as numeric text, added with Decimal by the
 * shared rules and written back, inside the caller's SERIALIZABLE transaction, so two daemons
 * reserving against one limit at once cannot both pass it (one of them is retried and sees the
 * other's spend).
 */

export async function reserveBudget(tx: Tx, request: BudgetReserveRequest, nowMs: number): Promise<BudgetDecision> {
  const amount = checkReserveRequest(request);
  const starts = periodStarts(request.atMs, request.timeZone);
  const existing = await findReservation(tx, request.reservationId);
  if (existing !== null) {
    if (existing.instance !== request.instance || existing.asset !== request.asset) {
      throw new StoreError('conflict', `budget reservation ${request.reservationId} belongs to ${existing.instance}/${existing.asset}`);
    }
    return { ok: true, reservation: existing, repeated: true };
  }
  const spent = await spentAround(tx, request, request.atMs);
  const exceeded = budgetExcesses(request, starts, amount, (period) => spent[period]);
  if (exceeded.length > 0) return { ok: false, exceeded };
  await addToPeriods(tx, request, starts, amount, nowMs);
  await insertReservation(tx, { ...request, amountQuote: amount, state: 'held' }, starts, nowMs);
  return { ok: true, reservation: await requireReservation(tx, request.reservationId), repeated: false };
}

export async function settleBudget(tx: Tx, reservationId: string, actualQuote: Decimal, nowMs: number): Promise<BudgetReservation> {
  checkSpentAmount(actualQuote, 'actualQuote');
  const reservation = await requireReservation(tx, reservationId);
  if (reservation.state === 'settled' && settledAgainBy(reservation, actualQuote).isZero()) return reservation;
  // A released reservation settles too: its order turned up after the budget was given back. It happened, so it counts in full.
  const counted = reservation.state === 'released' ? ZERO : reservation.amountQuote;
  await addToPeriods(tx, reservation, reservation.periodStarts, actualQuote.minus(counted), nowMs);
  await tx.run("UPDATE budget_reservations SET amount_quote = $1, state = 'settled', updated_at_ms = $2 WHERE reservation_id = $3", [formatDecimal(actualQuote), nowMs, reservationId]);
  return requireReservation(tx, reservationId);
}

/** Count money spent without a reservation first (an adopted order): settled at what it spent, or held while it fills. May exceed the limits: it happened. */
export async function recordSpend(
  tx: Tx,
  spend: BudgetScope & { readonly reservationId: string; readonly atMs: number; readonly amountQuote: Decimal; readonly state: 'held' | 'settled' },
  nowMs: number,
): Promise<BudgetReservation> {
  checkScope(spend);
  checkSpentAmount(spend.amountQuote, 'amountQuote');
  const starts = periodStarts(spend.atMs, spend.timeZone);
  if ((await findReservation(tx, spend.reservationId)) !== null) throw new StoreError('conflict', `budget reservation ${spend.reservationId} already exists`);
  await addToPeriods(tx, spend, starts, spend.amountQuote, nowMs);
  await insertReservation(tx, spend, starts, nowMs);
  return requireReservation(tx, spend.reservationId);
}

export async function releaseBudget(tx: Tx, reservationId: string, nowMs: number): Promise<boolean> {
  const reservation = await findReservation(tx, reservationId);
  if (reservation === null || reservation.state === 'released') return false;
  if (reservation.state === 'settled') throw new StoreError('illegal-transition', `budget reservation ${reservationId} was settled: the money was spent`);
  await addToPeriods(tx, reservation, reservation.periodStarts, reservation.amountQuote.neg(), nowMs);
  await tx.run("UPDATE budget_reservations SET state = 'released', updated_at_ms = $1 WHERE reservation_id = $2", [nowMs, reservationId]);
  return true;
}

export async function budgetSpent(tx: Tx, scope: BudgetScope, atMs: number): Promise<BudgetSpent> {
  checkScope(scope);
  return { ...(await spentAround(tx, scope, atMs)), periodStarts: periodStarts(atMs, scope.timeZone) };
}

/**
 * What was spent in the day, week and month around `atMs` in the scope's zone: the counters, when
 * every reservation in those periods was made under that zone (always, unless the zone changed);
 * otherwise summed from the reservations, each counted where its instant falls (sqlite-budgets.ts).
 */
async function spentAround(tx: Tx, scope: BudgetScope, atMs: number): Promise<Record<BudgetPeriod, Decimal>> {
  const windows = periodWindows(atMs, scope.timeZone);
  const { fromMs, toMs } = budgetSpan(windows);
  const { starts } = windows;
  // One round trip: the three counters, each beside whether another zone's reservation falls in the periods.
  const rows = await tx.rows(
    `SELECT p.period, b.spent_quote,
            EXISTS (SELECT 1 FROM budget_reservations r WHERE r.instance = $1 AND r.asset = $2 AND r.at_ms >= $6 AND r.at_ms < $7 AND r.time_zone <> $8) AS other_zone
       FROM (VALUES ('day', $3::bigint), ('week', $4::bigint), ('month', $5::bigint)) AS p(period, start_ms)
       LEFT JOIN budgets b ON b.instance = $1 AND b.asset = $2 AND b.period = p.period AND b.period_start_ms = p.start_ms`,
    [scope.instance, scope.asset, starts.day, starts.week, starts.month, fromMs, toMs, scope.timeZone],
  );
  if (rows.some((row) => row['other_zone'] === true)) {
    const reservations = await tx.rows("SELECT * FROM budget_reservations WHERE instance = $1 AND asset = $2 AND at_ms >= $3 AND at_ms < $4 AND state <> 'released'", [scope.instance, scope.asset, fromMs, toMs]);
    return spentFromReservations(reservations.map(reservationFromRow), windows);
  }
  const spent: Record<BudgetPeriod, Decimal> = { day: ZERO, week: ZERO, month: ZERO };
  for (const row of rows) {
    const period = row['period'] as BudgetPeriod;
    if (row['spent_quote'] !== null) spent[period] = new RowReader(row, `budgets row ${scope.instance}/${scope.asset}/${period}@${starts[period]}`).decimal('spent_quote');
  }
  return spent;
}

export async function heldBudgetReservations(tx: Tx, instance: string | undefined): Promise<BudgetReservation[]> {
  const rows = await tx.rows("SELECT * FROM budget_reservations WHERE state = 'held' AND ($1::text IS NULL OR instance = $1) ORDER BY created_at_ms, reservation_id", [instance ?? null]);
  return rows.map(reservationFromRow);
}

async function readPeriods(tx: Tx, scope: BudgetScope, starts: PeriodStarts): Promise<Record<BudgetPeriod, Decimal>> {
  const spent: Record<BudgetPeriod, Decimal> = { day: ZERO, week: ZERO, month: ZERO };
  for (const period of BUDGET_PERIODS) {
    const row = await tx.one('SELECT spent_quote FROM budgets WHERE instance = $1 AND asset = $2 AND period = $3 AND period_start_ms = $4', [scope.instance, scope.asset, period, starts[period]]);
    if (row !== null) spent[period] = new RowReader(row, `budgets row ${scope.instance}/${scope.asset}/${period}@${starts[period]}`).decimal('spent_quote');
  }
  return spent;
}

/** Add a (possibly negative) amount to the three periods; a counter below zero means the journal was edited. */
async function addToPeriods(tx: Tx, scope: BudgetScope, starts: PeriodStarts, delta: Decimal, nowMs: number): Promise<void> {
  const spent = await readPeriods(tx, scope, starts);
  for (const period of BUDGET_PERIODS) {
    const next = spent[period].plus(delta);
    if (next.isNegative()) throw new StoreError('corrupt', `budget ${scope.instance}/${scope.asset} per ${period} from ${starts[period]} would go below zero`);
    await tx.run(
      `INSERT INTO budgets (instance, asset, period, period_start_ms, spent_quote, updated_at_ms) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (instance, asset, period, period_start_ms) DO UPDATE SET spent_quote = excluded.spent_quote, updated_at_ms = excluded.updated_at_ms`,
      [scope.instance, scope.asset, period, starts[period], formatDecimal(next), nowMs],
    );
  }
}

async function insertReservation(
  tx: Tx,
  reservation: BudgetScope & { readonly reservationId: string; readonly atMs: number; readonly amountQuote: Decimal; readonly state: 'held' | 'settled' },
  starts: PeriodStarts,
  nowMs: number,
): Promise<void> {
  await tx.run(
    `INSERT INTO budget_reservations (reservation_id, instance, asset, time_zone, at_ms, amount_quote, day_start_ms, week_start_ms,
       month_start_ms, state, created_at_ms, updated_at_ms)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)`,
    [reservation.reservationId, reservation.instance, reservation.asset, reservation.timeZone, reservation.atMs, formatDecimal(reservation.amountQuote), starts.day, starts.week, starts.month, reservation.state, nowMs],
  );
}

export async function findReservation(tx: Tx, reservationId: string): Promise<BudgetReservation | null> {
  const row = await tx.one('SELECT * FROM budget_reservations WHERE reservation_id = $1', [reservationId]);
  return row === null ? null : reservationFromRow(row);
}

async function requireReservation(tx: Tx, reservationId: string): Promise<BudgetReservation> {
  const found = await findReservation(tx, reservationId);
  if (found === null) throw new StoreError('not-found', `no budget reservation ${reservationId}`);
  return found;
}
