import { CandleBook, type CandleWindow } from './candle-book.ts';
import type { CodeRecord, FlexInvestment, FlexPlan, TradeBalance } from '../domain/account.ts';
import type { Candle } from '../domain/candle.ts';
import { Decimal, ZERO } from '../domain/money.ts';
import { type MarketRules, takerFee } from '../domain/market.ts';
import type { Exchange } from '../exchange/port.ts';
import type { BudgetView, RunMode, SlotView, SnapshotPart } from './contract.ts';
import { quoteAt } from './guards.ts';
import { ReadOnlyMap, readOnly, readOnlyKept, readOnlyList } from './read-only.ts';

/**
 * Market rules change rarely (a listing, a precision change), and every slot of every instance
 * needs them, so they are read once and refreshed after `ttlMs`. A refresh that fails keeps the
 * rules already known: stale rules are checked again by the exchange anyway.
 */
export class MarketBook {
  readonly #exchange: Exchange;
  readonly #ttlMs: number;
  readonly #nowMs: () => number;
  #rules: ReadonlyMap<string, MarketRules> | null = null;
  #loadedAtMs = 0;

  constructor(exchange: Exchange, options: { readonly ttlMs: number; readonly nowMs: () => number }) {
    this.#exchange = exchange;
    this.#ttlMs = options.ttlMs;
    this.#nowMs = options.nowMs;
  }

