import type { Candle } from '../domain/candle.ts';
import type { ApiClient } from '../api/client.ts';
import type { CodeRecord, FlexInvestment, FlexPlan, TradeBalance } from '../domain/account.ts';
import type { MarketRules } from '../domain/market.ts';
import type { Decimal } from '../domain/money.ts';
import type { Order, Stp } from '../domain/order.ts';
import { ApiMarketData } from './market-data.ts';
import type { Exchange } from './port.ts';

/** The exchange's largest page for flex investments, flex plans and order lookups. */
const PAGE = 100;
/** Order history: the largest page, and the longest span one request may cover (31 days; 30 kept). */
const HISTORY_PAGE = 500;
const HISTORY_SPAN_SEC = 30 * 24 * 3600;
/** Pages in a row holding only orders read already before a history read is taken for one that does not page. */
const REPEATED_PAGES = 3;

/**
 * The Exchange port over the signed HTTP API. A thin adapter on purpose: the client already
 * speaks domain types and typed errors, retries reads and never retries writes, so all this
 * adds is the shape the engine wants (all pages, lookups by clientOrderId in both places an
 * order can be).
 */
export class LiveExchange implements Exchange {
  readonly kind = 'live' as const;
  readonly #client: ApiClient;
  readonly #public: ApiMarketData;
  readonly #warn: (fields: Record<string, unknown>, message: string) => void;
  #toldNotPaging = false;

  /** `warn`: where a history read that could not be paged through is said (once). */
  constructor(client: ApiClient, options: { readonly warn?: (fields: Record<string, unknown>, message: string) => void } = {}) {
    this.#client = client;
    this.#public = new ApiMarketData(client);
    this.#warn = options.warn ?? (() => undefined);
  }

  markets(): Promise<readonly MarketRules[]> {
    return this.#public.markets();
  }

  clockOffsetMs(): Promise<number | null> {
    return this.#client.clockOffsetMs();
  }

  serverTimeMs(): Promise<number> {
    return this.#client.serverTimeMs();
  }

  prices(markets: readonly string[]): Promise<ReadonlyMap<string, Decimal>> {
    return this.#public.prices(markets);
  }

  candles(request: { readonly market: string; readonly fromSec: number; readonly toSec: number }): Promise<readonly Candle[]> {
    return this.#public.candles(request);
  }

  mainBalances(): Promise<ReadonlyMap<string, Decimal>> {
    return this.#client.mainBalances();
  }

  tradeBalances(): Promise<ReadonlyMap<string, TradeBalance>> {
    return this.#client.tradeBalances();
  }

  async flexInvestments(): Promise<readonly FlexInvestment[]> {
    const all: FlexInvestment[] = [];
    for (let offset = 0; ; offset += PAGE) {
      const page = await this.#client.flexInvestments({ active: true, limit: PAGE, offset });
      all.push(...page);
      if (page.length < PAGE) return all;
    }
  }

  async flexPlans(): Promise<readonly FlexPlan[]> {
    const all: FlexPlan[] = [];
    for (let offset = 0; ; offset += PAGE) {
      const page = await this.#client.flexPlans({ limit: PAGE, offset });
      all.push(...page);
      if (page.length < PAGE) return all;
    }
  }

