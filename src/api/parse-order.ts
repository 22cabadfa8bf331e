import { type Decimal, ZERO } from '../domain/money.ts';
import { type Deal, type Order, type OrderSide, type OrderStatus, ORDER_STATUSES, readStp } from '../domain/order.ts';
import { WireReader, WireShapeError, wireArray, wireMap } from './read.ts';
import type { DealWire, OrderDealsWire, OrderHistoryRowWire, OrderWire } from './wire.ts';

/** Order types that never rest on the book: whatever they did not fill at once is cancelled. */
const NEVER_RESTING: ReadonlySet<string> = new Set(['market', 'stock market', 'margin market']);

/** Other spellings of our statuses (REST says PARTIALLY_FILLED, WS says OPEN). */
const STATUS_SPELLINGS: Readonly<Record<string, OrderStatus>> = {
  PARTIALLY_FILLED: 'PARTIAL_FILLED',
  PARTIALLY_CANCELED: 'PARTIAL_CANCELED',
  OPEN: 'NEW',
  CANCELLED: 'CANCELED',
};


type AnyOrderWire = OrderWire & OrderHistoryRowWire;

/**
 * What names from the exchange may hold: markets (BTC_USDT), assets and clientOrderIds (letters,
 * digits, `-`, `.`, `_`, at most 64, the exchange's own rule for the ids). They end up in the
 * journal, HTML pages, CSV files and the terminal: anything else is not a name but markup, a
 * formula or an escape sequence, and the answer is refused as one the client cannot read.
 */
const NAME = /^[A-Za-z0-9._-]{1,64}$/;

function checkedName(text: string | null, field: string, what: string): string | null {
  if (text === null || NAME.test(text)) return text;
  throw new WireShapeError(field, `expected ${what} (letters, digits, '-', '.', '_', at most 64), got ${JSON.stringify(text.slice(0, 80))}`);
}

export interface OrderContext {
  /** History rows do not carry their market: it is the key they are listed under. */
  readonly market?: string;
  /** History lists finished orders only, so a missing status is derived as a terminal one. */
  readonly finished?: boolean;
}

/** An order's clientOrderId ('' when it has none). */
function checkedClientOrderId(text: string | null, field: string): string {
  return text === null || text === '' ? '' : (checkedName(text, field, 'a clientOrderId') as string);
}

/** One order record, from a create response, the active list or a history row. */
export function parseOrder(value: unknown, at: string, context: OrderContext = {}): Order {
  const r = WireReader.of<AnyOrderWire>(value, at);
  const type = r.string('type');
  const side = parseSide(r.string('side'), r.field('side'));
  const amount = r.decimal('amount');
  const filledBase = r.decimal('dealStock');
  const filledQuote = r.decimal('dealMoney');
  const left = r.optionalDecimal('left') ?? deriveLeft(type, side, amount, filledBase, filledQuote);
  const price = r.optionalDecimal('price');
  const stopActivated = parseActivated(r);
  const wireStatus = r.optionalString('status');
  const wireStp = r.optionalString('stp');
  const market = checkedName(r.optionalString('market') ?? context.market ?? null, r.field('market'), 'a market name');
  if (market === null) throw new WireShapeError(r.field('market'), 'expected a string, got undefined');
  const fills: Fills = { type, left, filledBase, stopActivated, finished: context.finished === true };
  const fee = r.decimal('dealFee');
  const status = wireStatus === null ? null : readStatus(wireStatus, fills);
  const stp = wireStp === null ? 'no' : readStp(wireStp);
  const unrecognized = {
    ...(wireStatus !== null && status === null ? { status: wireStatus.slice(0, 64) } : {}),
    ...(wireStp !== null && stp === null ? { stp: wireStp.slice(0, 64) } : {}),
  };
  return {
    orderId: r.has('orderId') ? r.id('orderId') : r.id('id'),
    clientOrderId: checkedClientOrderId(r.optionalString('clientOrderId'), r.field('clientOrderId')),
    market,
    side,
    type,
    createdAtSec: r.has('timestamp') ? r.timeSec('timestamp') : r.timeSec('ctime'),
    amount,
    left,
    filledBase,
    filledQuote,
    fee,
    // Answers from before `feeAsset` (2022–2024 captures) charge a spot order's fee in the quote
    // asset (0.1 % of dealMoney, in its units), as ccxt takes it: left unnamed, the fee stayed out
    // of every average cost for good.
    feeAsset: checkedName(r.optionalString('feeAsset'), r.field('feeAsset'), 'an asset name') ?? (fee.isZero() ? null : quoteOfMarket(market)),
    price: price === null || price.isZero() ? null : price,
    status: status ?? (wireStatus === null ? deriveStatus(fills) : deriveUnknownStatus(fills)),
    statusDerived: status === null,
    stp: stp ?? 'no',
    stopActivated,
    ...(Object.keys(unrecognized).length === 0 ? {} : { unrecognized }),
  };
}

