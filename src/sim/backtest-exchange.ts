import type { Clock } from '../domain/clock.ts';
import type { Candle } from '../domain/candle.ts';
import type { MarketRules } from '../domain/market.ts';
import { type Decimal, ZERO } from '../domain/money.ts';
import type { Exchange } from '../exchange/port.ts';
import { SimCore } from './core.ts';
import { DEMO_MARKETS } from './seed.ts';
import { type FlexSeed, SimAccount, seedSimAccount } from './sim-account.ts';

/** What the backtest exchange needs of a market's candles (src/candles provides it). */
export interface CandlePrices {
  readonly market: string;
  /** The fill rule: open of the first candle at or after the time; past the end, the last close. */
  priceAt(timeMs: number): Decimal | null;
  /** The last price known at the time (CandleSeries.priceKnownAt): what the ticker shows, never a later candle's. */
  priceKnownAt(timeMs: number): Decimal | null;
  /** The data as hourly candles opening in [fromSec, toSec), each hour whole (what strategies reading candles get); coarser data as it is. */
  hourly?(fromSec: number, toSec: number): readonly Candle[];
  /** The data's own step between candles, in seconds: how long after its open a candle coarser than an hour closes. */
  readonly intervalSec?: number;
}

export interface BacktestExchangeOptions {
  /** Virtual time: the backtest moves it; the sim settles and pays flex interest as it passes. */
  readonly clock: Clock;
  /** The market the backtest trades; when given it must be one of the candle markets. */
  readonly market?: string;
  /** One candle series per market traded; a market without candles has no price and no trades. */
  readonly candles: CandlePrices | readonly CandlePrices[];
  /** Starting trade (spot) balances: what orders spend. */
  readonly wallet: ReadonlyMap<string, Decimal>;
  /** Starting main balances; default none. */
  readonly main?: ReadonlyMap<string, Decimal>;
  /** Added to the candle price before the fill, in percent (default 0). */
  readonly slippagePct?: Decimal;
  /**
   * Rules of the markets, matched by name; a candle market without one here gets the sim's demo
   * rules for it (src/sim/seed.ts: BTC_USDT, ETH_USDT — taker 0.1 %, fee to 8 decimals …).
   */
  readonly rules?: MarketRules | readonly MarketRules[];
  /** Flex investments; one with `aprPct` earns it daily, paid at 00:00 UTC in virtual time. */
  readonly flex?: readonly FlexSeed[];
  /**
   * Longer series of the same markets, for the strategies' candle windows only: a period cut by
   * --from still shows a 30-day window the 30 days before it. The fill rule never reads them.
   */
  readonly history?: CandlePrices | readonly CandlePrices[];
}

/**
 * Finished orders a backtest's account keeps readable (between this many and twice as many: they
 * are forgotten in batches). The engine reads an order back only while the slot that placed it
 * settles, and in a backtest not even then: every order is answered, and the exchange's history
 * is not read. Each order kept longer is copied by every young-generation collection it lives
 * through and then becomes old-generation garbage: at 64 (up to 128 slots of a per-minute run,
 * longer than a collection's period) the run's collections took 0.9-1.1 s of its ~8 s with a
 * dozen full ones, at 8 about 0.4-0.6 s with one to three.
 */
const BACKTEST_FINISHED_ORDERS = 8;

const HOUR_SEC = 3600;

/**
 * The exchange of a backtest: the sim core on a virtual clock, prices from candles. A market
 * buy at slot time t fills at the open of the first candle opening at or after t, plus
 * slippage, with the market's taker fee; precision and min/max rules as the sim enforces them
 * live. The ticker shows the last price known at the clock's now (the open of the candle
 * opening at or last before it, or its close once closed), so a strategy decides on what it
 * could have seen: on a slot between two candle opens, the order still fills at the next open.
 */
