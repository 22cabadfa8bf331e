import { describe, expect, it } from 'vitest';
import { demoSim, d, rejectionOf, text } from './helpers.ts';

describe('stock market buys', () => {
  it('buys an exact base quantity, charges the taker fee in quote, and moves balances exactly', () => {
    const sim = demoSim();
    const order = sim.buyStockMarket({ market: 'BTC_USDT', baseAmount: d('0.001'), clientOrderId: 'slot-1' });
    expect(order).toMatchObject({ market: 'BTC_USDT', side: 'buy', type: 'stock market', status: 'FILLED', clientOrderId: 'slot-1', stp: 'no', feeAsset: 'USDT', price: null });
    // 0.001 × 65000 = 65; fee 0.1 % = 0.065.
    expect([text(order.filledBase), text(order.filledQuote), text(order.fee), text(order.left)]).toEqual(['0.001', '65', '0.065', '0']);
    expect(text(sim.tradeBalance('USDT').available)).toBe('934.935');
    expect(text(sim.tradeBalance('BTC').available)).toBe('0.001');
    expect(text(sim.mainBalance('USDT'))).toBe('10000');
    const deals = sim.orderDeals(order.orderId);
    expect(deals.map((x) => [text(x.price), text(x.baseAmount), text(x.quoteAmount), text(x.fee), x.role])).toEqual([['65000', '0.001', '65', '0.065', 'taker']]);
    expect(sim.orderHistory({ market: 'BTC_USDT' }).map((o) => o.orderId)).toEqual([order.orderId]);
    expect(sim.activeOrders()).toEqual([]);
  });

  it('posts the buy and the fee to the ledger under the order id', () => {
    const sim = demoSim();
    const order = sim.buyStockMarket({ market: 'ETH_USDT', baseAmount: d('0.0123') });
    const lines = sim.ledger().filter((e) => e.ref === order.orderId).map((e) => [e.account, e.asset, text(e.delta), e.reason]);
    // 0.0123 × 3150.42 = 38.750166; fee 0.038750166 rounded up to 8 decimals = 0.03875017.
    expect(lines).toEqual([
      ['spot', 'USDT', '-38.750166', 'buy'],
      ['spot', 'ETH', '0.0123', 'buy'],
      ['spot', 'USDT', '-0.03875017', 'fee'],
    ]);
    expect(text(sim.tradeBalance('USDT').available)).toBe('961.21108383');
  });

  it('refuses an amount with more decimals than the market allows (code 32)', () => {
    const r = rejectionOf(() => demoSim().buyStockMarket({ market: 'BTC_USDT', baseAmount: d('0.0000101') }));
    expect([r.kind, r.exchangeCode, r.field, r.message]).toEqual(['validation', 32, 'amount', 'Min amount step = 0.000001']);
  });

  it('refuses an amount below the min amount (code 32)', () => {
    const r = rejectionOf(() => demoSim().buyStockMarket({ market: 'ETH_USDT', baseAmount: d('0.0009') }));
    expect([r.exchangeCode, r.field, r.message]).toEqual([32, 'amount', 'Given amount is less than min amount 0.001']);
  });

  it('refuses a total below the min total (code 30, field total)', () => {
    // 0.00007 × 65000 = 4.55 < 5.
    const r = rejectionOf(() => demoSim().buyStockMarket({ market: 'BTC_USDT', baseAmount: d('0.00007') }));
    expect([r.exchangeCode, r.field, r.message]).toEqual([30, 'total', 'Total (amount * price) is less than 5']);
  });

  it('refuses a total above the max total, and has none where max total is 0', () => {
    // 400 × 3150.42 = 1260168 > 1000000.
    const r = rejectionOf(() => demoSim().buyStockMarket({ market: 'ETH_USDT', baseAmount: d('400') }));
    expect([r.exchangeCode, r.field, r.message]).toEqual([30, 'total', 'Total (amount * price) is greater than 1000000']);
    // BTC_USDT has no max total: a huge order fails on balance, not on total.
    const big = rejectionOf(() => demoSim().buyStockMarket({ market: 'BTC_USDT', baseAmount: d('1000') }));
    expect([big.kind, big.exchangeCode, big.field, big.message]).toEqual(['business', 10, 'amount', 'Not enough balance.']);
  });

  it('refuses when total + fee exceed the spot balance, to the last fee unit', () => {
    const sim = demoSim();
    // 0.0153 × 65000 = 994.5, fee 0.9945: 995.4945 fits in 1000.
    expect(sim.buyStockMarket({ market: 'BTC_USDT', baseAmount: d('0.0153') }).status).toBe('FILLED');
    expect(text(sim.tradeBalance('USDT').available)).toBe('4.5055');
    const r = rejectionOf(() => sim.buyStockMarket({ market: 'ETH_USDT', baseAmount: d('0.0015') }));
    // 0.0015 × 3150.42 = 4.72563 < 5: the min total is checked before the balance.
    expect(r.field).toBe('total');
    const sim2 = demoSim();
    sim2.transfer({ ticker: 'USDT', amount: d('1000'), from: 'spot', to: 'main' });
    sim2.transfer({ ticker: 'USDT', amount: d('65.065'), from: 'main', to: 'spot' });
    expect(sim2.buyStockMarket({ market: 'BTC_USDT', baseAmount: d('0.001') }).status).toBe('FILLED');
    sim2.transfer({ ticker: 'USDT', amount: d('65.06499999'), from: 'main', to: 'spot' });
    expect(rejectionOf(() => sim2.buyStockMarket({ market: 'BTC_USDT', baseAmount: d('0.001') })).message).toBe('Not enough balance.');
  });

  it('refuses an unknown market (code 31) and a zero amount (code 32)', () => {
    const sim = demoSim();
    expect(rejectionOf(() => sim.buyStockMarket({ market: 'DOGE_USDT', baseAmount: d('1') })).exchangeCode).toBe(31);
    expect(rejectionOf(() => sim.buyStockMarket({ market: 'BTC_USDT', baseAmount: d('0') })).message).toBe('Amount should be greater than 0.');
  });

  it('checks the clientOrderId charset and length (code 36) and keeps the stp mode', () => {
    const sim = demoSim();
    for (const bad of ['has space', 'slash/no', 'ü', 'x'.repeat(65)]) {
      const r = rejectionOf(() => sim.buyStockMarket({ market: 'BTC_USDT', baseAmount: d('0.001'), clientOrderId: bad }));
      expect([r.exchangeCode, r.field]).toEqual([36, 'clientOrderId']);
    }
    const ok = sim.buyStockMarket({ market: 'BTC_USDT', baseAmount: d('0.001'), clientOrderId: `A-z_0.9${'x'.repeat(57)}`, stp: 'cn' });
    expect(ok.clientOrderId).toHaveLength(64);
    expect(ok.stp).toBe('cn');
  });
});

