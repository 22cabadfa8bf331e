import type { Clock } from '../domain/clock.ts';
import type { Candle } from '../domain/candle.ts';
import { NetworkError } from '../domain/errors.ts';
import type { MarketRules } from '../domain/market.ts';
import { Decimal, ZERO, formatDecimal, parseDecimalStrict, roundUp } from '../domain/money.ts';
import type { Order } from '../domain/order.ts';
import type { Exchange, KeptAccount } from '../exchange/port.ts';
import { SimCore } from './core.ts';
import type { BookLevel } from './fills.ts';
import { type SequentialIds, type SimIdKind, sequentialIds } from './ids.ts';
import { type FlexSeed, SimAccount, type StockMarketRequest, seedSimAccount } from './sim-account.ts';

/**
 * Public market data from the real exchange (or the sandbox); ApiMarketData
 * (src/exchange/market-data.ts) adapts the API client to it. No credentials are involved.
 */
export interface PaperMarketData {
  markets(): Promise<readonly MarketRules[]>;
  prices(markets: readonly string[]): Promise<ReadonlyMap<string, Decimal>>;
  /** Hourly candles of the real market (kline); without it a strategy that reads candles gets none. */
  candles?(request: { readonly market: string; readonly fromSec: number; readonly toSec: number }): Promise<readonly Candle[]>;
  /** The real exchange's clock minus this machine's; without it the daemon cannot say its clock is off. */
  clockOffsetMs?(): Promise<number | null>;
  /** Asks best first, as `[price, base amount]`. Without it every buy fills at last price + slippage. */
  orderBook?(market: string, depth: number): Promise<{ readonly asks: ReadonlyArray<readonly [Decimal, Decimal]> }>;
  close?(): Promise<void>;
}

export interface PaperExchangeOptions {
  readonly marketData: PaperMarketData;
  /** Starting trade (spot) balances: what orders spend (e.g. STACKER_DRY_RUN_WALLET). */
  readonly wallet: ReadonlyMap<string, Decimal>;
  /** Starting main balances; default none. */
  readonly main?: ReadonlyMap<string, Decimal>;
  /** Percent added to the last price when there is no book, and to the worst ask past the book's depth. */
  readonly slippagePct: Decimal;
  /** Flex investments to start with (an APR makes them earn daily, in the clock's time). */
  readonly flex?: readonly FlexSeed[];
  readonly clock?: Clock;
  /** Ask levels fetched for a buy (default 100, the exchange's maximum). */
  readonly bookDepth?: number;
  /**
   * The id source; default one of its own. The paper accounts of one daemon share one: the
   * journal keys orders by order id alone, so two accounts counting from the same start would
   * hand out the same ids, and the second account's order would be taken for the first's.
   */
  readonly ids?: SequentialIds;
}

const DEFAULT_BOOK_DEPTH = 100;

/** What the one order being placed fills against. */
interface OrderBookView {
  readonly market: string;
  /** The last price (else the best ask): the sim's reference for the order. */
  readonly refPrice: Decimal | null;
  readonly asks: readonly BookLevel[] | null;
}

/**
 * Dry-run: real prices and market rules, a simulated account on the sim core (the sandbox's and
 * the backtest's). A market buy fetches the exchange's asks and walks them level by level: each
 * level taken is a deal at that level's price, quote = base × price exactly, so the fill is what
 * the book offered at that moment. Past the depth fetched, the rest fills at the worst ask
 * fetched plus `slippagePct` (a paper account must not look better than the exchange would
 * have been); with no book at all, at the last price plus `slippagePct`. Fees, precision and
 * min/max rules are the sim core's. Markets come from the market data on first use.
 *
 * A market-data failure during a buy is raised as a NetworkError with `requestSent: false`:
 * nothing was placed, and the engine may say so for certain.
 */
export class PaperExchange extends SimAccount implements Exchange {
  readonly kind = 'dry-run' as const;
  readonly keptAccount: KeptAccount;
  readonly #ids: SequentialIds;
  /** The wallet this account started from: the configured one for a new account, the saved one for an account resumed. */
  #seed: string;
  #save: ((state: string) => Promise<void>) | null = null;
  readonly #data: PaperMarketData;
  readonly #slippagePct: Decimal;
  readonly #bookDepth: number;
  #rules: ReadonlyMap<string, MarketRules> = new Map();
  /** Set only while one order is being placed (synchronously), so no price outlives its order. */
  readonly #placing: { current: OrderBookView | null };
  /** The newest orders of the runs before this one (the saved state's), oldest first: lookups still find them. */
  #earlier: readonly Order[] = [];
  /** The newest orders, oldest first, at most ORDERS_KEPT: what the saved state keeps (a paper order is final when placed). */
  #newest: Order[] = [];

