import type { FlexInvestment } from '../domain/account.ts';
import type { MarketRules } from '../domain/market.ts';
import type { Decimal } from '../domain/money.ts';
import { ZERO } from '../domain/money.ts';
import type { Exchange } from '../exchange/port.ts';
import { SimExchange } from './exchange.ts';
import { DEMO_MARKETS } from './seed.ts';
import { SimAccount } from './sim-account.ts';

/** What the backtest exchange needs of candles (src/backtest/candles provides it). */
export interface CandlePrices {
  readonly market: string;
  /** The fill rule: open of the first candle at or after the time; past the end, the last close. */
  priceAt(timeMs: number): Decimal | null;
}

export interface BacktestExchangeOptions {
  readonly clock: { nowMs(): number };
  readonly market: string;
  readonly candles: CandlePrices;
  /** Starting balances, on the trade (spot) balance that orders spend. */
  readonly wallet: ReadonlyMap<string, Decimal>;
  /** Added to the candle price before the fill (percent, default 0). */
  readonly slippagePct: Decimal;
  /** Rules of the market; default the sim's demo rules for it (taker fee 0.1 %, precision…). */
  readonly rules?: MarketRules;
  /** Flex investments that accrue `aprPct` a year, credited daily at 00:00 UTC. */
  readonly flex?: ReadonlyArray<{ readonly planId: string; readonly ticker: string; readonly amount: Decimal; readonly aprPct: Decimal }>;
}

const DAY_MS = 86_400_000;

/**
 * The exchange of a backtest: the sim core on a virtual clock, prices from the candles. A market
 * buy at slot time t fills at the open of the first candle opening at or after t, plus slippage,
 * with the market's taker fee; precision and min/max rules as the sim enforces them live.
 */
export class BacktestExchange extends SimAccount implements Exchange {
  readonly kind = 'backtest' as const;
  readonly #clock: { nowMs(): number };
  readonly #candles: CandlePrices;
  readonly #rules: MarketRules;
  readonly #aprPct: Decimal | null;
  #accruedDay: number;

  constructor(options: BacktestExchangeOptions) {
    const rules = options.rules ?? DEMO_MARKETS.find((m) => m.name === options.market);
    if (rules === undefined) throw new RangeError(`no market rules for ${options.market}: give them explicitly`);
    const candles = options.candles;
    const sim = new SimExchange({
      clock: options.clock,
      prices: { priceAt: (market, timeMs) => (market === candles.market ? candles.priceAt(timeMs) : null) },
      fills: { slippagePct: options.slippagePct },
    });
    sim.addMarket(rules);
    for (const [asset, amount] of options.wallet) if (amount.gt(0)) sim.seedSpot(asset, amount);
    const aprs = new Set((options.flex ?? []).map((f) => f.aprPct.toFixed()));
    if (aprs.size > 1) throw new RangeError('all flex investments of a backtest earn one APR');
    for (const investment of options.flex ?? []) {
      sim.addFlexPlan({ planId: investment.planId, ticker: investment.ticker, minInvestment: ZERO, maxInvestment: investment.amount.mul(1000), maxRatePct: investment.aprPct });
      sim.seedFlexInvestment(investment.planId, investment.amount);
    }
    super(sim);
    this.#rules = rules;
    this.#clock = options.clock;
    this.#candles = options.candles;
    this.#aprPct = options.flex?.[0]?.aprPct ?? null;
    this.#accruedDay = Math.floor(options.clock.nowMs() / DAY_MS);
  }

  /** The candle price at a time (no slippage): what the ticker shows and the report values at. */
  priceAt(market: string, timeMs: number): Decimal | null {
    return market === this.#candles.market ? this.#candles.priceAt(timeMs) : null;
  }

  async markets(): Promise<readonly MarketRules[]> {
    return [this.#rules];
  }

  async prices(markets: readonly string[]): Promise<ReadonlyMap<string, Decimal>> {
    const out = new Map<string, Decimal>();
    for (const market of markets) {
      const price = this.priceAt(market, this.#clock.nowMs());
      if (price !== null) out.set(market, price);
    }
    return out;
  }

  override mainBalances(): Promise<ReadonlyMap<string, Decimal>> {
    this.#accrue();
    return super.mainBalances();
  }


  override flexInvestments(): Promise<readonly FlexInvestment[]> {
    this.#accrue();
    return super.flexInvestments();
  }



  override flexWithdraw(request: { readonly plan: string; readonly amount: Decimal }): Promise<{ readonly transactionId: string }> {
    this.#accrue();
    return super.flexWithdraw(request);
  }




  override async close(): Promise<void> {}

  /** Credit every whole UTC day that passed since the last credit (time only moves forward). */
  #accrue(): void {
    if (this.#aprPct === null) return;
    const today = Math.floor(this.#clock.nowMs() / DAY_MS);
    while (this.#accruedDay < today) {
      this.sim.accrueFlexDay(this.#aprPct);
      this.#accruedDay += 1;
    }
  }
}
