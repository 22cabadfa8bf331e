import { describe, expect, it } from 'vitest';
import { Decimal } from '../../src/domain/money.ts';
import { summariseDay } from '../../src/report/day-summary.ts';
import { SqliteJournal } from '../../src/store/sqlite-journal.ts';
import { order } from '../store/helpers.ts';

describe("a day's summary of an instance that buys every few seconds", () => {
  it('counts every order of the day, not the newest 2000', async () => {
    const journal = new SqliteJournal({ path: ':memory:' });
    await journal.open();
    try {
      const dayMs = Date.UTC(2026, 0, 1);
      const orders = 2_500;
      for (let i = 0; i < orders; i += 1) {
        const slotTimeMs = dayMs + i * 30_000;
        await journal.claimSlot({ instance: 'fast', slotTimeMs, runId: null, intents: [{ index: 0, intent: { kind: 'buy-stock-market', market: 'BTC_USDT', amount: new Decimal('0.0001') } }] });
        const [intent] = await journal.listIntents({ instance: 'fast', slotTimeMs });
        const filled = { status: 'FILLED' as const, left: new Decimal(0), filledBase: new Decimal('0.0001'), filledQuote: new Decimal('10'), createdAtSec: slotTimeMs / 1000 };
        await journal.recordOrderSnapshot(order({ orderId: String(1_000_000 + i), ...filled }), { intentId: intent?.intentId ?? '' });
      }
      const [day] = await summariseDay(journal, [{ instance: 'fast', budgetAsset: 'USDT' }], { fromMs: dayMs, toMs: dayMs + 86_400_000 }, async () => null);
      expect(day).toMatchObject({ instance: 'fast', orders });
      expect(day?.spent.toFixed()).toBe('25000');
    } finally {
      await journal.close();
    }
  });
});
