import type { CodeRecord, FlexInvestment, TradeBalance } from '../domain/account.ts';
import type { Decimal } from '../domain/money.ts';
import type { Order, Stp } from '../domain/order.ts';
import type { SimExchange, SimOrder } from './exchange.ts';
import { asExchange } from './rejection-errors.ts';

/**
 * The private half of the Exchange port over a SimExchange, the base of the paper (dry-run) and
 * backtest exchanges (which add market data): the same calls the live adapter makes, answered by the sim core, refusals
 * raised as the domain errors the HTTP client would raise for them.
 */
export class SimAccount {
  readonly sim: SimExchange;

  constructor(sim: SimExchange) {
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

  async codes(): Promise<readonly CodeRecord[]> {
    const all: CodeRecord[] = [];
    for (let offset = 0; ; offset += 100) {
      const page = this.sim.codes({ limit: 100, offset });
      all.push(...page.codes);
      if (page.codes.length < 100 || all.length >= page.total) return all;
    }
  }

  async transferToSpot(request: { readonly ticker: string; readonly amount: Decimal }): Promise<void> {
    asExchange('/api/v4/main-account/transfer', 'main-account', () => this.sim.transfer({ ticker: request.ticker, amount: request.amount, from: 'main', to: 'spot' }));
  }

  async flexWithdraw(request: { readonly plan: string; readonly amount: Decimal }): Promise<{ readonly transactionId: string }> {
    return asExchange('/api/v4/main-account/smart-flex/investments/withdraw', 'main-account', () => this.sim.flexWithdraw(request.plan, request.amount));
  }

  async buyStockMarket(request: { readonly market: string; readonly baseAmount: Decimal; readonly clientOrderId: string; readonly stp: Stp }): Promise<Order> {
    return plain(asExchange('/api/v4/order/stock_market', 'trade', () => this.sim.buyStockMarket(request)));
  }

  async close(): Promise<void> {}

  async findOrder(request: { readonly market: string; readonly clientOrderId: string }): Promise<Order | null> {
    const found = [...this.sim.orderHistory(request), ...this.sim.activeOrders(request)][0];
    return found === undefined ? null : plain(found);
  }

  async orderStatus(request: { readonly market: string; readonly orderId: string }): Promise<Order | null> {
    const found = this.sim.order(request.orderId);
    return found === undefined ? null : plain(found);
  }
}

/** The domain order, without the sim's bookkeeping fields. */
function plain(order: SimOrder): Order {
  const { finishedAtSec: _finished, ...rest } = order;
  return rest;
}
