import { DEFAULT_ACCOUNT } from '../domain/account.ts';
import { instanceHash, parseClientOrderId } from '../domain/client-order-id.ts';
import type { Decimal } from '../domain/money.ts';
import type { InstanceDay } from '../domain/notification.ts';
import type { Journal, StoredOrder } from '../store/journal.ts';
import { sumFills } from './cost-basis.ts';

/** A configured instance of the summary (enabled unless told). */
export interface SummaryInstance {
  readonly instance: string;
  readonly budgetAsset: string | null;
  /** `default` when absent. */
  readonly account?: string;
  /** A disabled instance is summed up only on a day it bought (a `run --once` of it, or before it was disabled). */
  readonly enabled?: boolean;
  /** The zone its budgets count days in (its TIMEZONE); UTC when absent. */
  readonly budgetTimeZone?: string;
}

/**
 * How long before the day an order of it may have been first journalled: the exchange's clock and
 * this machine's differ by seconds at most (the order's time is the exchange's).
 */
const CLOCK_MARGIN_MS = 3_600_000;

/**
 * What each instance bought in [fromMs, toMs) by the exchange's order times, one entry per
 * market it bought on (one entry with market null when it bought nothing), with its budget left
 * as `budgetLeft` counts it. The figures are those of `stacker report`, over one day. Every
 * enabled instance has an entry; a disabled one, and one the journal holds that has no file any
 * more (renamed, deleted), have one when they bought that day: what the day spent is all there.
 */
export async function summariseDay(
  journal: Pick<Journal, 'listOrders' | 'getIntent'>,
  instances: readonly SummaryInstance[],
  range: { readonly fromMs: number; readonly toMs: number },
  budgetLeft: (instance: string) => Promise<Decimal | null>,
): Promise<InstanceDay[]> {
  const ofDay = (orders: readonly StoredOrder[]): StoredOrder[] =>
    orders.filter((order) => order.side === 'buy' && order.filledBase.gt(0) && order.createdAtSec * 1000 >= range.fromMs && order.createdAtSec * 1000 < range.toMs);
  const days: InstanceDay[] = [];
  const counted = new Set<string>();
  for (const { instance, budgetAsset, account, enabled, budgetTimeZone } of instances) {
    // Every order first journalled from the day on (an instance buying every few seconds makes thousands).
    const orders = ofDay(await journal.listOrders({ instance, firstSeenFromMs: range.fromMs - CLOCK_MARGIN_MS, limit: -1 }));
    for (const order of orders) counted.add(order.orderId);
    if (enabled === false && orders.length === 0) continue;
    const state = enabled === false ? 'disabled' : 'enabled';
    const left = await budgetLeft(instance);
    days.push(...daysOf({ instance, state, account: account ?? DEFAULT_ACCOUNT, budgetLeft: left, budgetAsset, budgetTimeZone: left === null ? null : (budgetTimeZone ?? 'UTC') }, orders));
  }
  // The rest of the day's orders belong to instances without a file: each named by its intent, looked up once per instance hash.
  const others = new Map<string, { account: string; orders: StoredOrder[] }>();
  const ownerOfHash = new Map<string, { instance: string; account: string } | null>();
  for (const order of ofDay(await journal.listOrders({ firstSeenFromMs: range.fromMs - CLOCK_MARGIN_MS, limit: -1 }))) {
    if (counted.has(order.orderId) || order.intentId === null) continue;
    const hash = parseClientOrderId(order.clientOrderId)?.instanceHash ?? null;
    let owner = hash === null ? undefined : ownerOfHash.get(hash);
    if (owner === undefined) {
      const intent = await journal.getIntent(order.intentId);
      owner = intent === null ? null : { instance: intent.instance, account: intent.account ?? DEFAULT_ACCOUNT };
      if (hash !== null && owner !== null && instanceHash(owner.instance) === hash) ownerOfHash.set(hash, owner);
    }
    if (owner === null) continue;
    const group = others.get(owner.instance) ?? { account: owner.account, orders: [] };
    group.orders.push(order);
    others.set(owner.instance, group);
  }
  for (const [instance, group] of [...others].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    days.push(...daysOf({ instance, state: 'no-file', account: group.account, budgetLeft: null, budgetAsset: null, budgetTimeZone: null }, group.orders));
  }
  return days;
}

function daysOf(head: Pick<InstanceDay, 'instance' | 'state' | 'account' | 'budgetLeft' | 'budgetAsset' | 'budgetTimeZone'>, orders: readonly StoredOrder[]): InstanceDay[] {
  const markets = [...new Set(orders.map((order) => order.market))].sort();
  if (markets.length === 0) {
    const none = sumFills('_', []);
    return [{ ...head, market: null, orders: 0, bought: none.bought, spent: none.spent, fees: none.fees, averageCost: null }];
  }
  return markets.map((market) => {
    const mine = orders.filter((order) => order.market === market);
    const sums = sumFills(market, mine);
    return { ...head, market, orders: mine.length, bought: sums.bought, spent: sums.spent, fees: sums.fees, averageCost: sums.averageCost };
  });
}
