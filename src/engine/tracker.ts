import type { Exchange } from '../exchange/port.ts';
import { FatalEngineError, classifyError, errorMessage } from './error-policy.ts';
import { recordOrder } from './order-log.ts';
import { type EngineDeps, accountPrefix, onIntentAccount } from './runtime.ts';
import type { FollowedOrder, StuckOrders } from './stuck-orders.ts';

/**
 * Follows every order the journal holds as not terminal until it is: each poll stores the
 * exchange's view and logs a transition only when something changed (the journal decides, see
 * recordOrder). Market orders are usually terminal on the placing answer already; this covers
 * partial fills, stop orders (activation 0 → 1) and answers that arrived before the fill. How
 * each read went is handed to `stuck`, which tells the operator of an order open far too long.
 */
export async function trackOpenOrders(deps: EngineDeps, stuck?: StuckOrders): Promise<number> {
  let changed = 0;
  const followed: FollowedOrder[] = [];
  for (const order of await deps.journal.openOrders()) {
    const intent = order.intentId === null ? null : await deps.journal.getIntent(order.intentId);
    const seen = { order, instance: intent?.instance ?? null, sentAtMs: intent?.sentAtMs ?? null };
    // Asked of the account the order was sent on, as journalled with its intent.
    const own = onIntentAccount(deps, { account: intent?.account ?? null });
    if (own === null) {
      deps.logger.warn({ event: 'track-failed', orderId: order.orderId, account: intent?.account }, `order ${order.clientOrderId} was sent on account ${intent?.account ?? '?'}, which is not configured now; it is not followed until the account is back`);
      followed.push({ ...seen, read: { kind: 'no-account', account: intent?.account ?? '?' } });
      continue;
    }
    let now;
    try {
      now = await statusOf(own.exchange, order.market, order.orderId, order.clientOrderId);
    } catch (error) {
      if (classifyError(error) === 'fatal') throw new FatalEngineError(`${accountPrefix(own)}tracking order ${order.clientOrderId}: ${errorMessage(error)}`, error);
      deps.logger.warn({ event: 'track-failed', orderId: order.orderId, error: errorMessage(error) }, `could not read order ${order.clientOrderId}; will try again`);
      followed.push({ ...seen, read: { kind: 'failed', error: errorMessage(error) } });
      continue;
    }
    if (now === null) {
      followed.push({ ...seen, read: { kind: 'not-found' } });
      continue;
    }
    if ((await recordOrder(deps, intent?.instance ?? '', now, order.intentId)) !== null) changed += 1;
    followed.push({ ...seen, read: { kind: 'read', order: now } });
  }
  stuck?.passed(followed);
  return changed;
}

function statusOf(exchange: Exchange, market: string, orderId: string, clientOrderId: string) {
  return exchange.orderStatus({ market, orderId, clientOrderId });
}
