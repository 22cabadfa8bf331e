import { type Decimal, ZERO } from '../domain/money.ts';
import type { StoredOrder } from '../store/journal.ts';
import { type MarketPosition, countsInPosition, fillSums, positionOf } from './cost-basis.ts';

interface MarketSums {
  orders: number;
  bought: Decimal;
  spent: Decimal;
  /** Fees per asset, with how many orders paid in it (an asset leaves when none does). */
  readonly fees: Map<string, { amount: Decimal; orders: number }>;
}

/**
 * The positions of a journal's orders kept up to date order by order, for a daemon that shows
 * them every few seconds for months: an order recorded or changed takes back what its earlier
 * version added and adds its own (exact decimals: taking back is exact), so a refresh costs
 * what changed, not every order again (a year of a per-minute schedule is half a million). The
 * figures are those `positions` sums over the same orders.
 */
export class PositionBook {
  readonly #markets = new Map<string, MarketSums>();

  /** `before`: the version of this order counted so far (null: none); `after`: the version now. */
  replace(before: StoredOrder | null, after: StoredOrder): void {
    if (before !== null && countsInPosition(before)) this.#apply(before, -1);
    if (countsInPosition(after)) this.#apply(after, 1);
  }

  /** The markets with a filled buy, sorted. */
  markets(): string[] {
    return [...this.#markets.keys()].filter((market) => (this.#markets.get(market) as MarketSums).orders > 0).sort();
  }

  positions(prices: ReadonlyMap<string, Decimal> | null): MarketPosition[] {
    return this.markets().map((market) => {
      const sums = this.#markets.get(market) as MarketSums;
      const fees = new Map([...sums.fees].map(([asset, fee]) => [asset, fee.amount]));
      return positionOf(market, sums.orders, fillSums(market, sums.bought, sums.spent, fees), prices?.get(market) ?? null);
    });
  }

  #apply(order: StoredOrder, sign: 1 | -1): void {
    let sums = this.#markets.get(order.market);
    if (sums === undefined) {
      sums = { orders: 0, bought: ZERO, spent: ZERO, fees: new Map() };
      this.#markets.set(order.market, sums);
    }
    sums.orders += sign;
    sums.bought = sign > 0 ? sums.bought.add(order.filledBase) : sums.bought.sub(order.filledBase);
    sums.spent = sign > 0 ? sums.spent.add(order.filledQuote) : sums.spent.sub(order.filledQuote);
    // As sumFills counts fees: a zero fee is no fee, an asset not named is '?'.
    if (order.fee.isZero()) return;
    const asset = order.feeAsset ?? '?';
    const fee = sums.fees.get(asset) ?? { amount: ZERO, orders: 0 };
    fee.amount = sign > 0 ? fee.amount.add(order.fee) : fee.amount.sub(order.fee);
    fee.orders += sign;
    if (fee.orders === 0) sums.fees.delete(asset);
    else sums.fees.set(asset, fee);
  }
}