  constructor(options: PaperExchangeOptions) {
    const placing: { current: OrderBookView | null } = { current: null };
    const view = (market: string): OrderBookView | null => (placing.current?.market === market ? placing.current : null);
    const ids = options.ids ?? sequentialIds();
    const sim = new SimCore({
      ids,
      ...(options.clock === undefined ? {} : { clock: options.clock }),
      prices: { priceAt: (market) => view(market)?.refPrice ?? null },
      asks: { asksAt: (market) => view(market)?.asks ?? null },
      fills: { slippagePct: options.slippagePct },
    });
    seedSimAccount(sim, { wallet: options.wallet, ...(options.main === undefined ? {} : { main: options.main }), ...(options.flex === undefined ? {} : { flex: options.flex }) });
    super(sim);
    this.#ids = ids;
    this.#seed = describeWallet(options.wallet);
    this.keptAccount = {
      resume: (saved) => this.#resume(saved),
      state: () => this.#state(),
      onChange: (save) => {
        this.#save = save;
      },
    };
    this.#placing = placing;
    this.#data = options.marketData;
    this.#slippagePct = options.slippagePct;
    this.#bookDepth = options.bookDepth ?? DEFAULT_BOOK_DEPTH;
    if (!Number.isSafeInteger(this.#bookDepth) || this.#bookDepth < 1) throw new RangeError('bookDepth must be a positive integer');
  }

  async markets(): Promise<readonly MarketRules[]> {
    const list = await this.#data.markets();
    this.#rules = new Map(list.map((rules) => [rules.name, rules]));
    for (const rules of list) this.sim.addMarket(rules);
    return list;
  }

  prices(markets: readonly string[]): Promise<ReadonlyMap<string, Decimal>> {
    return this.#data.prices(markets);
  }

  /** The real exchange's clock against this machine's: a paper account's slots keep this machine's time as a live one's do. */
  async clockOffsetMs(): Promise<number | null> {
    return this.#data.clockOffsetMs === undefined ? null : this.#data.clockOffsetMs();
  }

  async candles(request: { readonly market: string; readonly fromSec: number; readonly toSec: number }): Promise<readonly Candle[]> {
    return this.#data.candles === undefined ? [] : this.#data.candles(request);
  }

  override async buyStockMarket(request: StockMarketRequest): Promise<Order> {
    const view = await this.#marketData(async () => {
      if (!this.#rules.has(request.market)) await this.markets();
      const rules = this.#rules.get(request.market);
      return rules === undefined ? null : this.#bookFor(rules);
    });
    // An unknown market: the sim refuses it as the exchange would ("Market is not available.").
    this.#placing.current = view;
    let order: Order;
    try {
      order = this.placeStockMarket(request);
    } finally {
      this.#placing.current = null;
    }
    this.#newest.push(order);
    if (this.#newest.length > ORDERS_KEPT) this.#newest.shift();
    await this.#changed();
    return order;
  }

  override async transferToSpot(request: { readonly ticker: string; readonly amount: Decimal }): Promise<void> {
    await super.transferToSpot(request);
    await this.#changed();
  }

  override async flexWithdraw(request: { readonly plan: string; readonly amount: Decimal }): Promise<{ readonly transactionId: string }> {
    const result = await super.flexWithdraw(request);
    await this.#changed();
    return result;
  }

  /** History first, then active orders (SimAccount), then the orders of the runs before this one. */
  override async findOrder(request: { readonly market: string; readonly clientOrderId: string }): Promise<Order | null> {
    const found = await super.findOrder(request);
    if (found !== null) return found;
    return this.#earlier.findLast((order) => order.market === request.market && order.clientOrderId === request.clientOrderId) ?? null;
  }

  override async orderStatus(request: { readonly market: string; readonly orderId: string; readonly clientOrderId: string }): Promise<Order | null> {
    return (await super.orderStatus(request)) ?? this.#earlier.find((order) => order.orderId === request.orderId && order.market === request.market) ?? null;
  }

  override async orderHistory(request: { readonly sinceSec: number; readonly untilSec: number }): Promise<readonly Order[]> {
    const earlier = this.#earlier.filter((order) => order.createdAtSec >= request.sinceSec && order.createdAtSec <= request.untilSec);
    return [...earlier, ...(await super.orderHistory(request))];
  }

  /**
   * The account as text: spot and main balances (decimals as strings), id counters, the seed it
   * started from, and its newest orders. A kill between a paper fill and its journal record
   * leaves the fill in the balances saved with it: the restart's lookup of that lost answer must
   * find the order too, or it calls not-found a buy the wallet shows as made.
   */
  #state(): string {
    const spot = Object.fromEntries([...this.sim.tradeBalances()].filter(([, b]) => !b.available.isZero()).map(([asset, b]) => [asset, formatDecimal(b.available)]));
    const main = Object.fromEntries([...this.sim.mainBalances()].filter(([, amount]) => !amount.isZero()).map(([asset, amount]) => [asset, formatDecimal(amount)]));
    const saved: PaperAccountState = { version: 1, seed: this.#seed, spot, main, ids: this.#ids.counters(), orders: this.#newest.map(savedOrder) };
    return JSON.stringify(saved);
  }

  #resume(saved: string | null): { readonly note: string | null } {
    if (saved === null) return { note: null };
    const state = readPaperAccountState(saved);
    for (const [account, target] of [['spot', state.spot], ['main', state.main]] as const) {
      const now = account === 'spot' ? new Map([...this.sim.tradeBalances()].map(([asset, b]) => [asset, b.available])) : this.sim.mainBalances();
      for (const asset of new Set([...now.keys(), ...Object.keys(target)])) {
        const delta = new Decimal(target[asset] ?? '0').sub(now.get(asset) ?? ZERO);
        if (delta.isZero()) continue;
        if (account === 'spot') this.sim.seedSpot(asset, delta);
        else this.sim.seedMain(asset, delta);
      }
    }
    this.#ids.continueFrom(state.ids);
    this.#earlier = (state.orders ?? []).map(restoredOrder);
    this.#newest = [...this.#earlier];
    const configured = this.#seed;
    // The account continues, so its origin does too: saved back as the configured wallet, the next
    // start would name a seed this account never had (or, given that one, say nothing at all).
    this.#seed = state.seed;
    return { note: state.seed === configured ? null : `the configured wallet (${configured || 'empty'}) differs from the one this paper account started from (${state.seed || 'empty'})` };
  }

  async #changed(): Promise<void> {
    try {
      await this.#save?.(this.#state());
    } catch {
      // The journal remembers a failed write and health reports it; the paper fill itself stands.
    }
  }

