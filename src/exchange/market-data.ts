import type { Candle } from '../domain/candle.ts';
import type { ApiClient } from '../api/client.ts';
import type { MarketRules } from '../domain/market.ts';
import type { Decimal } from '../domain/money.ts';

/**
 * Public market data only: what a paper (dry-run) account needs from the real exchange. No
 * credentials are involved, so a dry-run can never move money at the exchange even by mistake.
 */
export interface MarketData {
  markets(): Promise<readonly MarketRules[]>;
  prices(markets: readonly string[]): Promise<ReadonlyMap<string, Decimal>>;
  candles(request: { readonly market: string; readonly fromSec: number; readonly toSec: number }): Promise<readonly Candle[]>;
  orderBook(market: string, depth: number): Promise<{ readonly asks: ReadonlyArray<readonly [Decimal, Decimal]>; readonly bids: ReadonlyArray<readonly [Decimal, Decimal]> }>;
  close(): Promise<void>;
}

export class ApiMarketData implements MarketData {
  readonly #client: ApiClient;

  constructor(client: ApiClient) {
    this.#client = client;
  }

  markets(): Promise<readonly MarketRules[]> {
    return this.#client.markets();
  }

  /** The exchange's clock minus this machine's (its public time), measured now. */
  clockOffsetMs(): Promise<number | null> {
    return this.#client.clockOffsetMs();
  }

  async prices(markets: readonly string[]): Promise<ReadonlyMap<string, Decimal>> {
    const wanted = new Set(markets);
    const out = new Map<string, Decimal>();
    if (wanted.size === 0) return out;
    // One request answers every market; asking per market would cost one request each.
    for (const [market, ticker] of await this.#client.tickers()) {
      if (wanted.has(market) && ticker.lastPrice.gt(0)) out.set(market, ticker.lastPrice);
    }
    return out;
  }

  candles(request: { readonly market: string; readonly fromSec: number; readonly toSec: number }): Promise<readonly Candle[]> {
    return this.#client.hourlyCandles(request.market, request.fromSec, request.toSec);
  }

  async orderBook(market: string, depth: number) {
    const book = await this.#client.orderBook(market, depth);
    return { asks: book.asks, bids: book.bids };
  }

  close(): Promise<void> {
    return this.#client.close();
  }
}
