import type { Exchange } from '../exchange/port.ts';
import { FatalEngineError, classifyError, errorMessage } from './error-policy.ts';
import { recordOrder } from './order-log.ts';
import { type EngineDeps, accountPrefix, onIntentAccount } from './runtime.ts';

/**
 * Follows every order the journal holds as not terminal until it is: each poll stores the
 * exchange's view and logs a transition only when something changed (the journal decides, see
 * recordOrder). Market orders are usually terminal on the placing answer already; this covers
 * partial fills, stop orders (activation 0 → 1) and answers that arrived before the fill.
 */
export async function trackOpenOrders(deps: EngineDeps): Promise<number> {
  let changed = 0;
  for (const order of await deps.journal.openOrders()) {
    const intent = order.intentId === null ? null : await deps.journal.getIntent(order.intentId);
    // Asked of the account the order was sent on, as journalled with its intent.
    const own = onIntentAccount(deps, { account: intent?.account ?? null });
    if (own === null) {
      deps.logger.warn({ event: 'track-failed', orderId: order.orderId, account: intent?.account }, `order ${order.clientOrderId} was sent on account ${intent?.account ?? '?'}, which is not configured now; it is not followed until the account is back`);
      continue;
    }
    let now;
    try {
      now = await statusOf(own.exchange, order.market, order.orderId, order.clientOrderId);
    } catch (error) {
      if (classifyError(error) === 'fatal') throw new FatalEngineError(`${accountPrefix(own)}tracking order ${order.clientOrderId}: ${errorMessage(error)}`, error);
      deps.logger.warn({ event: 'track-failed', orderId: order.orderId, error: errorMessage(error) }, `could not read order ${order.clientOrderId}; will try again`);
      continue;
    }
    if (now === null) continue;
    if ((await recordOrder(deps, intent?.instance ?? '', now, order.intentId)) !== null) changed += 1;
  }
  return changed;
}

function statusOf(exchange: Exchange, market: string, orderId: string, clientOrderId: string) {
  return exchange.orderStatus({ market, orderId, clientOrderId });
}
