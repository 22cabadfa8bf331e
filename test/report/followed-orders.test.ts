import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Decimal } from '../../src/domain/money.ts';
import { isTerminalStatus } from '../../src/domain/order.ts';
import { positions } from '../../src/report/cost-basis.ts';
import { CHANGE_MARGIN_MS, FollowedOrders } from '../../src/report/followed-orders.ts';
import { SqliteJournal } from '../../src/store/sqlite-journal.ts';
import { order } from '../store/helpers.ts';

const INSTANCES = ['dca-btc', 'dca-eth', null] as const;
const STAGES = [
  { status: 'NEW', filled: '0' },
  { status: 'PARTIAL_FILLED', filled: '0.0002' },
  { status: 'FILLED', filled: '0.0005' },
] as const;

/** A journal on a file of its own in memory, with a clock the test moves. */
async function journalAt(clock: { nowMs: number }): Promise<SqliteJournal> {
  const journal = new SqliteJournal({ path: ':memory:', clock: () => clock.nowMs });
  await journal.open();
  return journal;
}

/** Record order `id` at `stage`, first claiming a slot of `instance` whose buy it is (null: an order with no intent). */
async function record(journal: SqliteJournal, id: number, stage: number, instance: string | null, intents: Map<number, string | null>): Promise<void> {
  if (!intents.has(id)) {
    let intentId: string | null = null;
    if (instance !== null) {
      const slotTimeMs = 1_735_689_600_000 + id * 60_000;
      await journal.claimSlot({ instance, slotTimeMs, runId: null, intents: [{ index: 0, intent: { kind: 'buy-stock-market', market: 'BTC_USDT', amount: new Decimal('0.0005') } }] });
      intentId = (await journal.listIntents({ instance, slotTimeMs }))[0]?.intentId ?? null;
    }
    intents.set(id, intentId);
  }
  const { status, filled } = STAGES[stage] as (typeof STAGES)[number];
  const base = new Decimal(filled);
  await journal.recordOrderSnapshot(
    order({ orderId: String(1_000 + id), clientOrderId: `c${id}`, status, left: new Decimal('0.0005').sub(base), filledBase: base, filledQuote: base.mul(65_000), fee: base.mul(65), feeAsset: 'USDT' }),
    { intentId: intents.get(id) ?? null },
  );
}

/** Run `use` on a journal holding `count` filled buys of dca-btc, one every `spacingMs`, with the clock after the last; closed after. */
async function withFilledBuys(count: number, spacingMs: number, use: (journal: SqliteJournal, nowMs: number) => Promise<void>): Promise<void> {
  const clock = { nowMs: 1_735_689_600_000 };
  const journal = await journalAt(clock);
  try {
    const intents = new Map<number, string | null>();
    for (let id = 0; id < count; id += 1) {
      clock.nowMs += spacingMs;
      await record(journal, id, 2, 'dca-btc', intents);
    }
    await use(journal, clock.nowMs);
  } finally {
    await journal.close();
  }
}

