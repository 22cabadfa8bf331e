import { formatDecimal, isAboveZero } from '../domain/money.ts';
import { type Order, isTerminalStatus } from '../domain/order.ts';
import { type BudgetReservation, type OrderTransition, secondOrderReservationId } from '../store/journal.ts';
import { ENGINE_REFUSED, tell } from './observer.ts';
import { type EngineDeps, accountReservationId, mayReserveOnAccount } from './runtime.ts';

/**
 * Store what the exchange says about an order and, when that is a transition, log it — once:
 * the journal decides whether the snapshot is new (same status and fills → no transition; older
 * → ignored), in the same transaction that stores it, so a restart, a repeated poll or a lookup
 * racing the tracker never logs a transition twice. A terminal order settles the budget
 * reservation of its intent at what was really spent, whenever it is recorded (settling twice
 * changes nothing).
 */
export async function recordOrder(deps: EngineDeps, instance: string, order: Order, intentId: string | null): Promise<OrderTransition | null> {
  const unread = await newlyUnread(deps, order);
  const transition = await deps.journal.recordOrderSnapshot(order, intentId === null ? {} : { intentId });
  if (unread !== null) warnUnread(deps, instance, order, unread);
  if (transition === null) {
    // Seen before, final: its settlement may not have been (the journal lost between the
    // transition's commit and the settlement, a kill): the lookup of a restart settles it, or
    // its reservation stayed held at the estimate for good.
    if (intentId !== null && isTerminalStatus(order.status)) await settleReservation(deps, intentId, order);
    return null;
  }
  deps.metrics.orderTransition(instance, transition.toStatus);
  if (deps.logger.isLevelEnabled('info')) logTransition(deps, instance, order, transition);
  if (intentId !== null && isTerminalStatus(transition.toStatus)) await settleReservation(deps, intentId, order);
  // Told where the journal says it reached its end: once per order, like the log line above.
  if (isTerminalStatus(transition.toStatus) && transition.fromStatus !== transition.toStatus && isAboveZero(transition.filledBase)) {
    tell(deps, () => ({
      kind: 'order-filled',
      atMs: deps.clock.nowMs(),
      mode: deps.mode,
      instance,
      clientOrderId: order.clientOrderId,
      orderId: order.orderId,
      market: order.market,
      status: transition.toStatus,
      filledBase: transition.filledBase,
      filledQuote: transition.filledQuote,
      fee: transition.fee,
      feeAsset: order.feeAsset,
      averagePrice: transition.filledQuote.div(transition.filledBase),
    }));
  }
  if (isTerminalStatus(transition.toStatus) && transition.fromStatus !== transition.toStatus && !isAboveZero(transition.filledBase) && order.side === 'buy' && intentId !== null) {
    tellUnfilled(deps, instance, order, transition.toStatus);
  }
  return transition;
}

/**
 * A buy of ours the exchange took and ended with nothing filled: the slot sent what it should,
 * and nothing was bought. Said at warn, counted and told as a refusal (`unfilled`): left as an
 * info transition, a DCA could buy nothing for weeks, every slot "done" and /healthz ok (a
 * resting order of the operator's own, with STP=cn, cancels each buy).
 */
function tellUnfilled(deps: EngineDeps, instance: string, order: Order, status: string): void {
  const why =
    status === 'CANCELED_STP'
      ? order.stp === 'no'
        ? `self-trade prevention cancelled it although it went with STP=no: an order of this account rests on ${order.market} on the other side; cancel it`
        : `self-trade prevention cancelled it (STP=${order.stp}): an order of this account rests on ${order.market} on the other side; cancel it, or set STP=no to trade against it`
      : `the book had nothing to fill it at (an empty or thin book, or the exchange's price band)`;
  const message = `order ${order.clientOrderId} (${order.orderId}) ended ${status} with nothing filled: ${why}; nothing was bought for this slot`;
  deps.logger.warn({ event: 'order-unfilled', instance, orderId: order.orderId, clientOrderId: order.clientOrderId, market: order.market, status }, message);
  deps.metrics.refusal(instance, ENGINE_REFUSED.unfilled);
  tell(deps, () => ({ kind: 'order-refused', atMs: deps.clock.nowMs(), mode: deps.mode, instance, intent: 'buy-stock-market', clientOrderId: order.clientOrderId, reason: ENGINE_REFUSED.unfilled, message }));
}

