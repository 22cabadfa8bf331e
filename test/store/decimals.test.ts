import fc from 'fast-check';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Decimal, formatDecimal } from '../../src/domain/money.ts';
import { JOURNAL_KINDS, TempWorld, order } from './helpers.ts';

let world: TempWorld;
beforeEach(() => {
  world = new TempWorld();
});
afterEach(async () => {
  await world.cleanup();
});

/** Plain decimal text from 1e-50 to 1e50 with up to 50 significant digits. */
const positiveDecimalText = fc
  .tuple(fc.bigInt({ min: 1n, max: 10n ** 50n }), fc.integer({ min: 0, max: 50 }))
  .map(([digits, scale]) => {
    const text = digits.toString().padStart(scale + 1, '0');
    return scale === 0 ? text : `${text.slice(0, -scale)}.${text.slice(-scale)}`;
  })
  .map((text) => formatDecimal(new Decimal(text)));

describe.each(JOURNAL_KINDS)('decimal amounts (%s journal)', (kind) => {
  it('round-trip exactly through intents, orders, transitions, transfers and budgets, also after reopen', async () => {
    world.kind = kind;
    let journal = await world.openJournal();
    const written: { slotTimeMs: number; amount: string; fee: string }[] = [];
    await fc.assert(
      fc.asyncProperty(positiveDecimalText, positiveDecimalText, async (amount, fee) => {
        const slotTimeMs = written.length * 60_000;
        const id = `${written.length}`;
        await journal.claimSlot({
          instance: 'd',
          slotTimeMs,
          runId: null,
          intents: [
            { index: 0, intent: { kind: 'buy-stock-market', market: 'BTC_USDT', amount: new Decimal(amount) } },
            { index: 1, intent: { kind: 'transfer', ticker: 'USDT', amount: new Decimal(amount), from: 'main', to: 'spot' } },
          ],
        });
        const [, transferIntent] = await journal.listIntents({ instance: 'd', slotTimeMs });
        await journal.recordTransfer({ intentId: transferIntent?.intentId ?? '', ticker: 'USDT', amount: new Decimal(amount), from: 'main', to: 'spot', status: 'done' });
        await journal.recordOrderSnapshot(
          order({ orderId: id, amount: new Decimal(amount), filledBase: new Decimal(amount), filledQuote: new Decimal(fee), fee: new Decimal(fee), price: new Decimal(fee), status: 'FILLED' }),
        );
        await journal.reserveBudget({
          reservationId: id,
          instance: `budget-${id}`,
          asset: 'USDT',
          timeZone: 'UTC',
          atMs: slotTimeMs,
          amountQuote: new Decimal(amount),
          limits: {},
        });
        written.push({ slotTimeMs, amount, fee });
      }),
      { numRuns: 60 },
    );
    await journal.close();
    journal = await world.openJournal();
    for (const [i, { slotTimeMs, amount, fee }] of written.entries()) {
      const [buyIntent, transferIntent] = await journal.listIntents({ instance: 'd', slotTimeMs });
      expect(buyIntent?.intent.kind === 'buy-stock-market' && formatDecimal(buyIntent.intent.amount)).toBe(amount);
      expect(transferIntent?.intent.kind === 'transfer' && formatDecimal(transferIntent.intent.amount)).toBe(amount);
      const transfer = (await journal.recentJournal({ instance: 'd', slotTimeMs }))[1]?.transfer;
      expect(transfer && formatDecimal(transfer.amount)).toBe(amount);
      const stored = await journal.getOrder(`${i}`);
      expect(stored && [stored.amount, stored.filledBase, stored.filledQuote, stored.fee, stored.price].map((d) => (d === null ? null : formatDecimal(d)))).toEqual([
        amount,
        amount,
        fee,
        fee,
        fee,
      ]);
      const [transition] = await journal.orderTransitions(`${i}`);
      expect(transition && [formatDecimal(transition.filledBase), formatDecimal(transition.filledQuote), formatDecimal(transition.fee)]).toEqual([amount, fee, fee]);
      const spent = await journal.budgetSpent({ instance: `budget-${i}`, asset: 'USDT', timeZone: 'UTC' }, slotTimeMs);
      expect(formatDecimal(spent.month)).toBe(amount);
    }
  });
});

describe('decimal amounts in the SQLite file', () => {
  it('stores money as plain decimal TEXT that a shell can read, never REAL or exponent notation', async () => {
    const journal = await world.opened();
    await journal.recordOrderSnapshot(order({ fee: new Decimal('0.00000000000000000000000001'), filledQuote: new Decimal('123456789012345678901234567890.5') }));
    await journal.close();
    const raw = new DatabaseSync(world.path(), { readOnly: true });
    try {
      expect(raw.prepare('SELECT typeof(fee) AS t, fee, filled_quote FROM orders').get()).toEqual({
        t: 'text',
        fee: '0.00000000000000000000000001',
        filled_quote: '123456789012345678901234567890.5',
      });
    } finally {
      raw.close();
    }
  });

  it('keeps a float or exponent out of a money column even when written by hand', async () => {
    await (await world.opened()).close();
    const raw = new DatabaseSync(world.path());
    try {
      const insert = raw.prepare(
        `INSERT INTO budgets (instance, asset, period, period_start_ms, spent_quote, updated_at_ms) VALUES ('i', 'USDT', 'day', 0, ?, 0)`,
      );
      expect(() => insert.run('1e-7')).toThrow(/CHECK constraint failed/);
      expect(() => insert.run('')).toThrow(/CHECK constraint failed/);
      expect(() => insert.run('0.1')).not.toThrow();
    } finally {
      raw.close();
    }
  });
});
