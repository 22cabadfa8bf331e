import type { TradeBalance } from '../../domain/account.ts';
import { type ExchangeError, ExchangeValidationError, InputError } from '../../domain/errors.ts';
import { type Decimal, formatDecimal } from '../../domain/money.ts';
import type { Deal, Order, Stp } from '../../domain/order.ts';
import { checkClientOrderId, checkMarket, checkOrderId, checkPositiveAmount, checkStp, checkTicker, optionalInteger } from '../checks.ts';
import { jsonInteger } from '../json.ts';
import { parseDeals, parseOrder, parseOrderHistory, parseOrderList } from '../parse-order.ts';
import { parseTradeBalance, parseTradeBalances } from '../parse.ts';
import { PATHS } from '../paths.ts';
import type { Requester } from '../requester.ts';
import type { MarketOrderParamsWire } from '../wire.ts';

/** Trade balance, market orders and the order lookups the engine reconciles with. */

const MAX_OFFSET = 4_294_967_295;

export function tradeBalances(http: Requester): Promise<Map<string, TradeBalance>> {
  return http.post(PATHS.tradeBalance, {}, parseTradeBalances, { retry: true });
}

export async function tradeBalance(http: Requester, ticker: string): Promise<TradeBalance> {
  checkTicker(ticker);
  return http.post(PATHS.tradeBalance, { ticker }, (value) => parseTradeBalance(value, ticker), { retry: true });
}

export interface MarketBuyParams {
  readonly market: string;
  readonly clientOrderId?: string;
  readonly stp?: Stp;
}

/** Buy an exact base quantity (POST /api/v4/order/stock_market). Never retried: a lost answer may be a placed order. */
export async function buyStockMarket(http: Requester, params: MarketBuyParams & { baseAmount: Decimal }): Promise<Order> {
  const body = marketOrderBody(params, checkPositiveAmount(params.baseAmount, 'baseAmount'));
  return http.post(PATHS.stockMarket, { ...body }, (value) => asSent(parseOrder(value, 'order'), body), { retry: false, ...lookUpFirst(http, body) });
}

/** Spend a quote amount (POST /api/v4/order/market, buy side: amount in quote). Never retried. */
export async function buyMarket(http: Requester, params: MarketBuyParams & { quoteAmount: Decimal }): Promise<Order> {
  const body = marketOrderBody(params, checkPositiveAmount(params.quoteAmount, 'quoteAmount'));
  return http.post(PATHS.market, { ...body }, (value) => asSent(parseOrder(value, 'order'), body), { retry: false, ...lookUpFirst(http, body) });
}

/**
 * The answer to an order, under the clientOrderId it was sent with when the answer left it empty
 * (`""` stands for none): journalled empty, `stacker orders` and the tax CSV lost the id that ties
 * the order to its slot.
 */
function asSent(order: Order, body: MarketOrderParamsWire): Order {
  return order.clientOrderId === '' && body.clientOrderId !== undefined ? { ...order, clientOrderId: body.clientOrderId } : order;
}

/**
 * An order refused for its nonce is signed again and sent once more (Requester.post): looked up
 * by its clientOrderId first, since an exchange that took it and still answered the refusal (a
 * throttle answering with the nonce's own words) would otherwise fill it twice.
 */
function lookUpFirst(http: Requester, body: MarketOrderParamsWire): { readonly lookUp?: () => Promise<Order | null> } {
  const clientOrderId = body.clientOrderId;
  return clientOrderId === undefined ? {} : { lookUp: () => findOrder(http, { market: body.market, clientOrderId }) };
}

/**
 * The order of a clientOrderId, newest first, from the order history then the active orders (a
 * market order is normally done within milliseconds; active orders cover the moment it is
 * still being filled; both answers are needed before saying "none"); null when neither has it.
 */
export async function findOrder(http: Requester, request: { readonly market: string; readonly clientOrderId: string }): Promise<Order | null> {
  const history = await orderHistory(http, { market: request.market, clientOrderId: request.clientOrderId, limit: LOOKUP_PAGE });
  const done = ofClientOrderId(history, request.clientOrderId);
  if (done !== null) return done;
  const active = await activeOrders(http, { market: request.market, clientOrderId: request.clientOrderId, limit: LOOKUP_PAGE });
  return ofClientOrderId(active, request.clientOrderId);
}

/** The largest page of active orders, which a lookup by id asks for. */
const LOOKUP_PAGE = 100;

function marketOrderBody(params: MarketBuyParams, amount: Decimal): MarketOrderParamsWire {
  const market = checkMarket(params.market);
  const clientOrderId = params.clientOrderId === undefined ? undefined : checkClientOrderId(params.clientOrderId);
  // Always the short form on the wire: the long forms are being retired (docs/exchange-api.md §6).
  const stp = params.stp === undefined ? undefined : checkStp(params.stp);
  return {
    market,
    side: 'buy',
    amount: formatDecimal(amount),
    ...(clientOrderId === undefined ? {} : { clientOrderId }),
    ...(stp === undefined ? {} : { stp }),
  };
}