  async codes(): Promise<readonly CodeRecord[]> {
    const all: CodeRecord[] = [];
    for await (const code of this.#client.allCodes({ pageSize: PAGE })) all.push(code);
    return all;
  }

  transferToSpot(request: { readonly ticker: string; readonly amount: Decimal }): Promise<void> {
    return this.#client.transferToSpot({ ticker: request.ticker, amount: request.amount });
  }

  flexWithdraw(request: { readonly plan: string; readonly amount: Decimal }): Promise<{ readonly transactionId: string }> {
    return this.#client.flexWithdraw({ plan: request.plan, amount: request.amount });
  }

  buyStockMarket(request: { readonly market: string; readonly baseAmount: Decimal; readonly clientOrderId: string; readonly stp: Stp }): Promise<Order> {
    return this.#client.buyStockMarket({ market: request.market, baseAmount: request.baseAmount, clientOrderId: request.clientOrderId, stp: request.stp });
  }

  findOrder(request: { readonly market: string; readonly clientOrderId: string }): Promise<Order | null> {
    return this.#client.findOrder(request);
  }

  async orderHistory(request: { readonly sinceSec: number; readonly untilSec: number }): Promise<readonly Order[]> {
    // The window is in this machine's time and the exchange filters by its own: a host clock
    // half an hour fast would otherwise ask for orders that do not exist yet and miss every one.
    const correctionMs = await this.#client.clockCorrectionMs();
    const sinceSec = Math.floor((request.sinceSec * 1000 + correctionMs) / 1000);
    const untilSec = Math.ceil((request.untilSec * 1000 + correctionMs) / 1000);
    const all: Order[] = [];
    // The history endpoint answers at most 31 days per request, a page at a time. Consecutive
    // windows share their boundary second: order times have fractions of a second, and a window
    // ending at second S with the next starting at S + 1 would miss an order at S.5.
    for (let from = sinceSec; ; ) {
      const to = Math.min(untilSec, from + HISTORY_SPAN_SEC);
      // Read on until an empty page: an exchange may hold a page to fewer orders than asked and not
      // say so (ccxt asks for 100), and a short page taken for the last hid every order after it
      // (a lost order cleared as never placed, a rebuild adopting one page). The next page starts
      // after the orders this one held. A page of orders all read already is rows moved down by
      // orders landing meanwhile, read on; REPEATED_PAGES of them in a row is an exchange that
      // does not page at all, which ends the read and is said (the ledger then clears nothing on
      // a read that leaves out orders the journal knows).
      const seen = new Set<string>();
      for (let offset = 0, repeated = 0; ; ) {
        const page = await this.#client.orderHistory({ startDate: from, endDate: to, limit: HISTORY_PAGE, offset });
        if (page.length === 0) break;
        all.push(...page);
        const fresh = page.filter((order) => !seen.has(order.orderId));
        for (const order of fresh) seen.add(order.orderId);
        offset += page.length;
        repeated = fresh.length === 0 ? repeated + 1 : 0;
        if (repeated === REPEATED_PAGES) {
          this.#tellNotPaging(offset);
          break;
        }
      }
      if (to >= untilSec) break;
      from = to;
    }
    const unique = new Map(all.map((order) => [order.orderId, order]));
    // Ids grow with time: they order what shares a timestamp.
    return [...unique.values()].sort((a, b) => a.createdAtSec - b.createdAtSec || a.orderId.length - b.orderId.length || (a.orderId < b.orderId ? -1 : a.orderId > b.orderId ? 1 : 0));
  }

  #tellNotPaging(offset: number): void {
    if (this.#toldNotPaging) return;
    this.#toldNotPaging = true;
    this.#warn(
      { event: 'history-not-paged', offset },
      `the exchange answered its order history with the same orders page after page (up to offset ${offset}): it does not seem to page it, so orders past its first page are not seen (a lost answer found late, a rebuild's adoptions); a not-found buy's budget is given back only on reads that show every order the journal knows`,
    );
  }

  async orderStatus(request: { readonly market: string; readonly orderId: string; readonly clientOrderId: string }): Promise<Order | null> {
    const history = await this.#client.orderHistory({ market: request.market, orderId: request.orderId, limit: PAGE });
    const done = history.find((order) => order.orderId === request.orderId);
    if (done !== undefined) return done;
    const active = await this.#client.activeOrders({ market: request.market, orderId: request.orderId, limit: PAGE });
    return active.find((order) => order.orderId === request.orderId) ?? null;
  }

  close(): Promise<void> {
    return this.#client.close();
  }
}
