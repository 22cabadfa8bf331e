import type { Clock } from '../domain/clock.ts';
import type { CodePage, CodeRecord, FlexInvestment, FlexPlan, TradeBalance } from '../domain/account.ts';
import type { MarketRules } from '../domain/market.ts';
import { type Decimal, ZERO, formatDecimal } from '../domain/money.ts';
import type { Stp } from '../domain/order.ts';
import { type CodePageRequest, Codes } from './codes.ts';
import { type BookLevel, type FillModel, type FillModelOptions, askLevels, bestAsk, bidLevels, fillModel, planBuyByBase, planBuyByQuote } from './fills.ts';
import { Flex, type FlexInterest, type FlexInvestmentFilter } from './flex.ts';
import { type SimIds, sequentialIds } from './ids.ts';
import { Books, type LedgerEntry, type LedgerMismatch } from './ledger.ts';
import {
  checkMarketBuy,
  checkStockMarketBuy,
  clientOrderIdInUse,
  marketNotAvailable,
  notEnoughBalance,
  parseClientOrderId,
} from './order-rules.ts';
import { type OrderFilter, Orders, type SettlementOptions, type SimDeal, type SimOrder } from './orders.ts';
import { type PriceSource, type SpanCandle, type TradedVolume, fixedPrices } from './prices.ts';
import { SimRejection } from './rejection.ts';


/**
 * A real order book to fill against (a paper account hands in the exchange's live asks for the
 * one order it places); null or empty: walk the fill model's synthetic book instead.
 */
export interface AskSource {
  asksAt(market: string, timeMs: number): readonly BookLevel[] | null;
}

export interface SimExchangeOptions {
  readonly clock?: Clock;
  readonly ids?: SimIds;
  /** Default: no prices at all (every order is refused until a source is given). */
  readonly prices?: PriceSource;
  /** Default: none (every buy walks the synthetic book of `fills`). */
  readonly asks?: AskSource;
  readonly fills?: FillModelOptions;
  /** Default null: orders settle completely when placed. */
  readonly settlement?: SettlementOptions | null;
  /** What the account remembers; default everything (see SimHistory). */
  readonly history?: SimHistory;
}

/**
 * How much of its past the account keeps. The sandbox and paper accounts keep everything (their
 * order history and ledger are read back); a backtest over years needs neither, and keeping them
 * made its memory grow with every slot.
 * - `finishedOrders`: how many finished orders stay readable (order history, deals, lookups);
 *   older ones are forgotten, as a real exchange's history window forgets.
 * - `ledgerEntries`: false keeps only the balances, not each posting that explains them (the
 *   ledger audit then checks only that no balance is negative).
 */
export interface SimHistory {
  readonly finishedOrders?: number;
  readonly ledgerEntries?: boolean;
}

export type TransferAccount = 'main' | 'spot';

export interface TransferRequest {
  readonly ticker: string;
  readonly amount: Decimal;
  readonly from: TransferAccount;
  readonly to: TransferAccount;
}

export interface BuyStockMarketRequest {
  readonly market: string;
  readonly baseAmount: Decimal;
  readonly clientOrderId?: string;
  readonly stp?: Stp;
}

export interface BuyMarketRequest {
  readonly market: string;
  readonly quoteAmount: Decimal;
  readonly clientOrderId?: string;
  readonly stp?: Stp;
}

/** docs/exchange-api.md: transfers are refused with 400 code 0 (validation) or 422 code 3 (funds). */
const TRANSFER_CODES = { validation: 0, funds: 3 } as const;
const TRANSFER_MAX_DECIMALS = 8;

/**
 * The simulation core: one exchange account's main and trade (spot) balances, markets, flex plans and
 * investments, codes, orders and deals, over an exact append-only ledger. Transport-free and
 * deterministic (clock, ids and prices are injected), so the sandbox, a paper exchange and a
 * backtest share it. Methods answer domain types or throw a `SimRejection` carrying the
 * exchange's code and message. It is not an Exchange port itself: PaperExchange and
 * BacktestExchange are, over it (with SimAccount), and the sandbox serves it over HTTP.
 */
export class SimCore {
  readonly #clock: Clock;
  readonly #ids: SimIds;
  readonly #prices: PriceSource;
  readonly #asks: AskSource | null;
  readonly #fills: FillModel;
  readonly #books: Books;
  readonly #markets = new Map<string, MarketRules>();
  readonly #flex: Flex;
  readonly #codes = new Codes();
  readonly #orders: Orders;
  /** assets() is read on every balance query; recomputed only when a market, plan or ledger key appears. */
  #assetsCache: { readonly setup: number; readonly keys: number; readonly list: readonly string[] } | null = null;
  #setupVersion = 0;

