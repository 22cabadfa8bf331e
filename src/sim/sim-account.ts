import type { CodeRecord, FlexInvestment, FlexPlan, TradeBalance } from '../domain/account.ts';
import { type Decimal, ZERO } from '../domain/money.ts';
import type { Order, Stp } from '../domain/order.ts';
import type { SimCore, SimOrder } from './core.ts';
import { asExchange } from './rejection-errors.ts';

export interface StockMarketRequest {
  readonly market: string;
  readonly baseAmount: Decimal;
  readonly clientOrderId: string;
  readonly stp: Stp;
}

/**
 * The private half of the Exchange port over a SimCore, the base of the paper (dry-run) and
 * backtest exchanges (which add market data): the same calls the live adapter makes, answered
 * by the sim core, refusals raised as the domain errors the HTTP client would raise for them
 * against the sandbox (toExchangeError). Async for the port's sake; no I/O happens here.
 */
export class SimAccount {
  readonly sim: SimCore;

  constructor(sim: SimCore) {
    this.sim = sim;
  }

  async mainBalances(): Promise<ReadonlyMap<string, Decimal>> {
    return this.sim.mainBalances();
  }

  async tradeBalances(): Promise<ReadonlyMap<string, TradeBalance>> {
    return this.sim.tradeBalances();
  }

  async flexInvestments(): Promise<readonly FlexInvestment[]> {
    return this.sim.flexInvestments({ active: true });
  }

  async flexPlans(): Promise<readonly FlexPlan[]> {
    return this.sim.flexPlans();
  }

  async codes(): Promise<readonly CodeRecord[]> {
    const all: CodeRecord[] = [];
    for (let offset = 0; ; offset += 100) {
      const page = this.sim.codes({ limit: 100, offset });
      all.push(...page.codes);
      if (page.codes.length < 100 || all.length >= page.total) return all;
    }
  }

  async transferToSpot(request: { readonly ticker: string; readonly amount: Decimal }): Promise<void> {
    asExchange(() => this.sim.transfer({ ticker: request.ticker, amount: request.amount, from: 'main', to: 'spot' }));
  }

  async flexWithdraw(request: { readonly plan: string; readonly amount: Decimal }): Promise<{ readonly transactionId: string }> {
    return asExchange(() => this.sim.flexWithdraw(request.plan, request.amount));
  }

  async buyStockMarket(request: StockMarketRequest): Promise<Order> {
    return this.placeStockMarket(request);
  }

  /** The buy itself, synchronous: an adapter that prepares the sim for one order (a paper book) places it here. */
  protected placeStockMarket(request: StockMarketRequest): Order {
    const { market, baseAmount, clientOrderId, stp } = request;
    return plain(asExchange(() => this.sim.buyStockMarket({ market, baseAmount, clientOrderId, stp })));
  }

  async close(): Promise<void> {}

  /** History first, then active orders, newest first in each (as LiveExchange looks). */
  async findOrder(request: { readonly market: string; readonly clientOrderId: string }): Promise<Order | null> {
    const filter = { market: request.market, clientOrderId: request.clientOrderId };
    const found = this.sim.orderHistory(filter)[0] ?? this.sim.activeOrders(filter)[0];
    return found === undefined ? null : plain(found);
  }

  async orderHistory(request: { readonly sinceSec: number; readonly untilSec: number }): Promise<readonly Order[]> {
    return this.sim
      .orderHistory({})
      .filter((order) => order.createdAtSec >= request.sinceSec && order.createdAtSec <= request.untilSec)
      .sort((a, b) => a.createdAtSec - b.createdAtSec)
      .map(plain);
  }

  async orderStatus(request: { readonly market: string; readonly orderId: string; readonly clientOrderId: string }): Promise<Order | null> {
    const found = this.sim.order(request.orderId);
    return found === undefined || found.market !== request.market ? null : plain(found);
  }
}

/** The domain order, without the sim's bookkeeping fields. */
function plain(order: SimOrder): Order {
  const { finishedAtSec: _finished, ...rest } = order;
  return rest;
}

/** A flex investment an account starts with; with `aprPct` it earns interest daily (Flex.accrueTo). */
export interface FlexSeed {
  readonly planId: string;
  readonly ticker: string;
  readonly amount: Decimal;
  /** Yearly interest in percent; none: the investment earns nothing. */
  readonly aprPct?: Decimal;
  /** Interest compounds into the investment instead of going to the main balance (default false). */
  readonly autoReinvest?: boolean;
}

export interface SimAccountSeed {
  /** Starting trade (spot) balances: what orders spend. */
  readonly wallet: ReadonlyMap<string, Decimal>;
  /** Starting main balances (what a transfer to spot moves; where flex withdrawals land). */
  readonly main?: ReadonlyMap<string, Decimal>;
  readonly flex?: readonly FlexSeed[];
}

/**
 * Put a paper or backtest account's starting money in place: one plan per seeded investment,
 * open to any amount (minimum 0), so a strategy's withdrawals meet no plan limit the config did
 * not ask for.
 */
export function seedSimAccount(sim: SimCore, seed: SimAccountSeed): void {
  for (const [asset, amount] of seed.wallet) if (amount.gt(0)) sim.seedSpot(asset, amount);
  for (const [asset, amount] of seed.main ?? []) if (amount.gt(0)) sim.seedMain(asset, amount);
  for (const investment of seed.flex ?? []) {
    const aprPct = investment.aprPct ?? ZERO;
    sim.addFlexPlan(
      { planId: investment.planId, ticker: investment.ticker, minInvestment: ZERO, maxInvestment: investment.amount.mul(1000), maxRatePct: aprPct },
      ...(investment.aprPct === undefined ? [] : [{ aprPct }]),
    );
    sim.seedFlexInvestment(investment.planId, investment.amount, investment.autoReinvest ?? false);
  }
}
