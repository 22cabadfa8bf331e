import type { Journal } from '../store/journal.ts';
import { settledSince } from './slot-shortfall.ts';

/**
 * Failed slots newer than the latest done one that a start looks at for one found done since: a
 * long outage may have failed hundreds, and the newest are the ones that could move the gauge.
 */
const FAILED_SLOTS_LOOKED_AT = 20;

/**
 * The scheduled time of an instance's latest slot that counts as successful, as the
 * last-successful-slot gauge counts one: it ended done, or it failed on a lost answer whose
 * orders were found since. null when the journal holds none.
 */
export async function lastSuccessfulSlotMs(journal: Pick<Journal, 'listSlots' | 'listIntents'>, instance: string): Promise<number | null> {
  const [done] = await journal.listSlots({ instance, status: 'done', limit: 1 });
  const failed = await journal.listSlots({ instance, status: 'failed', limit: FAILED_SLOTS_LOOKED_AT, ...(done === undefined ? {} : { sinceMs: done.slotTimeMs + 1 }) });
  for (const slot of failed) {
    if ((await settledSince(journal, instance, slot.slotTimeMs)) === 'done') return slot.slotTimeMs;
  }
  return done?.slotTimeMs ?? null;
}

/**
 * Orders a start reads for an instance's latest: the journal lists them by when it first saw
 * each, and one found in the exchange's history later may have been placed before the one ahead of it.
 */
const ORDERS_LOOKED_AT = 10;

/** When the exchange accepted the latest order of an instance that the journal holds (its time at the exchange); null for none. */
export async function lastOrderMs(journal: Pick<Journal, 'listOrders'>, instance: string): Promise<number | null> {
  const orders = await journal.listOrders({ instance, limit: ORDERS_LOOKED_AT });
  return orders.length === 0 ? null : Math.max(...orders.map((order) => order.createdAtSec * 1000));
}