describe('market buys (quote amount)', () => {
  it('spends up to the quote amount, leaves the dust as left, and charges the fee on top', () => {
    const sim = demoSim();
    const order = sim.buyMarket({ market: 'ETH_USDT', quoteAmount: d('100') });
    // 100 / 3150.42 → 0.0317 ETH = 99.868314 USDT; fee 0.09986832; left 0.131686.
    expect(order.type).toBe('market');
    expect([text(order.amount), text(order.filledBase), text(order.filledQuote), text(order.fee), text(order.left)]).toEqual([
      '100',
      '0.0317',
      '99.868314',
      '0.09986832',
      '0.131686',
    ]);
    expect(text(sim.tradeBalance('USDT').available)).toBe('900.03181768');
    expect(text(sim.tradeBalance('ETH').available)).toBe('0.0317');
  });

  it('refuses amounts below the min total, above the max total, or finer than the price precision', () => {
    const sim = demoSim();
    expect(rejectionOf(() => sim.buyMarket({ market: 'ETH_USDT', quoteAmount: d('4.99') })).message).toBe('Total amount should be no less than 5 + trade fee');
    expect(rejectionOf(() => sim.buyMarket({ market: 'ETH_USDT', quoteAmount: d('1000000.01') })).message).toBe('Total amount should be no greater than 1000000');
    expect(rejectionOf(() => sim.buyMarket({ market: 'BTC_USDT', quoteAmount: d('10.001') })).message).toBe('Min total step = = 0.01');
    expect(rejectionOf(() => sim.buyMarket({ market: 'BTC_USDT', quoteAmount: d('1000') })).message).toBe('Not enough balance.');
  });
});

describe('taker band', () => {
  it('fills up to the band and ends CANCELED_TAKER_BAND with the rest left', () => {
    const sim = demoSim({ fills: { bookStepPct: '0.1', bookLevelBase: '0.01', takerBandPct: '0.15' } });
    sim.transfer({ ticker: 'USDT', amount: d('2000'), from: 'main', to: 'spot' });
    const order = sim.buyStockMarket({ market: 'BTC_USDT', baseAmount: d('0.025') });
    // 0.01 @ 65000 + 0.01 @ 65065 = 1300.65; 65130 is past 65097.5. Fee 1.30065.
    expect(order.status).toBe('CANCELED_TAKER_BAND');
    expect([text(order.filledBase), text(order.filledQuote), text(order.fee), text(order.left)]).toEqual(['0.02', '1300.65', '1.30065', '0.005']);
    expect(sim.orderDeals(order.orderId)).toHaveLength(2);
    expect(text(sim.tradeBalance('USDT').available)).toBe('1698.04935');
    expect(sim.ledgerMismatches()).toEqual([]);
    expect(sim.verifyLedger()).toBe(true);
  });
});

describe('an account that keeps only part of its past (a backtest over years)', () => {
  it('keeps the newest finished orders readable and forgets older ones, ids still increasing', () => {
    const sim = demoSim({ history: { finishedOrders: 3, ledgerEntries: false } });
    const placed = Array.from({ length: 10 }, (_, i) => sim.buyStockMarket({ market: 'BTC_USDT', baseAmount: d('0.0001'), clientOrderId: `slot-${i}` }));
    const history = sim.orderHistory({ market: 'BTC_USDT' }).map((o) => o.orderId);
    // Forgetting happens in batches: at least the newest 3, never more than twice that.
    expect(history.length).toBeGreaterThanOrEqual(3);
    expect(history.length).toBeLessThan(6);
    expect(history.slice(0, 3)).toEqual(placed.slice(-3).map((o) => o.orderId).reverse());
    expect(sim.orderDeals(placed[9]?.orderId ?? '')).toHaveLength(1);
    expect(sim.orderDeals(placed[0]?.orderId ?? '')).toEqual([]);
    expect(new Set(placed.map((o) => o.orderId)).size).toBe(10);
    // Balances are exact without the postings that explain them.
    expect(text(sim.tradeBalance('BTC').available)).toBe('0.001');
    expect(sim.ledger()).toEqual([]);
    expect(sim.ledgerMismatches()).toEqual([]);
  });
});