/** /api/v4/orders: an array; tolerate the keyed-by-market shape and `[]`. */
export function parseOrderList(value: unknown, at: string): Order[] {
  if (Array.isArray(value)) return value.map((item, i) => parseOrder(item, `${at}[${i}]`));
  return parseOrderHistory(value, at, false);
}

/** /api/v4/trade-account/order/history: keyed by market, `[]` when empty. */
export function parseOrderHistory(value: unknown, at: string, finished = true): Order[] {
  const orders: Order[] = [];
  for (const [market, rows] of wireMap(value, at)) {
    wireArray(rows, `${at}.${market}`).forEach((row, i) => orders.push(parseOrder(row, `${at}.${market}[${i}]`, { market, finished })));
  }
  return orders;
}

/** /api/v4/trade-account/order: `{records:[…]}`; the deals belong to the order asked about. */
export function parseDeals(value: unknown, at: string, orderId: string): Deal[] {
  const records = Array.isArray(value) ? value : WireReader.of<OrderDealsWire>(value, at).raw('records');
  return wireArray(records ?? [], `${at}.records`).map((item, i) => parseDeal(item, `${at}.records[${i}]`, orderId));
}

function parseDeal(value: unknown, at: string, orderId: string): Deal {
  const r = WireReader.of<DealWire>(value, at);
  const role = r.integer('role');
  if (role !== 1 && role !== 2) throw new WireShapeError(r.field('role'), 'expected 1 (maker) or 2 (taker)');
  return {
    dealId: r.id('id'),
    orderId,
    clientOrderId: checkedClientOrderId(r.optionalString('clientOrderId'), r.field('clientOrderId')),
    timeSec: r.timeSec('time'),
    price: r.decimal('price'),
    baseAmount: r.decimal('amount'),
    quoteAmount: r.decimal('deal'),
    fee: r.decimal('fee'),
    feeAsset: checkedName(r.optionalString('feeAsset'), r.field('feeAsset'), 'an asset name'),
    role: role === 1 ? 'maker' : 'taker',
  };
}

function parseSide(text: string, field: string): OrderSide {
  if (text === 'buy' || text === 'sell') return text;
  throw new WireShapeError(field, 'expected "buy" or "sell"');
}

/**
 * The exchange's status word, or null for one this version does not know (the caller derives
 * the status from the fills and keeps the word). Order history has no partial status: a market
 * order cut short after filling in part reads CANCELED there, with fills (docs/exchange-api.md).
 */
function readStatus(text: string, order: Fills): OrderStatus | null {
  const upper = text.toUpperCase();
  const known = (ORDER_STATUSES as readonly string[]).includes(upper) ? (upper as OrderStatus) : STATUS_SPELLINGS[upper];
  // History folds the AUTO_CANCELED_* family into CANCELED; do the same for new members.
  const status = known ?? (upper.startsWith('AUTO_CANCELED_') ? 'CANCELED' : undefined);
  if (status === undefined) return null;
  if (status === 'CANCELED' && order.filledBase.gt(0)) return NEVER_RESTING.has(order.type) ? 'CANCELED_TAKER_BAND' : 'PARTIAL_CANCELED';
  return status;
}

