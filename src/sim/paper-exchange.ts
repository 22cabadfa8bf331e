import { type MarketRules } from '../domain/market.ts';
import { type Decimal, ZERO, roundUp } from '../domain/money.ts';
import type { Order, Stp } from '../domain/order.ts';
import type { Exchange } from '../exchange/port.ts';
import { SimExchange } from './exchange.ts';
import { type FixedPrices, fixedPrices } from './prices.ts';
import { SimAccount } from './sim-account.ts';

/** Public market data from the real exchange (or the sandbox); see src/exchange/market-data.ts. */
export interface PaperMarketData {
  markets(): Promise<readonly MarketRules[]>;
  prices(markets: readonly string[]): Promise<ReadonlyMap<string, Decimal>>;
  orderBook?(market: string, depth: number): Promise<{ readonly asks: ReadonlyArray<readonly [Decimal, Decimal]> }>;
  close?(): Promise<void>;
}

export interface PaperExchangeOptions {
  readonly marketData: PaperMarketData;
  /** Starting balances, put on the trade (spot) balance that orders spend. */
  readonly wallet: ReadonlyMap<string, Decimal>;
  /** Used when the book cannot fill the order: last price plus this percent. */
  readonly slippagePct: Decimal;
  /** Flex investments to start with: plan, ticker and amount. */
  readonly flex?: ReadonlyArray<{ readonly planId: string; readonly ticker: string; readonly amount: Decimal }>;
  readonly clock?: { nowMs(): number };
}

const BOOK_DEPTH = 100;
const HUNDRED = 100;

/**
 * Dry-run: real prices and market rules, a simulated account. A market buy walks the real
 * order book's asks for the base amount; the paper fill is the volume-weighted price of the
 * levels taken, rounded UP to the market's price precision (a paper account must never look
 * better than the exchange would have been). When the book cannot cover the amount, the last
 * price plus the configured slippage is used. Fees, precision and min/max rules are the sim
 * core's, the same as the sandbox's and the backtest's.
 */
export class PaperExchange extends SimAccount implements Exchange {
  readonly kind = 'paper' as const;
  readonly #data: PaperMarketData;
  readonly #prices: FixedPrices;
  readonly #slippagePct: Decimal;
  #rules: ReadonlyMap<string, MarketRules> = new Map();

  constructor(options: PaperExchangeOptions) {
    const prices = fixedPrices({});
    const sim = new SimExchange({ prices, ...(options.clock === undefined ? {} : { clock: options.clock }) });
    for (const [asset, amount] of options.wallet) if (amount.gt(0)) sim.seedSpot(asset, amount);
    for (const investment of options.flex ?? []) {
      sim.addFlexPlan({ planId: investment.planId, ticker: investment.ticker, minInvestment: ZERO, maxInvestment: investment.amount.mul(1000), maxRatePct: ZERO });
      sim.seedFlexInvestment(investment.planId, investment.amount);
    }
    super(sim);
    this.#prices = prices;
    this.#data = options.marketData;
    this.#slippagePct = options.slippagePct;
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







  override async buyStockMarket(request: { readonly market: string; readonly baseAmount: Decimal; readonly clientOrderId: string; readonly stp: Stp }): Promise<Order> {
    if (!this.#rules.has(request.market)) await this.markets();
    const rules = this.#rules.get(request.market);
    if (rules !== undefined) {
      const price = await this.#fillPrice(rules, request.baseAmount);
      if (price !== null) this.#prices.set(request.market, price);
    }
    return super.buyStockMarket(request);
  }



  override async close(): Promise<void> {
    await this.#data.close?.();
  }

  async #fillPrice(rules: MarketRules, baseAmount: Decimal): Promise<Decimal | null> {
    if (this.#data.orderBook !== undefined) {
      const book = await this.#data.orderBook(rules.name, BOOK_DEPTH);
      let left = baseAmount;
      let quote = ZERO;
      for (const [price, amount] of book.asks) {
        const take = amount.lt(left) ? amount : left;
        quote = quote.add(take.mul(price));
        left = left.sub(take);
        if (left.lte(0)) return roundUp(quote.div(baseAmount), rules.quotePrecision);
      }
    }
    const last = (await this.#data.prices([rules.name])).get(rules.name);
    if (last === undefined) return null;
    return roundUp(last.mul(this.#slippagePct.add(HUNDRED)).div(HUNDRED), rules.quotePrecision);
  }
}
