import type { Decimal } from '../../domain/money.ts';
import type { SimOrder } from '../../sim/orders.ts';
import { ORDER_CODES, parseClientOrderId, parseStp } from '../../sim/order-rules.ts';
import { SimRejection } from '../../sim/rejection.ts';
import { type Body, decimalOrNull, idOrNull, optionalText, paging } from '../params.ts';
import type { Route, RouteContext } from '../router.ts';
import { type Answer, json } from '../responses.ts';
import { dealWire, historyWire, orderWire, tradeBalanceWire } from '../wire.ts';

const v = (code: number, field: string, message: string): SimRejection => SimRejection.validation(code, field, message);

/** The fields both market order endpoints share (docs/exchange-api.md §6), checked in the exchange's order. */
function orderRequest(body: Body): { market: string; amount: Decimal; clientOrderId: string; stp: ReturnType<typeof parseStp> } {
  const market = body['market'];
  if (market === undefined || market === null) throw v(ORDER_CODES.validation, 'market', 'Market field is required.');
  if (market === '') throw v(ORDER_CODES.market, 'market', 'Market field should not be empty string.');
  if (typeof market !== 'string') throw v(ORDER_CODES.market, 'market', 'Market is not available.');
  const side = body['side'];
  if (side === undefined || side === null) throw v(ORDER_CODES.validation, 'side', 'Side field is required.');
  if (side !== 'buy' && side !== 'sell') throw v(ORDER_CODES.validation, 'side', "Side field should contain only 'buy' or 'sell' values.");
  // The sim stacks: it buys. A sell is a valid request it does not simulate.
  if (side === 'sell') throw v(ORDER_CODES.validation, 'side', 'Sell orders are not simulated by the sandbox.');
  const rawAmount = body['amount'];
  if (rawAmount === undefined || rawAmount === null || rawAmount === '') throw v(ORDER_CODES.amount, 'amount', 'Amount field is required.');
  const amount = decimalOrNull(rawAmount);
  if (amount === null && typeof rawAmount === 'number') {
    throw v(ORDER_CODES.amount, 'amount', 'Amount field should be a numeric string (the sandbox refuses JSON floats for money).');
  }
  if (amount === null) throw v(ORDER_CODES.amount, 'amount', 'Amount field should be numeric string or number.');
  return { market, amount, clientOrderId: parseClientOrderId(body['clientOrderId']), stp: parseStp(body['stp']) };
}

function knownMarket(context: RouteContext, message: string): string | undefined {
  const market = optionalText(context.body, 'market', () => v(ORDER_CODES.market, 'market', message));
  if (market !== undefined && context.exchange.market(market) === undefined) throw v(ORDER_CODES.market, 'market', message);
  return market;
}

function orderFilter(context: RouteContext, marketMessage: string): { market?: string; clientOrderId?: string; orderId?: string } {
  const { body } = context;
  const market = knownMarket(context, marketMessage);
  const clientOrderId = optionalText(body, 'clientOrderId', () => v(ORDER_CODES.clientOrderId, 'clientOrderId', 'ClientOrderId field should be a string.'));
  const rawOrderId = body['orderId'];
  const orderId = rawOrderId === undefined || rawOrderId === null ? undefined : idOrNull(rawOrderId);
  if (orderId === null) throw v(ORDER_CODES.validation, 'orderId', 'OrderId field should be an integer.');
  return {
    ...(market === undefined ? {} : { market }),
    ...(clientOrderId === undefined ? {} : { clientOrderId }),
    ...(orderId === undefined ? {} : { orderId }),
  };
}

/** The history lag fault: an order shows only once it is old enough. */
function visible(order: SimOrder, context: RouteContext): boolean {
  return order.createdAtSec <= context.visibleUntilSec;
}

/**
 * `startDate` / `endDate` (Unix seconds) bound the creation time of the orders listed. The
 * exchange answers at most 31 days per request; the refusal's wording here is the sandbox's own.
 */
function inDates(order: SimOrder, context: RouteContext): boolean {
  const { startDate, endDate } = dateRange(context);
  return (startDate === undefined || order.createdAtSec >= startDate) && (endDate === undefined || order.createdAtSec <= endDate);
}

const MAX_SPAN_SEC = 31 * 24 * 3600;

function dateRange(context: RouteContext): { startDate?: number; endDate?: number } {
  const read = (field: string): number | undefined => {
    const value = context.body[field];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw v(ORDER_CODES.validation, field, `The ${field} must be an integer.`);
    return value;
  };
  const startDate = read('startDate');
  const endDate = read('endDate');
  if (startDate !== undefined && endDate !== undefined && (endDate < startDate || endDate - startDate > MAX_SPAN_SEC)) {
    throw v(ORDER_CODES.validation, 'endDate', 'The period between startDate and endDate must be from 0 to 31 days.');
  }
  return { ...(startDate === undefined ? {} : { startDate }), ...(endDate === undefined ? {} : { endDate }) };
}