export class BacktestExchange extends SimAccount implements Exchange {
  readonly kind = 'backtest' as const;
  readonly #clock: Clock;
  readonly #candles: ReadonlyMap<string, CandlePrices>;
  /** What candles() reads: the history where given, else the candles. */
  readonly #windows: ReadonlyMap<string, CandlePrices>;
  readonly #rules: readonly MarketRules[];

  constructor(options: BacktestExchangeOptions) {
    const series = Array.isArray(options.candles) ? (options.candles as readonly CandlePrices[]) : [options.candles as CandlePrices];
    const candles = new Map(series.map((s) => [s.market, s] as const));
    if (candles.size !== series.length) throw new RangeError('one candle series per market');
    if (options.market !== undefined && !candles.has(options.market)) throw new RangeError(`no candles for ${options.market}`);
    const given = options.rules === undefined ? [] : Array.isArray(options.rules) ? (options.rules as readonly MarketRules[]) : [options.rules as MarketRules];
    for (const rules of given) if (!candles.has(rules.name)) throw new RangeError(`market rules for ${rules.name}, which has no candles`);
    const rules = [...candles.keys()].map((market) => {
      const found = given.find((r) => r.name === market) ?? DEMO_MARKETS.find((r) => r.name === market);
      if (found === undefined) throw new RangeError(`no market rules for ${market}: give them explicitly`);
      return found;
    });
    const sim = new SimCore({
      clock: options.clock,
      prices: { priceAt: (market, timeMs) => candles.get(market)?.priceAt(timeMs) ?? null },
      fills: { slippagePct: options.slippagePct ?? ZERO },
      // Years of slots: the engine reads an order back only while it settles, and the report
      // reads the journal, so the account keeps its balances and its recent orders only.
      history: { finishedOrders: BACKTEST_FINISHED_ORDERS, ledgerEntries: false },
    });
    for (const r of rules) sim.addMarket(r);
    seedSimAccount(sim, { wallet: options.wallet, ...(options.main === undefined ? {} : { main: options.main }), ...(options.flex === undefined ? {} : { flex: options.flex }) });
    super(sim);
    this.#clock = options.clock;
    this.#candles = candles;
    const history = options.history === undefined ? [] : Array.isArray(options.history) ? (options.history as readonly CandlePrices[]) : [options.history as CandlePrices];
    this.#windows = new Map([...candles, ...history.map((s) => [s.market, s] as const)]);
    this.#rules = rules;
  }

  /** The fill rule's candle price at a time (no slippage): what the report values the account at after a slot's fill. */
  priceAt(market: string, timeMs: number): Decimal | null {
    return this.#candles.get(market)?.priceAt(timeMs) ?? null;
  }

  async markets(): Promise<readonly MarketRules[]> {
    return this.#rules;
  }

  /**
   * The data's own candles, as hourly ones, never past the clock: a strategy sees only candles
   * that have closed. An hour of finer data closes on the hour; a candle coarser than an hour
   * (daily data) closes its interval after its open, so at 09:00 today's daily candle, whose
   * close is tonight's price, is not seen.
   */
  async candles(request: { readonly market: string; readonly fromSec: number; readonly toSec: number }): Promise<readonly Candle[]> {
    const series = this.#windows.get(request.market);
    const nowSec = Math.floor(this.#clock.nowMs() / 1000);
    const span = Math.max(HOUR_SEC, series?.intervalSec ?? HOUR_SEC);
    const toSec = Math.min(request.toSec, Math.floor(nowSec / HOUR_SEC) * HOUR_SEC, nowSec - span + 1);
    return series?.hourly === undefined || toSec <= request.fromSec ? [] : series.hourly(request.fromSec, toSec);
  }

  async prices(markets: readonly string[]): Promise<ReadonlyMap<string, Decimal>> {
    const now = this.#clock.nowMs();
    const out = new Map<string, Decimal>();
    for (const market of markets) {
      const price = this.#candles.get(market)?.priceKnownAt(now) ?? null;
      if (price !== null) out.set(market, price);
    }
    return out;
  }

  override async close(): Promise<void> {}
}
