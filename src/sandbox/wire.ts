import type { CodePage, FlexInvestment, FlexPlan, TradeBalance } from '../domain/account.ts';
import type { MarketRules } from '../domain/market.ts';
import { Decimal, formatDecimal } from '../domain/money.ts';
import type { BookLevel } from '../sim/fills.ts';
import type { TradedVolume } from '../sim/prices.ts';
import type { SimDeal, SimOrder } from '../sim/orders.ts';

/**
 * Domain → wire, in the exchange's field names (docs/exchange-api.md §4–6). Money leaves as decimal
 * strings; ids as JSON integers (they are generated below 2^53); times in Unix seconds.
 */
const f = formatDecimal;

function integerId(id: string): number {
  const value = Number(id);
  if (!Number.isSafeInteger(value)) throw new Error(`id ${id} cannot be sent as a JSON integer`);
  return value;
}

export function marketWire(m: MarketRules): Record<string, unknown> {
  return {
    name: m.name,
    stock: m.base,
    money: m.quote,
    stockPrec: String(m.basePrecision),
    moneyPrec: String(m.quotePrecision),
    feePrec: String(m.feePrecision),
    makerFee: f(m.makerFeePct),
    takerFee: f(m.takerFeePct),
    minAmount: f(m.minBaseAmount),
    minTotal: f(m.minQuoteTotal),
    maxTotal: m.maxQuoteTotal === null ? '0' : f(m.maxQuoteTotal),
    tradesEnabled: m.tradesEnabled,
    isCollateral: false,
    type: m.type,
    isTradFiFutures: false,
    delistedAt: null,
  };
}

/** CoinMarketCap ids the exchange reports as base_id / quote_id; 0 when unknown. */
const CMC_IDS: Readonly<Record<string, number>> = { BTC: 1, ETH: 1027, USDT: 825 };

/**
 * A market's ticker record; with no trades known (fixed prices) its 24 h volumes are "0", and
 * without a price 24 h ago its change is "0". The change is in percent, to two decimals as the
 * exchange writes it ("-1.25").
 */
export function tickerWire(m: MarketRules, lastPrice: Decimal, traded: TradedVolume | null, dayBefore: Decimal | null = null): Record<string, unknown> {
  return {
    base_id: CMC_IDS[m.base] ?? 0,
    quote_id: CMC_IDS[m.quote] ?? 0,
    last_price: f(lastPrice),
    quote_volume: traded === null ? '0' : f(traded.quote),
    base_volume: traded === null ? '0' : f(traded.base),
    isFrozen: !m.tradesEnabled,
    change: dayBefore === null || dayBefore.isZero() ? '0' : f(lastPrice.minus(dayBefore).div(dayBefore).times(100).toDecimalPlaces(2, Decimal.ROUND_HALF_UP)),
  };
}

/** An unlimited level has no size; it is shown as this much so the book still parses. */
const UNLIMITED_LEVEL_SIZE = '1000000000';

export function bookWire(levels: readonly BookLevel[]): [string, string][] {
  return levels.map((l) => [f(l.price), l.base === null ? UNLIMITED_LEVEL_SIZE : f(l.base)]);
}

/** The order record of creation responses and `/api/v4/orders` (docs/exchange-api.md §6; price "0" on market orders). */
export function orderWire(o: SimOrder): Record<string, unknown> {
  return {
    orderId: integerId(o.orderId),
    clientOrderId: o.clientOrderId,
    market: o.market,
    side: o.side,
    type: o.type,
    timestamp: o.createdAtSec,
    dealMoney: f(o.filledQuote),
    dealStock: f(o.filledBase),
    amount: f(o.amount),
    left: f(o.left),
    dealFee: f(o.fee),
    ...(o.feeAsset === null ? {} : { feeAsset: o.feeAsset }),
    price: o.price === null ? '0' : f(o.price),
    postOnly: false,
    ioc: false,
    status: o.status,
    stp: o.stp,
    rpi: false,
  };
}

/**
 * The order history knows fewer statuses than order answers: FILLED, CANCELED, CANCELED_STP and
 * AUTO_CANCELED_*. An order cut short after filling in part (taker band, partial cancel) reads
 * CANCELED there, with its fills.
 */
function historyStatus(status: SimOrder['status']): string {
  return status === 'CANCELED_TAKER_BAND' || status === 'PARTIAL_CANCELED' ? 'CANCELED' : status;
}

/** A row of `/api/v4/trade-account/order/history` (key `id`, `ctime`/`ftime`). */
export function historyWire(o: SimOrder): Record<string, unknown> {
  return {
    id: integerId(o.orderId),
    clientOrderId: o.clientOrderId,
    side: o.side,
    type: o.type,
    amount: f(o.amount),
    price: o.price === null ? '0' : f(o.price),
    ctime: o.createdAtSec,
    ftime: o.finishedAtSec ?? o.createdAtSec,
    dealStock: f(o.filledBase),
    dealMoney: f(o.filledQuote),
    dealFee: f(o.fee),
    ...(o.feeAsset === null ? {} : { feeAsset: o.feeAsset }),
    postOnly: false,
    ioc: false,
    status: historyStatus(o.status),
    rpi: false,
    reduceOnly: false,
  };
}

/** A record of `/api/v4/trade-account/order` (deals of one order); role 2 = taker. */
export function dealWire(x: SimDeal): Record<string, unknown> {
  return {
    time: x.timeSec,
    fee: f(x.fee),
    price: f(x.price),
    amount: f(x.baseAmount),
    id: integerId(x.dealId),
    dealOrderId: integerId(x.counterOrderId),
    clientOrderId: x.clientOrderId,
    role: x.role === 'maker' ? 1 : 2,
    deal: f(x.quoteAmount),
    feeAsset: x.feeAsset,
    rpi: false,
  };
}

export function codePageWire(page: CodePage): Record<string, unknown> {
  return {
    total: page.total,
    data: page.codes.map((c) => ({
      amount: f(c.amount),
      code: c.code,
      date: c.dateSec,
      status: c.status,
      ticker: c.ticker,
      external_id: c.externalId,
    })),
    limit: page.limit,
    offset: page.offset,
  };
}

export function flexPlanWire(p: FlexPlan): Record<string, unknown> {
  return { id: p.planId, ticker: p.ticker, minInvestment: f(p.minInvestment), maxInvestment: f(p.maxInvestment), maxRate: f(p.maxRatePct) };
}

export function flexInvestmentWire(i: FlexInvestment): Record<string, unknown> {
  return {
    id: i.investmentId,
    planId: i.planId,
    currency: i.ticker,
    invested: f(i.invested),
    withAutoReinvest: i.autoReinvest,
    status: i.active ? 1 : 0,
    createdAt: i.createdAtSec,
    updatedAt: i.updatedAtSec,
  };
}

export function tradeBalanceWire(b: TradeBalance): Record<string, string> {
  return { available: f(b.available), freeze: f(b.freeze) };
}