  constructor(options: SimExchangeOptions = {}) {
    this.#books = new Books({ entries: options.history?.ledgerEntries ?? true });
    this.#clock = options.clock ?? { nowMs: () => Date.now() };
    this.#ids = options.ids ?? sequentialIds();
    this.#prices = options.prices ?? fixedPrices({});
    this.#asks = options.asks ?? null;
    this.#fills = fillModel(options.fills);
    this.#flex = new Flex(this.#books, this.#ids);
    this.#orders = new Orders(this.#books, this.#ids, options.settlement ?? null, options.history?.finishedOrders ?? Number.POSITIVE_INFINITY);
  }

  /**
   * The sim's time; first settles every order step due by then and pays the flex interest of
   * every UTC day boundary passed, so every read is current.
   */
  nowMs(): number {
    const now = this.#clock.nowMs();
    this.#orders.advance(now);
    this.#flex.accrueTo(now);
    return now;
  }

  // ---- set-up -------------------------------------------------------------------------------

  addMarket(rules: MarketRules): void {
    this.#markets.set(rules.name, rules);
    this.#setupVersion += 1;
  }

  seedMain(asset: string, amount: Decimal): void {
    this.#books.post(this.nowMs(), 'seed', [{ account: 'main', asset, delta: amount, reason: 'seed' }]);
  }

  seedSpot(asset: string, amount: Decimal): void {
    this.#books.post(this.nowMs(), 'seed', [{ account: 'spot', asset, delta: amount, reason: 'seed' }]);
  }

  /**
   * A flex plan; with `interest`, its investments earn `aprPct` a year, paid at each 00:00 UTC
   * (see Flex.accrueTo: to the main balance, or into the investment when it auto-reinvests).
   */
  addFlexPlan(plan: FlexPlan, interest?: FlexInterest): void {
    this.#flex.addPlan(plan, interest ?? null);
    this.#setupVersion += 1;
  }

  seedFlexInvestment(planId: string, amount: Decimal, autoReinvest = false): FlexInvestment {
    return this.#flex.seedInvestment(planId, amount, this.nowMs(), autoReinvest);
  }

  addCode(code: CodeRecord): void {
    this.#codes.add(code);
  }

  // ---- market data --------------------------------------------------------------------------

