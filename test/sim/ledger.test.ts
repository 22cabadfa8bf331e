import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Books, LEDGER_ACCOUNTS, type Posting } from '../../src/sim/ledger.ts';
import { ZERO } from '../../src/domain/money.ts';
import { d, text } from './helpers.ts';

describe('the books', () => {
  it('apply a group of postings all or nothing and refuse to go below zero', () => {
    const books = new Books();
    books.post(1, 'seed', [{ account: 'main', asset: 'USDT', delta: d('10'), reason: 'seed' }]);
    expect(() =>
      books.post(2, 'tx-1', [
        { account: 'spot', asset: 'USDT', delta: d('10.01'), reason: 'transfer' },
        { account: 'main', asset: 'USDT', delta: d('-10.01'), reason: 'transfer' },
      ]),
    ).toThrow(/main USDT would become -0.01/);
    expect(text(books.balance('main', 'USDT'))).toBe('10');
    expect(text(books.balance('spot', 'USDT'))).toBe('0');
    expect(books.entries()).toHaveLength(1);
  });

  it("hold of each asset the sum of its balances over every account, whatever postings applied or refused", () => {
    const posting = fc.record({
      account: fc.constantFrom(...LEDGER_ACCOUNTS),
      asset: fc.constantFrom('BTC', 'USDT'),
      delta: fc.integer({ min: -5000, max: 5000 }).map((units) => d(String(units)).div(1000)),
      reason: fc.constant('transfer' as const),
    });
    fc.assert(
      fc.property(fc.array(fc.array(posting, { minLength: 1, maxLength: 3 }), { maxLength: 40 }), (groups) => {
        const books = new Books({ entries: false });
        for (const group of groups) {
          try {
            books.post(1, 'ref', group as Posting[]);
          } catch {
            // A group that would go below zero is refused whole: the holdings must not move either.
          }
        }
        for (const asset of ['BTC', 'USDT']) {
          const sum = LEDGER_ACCOUNTS.reduce((total, account) => total.add(books.balance(account, asset)), ZERO);
          expect(text(books.holding(asset))).toBe(text(sum));
        }
      }),
    );
  });

  it('number entries from 1 and skip zero movements', () => {
    const books = new Books();
    books.post(5, 'seed', [
      { account: 'main', asset: 'BTC', delta: d('1'), reason: 'seed' },
      { account: 'main', asset: 'ETH', delta: d('0'), reason: 'seed' },
    ]);
    books.post(6, 'tx', [
      { account: 'main', asset: 'BTC', delta: d('-0.4'), reason: 'transfer' },
      { account: 'spot', asset: 'BTC', delta: d('0.4'), reason: 'transfer' },
    ]);
    expect(books.entries().map((e) => [e.seq, e.timeMs, e.account, text(e.delta), e.ref])).toEqual([
      [1, 5, 'main', '1', 'seed'],
      [2, 6, 'main', '-0.4', 'tx'],
      [3, 6, 'spot', '0.4', 'tx'],
    ]);
    expect(books.mismatches()).toEqual([]);
  });
});