export interface OrderQuery {
  readonly market?: string;
  readonly clientOrderId?: string;
  readonly orderId?: string;
  /** Order history only: creation time from / to, Unix seconds (at most 31 days apart). */
  readonly startDate?: number;
  readonly endDate?: number;
  readonly limit?: number;
  readonly offset?: number;
}

function orderQueryBody(params: OrderQuery, maxLimit: number): Record<string, unknown> {
  return {
    market: params.market === undefined ? undefined : checkMarket(params.market),
    clientOrderId: params.clientOrderId === undefined ? undefined : checkClientOrderId(params.clientOrderId),
    // A JSON integer on the wire, exact even beyond 2^53.
    orderId: params.orderId === undefined ? undefined : jsonInteger(checkOrderId(params.orderId)),
    limit: optionalInteger(params.limit, 'limit', 1, maxLimit),
    offset: optionalInteger(params.offset, 'offset', 0, MAX_OFFSET),
    startDate: optionalInteger(params.startDate, 'startDate', 0, Number.MAX_SAFE_INTEGER),
    endDate: optionalInteger(params.endDate, 'endDate', 0, Number.MAX_SAFE_INTEGER),
  };
}

/**
 * Finished orders. The exchange answers an unknown clientOrderId with 422
 * {"code":30,"message":"Validation failed","errors":{"orderHistory":["OrderHistory was not found."]}}:
 * for a lookup that is "no such order", i.e. [].
 */
export async function orderHistory(http: Requester, params: OrderQuery): Promise<Order[]> {
  const body = orderQueryBody(params, 500);
  return http.post(PATHS.orderHistory, body, (value) => parseOrderHistory(value, 'history'), { retry: true, answerOf: (error) => (isHistoryNotFound(error) ? [] : undefined) });
}

function isHistoryNotFound(error: unknown): boolean {
  if (!(error instanceof ExchangeValidationError)) return false;
  const messages = (error as ExchangeError).fieldErrors['orderHistory'] ?? [];
  return messages.some((m) => /^OrderHistory was not found/i.test(m));
}

/**
 * Open orders (POST /api/v4/orders). Market orders never rest, so they never show up here. The
 * exchange searches every market only when no id is given: with a clientOrderId or an orderId
 * it answers 422 "The market field is required." — refused here before anything is sent.
 */
export async function activeOrders(http: Requester, params: OrderQuery): Promise<Order[]> {
  if (params.market === undefined && (params.clientOrderId !== undefined || params.orderId !== undefined)) {
    throw InputError.one('market', 'is required to look active orders up by clientOrderId or orderId (the exchange searches all markets only without an id)');
  }
  return http.post(PATHS.activeOrders, orderQueryBody(params, 100), (value) => parseOrderList(value, 'orders'), { retry: true });
}

/** Executions of one order. An unknown or foreign order id answers 200 with no records. */
export async function orderDeals(http: Requester, params: { orderId: string; limit?: number; offset?: number }): Promise<Deal[]> {
  const orderId = checkOrderId(params.orderId);
  const body = {
    orderId: jsonInteger(orderId),
    limit: optionalInteger(params.limit, 'limit', 1, 100),
    offset: optionalInteger(params.offset, 'offset', 0, MAX_OFFSET),
  };
  return http.post(PATHS.orderDeals, body, (value) => parseDeals(value, 'deals', orderId), { retry: true });
}

/**
 * The exchange lets a clientOrderId be reused once the earlier order is closed, so a lookup can
 * answer several; ours derive from the slot and are never reused, but a hand-placed order could
 * share one. The newest is the one this slot placed.
 */
function newest(orders: readonly Order[]): Order | null {
  let best: Order | null = null;
  for (const order of orders) if (best === null || order.createdAtSec > best.createdAtSec) best = order;
  return best;
}

/**
 * The newest of the orders the exchange answered for a clientOrderId lookup that carry that id:
 * as sent, else in another case (the spec says ids are case-sensitive, but an exchange that keeps
 * them in capitals answers the lookup with `DCA-BD58…` for `dca-bd58…`: read as none, a lost
 * answer's order was never recorded). Returned under the id as sent, which the journal knows it by.
 */
function ofClientOrderId(orders: readonly Order[], clientOrderId: string): Order | null {
  const exact = newest(orders.filter((order) => order.clientOrderId === clientOrderId));
  if (exact !== null) return exact;
  const folded = clientOrderId.toLowerCase();
  const other = newest(orders.filter((order) => order.clientOrderId.toLowerCase() === folded));
  return other === null ? null : { ...other, clientOrderId };
}