  override async close(): Promise<void> {
    await this.#data.close?.();
  }

  async #bookFor(rules: MarketRules): Promise<OrderBookView> {
    const [book, last] = await Promise.all([
      this.#data.orderBook === undefined ? null : this.#data.orderBook(rules.name, this.#bookDepth),
      this.#data.prices([rules.name]).then((prices) => prices.get(rules.name) ?? null),
    ]);
    const asks: BookLevel[] = (book?.asks ?? []).filter(([price, base]) => price.gt(0) && base.gt(0)).map(([price, base]) => ({ price, base }));
    const worst = asks[asks.length - 1];
    if (worst !== undefined) {
      // The book beyond the depth fetched is unknown: the rest pays the worst ask seen plus slippage.
      asks.push({ price: roundUp(worst.price.mul(this.#slippagePct.add(100)).div(100), rules.quotePrecision), base: null });
    }
    // No asks: the sim's own fill model prices the order at the last price plus slippage.
    return { market: rules.name, refPrice: last ?? asks[0]?.price ?? null, asks: asks.length > 0 ? asks : null };
  }

  async #marketData<T>(read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (error) {
      const causeCode = typeof (error as { code?: unknown }).code === 'string' ? (error as { code: string }).code : 'E_MARKET_DATA';
      const message = error instanceof Error ? error.message : String(error);
      const path = typeof (error as { path?: unknown }).path === 'string' ? (error as { path: string }).path : 'market data';
      throw new NetworkError(path, causeCode, false, `dry-run: market data unavailable, no order placed: ${message}`);
    }
  }
}

/** What a paper account keeps across restarts. */
interface PaperAccountState {
  readonly version: 1;
  /** The configured wallet it started from, as TICKER=amount text. */
  readonly seed: string;
  readonly spot: Readonly<Record<string, string>>;
  readonly main: Readonly<Record<string, string>>;
  readonly ids: Readonly<Partial<Record<SimIdKind, number>>>;
  /** Its newest orders (ORDERS_KEPT), oldest first; absent in a state saved before they were kept. */
  readonly orders?: readonly SavedOrder[];
}

/**
 * How many of the newest orders a paper account keeps across restarts: the ones a kill can have
 * left unjournalled are the last few, and the state is written after every fill.
 */
const ORDERS_KEPT = 50;

/** An order as the saved state holds it: decimals as strings (a paper order has no unrecognized values). */
type SavedOrder = Omit<Order, 'amount' | 'left' | 'filledBase' | 'filledQuote' | 'fee' | 'price' | 'unrecognized'> & {
  readonly amount: string;
  readonly left: string;
  readonly filledBase: string;
  readonly filledQuote: string;
  readonly fee: string;
  readonly price: string | null;
};

function savedOrder(order: Order): SavedOrder {
  return {
    orderId: order.orderId,
    clientOrderId: order.clientOrderId,
    market: order.market,
    side: order.side,
    type: order.type,
    createdAtSec: order.createdAtSec,
    feeAsset: order.feeAsset,
    status: order.status,
    statusDerived: order.statusDerived,
    stp: order.stp,
    stopActivated: order.stopActivated,
    amount: formatDecimal(order.amount),
    left: formatDecimal(order.left),
    filledBase: formatDecimal(order.filledBase),
    filledQuote: formatDecimal(order.filledQuote),
    fee: formatDecimal(order.fee),
    price: order.price === null ? null : formatDecimal(order.price),
  };
}

function restoredOrder(saved: SavedOrder): Order {
  return {
    ...saved,
    amount: new Decimal(saved.amount),
    left: new Decimal(saved.left),
    filledBase: new Decimal(saved.filledBase),
    filledQuote: new Decimal(saved.filledQuote),
    fee: new Decimal(saved.fee),
    price: saved.price === null ? null : new Decimal(saved.price),
  };
}

/** What a saved paper account holds (its journal's state): trade and main balances, and the wallet it started from. */
export interface PaperBalances {
  readonly trade: Readonly<Record<string, string>>;
  readonly main: Readonly<Record<string, string>>;
  readonly startedFrom: string;
}

/** The balances of a paper account as its journal keeps them (`Journal.accountState`), read without an exchange. */
export function paperBalances(saved: string): PaperBalances {
  const state = readPaperAccountState(saved);
  return { trade: state.spot, main: state.main, startedFrom: state.seed };
}

function readPaperAccountState(text: string): PaperAccountState {
  const bad = (why: string): Error => new Error(`the saved paper account cannot be read (${why}); delete the dry-run journal and its .id file to start over`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw bad('not JSON');
  }
  const o = value as Partial<PaperAccountState>;
  if (typeof o !== 'object' || o === null || o.version !== 1 || typeof o.seed !== 'string') throw bad('unknown version');
  for (const map of [o.spot, o.main]) {
    if (typeof map !== 'object' || map === null) throw bad('balances missing');
    for (const [asset, amount] of Object.entries(map)) {
      try {
        if (parseDecimalStrict(amount, asset).isNegative()) throw new Error('negative');
      } catch {
        throw bad(`${asset} is not an amount`);
      }
    }
  }
  if (typeof o.ids !== 'object' || o.ids === null) throw bad('id counters missing');
  if (o.orders !== undefined) {
    if (!Array.isArray(o.orders)) throw bad('orders are not a list');
    for (const order of o.orders as unknown[]) {
      const saved = order as Partial<SavedOrder> | null;
      const amounts = [saved?.amount, saved?.left, saved?.filledBase, saved?.filledQuote, saved?.fee];
      if (typeof saved?.orderId !== 'string' || typeof saved.market !== 'string' || !amounts.every((amount) => typeof amount === 'string' && isPlainDecimal(amount))) throw bad('an order cannot be read');
    }
  }
  return o as PaperAccountState;
}

function isPlainDecimal(text: string): boolean {
  try {
    parseDecimalStrict(text, 'amount');
    return true;
  } catch {
    return false;
  }
}

function describeWallet(wallet: ReadonlyMap<string, Decimal>): string {
  return [...wallet].filter(([, amount]) => amount.gt(0)).sort(([a], [b]) => (a < b ? -1 : 1)).map(([asset, amount]) => `${asset}=${formatDecimal(amount)}`).join(',');
}
