import type { CodePage, CodeRecord, FlexInvestment, FlexPlan, Ticker, TradeBalance } from '../domain/account.ts';
import type { Candle } from '../domain/candle.ts';
import type { MarketRules } from '../domain/market.ts';
import { type Decimal, ZERO } from '../domain/money.ts';
import { WireReader, WireShapeError, kindOf, wireArray, wireDecimal, wireMap } from './read.ts';
import type {
  CodePageWire,
  CodeWire,
  FlexInvestmentWire,
  FlexInvestmentsWire,
  FlexPlanWire,
  FlexWithdrawResultWire,
  MainBalanceWire,
  MarketWire,
  OrderBookWire,
  TickerWire,
  TimeResultWire,
  TradeBalanceWire,
} from './wire.ts';

export interface OrderBook {
  readonly asks: Array<[Decimal, Decimal]>;
  readonly bids: Array<[Decimal, Decimal]>;
  readonly timeSec: number;
}

export function parsePing(value: unknown): 'pong' {
  if (Array.isArray(value) && value[0] === 'pong') return 'pong';
  throw new WireShapeError('ping', 'expected ["pong"]');
}

/** Seconds per the docs; a 13-digit value is milliseconds (ccxt saw both). */
export function parseServerTimeMs(value: unknown): number {
  return parseServerTime(value).timeMs;
}

/** `{"time": 1760001234}`: seconds per the docs, milliseconds in some clients' fixtures (a value above 1e12). */
export function parseServerTime(value: unknown): { readonly timeMs: number; readonly resolutionMs: number } {
  const time = WireReader.of<TimeResultWire>(value, '').raw('time');
  if (typeof time !== 'number' || !Number.isFinite(time) || time <= 0) throw new WireShapeError('time', `expected a Unix time, got ${kindOf(time)}`);
  return time > 1e12 ? { timeMs: Math.round(time), resolutionMs: 1 } : { timeMs: Math.round(time * 1000), resolutionMs: 1000 };
}

/**
 * Spot markets are read strictly; a row of another type (futures, which carry other fields) that
 * does not read as a market is left out: stacker buys spot only, and one futures row without
 * `stockPrec` made every start fail.
 */
export function parseMarkets(value: unknown): MarketRules[] {
  const markets: MarketRules[] = [];
  wireArray(value, 'markets').forEach((item, i) => {
    try {
      markets.push(parseMarket(item, `markets[${i}]`));
    } catch (error) {
      if (!(error instanceof WireShapeError) || !isOtherThanSpot(item)) throw error;
    }
  });
  return markets;
}

function isOtherThanSpot(item: unknown): boolean {
  return isObject(item) && typeof item['type'] === 'string' && item['type'] !== 'spot';
}

function parseMarket(value: unknown, at: string): MarketRules {
  const r = WireReader.of<MarketWire>(value, at);
  const maxTotal = r.optionalDecimal('maxTotal');
  return {
    name: r.string('name'),
    base: r.string('stock'),
    quote: r.string('money'),
    basePrecision: precision(r, 'stockPrec'),
    quotePrecision: precision(r, 'moneyPrec'),
    feePrecision: precision(r, 'feePrec'),
    makerFeePct: r.decimal('makerFee'),
    takerFeePct: r.decimal('takerFee'),
    minBaseAmount: r.decimal('minAmount'),
    minQuoteTotal: r.decimal('minTotal'),
    maxQuoteTotal: maxTotal === null || maxTotal.isZero() ? null : maxTotal,
    // Only enabled markets are listed, so a row without the flag is tradable.
    tradesEnabled: r.optionalBoolean('tradesEnabled') ?? true,
    type: r.optionalString('type') ?? 'spot',
  };
}

function precision(r: WireReader<MarketWire>, key: 'stockPrec' | 'moneyPrec' | 'feePrec'): number {
  const n = r.integer(key);
  if (n < 0 || n > 30) throw new WireShapeError(r.field(key), 'expected a precision between 0 and 30');
  return n;
}

export function parseTickers(value: unknown): Map<string, Ticker> {
  const tickers = new Map<string, Ticker>();
  for (const [market, item] of wireMap(value, 'ticker')) {
    const r = WireReader.of<TickerWire>(item, `ticker.${market}`);
    tickers.set(market, {
      market,
      lastPrice: r.decimal('last_price'),
      baseVolume24h: r.decimal('base_volume'),
      quoteVolume24h: r.decimal('quote_volume'),
      changePct: r.decimal('change'),
      frozen: r.optionalBoolean('isFrozen') ?? false,
    });
  }
  return tickers;
}

/**
 * `GET /api/v1/public/kline`: `{"success":true,"result":[[time, open, close, high, low, volume, volume_quote], …]}`
 * — close before high and low (docs/exchange-api.md). Oldest first.
 */
export function parseKline(value: unknown): Candle[] {
  const r = WireReader.of<{ result: unknown }>(value, 'kline');
  return wireArray(r.raw('result'), 'kline.result').map((row, i) => {
    const at = `kline.result[${i}]`;
    const cells = wireArray(row, at);
    const timeSec = cells[0];
    if (typeof timeSec !== 'number' || !Number.isSafeInteger(timeSec)) throw new WireShapeError(`${at}[0]`, `expected a time in seconds, got ${kindOf(timeSec)}`);
    return {
      timeSec,
      open: wireDecimal(cells[1], `${at}[1]`),
      close: wireDecimal(cells[2], `${at}[2]`),
      high: wireDecimal(cells[3], `${at}[3]`),
      low: wireDecimal(cells[4], `${at}[4]`),
    };
  });
}