describe('the orders a status page follows', () => {
  it('are, after any history of orders recorded and filled and any page size, every order as it stands: the same positions and each instance’s newest orders as reading them all', async () => {
    const step = fc.record({
      id: fc.integer({ min: 0, max: 11 }),
      stage: fc.integer({ min: 0, max: 2 }),
      instance: fc.constantFrom(...INSTANCES),
      // The clock set back too (an NTP step): orders stamped before the newest seen.
      advanceMs: fc.constantFrom(0, 1, 30_000, CHANGE_MARGIN_MS + 1, 3_600_000, -30_000, -3_600_000),
      read: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 30 }), fc.integer({ min: 1, max: 4 }), async (steps, pageSize) => {
        const clock = { nowMs: 1_735_689_600_000 };
        // Time that passed: a step back of the clock passes none.
        let passedMs = 0;
        const journal = await journalAt(clock);
        const followed = new FollowedOrders(journal, { pageSize, recentPerInstance: 3, monotonicMs: () => passedMs });
        const stages = new Map<number, number>();
        const intents = new Map<number, string | null>();
        const followedIsTheJournal = async (): Promise<void> => {
          await followed.catchUp(clock.nowMs);
          const all = await journal.listOrders({ limit: -1 });
          expect(followed.book.positions(null)).toEqual(positions(all, null));
          for (const instance of INSTANCES) {
            if (instance !== null) expect(followed.recentOf(instance)).toEqual(await journal.listOrders({ instance, limit: 3 }));
          }
          // Kept: what can still change, or be read again within the margin (of the clock, when it is behind the newest stamp).
          const horizon = Math.min(Math.max(...all.map((o) => o.updatedAtMs)), clock.nowMs) - CHANGE_MARGIN_MS;
          expect(followed.kept).toBeLessThanOrEqual(all.filter((o) => !isTerminalStatus(o.status) || o.updatedAtMs >= horizon).length);
        };
        try {
          for (const s of steps) {
            clock.nowMs += s.advanceMs;
            passedMs += Math.max(0, s.advanceMs);
            // Fills never shrink and a terminal order never changes: a step back is no change.
            const stage = Math.max(stages.get(s.id) ?? 0, s.stage);
            if ((stages.get(s.id) ?? -1) < 2) {
              await record(journal, s.id, stage, s.instance, intents);
              stages.set(s.id, stage);
            }
            if (s.read) await followedIsTheJournal();
          }
          await followedIsTheJournal();
        } finally {
          await journal.close();
        }
      }),
      { numRuns: 60 },
    );
  });

  it('forget each filled order once counted: a journal of many orders costs the memory of the last minute’s', async () => {
    await withFilledBuys(50, 60_000, async (journal, nowMs) => {
      const followed = new FollowedOrders(journal, { pageSize: 7, recentPerInstance: 5 });
      await followed.catchUp(nowMs);
      expect(followed.book.positions(null)).toMatchObject([{ orders: 50, baseBought: '0.025' }]);
      // The newest two: stamped within a minute of the newest change.
      expect(followed.kept).toBe(2);
    });
  });

  it('read a large journal in pages, with the daemon’s other work run between them', async () => {
    await withFilledBuys(5, 0, async (journal, nowMs) => {
      const events: string[] = [];
      const followed = new FollowedOrders(journal, { pageSize: 2, recentPerInstance: 5 });
      setImmediate(() => events.push('a slot fires'));
      await followed.catchUp(nowMs);
      events.push('orders read');
      expect(events).toEqual(['a slot fires', 'orders read']);
      expect(followed.book.positions(null)).toMatchObject([{ orders: 5 }]);
    });
  });

  it('share one read of the journal between pages that ask while it runs: an order dropped by one read is never counted again by another', async () => {
    await withFilledBuys(6, 3_600_000, async (journal, nowMs) => {
      let calls = 0;
      const counted = Object.assign(Object.create(journal) as SqliteJournal, {
        changedOrders: (query: Parameters<SqliteJournal['changedOrders']>[0]) => {
          calls += 1;
          return journal.changedOrders(query);
        },
    });
    const followed = new FollowedOrders(counted, { pageSize: 1, recentPerInstance: 5 });
    const first = followed.catchUp(nowMs);
    await new Promise((resolve) => setImmediate(resolve));
    await Promise.all([first, followed.catchUp(nowMs), followed.catchUp(nowMs)]);
    // Six pages of one order and the empty one that ends the read.
    expect(calls).toBe(7);
    await followed.catchUp(nowMs);
    expect(followed.book.positions(null)).toMatchObject([{ orders: 6, baseBought: '0.003' }]);
    });
  });

  it('still count the orders stamped after the clock was set back, before the newest change seen, read now or hours later', async () => {
    for (const readWhileBehind of [true, false]) {
      const clock = { nowMs: 1_735_689_600_000 + 2 * 3_600_000 };
      let passedMs = 0;
      const pass = (ms: number): void => {
        clock.nowMs += ms;
        passedMs += ms;
      };
      const intents = new Map<number, string | null>();
      const journal = await journalAt(clock);
      try {
        // Two hours ahead: two buys stamped then, read by the page.
        await record(journal, 0, 2, 'dca-btc', intents);
        pass(60_000);
        await record(journal, 1, 2, 'dca-btc', intents);
        const followed = new FollowedOrders(journal, { pageSize: 2, recentPerInstance: 5, monotonicMs: () => passedMs });
        await followed.catchUp(clock.nowMs);
        // NTP sets the clock right: the next buys are stamped two hours before those.
        clock.nowMs -= 2 * 3_600_000;
        await record(journal, 2, 2, 'dca-btc', intents);
        if (readWhileBehind) await followed.catchUp(clock.nowMs);
        pass(5 * 60_000);
        await record(journal, 3, 0, 'dca-btc', intents);
        if (readWhileBehind) await followed.catchUp(clock.nowMs);
        // Hours later (the page closed meanwhile): the clock is past the stamps of before.
        pass(3 * 3_600_000);
        await record(journal, 3, 2, 'dca-btc', intents);
        await followed.catchUp(clock.nowMs);
        expect(followed.book.positions(null)).toEqual(positions(await journal.listOrders({ limit: -1 }), null));
        expect(followed.book.positions(null)).toMatchObject([{ orders: 4, baseBought: '0.002' }]);
        expect(followed.recentOf('dca-btc')).toEqual(await journal.listOrders({ instance: 'dca-btc', limit: 5 }));
      } finally {
        await journal.close();
      }
    }
  });
});