/**
 * The status word of an order the journal is about to hold as open on a status derived from
 * its fills, because this version does not know the word (parseOrder): it stays open, counted
 * against its budget and followed until the exchange names a known status or lists it in its
 * history, and the operator hears of it once, when the journal starts holding it so. null when
 * there is nothing to tell: a known status, a final one, or an order already held so (every
 * poll of it would tell again). Asked before the snapshot is stored, which overwrites that.
 */
async function newlyUnread(deps: EngineDeps, order: Order): Promise<string | null> {
  const word = order.unrecognized?.status;
  if (word === undefined || isTerminalStatus(order.status)) return null;
  const stored = await deps.journal.getOrder(order.orderId);
  if (stored !== null && (stored.statusDerived || isTerminalStatus(stored.status))) return null;
  return word;
}

function warnUnread(deps: EngineDeps, instance: string, order: Order, word: string): void {
  deps.logger.warn(
    { event: 'order-status-unrecognized', instance, orderId: order.orderId, clientOrderId: order.clientOrderId, market: order.market, status: word, derived: order.status },
    `order ${order.clientOrderId} (${order.orderId}) has status ${JSON.stringify(word)}, which this stacker does not know: it is taken as ${order.status} by its fills, its budget stays counted, and it is followed until the exchange shows it finished`,
  );
}

/**
 * A final order settles what its intent reserved, at what it really spent: its instance's budget
 * and its account's cap. A reservation given back meanwhile settles too: a not-found buy whose
 * history read showed nothing had its budget released, and an order that lands after that read
 * (its backend took it later still) was spent all the same.
 */
async function settleReservation(deps: EngineDeps, intentId: string, order: Order): Promise<void> {
  let reservationId = intentId;
  let reservation = await deps.journal.budgetReservation(intentId);
  // A held reservation is its answered order's, settled now (a slot's usual path: one read).
  // Otherwise the order may be one journalled against its intent under a reservation of its own
  // (a second order, one placed after an answer read as a refusal): that one settles, and the
  // intent's, settled at its own order's spend or given back with its refusal, is left as it is:
  // settling it too counted the order twice.
  if (reservation === null || reservation.state !== 'held') {
    const separateId = secondOrderReservationId(intentId, order.orderId);
    const separate = await deps.journal.budgetReservation(separateId);
    if (separate !== null) {
      reservationId = separateId;
      reservation = separate;
    }
  }
  await settleAt(deps, reservationId, reservation, order);
  if (mayReserveOnAccount(deps)) await settleAt(deps, accountReservationId(reservationId), await deps.journal.budgetReservation(accountReservationId(reservationId)), order);
}

async function settleAt(deps: EngineDeps, reservationId: string, reservation: BudgetReservation | null, order: Order): Promise<void> {
  if (reservation === null) return;
  // Settled again when the order's final fill grew since (the exchange's history corrected it).
  if (reservation.state !== 'settled' || !reservation.amountQuote.eq(order.filledQuote)) await deps.journal.settleBudget(reservationId, order.filledQuote);
}

/** The transition's log line (only built when info lines are written: decimal text costs a backtest time). */
function logTransition(deps: EngineDeps, instance: string, order: Order, transition: OrderTransition): void {
  deps.logger.info(
    {
      event: 'order-transition',
      instance,
      orderId: order.orderId,
      clientOrderId: order.clientOrderId,
      market: order.market,
      from: transition.fromStatus,
      to: transition.toStatus,
      filledBase: formatDecimal(transition.filledBase),
      filledQuote: formatDecimal(transition.filledQuote),
      fee: formatDecimal(transition.fee),
      feeAsset: order.feeAsset,
      ...(order.stopActivated === null ? {} : { stopActivated: order.stopActivated }),
      // A status or STP mode newer than this stacker: kept as the exchange wrote it.
      ...(order.unrecognized === undefined ? {} : { unrecognized: order.unrecognized }),
    },
    transition.fromStatus === transition.toStatus && transition.stopActivated
      ? `order ${order.clientOrderId} stop activated (${transition.toStatus})`
      : `order ${order.clientOrderId} ${transition.fromStatus ?? 'seen'} -> ${transition.toStatus}`,
  );
}
