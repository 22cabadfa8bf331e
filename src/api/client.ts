import { abortableSleep } from '../domain/abortable-sleep.ts';
import type { Clock } from '../domain/clock.ts';
import type { Dispatcher } from 'undici';
import type { CodePage, CodeRecord, FlexInvestment, FlexPlan, Ticker, TradeBalance } from '../domain/account.ts';
import type { Candle } from '../domain/candle.ts';
import { credentialTextProblem } from '../domain/credential-text.ts';
import { InputError } from '../domain/errors.ts';
import type { MarketRules } from '../domain/market.ts';
import type { Decimal } from '../domain/money.ts';
import type { Deal, Order, Stp } from '../domain/order.ts';
import { DEFAULT_RETRY, type RetryPolicy, validateRetryPolicy } from './backoff.ts';
import * as flex from './endpoints/flex.ts';
import * as mainAccount from './endpoints/main-account.ts';
import * as publicApi from './endpoints/public.ts';
import * as trade from './endpoints/trade.ts';
import { NONCE_WINDOW_MS, NonceSource } from './nonce.ts';
import { ServerClock } from './server-clock.ts';
import type { OrderBook } from './parse.ts';
import type { RateScope } from './paths.ts';
import { type RateLimit, RateLimiters } from './rate-limit.ts';
import { type Credentials, type RequestEvent, Requester } from './requester.ts';
import { Transport } from './transport.ts';

export { REGION_URLS, resolveBaseUrl, type Region } from './base-url.ts';
export { DEFAULT_RATE_LIMITS, type RateLimit } from './rate-limit.ts';
export { DEFAULT_RETRY, type RetryPolicy } from './backoff.ts';
export { PATHS, scopeOf, type RateScope } from './paths.ts';
export type { Credentials, RequestEvent } from './requester.ts';
export type { OrderBook } from './parse.ts';
export type { OrderQuery } from './endpoints/trade.ts';

export interface ApiClientOptions {
  /** Already resolved origin, e.g. http://127.0.0.1:43121 (see resolveBaseUrl). */
  readonly baseUrl: string;
  /** Private calls without them throw InputError('api-key', …). */
  readonly credentials?: Credentials;
  /** Default true: nonce within ±5 s of server time, order-free (safe for concurrent requests). */
  readonly nonceWindow?: boolean;
  /**
   * Default true: with nonceWindow, sign with the exchange's clock (measured from its public
   * time endpoint before the first signed request and every ten minutes). false: sign with
   * `clock` as it is, for a caller that knows its clock is right.
   */
  readonly serverTime?: boolean;
  readonly connectTimeoutMs?: number;
  /** Headers and body. */
  readonly responseTimeoutMs?: number;
  readonly connections?: number;
  /** Reads only. */
  readonly retry?: RetryPolicy | false;
  /** Once aborted (the daemon is stopping), a failed read is not tried again: its caller hears the failure at once. */
  readonly stop?: AbortSignal;
  readonly rateLimits?: Partial<Record<RateScope, RateLimit>> | false;
  readonly clock?: Clock;
  readonly sleep?: (ms: number) => Promise<void>;
  /** Jitter. */
  readonly random?: () => number;
  /** Injected (tests); default an undici Pool on baseUrl. Not closed by close(): its owner closes it. */
  readonly dispatcher?: Dispatcher;
  readonly onRequest?: (event: RequestEvent) => void;
}

const realSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Every default in one place. */
const DEFAULTS = {
  nonceWindow: true,
  connectTimeoutMs: 5000,
  responseTimeoutMs: 10_000,
  connections: 8,
  retry: DEFAULT_RETRY,
} as const;


/**
 * The WhiteBIT-style HTTP API v4, in domain types. Reads are rate-limited and retried with
 * backoff; orders, transfers and withdrawals are sent once and, when their answer is lost, fail
 * with an error for which `outcomeUnknown()` is true — the engine looks them up before anything
 * is resent. The client does not log; `onRequest` reports each attempt without secrets or bodies.
 * Constructing it does no I/O.
 */
export class ApiClient {
  readonly #transport: Transport;
  readonly #http: Requester;
  readonly #serverClock: ServerClock | undefined;