/**
 * `activated`: 0 or 1 on live orders; in order history the Unix time the stop order triggered
 * (0 while it has not). Anything non-zero is activated.
 */
function parseActivated(r: WireReader<AnyOrderWire>): 0 | 1 | null {
  const v = r.raw('activated');
  if (v === undefined || v === null) return null;
  if (v === 0 || v === false || v === '0') return 0;
  if (v === true || (typeof v === 'number' && Number.isFinite(v) && v > 0) || (typeof v === 'string' && /^[1-9]\d*(\.\d+)?$/.test(v))) return 1;
  throw new WireShapeError(r.field('activated'), 'expected 0, 1 or the time the stop triggered');
}

/** History rows carry no `left`. A buy market order is sized in quote, everything else in base. */
function deriveLeft(type: string, side: OrderSide, amount: Decimal, filledBase: Decimal, filledQuote: Decimal): Decimal {
  const filled = type === 'market' && side === 'buy' ? filledQuote : filledBase;
  const left = amount.minus(filled);
  return left.isNegative() ? ZERO : left;
}

interface Fills {
  readonly type: string;
  readonly left: Decimal;
  readonly filledBase: Decimal;
  readonly stopActivated: 0 | 1 | null;
  readonly finished: boolean;
}

/**
 * A status word this version does not know says nothing about whether the order is over: an
 * exchange adds statuses, such as one for an order it accepted and has not matched yet. Read as
 * final, an order it may still fill would no longer be followed and its budget would be settled
 * at what it had spent so far, so later slots could spend that money again and the fill would
 * never be journalled. It is final only on evidence: everything filled, or a history row (the
 * history lists finished orders only). Otherwise it is open by its fills, NEW or PARTIAL_FILLED,
 * and followed until the exchange names a status this version knows or lists it as finished.
 */
function deriveUnknownStatus(fills: Fills): OrderStatus {
  if (fills.finished) return deriveStatus(fills);
  const filled = fills.filledBase.gt(0);
  if (fills.left.isZero() && filled) return 'FILLED';
  return filled ? 'PARTIAL_FILLED' : 'NEW';
}

/**
 * Older responses carry no status (docs/exchange-api.md §6, 2022–2024 captures). Derive it from the
 * fills: an order that cannot rest and still has something left was cut short — by the taker
 * band when it filled in part (a partial fill, not a failure). One that filled nothing is
 * cancelled only where the exchange lists finished orders (its history); an answer may have come
 * before the match, so there it is NEW, followed until the history says how it ended. Taken as
 * cancelled at once, its budget was settled at nothing and the next slots bought again while the
 * history lagged.
 */
export function deriveStatus(fills: Fills): OrderStatus {
  const { type, left, filledBase } = fills;
  const filled = filledBase.gt(0);
  if (left.isZero() && filled) return 'FILLED';
  const waitingStop = type === 'stop market' && fills.stopActivated === 0;
  const neverRests = NEVER_RESTING.has(type) || (type === 'stop market' && !waitingStop);
  if (neverRests) return filled ? 'CANCELED_TAKER_BAND' : fills.finished ? 'CANCELED' : 'NEW';
  if (fills.finished) return filled ? 'PARTIAL_CANCELED' : 'CANCELED';
  if (left.isZero()) return 'CANCELED';
  return filled ? 'PARTIAL_FILLED' : 'NEW';
}

/** The quote asset a market's name ends with (BTC_USDT → USDT); null for a name without one. */
function quoteOfMarket(market: string): string | null {
  const at = market.lastIndexOf('_');
  return at > 0 && at < market.length - 1 ? market.slice(at + 1) : null;
}
