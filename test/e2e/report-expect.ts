import { Decimal, formatDecimal } from '../../src/domain/money.ts';
import type { Order } from '../../src/domain/order.ts';

/**
 * What `stacker report --json` must say of a market, worked out from the exchange's own orders:
 * bought, spent, fees, average cost with fees, value and P&L at `price`, rounded as the report
 * rounds them.
 */
export function expectedPosition(orders: readonly Order[], market: string, price: Decimal): Record<string, unknown> {
  const mine = orders.filter((o) => o.market === market);
  const base = mine.reduce((s, o) => s.add(o.filledBase), new Decimal(0));
  const quote = mine.reduce((s, o) => s.add(o.filledQuote), new Decimal(0));
  const fee = mine.reduce((s, o) => s.add(o.fee), new Decimal(0));
  const cost = quote.add(fee);
  const value = base.mul(price);
  return {
    market,
    orders: mine.length,
    baseBought: formatDecimal(base),
    quoteSpent: formatDecimal(quote),
    fees: { USDT: formatDecimal(fee) },
    averageCost: formatDecimal(cost.div(base).toDecimalPlaces(8, Decimal.ROUND_HALF_EVEN)),
    price: formatDecimal(price),
    value: formatDecimal(value.toDecimalPlaces(8, Decimal.ROUND_HALF_EVEN)),
    pnl: formatDecimal(value.sub(cost).toDecimalPlaces(8, Decimal.ROUND_HALF_EVEN)),
    pnlPct: formatDecimal(value.sub(cost).div(cost).mul(100).toDecimalPlaces(4, Decimal.ROUND_HALF_EVEN)),
  };
}