  constructor(options: ApiClientOptions) {
    const settings = validate(options);
    const clock = options.clock ?? { nowMs: () => Date.now() };
    const nowMs = (): number => clock.nowMs();
    const sleep = options.sleep ?? realSleep;
    // A stop cuts a retry's wait short (a Retry-After may ask for 30 s), and the read then fails
    // at once. The rate limiters keep the plain one: they wait in a loop until a slot is free.
    const retrySleep = options.sleep ?? ((ms: number) => abortableSleep(ms, options.stop));
    this.#transport = new Transport({
      baseUrl: settings.baseUrl,
      connectTimeoutMs: settings.connectTimeoutMs,
      responseTimeoutMs: settings.responseTimeoutMs,
      connections: settings.connections,
      ...(options.dispatcher === undefined ? {} : { dispatcher: options.dispatcher }),
    });
    const nonceWindow = options.nonceWindow ?? DEFAULTS.nonceWindow;
    // Nonces follow the exchange's clock (measured on its public time endpoint) when the window rules apply.
    this.#serverClock = nonceWindow && options.serverTime !== false ? new ServerClock(clock, { read: () => publicApi.serverTime(this.#http) }) : undefined;
    this.#http = new Requester({
      transport: this.#transport,
      limiters: new RateLimiters(options.rateLimits, { nowMs, sleep }),
      nonces: new NonceSource(this.#serverClock ?? clock, nonceWindow ? { windowMs: NONCE_WINDOW_MS } : {}),
      serverClock: this.#serverClock,
      credentials: options.credentials,
      nonceWindow,
      retry: settings.retry,
      stopped: () => options.stop?.aborted === true,
      nowMs,
      sleep: retrySleep,
      random: options.random ?? Math.random,
      onRequest: options.onRequest,
    });
  }

  /** Closes the connection pool the client created. */
  close(): Promise<void> {
    return this.#transport.close();
  }

  // ---- public ---------------------------------------------------------------------------------
  ping(): Promise<'pong'> {
    return publicApi.ping(this.#http);
  }
  serverTimeMs(): Promise<number> {
    return publicApi.serverTimeMs(this.#http);
  }
  /**
   * The exchange's clock minus this machine's, in ms, measured now (what signed requests are
   * corrected by; `stacker check` prints it). Without nonceWindow, nonces need no clock: null.
   */
  async clockOffsetMs(): Promise<number | null> {
    return this.#serverClock === undefined ? null : this.#serverClock.measure();
  }
  /**
   * What a time of this machine is on the exchange's clock, minus that time, in ms: the
   * correction signed requests use (measured again when stale). 0 when nonces need no clock.
   * The exchange stamps orders with its own clock, so a window of this machine's times is moved
   * by this much before its history is asked for it.
   */
  async clockCorrectionMs(): Promise<number> {
    if (this.#serverClock === undefined) return 0;
    await this.#serverClock.ensureFresh();
    return this.#serverClock.correctionMs;
  }
  markets(): Promise<MarketRules[]> {
    return publicApi.markets(this.#http);
  }
  /** InputError naming `market` if the exchange does not list it. */
  market(name: string): Promise<MarketRules> {
    return publicApi.market(this.#http, name);
  }
  tickers(): Promise<Map<string, Ticker>> {
    return publicApi.tickers(this.#http);
  }
  ticker(market: string): Promise<Ticker> {
    return publicApi.ticker(this.#http, market);
  }
  /** Hourly candles opening in [fromSec, toSec), oldest first (public kline, paged). */
  hourlyCandles(market: string, fromSec: number, toSec: number): Promise<Candle[]> {
    return publicApi.hourlyCandles(this.#http, market, fromSec, toSec);
  }
  orderBook(market: string, limit?: number): Promise<OrderBook> {
    return publicApi.orderBook(this.#http, market, limit);
  }

  // ---- main account ---------------------------------------------------------------------------
  /** Omitted assets are zero. */
  mainBalances(): Promise<Map<string, Decimal>> {
    return mainAccount.mainBalances(this.#http);
  }
  mainBalance(ticker: string): Promise<Decimal> {
    return mainAccount.mainBalance(this.#http, ticker);
  }
  /** Main → spot. Never retried. */
  transferToSpot(params: { ticker: string; amount: Decimal }): Promise<void> {
    return mainAccount.transferToSpot(this.#http, params);
  }
  codes(params?: { limit?: number; offset?: number }): Promise<CodePage> {
    return mainAccount.codes(this.#http, params);
  }
  allCodes(params?: { pageSize?: number }): AsyncIterable<CodeRecord> {
    return mainAccount.allCodes(this.#http, params);
  }
  flexPlans(params?: { ticker?: string; limit?: number; offset?: number }): Promise<FlexPlan[]> {
    return flex.flexPlans(this.#http, params);
  }
  flexInvestments(params?: { ticker?: string; plan?: string; active?: boolean; limit?: number; offset?: number }): Promise<FlexInvestment[]> {
    return flex.flexInvestments(this.#http, params);
  }
  /** Never retried. */
  flexWithdraw(params: { plan: string; amount: Decimal }): Promise<{ transactionId: string }> {
    return flex.flexWithdraw(this.#http, params);
  }

  // ---- trade ----------------------------------------------------------------------------------
  tradeBalances(): Promise<Map<string, TradeBalance>> {
    return trade.tradeBalances(this.#http);
  }
  tradeBalance(ticker: string): Promise<TradeBalance> {
    return trade.tradeBalance(this.#http, ticker);
  }
  /** POST /api/v4/order/stock_market, side buy, amount in base. Never retried. */
  buyStockMarket(params: { market: string; baseAmount: Decimal; clientOrderId?: string; stp?: Stp }): Promise<Order> {
    return trade.buyStockMarket(this.#http, params);
  }
  /** POST /api/v4/order/market, side buy, amount in quote. Never retried. */
  buyMarket(params: { market: string; quoteAmount: Decimal; clientOrderId?: string; stp?: Stp }): Promise<Order> {
    return trade.buyMarket(this.#http, params);
  }
  /** The order of a clientOrderId (history, then active orders), under the id as sent whatever case the exchange keeps it in; null: none. */
  findOrder(request: { readonly market: string; readonly clientOrderId: string }): Promise<Order | null> {
    return trade.findOrder(this.#http, request);
  }
  /** An unknown clientOrderId (422 "OrderHistory was not found.") is []. */
  orderHistory(params: trade.OrderQuery): Promise<Order[]> {
    return trade.orderHistory(this.#http, params);
  }
  activeOrders(params: { market?: string; clientOrderId?: string; orderId?: string; limit?: number; offset?: number }): Promise<Order[]> {
    return trade.activeOrders(this.#http, params);
  }
  orderDeals(params: { orderId: string; limit?: number; offset?: number }): Promise<Deal[]> {
    return trade.orderDeals(this.#http, params);
  }
}

interface Settings {
  readonly baseUrl: string;
  readonly connectTimeoutMs: number;
  readonly responseTimeoutMs: number;
  readonly connections: number;
  readonly retry: RetryPolicy | false;
}

/** Options are checked once, every problem reported together. */
function validate(options: ApiClientOptions): Settings {
  const problems: Array<{ field: string; rule: string }> = [];
  let baseUrl = '';
  try {
    const url = new URL(options.baseUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') problems.push({ field: 'base-url', rule: 'must be an http or https origin' });
    baseUrl = url.origin;
  } catch {
    problems.push({ field: 'base-url', rule: 'must be an http or https origin such as https://whitebit.com' });
  }
  const positive = (field: string, value: number | undefined, fallback: number): number => {
    const v = value ?? fallback;
    if (!Number.isSafeInteger(v) || v < 1) problems.push({ field, rule: 'must be a positive integer' });
    return v;
  };
  const connectTimeoutMs = positive('connectTimeoutMs', options.connectTimeoutMs, DEFAULTS.connectTimeoutMs);
  const responseTimeoutMs = positive('responseTimeoutMs', options.responseTimeoutMs, DEFAULTS.responseTimeoutMs);
  const connections = positive('connections', options.connections, DEFAULTS.connections);
  const retry = options.retry ?? DEFAULTS.retry;
  const retryProblem = retry === false ? null : validateRetryPolicy(retry);
  if (retryProblem !== null) problems.push({ field: 'retry', rule: retryProblem });
  if (options.credentials !== undefined) {
    for (const [field, value] of [['api-key', options.credentials.apiKey], ['api-secret', options.credentials.apiSecret]] as const) {
      const problem = typeof value === 'string' ? credentialTextProblem(value) : 'must be a string';
      if (problem !== null) problems.push({ field, rule: problem });
    }
  }
  if (options.rateLimits !== undefined && options.rateLimits !== false) {
    for (const [scope, rule] of Object.entries(options.rateLimits)) {
      if (rule === undefined) continue;
      if (!Number.isSafeInteger(rule.limit) || rule.limit < 1) problems.push({ field: `rateLimits.${scope}.limit`, rule: 'must be a positive integer' });
      if (!Number.isFinite(rule.windowMs) || rule.windowMs <= 0) problems.push({ field: `rateLimits.${scope}.windowMs`, rule: 'must be a positive number of ms' });
    }
  }
  if (problems.length > 0) throw new InputError(problems);
  return { baseUrl, connectTimeoutMs, responseTimeoutMs, connections, retry };
}
