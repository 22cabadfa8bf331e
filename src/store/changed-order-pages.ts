import type { ChangedOrder, Journal } from './journal.ts';

/**
 * The orders changed from `fromMs`, a page of `pageSize` at a time (Journal.changedOrders), each
 * page asked for only when the one before has been used: a reader of half a million orders
 * holds one page, and can give the daemon's other work a turn between pages.
 */
export async function* changedOrderPages(journal: Pick<Journal, 'changedOrders'>, fromMs: number, pageSize: number): AsyncGenerator<readonly ChangedOrder[]> {
  let after: ChangedOrder | undefined;
  for (;;) {
    const page = await journal.changedOrders({ fromMs, limit: pageSize, ...(after === undefined ? {} : { after }) });
    yield page;
    if (page.length < pageSize) return;
    after = page[page.length - 1];
  }
}