  async rules(): Promise<ReadonlyMap<string, MarketRules>> {
    const now = this.#nowMs();
    if (this.#rules !== null && now - this.#loadedAtMs < this.#ttlMs) return this.#rules;
    try {
      const list = await this.#exchange.markets();
      this.#rules = new Map(list.map((rules) => [rules.name, rules]));
      this.#loadedAtMs = now;
    } catch (error) {
      if (this.#rules === null) throw error;
    }
    return this.#rules;
  }

  /**
   * Read the rules again at the next slot: the exchange refused an order built with them (a
   * precision or minimum changed, the market closed), which they may no longer be. Kept for a
   * read that fails meanwhile, as any rules past their time are.
   */
  forget(): void {
    this.#loadedAtMs = Number.NEGATIVE_INFINITY;
  }
}

const ZERO_TRADE: TradeBalance = Object.freeze({ available: ZERO, freeze: ZERO });

/** What a snapshot reads through and keeps between slots: market rules, and candles. */
export interface SnapshotBooks {
  readonly markets: MarketBook;
  readonly candles: CandleBook;
}

export interface SnapshotRequest {
  readonly instance: string;
  readonly slotTimeMs: number;
  /** The instance's TIMEZONE, shown to the strategy. */
  readonly timezone: string;
  readonly mode: RunMode;
  readonly reads: readonly SnapshotPart[];
  readonly state: ReadonlyMap<string, string>;
  readonly budget: BudgetView;
  /** The candle windows of the strategy (read when `candles` is in reads). */
  readonly candles?: readonly CandleWindow[];
  /**
   * Buys of the account whose answers were lost and whose orders are not found yet (HeldBuy):
   * the trade balance the view shows holds their cost back, as the exchange will once it takes them.
   */
  readonly heldBuys?: readonly HeldBuy[];
}

/** A buy sent and not known to have happened or not: its market and base amount. */
export interface HeldBuy {
  readonly market: string;
  readonly amount: Decimal;
}

const NO_CANDLES: readonly (readonly Candle[])[] = [];

/** An instance's reads as a set, made once per list (its runtime keeps the list for good). */
const partSets = new WeakMap<readonly SnapshotPart[], ReadonlySet<SnapshotPart>>();
function partsOf(reads: readonly SnapshotPart[]): ReadonlySet<SnapshotPart> {
  let parts = partSets.get(reads);
  if (parts === undefined) {
    parts = new Set(reads);
    partSets.set(reads, parts);
  }
  return parts;
}

/**
 * Read the parts a strategy named, then freeze them into its view. Reads run concurrently: a
 * slot's snapshot costs the slowest request, not their sum. Any failure fails the snapshot
 * whole: a strategy never decides on half a picture.
 */
export async function takeSnapshot(exchange: Exchange, books: SnapshotBooks, request: SnapshotRequest): Promise<SlotView> {
  const wants = partsOf(request.reads);
  const needRules = wants.has('markets') || wants.has('prices');
  const windows = wants.has('candles') ? (request.candles ?? []) : [];
  // Only the parts named are asked for, all at once: a part not named costs nothing, not even a
  // settled promise (a backtest takes a snapshot every slot).
  const reads: Promise<unknown>[] = [];
  const at = { rules: -1, main: -1, trade: -1, flex: -1, plans: -1, codes: -1, candles: -1 };
  if (needRules) at.rules = reads.push(books.markets.rules()) - 1;
  if (wants.has('balances')) {
    at.main = reads.push(exchange.mainBalances()) - 1;
    at.trade = reads.push(exchange.tradeBalances()) - 1;
  }
  if (wants.has('flex')) {
    at.flex = reads.push(exchange.flexInvestments()) - 1;
    at.plans = reads.push(exchange.flexPlans()) - 1;
  }
  if (wants.has('codes')) at.codes = reads.push(exchange.codes()) - 1;
  if (windows.length > 0) at.candles = reads.push(Promise.all(windows.map((window) => books.candles.window(window, request.slotTimeMs)))) - 1;
  const got = await Promise.all(reads);
  const part = <T>(index: number): T | null => (index < 0 ? null : (got[index] as T));
  const rules = part<ReadonlyMap<string, MarketRules>>(at.rules);
  const main = part<ReadonlyMap<string, Decimal>>(at.main);
  const trade = part<ReadonlyMap<string, TradeBalance>>(at.trade);
  const flex = part<readonly FlexInvestment[]>(at.flex);
  const plans = part<readonly FlexPlan[]>(at.plans);
  const codes = part<readonly CodeRecord[]>(at.codes);
  const candleLists = part<readonly (readonly Candle[])[]>(at.candles) ?? NO_CANDLES;
  const candles = wants.has('candles') ? new Map(windows.map((window, i) => [window.market, Object.freeze([...(candleLists[i] ?? [])])])) : null;
  const prices = wants.has('prices') && rules !== null ? await exchange.prices([...rules.keys()]) : null;
  const heldBuys = request.heldBuys ?? [];
  const tradeShown = trade !== null && heldBuys.length > 0 ? await holdBack(exchange, books, trade, heldBuys, rules, prices) : trade;

  const need = <T>(part: SnapshotPart, value: T | null): T => {
    if (value === null || !wants.has(part)) {
      throw new Error(`strategy of ${request.instance} read '${part}' without naming it in reads(); add '${part}' to its reads`);
    }
    return value;
  };
  // What the strategy is handed is read-only (read-only.ts): the guards judge its intents by
  // these same balances and rules after it answers, and the rules are every instance's and the sim's.
  // Each is wrapped when the strategy first asks for it: a backtest's slot makes a view whose
  // strategy reads a price and a balance, and wrapping all of them cost it more than its decide.
  const flexList = once(() => (flex === null ? null : readOnlyList(flex, 'flex investments')));
  const planById: ReadonlyMap<string, FlexPlan> | null = plans === null ? null : new Map(plans.map((plan) => [plan.planId, plan]));
  const codeList = once(() => (codes === null ? null : readOnlyList(codes, 'codes')));
  const shownMain = once(() => (main === null ? null : new ReadOnlyMap(main, 'main balances')));
  const shownTrade = once(() => (tradeShown === null ? null : new ReadOnlyMap(tradeShown, 'trade balances', tradeBalanceShown)));

  const view: SlotView = {
    instance: request.instance,
    slotTimeMs: request.slotTimeMs,
    timezone: request.timezone,
    mode: request.mode,
    state: new ReadOnlyMap(request.state, 'state entries (intent.setState writes them)'),
    budget: readOnly(request.budget, 'budget figures'),
    market: (name) => {
      const found = need('markets', rules).get(name);
      return found === undefined ? undefined : readOnlyKept(found, 'market rules');
    },
    price: (market) => need('prices', prices).get(market),
    mainBalance: (ticker) => need('balances', main).get(ticker) ?? ZERO,
    tradeBalance: (ticker) => tradeBalanceShown(need('balances', tradeShown).get(ticker) ?? ZERO_TRADE),
    mainBalances: () => need('balances', shownMain()),
    tradeBalances: () => need('balances', shownTrade()),
    flexInvestments: () => need('flex', flexList()),
    flexPlan: (planId) => {
      const plan = need('flex', planById).get(planId);
      return plan === undefined ? undefined : readOnly(plan, 'flex plans');
    },
    codes: () => need('codes', codeList()),
    candles: (market) => {
      const list = need('candles', candles).get(market);
      // An empty list would read as "the exchange keeps no candles": a window never declared is the strategy's mistake, said as such.
      if (list === undefined) throw new Error(`strategy of ${request.instance} read the candles of ${market} without a window for it; add { market: '${market}', lookbackSec } to its candleWindows`);
      return list;
    },
  };
  // Frozen, not behind a proxy: a strategy reads its view dozens of times a slot, and a write
  // into it throws all the same (strategyErrorMessage says what that means).
  return Object.freeze(view);
}

/** `make`'s value, made on the first call and kept. */
function once<T>(make: () => T): () => T {
  let made = false;
  let value: T;
  return () => {
    if (!made) {
      value = make();
      made = true;
    }
    return value;
  };
}

function tradeBalanceShown(balance: TradeBalance): TradeBalance {
  return readOnly(balance, 'trade balances');
}

/**
 * The trade balances with the cost of the held buys (their amount at the price now, and the taker
 * fee) moved from `available` to `freeze`, at most what is available: an exchange that takes a
 * late order takes its money from there, and a strategy sizing a transfer from the balance it
 * reads must not count it twice (one instance's transfer spent on another's buy, and the late
 * order then refused for funds). Overstated for a moment when a late order has landed and is not
 * yet found: a transfer a little larger than needed, never a buy paid twice. A buy whose market
 * is not listed or has no price holds nothing back.
 */
async function holdBack(
  exchange: Exchange,
  books: SnapshotBooks,
  trade: ReadonlyMap<string, TradeBalance>,
  heldBuys: readonly HeldBuy[],
  rulesRead: ReadonlyMap<string, MarketRules> | null,
  pricesRead: ReadonlyMap<string, Decimal> | null,
): Promise<ReadonlyMap<string, TradeBalance>> {
  const rules = rulesRead ?? (await books.markets.rules());
  const markets = [...new Set(heldBuys.map((buy) => buy.market))];
  const prices = pricesRead ?? (await exchange.prices(markets));
  const held = new Map<string, Decimal>();
  for (const buy of heldBuys) {
    const market = rules.get(buy.market);
    const price = prices.get(buy.market);
    if (market === undefined || price === undefined) continue;
    // What the guards count a buy as costing (money-plan): its estimate and the taker fee on it.
    const quote = quoteAt(buy.amount, price);
    held.set(market.quote, (held.get(market.quote) ?? ZERO).add(quote).add(takerFee(market, quote)));
  }
  const shown = new Map(trade);
  for (const [asset, amount] of held) {
    const balance = trade.get(asset) ?? ZERO_TRADE;
    const moved = Decimal.min(balance.available, amount);
    shown.set(asset, Object.freeze({ available: balance.available.sub(moved), freeze: balance.freeze.add(moved) }));
  }
  return shown;
}

/** The books of one engine (or one check): rules refreshed after `ttlMs`, candles kept between slots. */
export function snapshotBooks(exchange: Exchange, options: { readonly ttlMs: number; readonly nowMs: () => number }): SnapshotBooks {
  return { markets: new MarketBook(exchange, options), candles: new CandleBook(exchange) };
}

export type { Decimal };
