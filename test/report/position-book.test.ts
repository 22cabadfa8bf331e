import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Decimal } from '../../src/domain/money.ts';
import { positions } from '../../src/report/cost-basis.ts';
import { PositionBook } from '../../src/report/position-book.ts';
import type { StoredOrder } from '../../src/store/journal.ts';
import { order } from '../store/helpers.ts';

const PRICES = new Map([
  ['BTC_USDT', new Decimal('65123.45')],
  ['ETH_USDT', new Decimal('3100.5')],
]);

/** A change the journal records: an order seen for the first time, or a later version of it (more filled, a fee in another asset, cancelled, a sell). */
const change = fc.record({
  id: fc.integer({ min: 0, max: 7 }),
  market: fc.constantFrom('BTC_USDT', 'ETH_USDT'),
  side: fc.constantFrom('buy', 'buy', 'buy', 'sell'),
  base: fc.integer({ min: 0, max: 10 ** 8 }),
  quote: fc.integer({ min: 0, max: 10 ** 10 }),
  fee: fc.integer({ min: 0, max: 10 ** 6 }),
  feeAsset: fc.constantFrom('BTC', 'USDT', 'ETH', 'WBT', null),
});

describe('the positions kept order by order', () => {
  it('are, after any sequence of orders recorded and changed, what summing every order as it is now gives', () => {
    fc.assert(
      fc.property(fc.array(change, { maxLength: 40 }), (changes) => {
        const book = new PositionBook();
        const now = new Map<string, StoredOrder>();
        changes.forEach((c, i) => {
          const orderId = String(c.id);
          // An order keeps its market; only what it filled and paid changes.
          const market = now.get(orderId)?.market ?? c.market;
          const next: StoredOrder = {
            ...order({ orderId, market, side: c.side as 'buy' | 'sell', filledBase: new Decimal(c.base).div(1e8), filledQuote: new Decimal(c.quote).div(1e4), fee: new Decimal(c.fee).div(1e8), feeAsset: c.feeAsset }),
            intentId: null,
            firstSeenAtMs: 0,
            updatedAtMs: i,
          };
          book.replace(now.get(orderId) ?? null, next);
          now.set(orderId, next);
        });
        expect(book.positions(PRICES)).toEqual(positions([...now.values()], PRICES));
        expect(book.positions(null)).toEqual(positions([...now.values()], null));
      }),
    );
  });
});
