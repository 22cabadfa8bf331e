import { type Decimal, formatDecimal } from '../domain/money.ts';
import type { InstanceDay, NotifyEvent } from '../domain/notification.ts';

/**
 * An event as the JSON a webhook receives: `{event, at, mode, ...fields}`, every amount a decimal
 * string (never a JSON number: a receiver in JavaScript would round it), times as ISO-8601 UTC.
 * Prices and average costs, which are quotients, are rounded to 8 decimals (half-even).
 */
export type Payload = Readonly<Record<string, unknown>>;

const PRICE_PLACES = 8;

export function payloadOf(event: NotifyEvent): Payload {
  const head = { event: event.kind, at: new Date(event.atMs).toISOString(), mode: event.mode };
  switch (event.kind) {
    case 'order-filled':
      return {
        ...head,
        ...orderFields(event),
        filledBase: formatDecimal(event.filledBase),
        filledQuote: formatDecimal(event.filledQuote),
        fee: formatDecimal(event.fee),
        feeAsset: event.feeAsset,
        averagePrice: priceText(event.averagePrice),
      };
    case 'order-refused':
      return {
        ...head,
        instance: event.instance,
        intent: event.intent,
        clientOrderId: event.clientOrderId,
        reason: event.reason,
        message: event.message,
        ...(event.withheld === undefined ? {} : { withheld: event.withheld.count, withheldSince: new Date(event.withheld.sinceMs).toISOString() }),
      };
    case 'intent-unknown':
      return { ...head, instance: event.instance, ...(event.account === undefined ? {} : { account: event.account }), intent: event.intent, clientOrderId: event.clientOrderId, code: event.code, message: event.message };
    case 'order-stuck':
      return {
        ...head,
        ...orderFields(event),
        since: new Date(event.sinceMs).toISOString(),
        why: event.why,
      };
    case 'strategy-disabled':
      return { ...head, instance: event.instance, strategy: event.strategy, slot: new Date(event.slotTimeMs).toISOString(), error: event.error };
    case 'trading-stopped':
      return { ...head, code: event.code, reason: event.reason };
    case 'daemon-stopped':
      return { ...head, reason: event.reason };
    case 'daily-summary':
      return {
        ...head,
        day: event.day,
        instances: event.instances.map(instanceDayPayload),
        accountCaps: event.accountCaps.map((cap) => ({ account: cap.account, capLeft: formatDecimal(cap.capLeft), capAsset: cap.capAsset, timeZone: cap.timeZone })),
      };
  }
}

/** Which order an order event is about, and its status. */
function orderFields(event: Extract<NotifyEvent, { kind: 'order-filled' | 'order-stuck' }>): Payload {
  return { instance: event.instance, clientOrderId: event.clientOrderId, orderId: event.orderId, market: event.market, status: event.status };
}

function instanceDayPayload(day: InstanceDay): Payload {
  return {
    instance: day.instance,
    state: day.state,
    account: day.account,
    market: day.market,
    orders: day.orders,
    bought: formatDecimal(day.bought),
    spent: formatDecimal(day.spent),
    fees: Object.fromEntries([...day.fees].sort(([a], [b]) => (a < b ? -1 : 1)).map(([asset, amount]) => [asset, formatDecimal(amount)])),
    averageCost: day.averageCost === null ? null : priceText(day.averageCost),
    budgetLeft: day.budgetLeft === null ? null : formatDecimal(day.budgetLeft),
    budgetAsset: day.budgetAsset,
    budgetTimeZone: day.budgetTimeZone,
  };
}

/** A quotient for people and JSON alike: 8 decimals at most, half-even, no trailing zeros. */
export function priceText(value: Decimal): string {
  return formatDecimal(value.toDecimalPlaces(PRICE_PLACES, 6 /* ROUND_HALF_EVEN */));
}
