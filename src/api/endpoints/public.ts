import type { Ticker } from '../../domain/account.ts';
import { InputError } from '../../domain/errors.ts';
import type { MarketRules } from '../../domain/market.ts';
import { checkMarket, optionalInteger } from '../checks.ts';
import { CANDLE_INTERVAL_SEC, type Candle, KLINE_LIMIT } from '../../domain/candle.ts';
import { type OrderBook, parseKline, parseMarkets, parseOrderBook, parsePing, parseServerTime, parseServerTimeMs, parseTickers } from '../parse.ts';
import { PATHS } from '../paths.ts';
import type { Requester } from '../requester.ts';

/** Public endpoints: GET, query string, no signature, retried with backoff. */

export function ping(http: Requester): Promise<'pong'> {
  return http.get(PATHS.ping, {}, parsePing);
}

export function serverTimeMs(http: Requester): Promise<number> {
  return http.get(PATHS.time, {}, parseServerTimeMs);
}

/** The exchange's time with its resolution (whole seconds, usually): what ServerClock measures from. */
export function serverTime(http: Requester): Promise<{ readonly timeMs: number; readonly resolutionMs: number }> {
  return http.get(PATHS.time, {}, parseServerTime);
}

export function markets(http: Requester): Promise<MarketRules[]> {
  return http.get(PATHS.markets, {}, parseMarkets);
}

export async function market(http: Requester, name: string): Promise<MarketRules> {
  checkMarket(name);
  const found = (await markets(http)).find((rules) => rules.name === name);
  if (found === undefined) throw InputError.one('market', `${name} is not a market on this exchange`);
  return found;
}

export function tickers(http: Requester): Promise<Map<string, Ticker>> {
  return http.get(PATHS.ticker, {}, parseTickers);
}

export async function ticker(http: Requester, marketName: string): Promise<Ticker> {
  checkMarket(marketName);
  const found = (await tickers(http)).get(marketName);
  if (found === undefined) throw InputError.one('market', `${marketName} has no ticker on this exchange`);
  return found;
}

/**
 * Hourly candles opening in [fromSec, toSec), oldest first: as many kline requests as the span
 * needs (at most KLINE_LIMIT candles each). The newest candle may still be open.
 */
export async function hourlyCandles(http: Requester, marketName: string, fromSec: number, toSec: number): Promise<Candle[]> {
  checkMarket(marketName);
  const out: Candle[] = [];
  const step = CANDLE_INTERVAL_SEC * KLINE_LIMIT;
  for (let start = fromSec; start < toSec; start += step) {
    const end = Math.min(toSec, start + step);
    const page = await http.get(PATHS.kline, { market: marketName, interval: '1h', start, end: end - 1, limit: KLINE_LIMIT }, parseKline);
    for (const candle of page) if (candle.timeSec >= start && candle.timeSec < end) out.push(candle);
  }
  return out;
}

/** `limit` 1–100 (the exchange reads 0 or none as 100). */
export async function orderBook(http: Requester, marketName: string, limit?: number): Promise<OrderBook> {
  checkMarket(marketName);
  optionalInteger(limit, 'limit', 1, 100);
  return http.get(`${PATHS.orderBook}/${marketName}`, { limit }, parseOrderBook);
}
