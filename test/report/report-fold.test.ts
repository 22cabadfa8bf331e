import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Decimal } from '../../src/domain/money.ts';
import type { OrderStatus } from '../../src/domain/order.ts';
import { fillsCsv, positions } from '../../src/report/cost-basis.ts';
import { foldJournalOrders } from '../../src/report/report-fold.ts';
import type { ChangedOrder, ChangedOrdersQuery } from '../../src/store/journal.ts';
import { SqliteJournal } from '../../src/store/sqlite-journal.ts';
import { order } from '../store/helpers.ts';

const ALL = { csvRows: true, buys: true };
const everyOrder = (): boolean => true;

let clock: { nowMs: number };
let journal: SqliteJournal;
beforeEach(async () => {
  clock = { nowMs: 1_735_689_600_000 };
  journal = new SqliteJournal({ path: ':memory:', clock: () => clock.nowMs });
  await journal.open();
});
afterEach(async () => {
  await journal.close();
});

/** Order `id` of instance dca-btc (its buy's slot claimed the first time), recorded at a status with `filled` BTC at 65,000 and a 0.1 % fee. */
async function record(id: number, status: OrderStatus, filled: string, fee?: string): Promise<void> {
  clock.nowMs += 1_000;
  const slotTimeMs = 1_735_689_600_000 + id * 60_000;
  if ((await journal.getSlot({ instance: 'dca-btc', slotTimeMs })) === null) {
    await journal.claimSlot({ instance: 'dca-btc', slotTimeMs, runId: null, intents: [{ index: 0, intent: { kind: 'buy-stock-market', market: 'BTC_USDT', amount: new Decimal('0.001') } }] });
  }
  const intentId = (await journal.listIntents({ instance: 'dca-btc', slotTimeMs }))[0]?.intentId ?? null;
  const base = new Decimal(filled);
  await journal.recordOrderSnapshot(
    order({ orderId: String(1_000 + id), clientOrderId: `c${id}`, status, createdAtSec: slotTimeMs / 1000, left: new Decimal('0.001').sub(base), filledBase: base, filledQuote: base.mul(65_000), fee: new Decimal(fee ?? base.mul(65).toString()), feeAsset: 'USDT' }),
    { intentId },
  );
}

/** The journal, with `between` run after each page it answers (a daemon writing while the report reads). */
function readWhileWritten(between: (pagesRead: number) => Promise<void>): { changedOrders(query: ChangedOrdersQuery): Promise<ChangedOrder[]> } {
  let pages = 0;
  return {
    async changedOrders(query) {
      const page = await journal.changedOrders(query);
      pages += 1;
      await between(pages);
      return page;
    },
  };
}

describe("stacker report's fold of a journal's orders", () => {
  it('sums what summing every order at once sums: positions, filled buys per instance, the CSV, the buys to draw', async () => {
    for (let id = 0; id < 7; id += 1) await record(id, 'FILLED', `0.00${id + 1}`);
    await record(7, 'CANCELED', '0');
    const fold = await foldJournalOrders(journal, ALL, everyOrder, 3);
    const all = await journal.listOrders({ limit: -1 });
    expect(fold.positions(null)).toEqual(positions(all, null));
    expect(fold.positionsByAccount(() => null)).toEqual([{ account: 'default', markets: positions(all, null) }]);
    expect(fold.instances()).toEqual([{ instance: 'dca-btc', account: 'default', orders: 7 }]);
    expect(fold.csv()).toBe(fillsCsv(all));
    expect(fold.buys().map((o) => o.orderId).sort()).toEqual(['1000', '1001', '1002', '1003', '1004', '1005', '1006']);
    expect(fold.accounts()).toEqual(['default']);
  });

  it('counts an order once when it fills further while the report reads (read partly filled, then again filled)', async () => {
    for (let id = 0; id < 4; id += 1) await record(id, 'FILLED', '0.001');
    await record(4, 'PARTIAL_FILLED', '0.0004');
    // After the first page the buy in flight fills: it moves to the end of the read, and comes again.
    const store = readWhileWritten(async (pages) => {
      if (pages === 1) await record(4, 'FILLED', '0.001');
    });
    const fold = await foldJournalOrders(store, ALL, everyOrder, 5);
    const [btc] = fold.positions(null);
    expect(btc?.orders).toBe(5);
    expect(btc?.baseBought).toBe('0.005');
    expect(fold.instances()).toEqual([{ instance: 'dca-btc', account: 'default', orders: 5 }]);
    expect(fold.csv().trim().split('\n')).toHaveLength(1 + 5);
    expect(fold.buys()).toHaveLength(5);
  });

  it('keeps no CSV rows and no buys unless asked: the sums alone', async () => {
    for (let id = 0; id < 3; id += 1) await record(id, 'FILLED', '0.001');
    const fold = await foldJournalOrders(journal, { csvRows: false, buys: false }, everyOrder, 2);
    expect(fold.positions(null)[0]?.orders).toBe(3);
    expect(fold.buys()).toEqual([]);
    expect(fold.csv()).toBe('time,market,side,base,quote,price,fee,fee_asset,order_id,client_order_id\n');
  });
});
