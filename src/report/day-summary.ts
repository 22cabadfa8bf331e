import type { Decimal } from '../domain/money.ts';
import type { InstanceDay } from '../domain/notification.ts';
import type { Journal } from '../store/journal.ts';
import { sumFills } from './cost-basis.ts';

export interface SummaryInstance {
  readonly instance: string;
  readonly budgetAsset: string | null;
}

/**
 * How long before the day an order of it may have been first journalled: the exchange's clock and
 * this machine's differ by seconds at most (the order's time is the exchange's).
 */
const CLOCK_MARGIN_MS = 3_600_000;

/**
 * What each instance bought in [fromMs, toMs) by the exchange's order times, one entry per
 * market it bought on (one entry with market null when it bought nothing), with its budget left
 * as `budgetLeft` counts it. The figures are those of `stacker report`, over one day.
 */
export async function summariseDay(
  journal: Pick<Journal, 'listOrders'>,
  instances: readonly SummaryInstance[],
  range: { readonly fromMs: number; readonly toMs: number },
  budgetLeft: (instance: string) => Promise<Decimal | null>,
): Promise<InstanceDay[]> {
  const days: InstanceDay[] = [];
  for (const { instance, budgetAsset } of instances) {
    // Every order first journalled from the day on (an instance buying every few seconds makes thousands).
    const orders = (await journal.listOrders({ instance, firstSeenFromMs: range.fromMs - CLOCK_MARGIN_MS, limit: -1 })).filter(
      (order) => order.side === 'buy' && order.filledBase.gt(0) && order.createdAtSec * 1000 >= range.fromMs && order.createdAtSec * 1000 < range.toMs,
    );
    const left = await budgetLeft(instance);
    const markets = [...new Set(orders.map((order) => order.market))].sort();
    if (markets.length === 0) {
      const none = sumFills('_', []);
      days.push({ instance, market: null, orders: 0, bought: none.bought, spent: none.spent, fees: none.fees, averageCost: null, budgetLeft: left, budgetAsset });
      continue;
    }
    for (const market of markets) {
      const mine = orders.filter((order) => order.market === market);
      const sums = sumFills(market, mine);
      days.push({ instance, market, orders: mine.length, bought: sums.bought, spent: sums.spent, fees: sums.fees, averageCost: sums.averageCost, budgetLeft: left, budgetAsset });
    }
  }
  return days;
}