function keyedByMarket(orders: readonly SimOrder[]): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {};
  for (const order of orders) (out[order.market] ??= []).push(historyWire(order));
  return out;
}

const trade = (path: string, scope: Route['scope'], handle: (context: RouteContext) => Answer): Route => ({
  method: 'POST',
  path,
  private: true,
  scope,
  refusals: 'trade',
  handle,
});

/** Trade endpoints: 422 for validation (codes 30–36), 400 for business rules (code 10). */
export const tradeRoutes: readonly Route[] = [
  trade('/api/v4/trade-account/balance', 'trade-query', ({ exchange, body }) => {
    const ticker = body['ticker'];
    if (ticker === undefined) {
      // Only assets with something on them, as the exchange lists them.
      const out: Record<string, Record<string, string>> = {};
      for (const [asset, balance] of exchange.tradeBalances()) {
        if (!balance.available.isZero() || !balance.freeze.isZero()) out[asset] = tradeBalanceWire(balance);
      }
      return json(200, out);
    }
    if (typeof ticker !== 'string') throw v(ORDER_CODES.validation, 'ticker', 'Ticker field should be a string.');
    if (!exchange.isKnownAsset(ticker)) throw v(ORDER_CODES.validation, 'ticker', 'Currency was not found.');
    return json(200, tradeBalanceWire(exchange.tradeBalance(ticker)));
  }),
  trade('/api/v4/order/stock_market', 'trade', ({ exchange, body }) => {
    const r = orderRequest(body);
    return json(200, orderWire(exchange.buyStockMarket({ market: r.market, baseAmount: r.amount, clientOrderId: r.clientOrderId, stp: r.stp })));
  }),
  trade('/api/v4/order/market', 'trade', ({ exchange, body }) => {
    const r = orderRequest(body);
    return json(200, orderWire(exchange.buyMarket({ market: r.market, quoteAmount: r.amount, clientOrderId: r.clientOrderId, stp: r.stp })));
  }),
  trade('/api/v4/trade-account/order/history', 'trade-query', (context) => {
    const filter = orderFilter(context, 'Market is not available.');
    const { limit, offset } = paging(context.body, { defaultLimit: 50, maxLimit: 500 }, ORDER_CODES.validation);
    const orders = context.exchange.orderHistory(filter).filter((order) => visible(order, context) && inDates(order, context));
    // orderId wins over clientOrderId and simply finds nothing; an unknown clientOrderId is an error.
    if (filter.clientOrderId !== undefined && filter.orderId === undefined && orders.length === 0) {
      throw v(ORDER_CODES.validation, 'orderHistory', 'OrderHistory was not found.');
    }
    // An exchange may hold a page to fewer orders than asked, and not say so (the history-page fault).
    const pageSize = Math.min(limit, context.historyPageCap ?? limit);
    return json(200, keyedByMarket(orders.slice(offset, offset + pageSize)));
  }),
  trade('/api/v4/orders', 'active-orders', (context) => {
    // This endpoint's documented message has no final dot.
    const filter = orderFilter(context, 'Market is not available');
    // All markets are searched only when no id is given.
    if (filter.market === undefined && (filter.clientOrderId !== undefined || filter.orderId !== undefined)) {
      throw v(ORDER_CODES.validation, 'market', 'The market field is required.');
    }
    const { limit, offset } = paging(context.body, { defaultLimit: 50, maxLimit: 100 }, ORDER_CODES.validation);
    return json(200, context.exchange.activeOrders(filter).filter((order) => visible(order, context)).slice(offset, offset + limit).map(orderWire));
  }),
  trade('/api/v4/trade-account/order', 'trade-query', ({ exchange, body }) => {
    const rawOrderId = body['orderId'];
    if (rawOrderId === undefined || rawOrderId === null) throw v(ORDER_CODES.validation, 'orderId', 'OrderId field is required.');
    const orderId = idOrNull(rawOrderId);
    if (orderId === null) throw v(ORDER_CODES.validation, 'orderId', 'OrderId field should be an integer.');
    const { limit, offset } = paging(body, { defaultLimit: 50, maxLimit: 100 }, ORDER_CODES.validation);
    const records = exchange.orderDeals(orderId).slice(offset, offset + limit).map(dealWire);
    return json(200, { records, offset, limit });
  }),
];