  markets(): MarketRules[] {
    return [...this.#markets.values()];
  }

  market(name: string): MarketRules | undefined {
    return this.#markets.get(name);
  }

  /** The price an order placed now fills at (what the book is built around), null when unknown. */
  price(market: string): Decimal | null {
    return this.priceAt(market, this.nowMs());
  }

  /** The last price known now, what the ticker shows (PriceSource.knownPriceAt), null when unknown. */
  lastPrice(market: string): Decimal | null {
    if (!this.#markets.has(market)) return null;
    const now = this.nowMs();
    return this.#prices.knownPriceAt?.(market, now) ?? this.#prices.priceAt(market, now);
  }

  /** What a market traded in the 24 h up to now, as its price source knows it; null when it knows of no trades (fixed prices). */
  volume24h(market: string): TradedVolume | null {
    return this.#markets.has(market) ? (this.#prices.volume24hAt?.(market, this.nowMs()) ?? null) : null;
  }

  /** A market's price 24 h ago, as its price source knows it; null when it never moves (fixed prices) or is not listed. */
  priceDayBefore(market: string): Decimal | null {
    return this.#markets.has(market) ? (this.#prices.priceDayBeforeAt?.(market, this.nowMs()) ?? null) : null;
  }

  /**
   * A market's candle over [fromMs, toMs) as its price source knows it (a replay: the file's candles
   * of that span), cut at now: the part of a span still to come has not traded. Null when the
   * source knows none (fixed prices), the market is not listed, or the span starts after now.
   */
  candleAt(market: string, fromMs: number, toMs: number): SpanCandle | null {
    const untilMs = Math.min(toMs, this.nowMs());
    if (!this.#markets.has(market) || untilMs <= fromMs) return null;
    return this.#prices.candleAt?.(market, fromMs, untilMs) ?? null;
  }

  /** The price source's price of a market at a time (null for a market not listed or not priced then). */
  priceAt(market: string, timeMs: number): Decimal | null {
    return this.#markets.has(market) ? this.#prices.priceAt(market, timeMs) : null;
  }

  /**
   * What a market buy placed at `timeMs` pays for its first base: the best ask of the book it would
   * walk (slippage and the market's price precision in), as the buy itself works it out. Null for
   * an unknown or unpriced market.
   */
  bestAskAt(market: string, timeMs: number): Decimal | null {
    const rules = this.#markets.get(market);
    const price = this.priceAt(market, timeMs);
    if (!rules || price === null) return null;
    return bestAsk(rules, this.#fills, price, this.#asks?.asksAt(market, timeMs) ?? null);
  }

  /** The synthetic order book around the current price; null for an unknown or unpriced market. */
  orderBook(market: string, depth: number): { asks: BookLevel[]; bids: BookLevel[] } | null {
    const rules = this.#markets.get(market);
    const price = this.price(market);
    if (!rules || price === null) return null;
    const given = this.#asks?.asksAt(market, this.nowMs()) ?? null;
    if (given !== null && given.length > 0) return { asks: given.slice(0, depth), bids: [] };
    return { asks: askLevels(rules, this.#fills, price, depth), bids: bidLevels(rules, this.#fills, price, depth) };
  }

  /** Every asset the account knows: market assets, balances, flex tickers. */
  assets(): string[] {
    const setup = this.#setupVersion;
    const keys = this.#books.keyCount;
    if (this.#assetsCache === null || this.#assetsCache.setup !== setup || this.#assetsCache.keys !== keys) {
      const found = new Set<string>();
      for (const m of this.#markets.values()) found.add(m.base).add(m.quote);
      for (const account of ['main', 'spot', 'spot-freeze', 'flex'] as const) for (const a of this.#books.assets(account)) found.add(a);
      for (const p of this.#flex.plans()) found.add(p.ticker);
      this.#assetsCache = { setup, keys, list: [...found].sort() };
    }
    return this.#assetsCache.list.slice();
  }

  isKnownAsset(asset: string): boolean {
    return this.assets().includes(asset);
  }

  // ---- balances and transfers ---------------------------------------------------------------

  /** Main balance of every known asset (zero included). */
  mainBalances(): Map<string, Decimal> {
    this.nowMs();
    return new Map(this.assets().map((a) => [a, this.#books.balance('main', a)]));
  }

  mainBalance(asset: string): Decimal {
    this.nowMs();
    return this.#books.balance('main', asset);
  }

  /** Trade balance of every known asset (zero included). */
  tradeBalances(): Map<string, TradeBalance> {
    this.nowMs();
    return new Map(this.assets().map((a) => [a, this.#tradeBalance(a)]));
  }

  tradeBalance(asset: string): TradeBalance {
    this.nowMs();
    return this.#tradeBalance(asset);
  }

  /** Everything held of one asset: main, trade (available and frozen) and flex. */
  holding(asset: string): Decimal {
    this.nowMs();
    return this.#books.holding(asset);
  }

  #tradeBalance(asset: string): TradeBalance {
    return { available: this.#books.balance('spot', asset), freeze: this.#books.balance('spot-freeze', asset) };
  }

  /** Move funds between main and the trade (spot) balance; only `available` can leave spot. */
  transfer(request: TransferRequest): { transactionId: string } {
    const now = this.nowMs();
    const { ticker, amount, from, to } = request;
    if (from === to) throw SimRejection.validation(TRANSFER_CODES.validation, 'to', 'The to and from must be different.');
    if (!this.isKnownAsset(ticker)) throw SimRejection.validation(TRANSFER_CODES.validation, 'ticker', 'The selected ticker is invalid.');
    if (amount.decimalPlaces() > TRANSFER_MAX_DECIMALS) {
      // docs/exchange-api.md gives the 8-decimal rule without its message; worded like its neighbours.
      throw SimRejection.validation(TRANSFER_CODES.validation, 'amount', 'The amount may not have more than 8 decimal places.');
    }
    if (amount.lt('0.00000001')) throw SimRejection.validation(TRANSFER_CODES.validation, 'amount', 'The amount must be at least 0.00000001.');
    const available = this.#books.balance(from, ticker);
    if (amount.gt(available)) {
      throw SimRejection.refused(
        'insufficient-funds',
        TRANSFER_CODES.funds,
        'amount',
        `You don't have such amount for transfer (available ${formatDecimal(available)}, in amount: ${formatDecimal(amount)})`,
      );
    }
    const transactionId = this.#ids.next('transaction');
    this.#books.post(now, transactionId, [
      { account: from, asset: ticker, delta: amount.neg(), reason: 'transfer' },
      { account: to, asset: ticker, delta: amount, reason: 'transfer' },
    ]);
    return { transactionId };
  }

  // ---- codes and flex -----------------------------------------------------------------------

  codes(request: CodePageRequest = {}): CodePage {
    return this.#codes.page(request);
  }

  /** The next 00:00 UTC at which flex interest is due; null while no investment earns any. */
  nextInterestMs(): number | null {
    return this.#flex.nextPaymentMs();
  }

  /**
   * Pay the flex interest due by `atMs` ahead of the clock: a backtest values the account at
   * each candle close between two slots, and what it holds changes at every 00:00 it pays.
   * Nothing else changes between slots, so this pays exactly what reading the clock at the next
   * slot would have paid.
   */
  payInterestTo(atMs: number): void {
    this.#flex.accrueTo(atMs);
  }

  /** The flex interest paid so far, per ticker. */
  flexInterestPaid(): ReadonlyMap<string, Decimal> {
    return this.#flex.interestPaid();
  }

  flexPlans(ticker?: string): FlexPlan[] {
    return this.#flex.plans(ticker);
  }

  flexInvestments(filter: FlexInvestmentFilter = {}): FlexInvestment[] {
    this.nowMs();
    return this.#flex.investments(filter);
  }

  flexWithdraw(planId: string, amount: Decimal): { transactionId: string } {
    return this.#flex.withdraw(planId, amount, this.nowMs());
  }

  // ---- orders -------------------------------------------------------------------------------

  /** Buy an exact base quantity at market (`stock market`). */
  buyStockMarket(request: BuyStockMarketRequest): SimOrder {
    const { rules, price, asks, clientOrderId, now } = this.#prepareOrder(request.market, request.clientOrderId);
    checkStockMarketBuy(rules, request.baseAmount, bestAsk(rules, this.#fills, price, asks));
    const plan = planBuyByBase(rules, this.#fills, price, request.baseAmount, asks);
    this.#requireFunds(rules, plan.quote.add(plan.fee));
    return this.#orders.place({ type: 'stock market', rules, amount: request.baseAmount, clientOrderId, stp: request.stp ?? 'no', plan }, now);
  }

  /** Spend a quote amount at market (`market`); the fee is charged on top of the amount. */
  buyMarket(request: BuyMarketRequest): SimOrder {
    const { rules, price, asks, clientOrderId, now } = this.#prepareOrder(request.market, request.clientOrderId);
    checkMarketBuy(rules, request.quoteAmount, bestAsk(rules, this.#fills, price, asks));
    const plan = planBuyByQuote(rules, this.#fills, price, request.quoteAmount, asks);
    this.#requireFunds(rules, plan.quote.add(plan.fee));
    return this.#orders.place({ type: 'market', rules, amount: request.quoteAmount, clientOrderId, stp: request.stp ?? 'no', plan }, now);
  }

  #prepareOrder(
    market: string,
    rawClientOrderId: string | undefined,
  ): { rules: MarketRules; price: Decimal; asks: readonly BookLevel[] | null; clientOrderId: string; now: number } {
    const now = this.nowMs();
    const rules = this.#markets.get(market);
    if (!rules || !rules.tradesEnabled) throw marketNotAvailable();
    const price = this.#prices.priceAt(market, now);
    if (price === null) throw marketNotAvailable();
    const clientOrderId = parseClientOrderId(rawClientOrderId);
    if (this.#orders.isClientOrderIdOpen(market, clientOrderId)) throw clientOrderIdInUse();
    return { rules, price, asks: this.#asks?.asksAt(market, now) ?? null, clientOrderId, now };
  }

  #requireFunds(rules: MarketRules, needed: Decimal): void {
    if (needed.gt(this.#books.balance('spot', rules.quote))) throw notEnoughBalance();
  }

  order(orderId: string): SimOrder | undefined {
    this.nowMs();
    return this.#orders.get(orderId);
  }

  /** Orders in a final status, newest first. */
  orderHistory(filter: OrderFilter = {}): SimOrder[] {
    this.nowMs();
    return this.#orders.history(filter);
  }

  /** Orders still settling (only with gradual settlement), newest first. */
  activeOrders(filter: OrderFilter = {}): SimOrder[] {
    this.nowMs();
    return this.#orders.active(filter);
  }

  /** Deals of one order, oldest first; empty for an unknown order. */
  orderDeals(orderId: string): SimDeal[] {
    this.nowMs();
    return this.#orders.deals(orderId);
  }

  // ---- ledger -------------------------------------------------------------------------------

  ledger(): readonly LedgerEntry[] {
    this.nowMs();
    return this.#books.entries();
  }

  /** True when every balance equals the sum of its ledger entries (see `ledgerMismatches`). */
  verifyLedger(): boolean {
    return this.ledgerMismatches().length === 0;
  }

  /**
   * Recompute every balance from the ledger (and the flex account from the investments);
   * returns the differences, empty when the books are exact.
   */
  ledgerMismatches(): LedgerMismatch[] {
    this.nowMs();
    const found = this.#books.mismatches();
    const invested = this.#flex.investedByAsset();
    for (const asset of new Set([...invested.keys(), ...this.#books.assets('flex')])) {
      const balance = this.#books.balance('flex', asset);
      const sum = invested.get(asset) ?? ZERO;
      if (!balance.eq(sum)) found.push({ account: 'flex-investments', asset, balance, ledgerSum: sum });
    }
    return found;
  }
}

export type { OrderFilter, SettlementOptions, SimDeal, SimOrder } from './orders.ts';
export type { LedgerEntry, LedgerMismatch } from './ledger.ts';
export type { FlexInterest } from './flex.ts';