export function parseOrderBook(value: unknown): OrderBook {
  const r = WireReader.of<OrderBookWire>(value, 'orderbook');
  return { asks: levels(r.raw('asks'), r.field('asks')), bids: levels(r.raw('bids'), r.field('bids')), timeSec: r.timeSec('timestamp') };
}

function levels(value: unknown, at: string): Array<[Decimal, Decimal]> {
  return wireArray(value, at).map((level, i) => {
    const pair = wireArray(level, `${at}[${i}]`);
    return [wireDecimal(pair[0], `${at}[${i}][0]`), wireDecimal(pair[1], `${at}[${i}][1]`)];
  });
}

/** Keyed by ticker; omitted assets and `[]` mean zero. */
export function parseMainBalances(value: unknown): Map<string, Decimal> {
  const balances = new Map<string, Decimal>();
  for (const [ticker, item] of wireMap(value, 'balance')) {
    balances.set(ticker, WireReader.of<MainBalanceWire>(item, `balance.${ticker}`).decimal('main_balance'));
  }
  return balances;
}

/** Asked with `ticker`, the exchange answers unwrapped; the keyed shape of other answers is accepted too. */
export function parseMainBalance(value: unknown, ticker: string): Decimal {
  if (isObject(value) && 'main_balance' in value) return WireReader.of<MainBalanceWire>(value, 'balance').decimal('main_balance');
  return parseMainBalances(value).get(ticker) ?? ZERO;
}

export function parseTradeBalances(value: unknown): Map<string, TradeBalance> {
  const balances = new Map<string, TradeBalance>();
  for (const [ticker, item] of wireMap(value, 'balance')) balances.set(ticker, tradeBalance(item, `balance.${ticker}`));
  return balances;
}

export function parseTradeBalance(value: unknown, ticker: string): TradeBalance {
  if (isObject(value) && 'available' in value) return tradeBalance(value, 'balance');
  return parseTradeBalances(value).get(ticker) ?? { available: ZERO, freeze: ZERO };
}

function tradeBalance(value: unknown, at: string): TradeBalance {
  const r = WireReader.of<TradeBalanceWire>(value, at);
  return { available: r.decimal('available'), freeze: r.decimal('freeze') };
}

export function parseCodePage(value: unknown, asked: { limit: number; offset: number }): CodePage {
  const r = WireReader.of<CodePageWire>(value, 'codes');
  return {
    total: r.integer('total'),
    limit: r.optionalInteger('limit') ?? asked.limit,
    offset: r.optionalInteger('offset') ?? asked.offset,
    codes: wireArray(r.raw('data'), r.field('data')).map((item, i) => parseCode(item, `codes.data[${i}]`)),
  };
}

function parseCode(value: unknown, at: string): CodeRecord {
  const r = WireReader.of<CodeWire>(value, at);
  return {
    amount: r.decimal('amount'),
    code: r.string('code'),
    dateSec: r.timeSec('date'),
    status: r.string('status'),
    ticker: r.string('ticker'),
    externalId: r.optionalString('external_id') ?? '',
  };
}

/** A bare array per the docs; a `{data:[…]}` envelope like the investments list is accepted too. */
export function parseFlexPlans(value: unknown): FlexPlan[] {
  return dataArray(value, 'plans').map((item, i) => {
    const r = WireReader.of<FlexPlanWire>(item, `plans[${i}]`);
    return {
      planId: r.id('id'),
      ticker: r.string('ticker'),
      minInvestment: r.decimal('minInvestment'),
      maxInvestment: r.decimal('maxInvestment'),
      maxRatePct: r.decimal('maxRate'),
    };
  });
}

export function parseFlexInvestments(value: unknown): FlexInvestment[] {
  return dataArray(value, 'investments').map((item, i) => {
    const r = WireReader.of<FlexInvestmentWire>(item, `investments.data[${i}]`);
    const status = r.integer('status');
    if (status !== 0 && status !== 1) throw new WireShapeError(r.field('status'), 'expected 1 (active) or 0 (closed)');
    return {
      investmentId: r.id('id'),
      planId: r.id('planId'),
      ticker: r.string('currency'),
      invested: r.decimal('invested'),
      autoReinvest: r.optionalBoolean('withAutoReinvest') ?? false,
      active: status === 1,
      createdAtSec: r.timeSec('createdAt'),
      updatedAtSec: r.timeSec('updatedAt'),
    };
  });
}

/** `{"data":{"transaction_id":"…"}}` (current docs) or `transactionId` (older docs). */
export function parseFlexWithdraw(value: unknown): { transactionId: string } {
  const outer = WireReader.of<FlexWithdrawResultWire>(value, '');
  const inner = outer.has('data') ? WireReader.of<NonNullable<FlexWithdrawResultWire['data']>>(outer.raw('data'), 'data') : null;
  for (const r of [inner, outer]) {
    if (r === null) continue;
    if (r.has('transaction_id')) return { transactionId: r.id('transaction_id') };
    if (r.has('transactionId')) return { transactionId: r.id('transactionId') };
  }
  throw new WireShapeError('data.transaction_id', 'missing');
}

function dataArray(value: unknown, at: string): readonly unknown[] {
  if (Array.isArray(value)) return value;
  return wireArray(WireReader.of<FlexInvestmentsWire>(value, at).raw('data'), `${at}.data`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
