import { describe, expect, it } from 'vitest';
import { StatusBuilder, type StatusSources } from '../../src/daemon/status.ts';
import { Decimal } from '../../src/domain/money.ts';
import { SqliteJournal } from '../../src/store/sqlite-journal.ts';
import { order } from '../store/helpers.ts';

/**
 * The status document reads the journal's orders whole once, then only what changed: what it
 * shows must still be every order as it stands, new fills and late-stamped writes included.
 */
describe("the status document's positions", () => {
  it('follow every order recorded or updated since the last read, without reading them all again', async () => {
    let nowMs = 1_000;
    const journal = new SqliteJournal({ path: ':memory:', clock: () => nowMs });
    await journal.open();
    const reads: number[] = [];
    const watched = Object.assign(Object.create(journal) as SqliteJournal, {
      changedOrders: (query: Parameters<SqliteJournal['changedOrders']>[0]) => {
        reads.push(query.fromMs);
        return journal.changedOrders(query);
      },
      listOrders: () => {
        throw new Error('the document reads orders by change only');
      },
    });
    const sources: StatusSources = {
      mode: 'live',
      version: 'test',
      startedAtMs: 0,
      instances: [],
      journal: watched,
      exchange: { prices: async () => new Map([['BTC_USDT', new Decimal('70000')]]) },
      engine: () => null,
      controls: { killSwitch: { active: () => null }, killSwitchSinceMs: null, accountKillSwitchSinceMs: () => null } as never,
      configuredKillSwitch: () => null,
      controlsEnabled: false,
      health: () => ({ problems: [], stopping: false }),
      nowMs: () => nowMs,
    };
    const filled = (orderId: string, base: string, quote: string) => order({ orderId, clientOrderId: `c${orderId}`, status: 'FILLED', left: new Decimal(0), filledBase: new Decimal(base), filledQuote: new Decimal(quote) });
    try {
      const status = new StatusBuilder(sources);
      await journal.recordOrderSnapshot(order({ orderId: '1', clientOrderId: 'c1' }));
      expect((await status.document()).markets).toEqual([]);
      nowMs = 2_000;
      await journal.recordOrderSnapshot(filled('1', '0.001', '65'));
      expect((await status.document()).markets).toMatchObject([{ market: 'BTC_USDT', orders: 1, baseBought: '0.001', quoteSpent: '65' }]);
      nowMs = 3_000;
      await journal.recordOrderSnapshot(filled('2', '0.002', '130'));
      // A write stamped before the newest change seen (committed late): still within the margin.
      nowMs = 2_500;
      await journal.recordOrderSnapshot(filled('3', '0.001', '66'));
      expect((await status.document()).markets).toMatchObject([{ market: 'BTC_USDT', orders: 3, baseBought: '0.004', quoteSpent: '261' }]);
      // The whole journal was read once; every later read asked for what changed since the newest change seen, less a minute.
      expect(reads).toEqual([0, 1_000 - 60_000, 2_000 - 60_000]);
    } finally {
      await journal.close();
    }
  });
});
