import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';
import { Harness, PATHS, manualClock } from './helpers.ts';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

const validation = (code: number, errors: Record<string, string[]>) => ({ code, message: 'Validation failed', errors });
const buy = (params: Record<string, unknown>) => ({ market: 'BTC_USDT', side: 'buy', ...params });

describe('stock market orders', () => {
  it('answers 200 with the order record: filled, fee in quote, stp in short form', async () => {
    const clock = manualClock(1_760_000_000_250);
    const h = (harness = await Harness.start({ clock }));
    const reply = await h.post(PATHS.stockMarket, buy({ amount: '0.001', clientOrderId: 'dca-2025-01', stp: 'cancel_new' }));
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual({
      orderId: expect.any(Number),
      clientOrderId: 'dca-2025-01',
      market: 'BTC_USDT',
      side: 'buy',
      type: 'stock market',
      timestamp: 1_760_000_000.25,
      dealMoney: '65',
      dealStock: '0.001',
      amount: '0.001',
      left: '0',
      dealFee: '0.065',
      feeAsset: 'USDT',
      price: '0',
      postOnly: false,
      ioc: false,
      status: 'FILLED',
      stp: 'cn',
      rpi: false,
    });
    expect((await h.post(PATHS.tradeBalance)).json).toEqual({ BTC: { available: '0.001', freeze: '0' }, USDT: { available: '934.935', freeze: '0' } });
  });

  it('accepts every stp value in short and long form and answers the short form', async () => {
    const h = (harness = await Harness.start());
    const expected: Record<string, string> = { no: 'no', cb: 'cb', cn: 'cn', co: 'co', cancel_both: 'cb', cancel_new: 'cn', cancel_old: 'co' };
    for (const [sent, answered] of Object.entries(expected)) {
      const reply = await h.post(PATHS.stockMarket, buy({ amount: '0.0001', stp: sent }));
      expect([sent, (reply.json as { stp: string }).stp]).toEqual([sent, answered]);
    }
    const bad = await h.post(PATHS.stockMarket, buy({ amount: '0.0001', stp: 'cancel_everything' }));
    expect(bad.status).toBe(422);
    expect(bad.json).toMatchObject({ code: 30, errors: { stp: [expect.any(String)] } });
  });

  it('refuses a clientOrderId outside letters, digits, dash, dot, underscore or longer than 64 with 422 code 36', async () => {
    const h = (harness = await Harness.start());
    for (const id of ['with space', 'semi;colon', 'émoji', 'x'.repeat(65)]) {
      const reply = await h.post(PATHS.stockMarket, buy({ amount: '0.001', clientOrderId: id }));
      expect([reply.status, reply.json]).toEqual([
        422,
        validation(36, { clientOrderId: ['ClientOrderId field should contain only latin letters, numbers and dashes.'] }),
      ]);
    }
    const notText = await h.post(PATHS.stockMarket, buy({ amount: '0.001', clientOrderId: 12 }));
    expect(notText.json).toEqual(validation(36, { clientOrderId: ['ClientOrderId field should be a string.'] }));
    expect((await h.post(PATHS.stockMarket, buy({ amount: '0.001', clientOrderId: 'A.b_c-9' }))).status).toBe(200);
  });

  it('refuses request fields with the exchange codes: 30 required/side, 31 market, 32 amount', async () => {
    const h = (harness = await Harness.start());
    const cases: Array<[Record<string, unknown>, number, Record<string, string[]>]> = [
      [{ side: 'buy', amount: '1' }, 30, { market: ['Market field is required.'] }],
      [{ market: 'DOGE_USDT', side: 'buy', amount: '1' }, 31, { market: ['Market is not available.'] }],
      [{ market: '', side: 'buy', amount: '1' }, 31, { market: ['Market field should not be empty string.'] }],
      [{ market: 'BTC_USDT', amount: '1' }, 30, { side: ['Side field is required.'] }],
      [{ market: 'BTC_USDT', side: 'hold', amount: '1' }, 30, { side: ["Side field should contain only 'buy' or 'sell' values."] }],
      [{ market: 'BTC_USDT', side: 'buy' }, 32, { amount: ['Amount field is required.'] }],
      [{ market: 'BTC_USDT', side: 'buy', amount: 'lots' }, 32, { amount: ['Amount field should be numeric string or number.'] }],
      [{ market: 'BTC_USDT', side: 'buy', amount: '0' }, 32, { amount: ['Amount should be greater than 0.'] }],
    ];
    for (const [params, code, errors] of cases) {
      const reply = await h.post(PATHS.stockMarket, params);
      expect([reply.status, reply.json]).toEqual([422, validation(code, errors)]);
    }
  });

  it('enforces the market rules: precision, min amount, min total, max total', async () => {
    const h = (harness = await Harness.start());
    const cases: Array<[Record<string, unknown>, number, Record<string, string[]>]> = [
      [buy({ amount: '0.0000011' }), 32, { amount: ['Min amount step = 0.000001'] }],
      [buy({ amount: '0.000009' }), 32, { amount: ['Given amount is less than min amount 0.00001'] }],
      [buy({ amount: '0.00007' }), 30, { total: ['Total (amount * price) is less than 5'] }],
      [{ market: 'ETH_USDT', side: 'buy', amount: '317.5' }, 30, { total: ['Total (amount * price) is greater than 1000000'] }],
    ];
    for (const [params, code, errors] of cases) {
      const reply = await h.post(PATHS.stockMarket, params);
      expect([reply.status, reply.json]).toEqual([422, validation(code, errors)]);
    }
  });

  it('refuses an order whose total + fee exceed the spot balance with 400 code 10 "Not enough balance."', async () => {
    const h = (harness = await Harness.start());
    // 0.0154 × 65000 = 1001 > 1000.
    const reply = await h.post(PATHS.stockMarket, buy({ amount: '0.0154' }));
    expect([reply.status, reply.json]).toEqual([400, { code: 10, message: 'Inner validation failed', errors: { amount: ['Not enough balance.'] } }]);
    expect((await h.post(PATHS.tradeBalance, { ticker: 'USDT' })).json).toEqual({ available: '1000', freeze: '0' });
  });

  it('fills partially up to the taker band and reports CANCELED_TAKER_BAND', async () => {
    const h = (harness = await Harness.start({ fills: { bookStepPct: '0.1', bookLevelBase: '0.01', takerBandPct: '0.15' } }));
    await h.post(PATHS.transfer, { ticker: 'USDT', amount: '1000', from: 'main', to: 'spot' });
    const reply = await h.post(PATHS.stockMarket, buy({ amount: '0.025', clientOrderId: 'band-1' }));
    expect(reply.json).toMatchObject({ status: 'CANCELED_TAKER_BAND', dealStock: '0.02', dealMoney: '1300.65', dealFee: '1.30065', left: '0.005' });
    // The order history has no partial status: it reads CANCELED with the fills, as the exchange's does.
    const history = await h.post(PATHS.history, { market: 'BTC_USDT', clientOrderId: 'band-1' });
    expect((history.json as Record<string, unknown[]>)['BTC_USDT']?.[0]).toMatchObject({ status: 'CANCELED', dealStock: '0.02' });
  });

  it('is read back by the client from the history as cut short by the taker band, not as an order that never filled', async () => {
    const h = (harness = await Harness.start({ fills: { bookStepPct: '0.1', bookLevelBase: '0.01', takerBandPct: '0.15' } }));
    await h.post(PATHS.transfer, { ticker: 'USDT', amount: '1000', from: 'main', to: 'spot' });
    await h.post(PATHS.stockMarket, buy({ amount: '0.025', clientOrderId: 'band-2' }));
    const client = new ApiClient({ baseUrl: h.sandbox.url, credentials: { apiKey: h.sandbox.apiKey, apiSecret: h.sandbox.apiSecret } });
    try {
      const [found] = await client.orderHistory({ market: 'BTC_USDT', clientOrderId: 'band-2' });
      expect([found?.status, found?.filledBase.toFixed()]).toEqual(['CANCELED_TAKER_BAND', '0.02']);
    } finally {
      await client.close();
    }
  });
});

describe('market orders (quote amount)', () => {
  it('spends the quote amount and reports the unspent dust as left', async () => {
    const h = (harness = await Harness.start());
    const reply = await h.post(PATHS.market, { market: 'ETH_USDT', side: 'buy', amount: '100' });
    expect(reply.status).toBe(200);
    expect(reply.json).toMatchObject({ type: 'market', amount: '100', dealStock: '0.0317', dealMoney: '99.868314', dealFee: '0.09986832', left: '0.131686', status: 'FILLED' });
  });

  it('refuses an amount below the min total with 422 code 32', async () => {
    const h = (harness = await Harness.start());
    const reply = await h.post(PATHS.market, { market: 'ETH_USDT', side: 'buy', amount: '4.5' });
    expect([reply.status, reply.json]).toEqual([422, validation(32, { amount: ['Total amount should be no less than 5 + trade fee'] })]);
  });
});

describe('order lookups', () => {
  it('finds a finished order in history by clientOrderId, keyed by market, and its deals', async () => {
    const h = (harness = await Harness.start());
    const placed = (await h.post(PATHS.stockMarket, buy({ amount: '0.002', clientOrderId: 'find-me' }))).json as { orderId: number };
    await h.post(PATHS.market, { market: 'ETH_USDT', side: 'buy', amount: '50' });
    const history = await h.post(PATHS.history, { clientOrderId: 'find-me' });
    expect(history.status).toBe(200);
    expect(history.json).toEqual({
      BTC_USDT: [
        expect.objectContaining({ id: placed.orderId, clientOrderId: 'find-me', type: 'stock market', status: 'FILLED', dealStock: '0.002', dealMoney: '130', dealFee: '0.13', price: '0' }),
      ],
    });
    expect(Object.keys((await h.post(PATHS.history)).json as object).sort()).toEqual(['BTC_USDT', 'ETH_USDT']);
    expect(Object.keys((await h.post(PATHS.history, { market: 'ETH_USDT' })).json as object)).toEqual(['ETH_USDT']);
    const byId = await h.post(PATHS.history, { orderId: placed.orderId });
    expect((byId.json as Record<string, unknown[]>)['BTC_USDT']).toHaveLength(1);
    const deals = await h.post(PATHS.deals, { orderId: placed.orderId });
    expect(deals.json).toEqual({
      records: [{ time: expect.any(Number), fee: '0.13', price: '65000', amount: '0.002', id: expect.any(Number), dealOrderId: expect.any(Number), clientOrderId: 'find-me', role: 2, deal: '130', feeAsset: 'USDT', rpi: false }],
      offset: 0,
      limit: 50,
    });
  });

  it('answers an unknown clientOrderId with 422 code 30 orderHistory "OrderHistory was not found."', async () => {
    const h = (harness = await Harness.start());
    const reply = await h.post(PATHS.history, { clientOrderId: 'never-sent' });
    expect([reply.status, reply.json]).toEqual([422, validation(30, { orderHistory: ['OrderHistory was not found.'] })]);
    // An unknown orderId is simply an empty result, and so is an empty account.
    expect((await h.post(PATHS.history, { orderId: 1 })).json).toEqual({});
    expect((await h.post(PATHS.history)).json).toEqual({});
  });

  it('answers deals of an unknown order with empty records and requires orderId', async () => {
    const h = (harness = await Harness.start());
    expect((await h.post(PATHS.deals, { orderId: 42 })).json).toEqual({ records: [], offset: 0, limit: 50 });
    const missing = await h.post(PATHS.deals, {});
    expect([missing.status, missing.json]).toEqual([422, validation(30, { orderId: ['OrderId field is required.'] })]);
  });

  it('lists no active orders when orders settle at once, and refuses an unknown market', async () => {
    const h = (harness = await Harness.start());
    await h.post(PATHS.stockMarket, buy({ amount: '0.001' }));
    expect((await h.post(PATHS.activeOrders, { market: 'BTC_USDT' })).json).toEqual([]);
    const unknown = await h.post(PATHS.activeOrders, { market: 'DOGE_USDT' });
    expect([unknown.status, unknown.json]).toEqual([422, validation(31, { market: ['Market is not available'] })]);
    const limit = await h.post(PATHS.activeOrders, { limit: 101 });
    expect([limit.status, limit.json]).toEqual([422, validation(30, { limit: ['The limit may not be greater than 100.'] })]);
  });
});

describe('gradual settlement over HTTP', () => {
  it('shows an order NEW, then PARTIAL_FILLED in active orders, then FILLED in history', async () => {
    const clock = manualClock();
    const h = (harness = await Harness.start({ clock, settlement: { steps: 2, stepMs: 10_000 } }));
    const placed = (await h.post(PATHS.stockMarket, buy({ amount: '0.001', clientOrderId: 'slow-1' }))).json as { orderId: number; status: string };
    expect(placed.status).toBe('NEW');
    expect((await h.post(PATHS.tradeBalance, { ticker: 'USDT' })).json).toEqual({ available: '934.935', freeze: '65.065' });
    expect((await h.post(PATHS.activeOrders, { market: 'BTC_USDT', clientOrderId: 'slow-1' })).json).toEqual([expect.objectContaining({ orderId: placed.orderId, status: 'NEW', dealStock: '0' })]);
    // As the exchange: an id without a market is refused; every market is searched only without an id.
    expect((await h.post(PATHS.activeOrders, { clientOrderId: 'slow-1' })).json).toEqual(validation(30, { market: ['The market field is required.'] }));
    // Not finished yet: history does not know it.
    expect((await h.post(PATHS.history, { clientOrderId: 'slow-1' })).status).toBe(422);

    clock.advance(10_000);
    expect((await h.post(PATHS.activeOrders)).json).toEqual([expect.objectContaining({ status: 'PARTIAL_FILLED', dealStock: '0.0005', dealMoney: '32.5', left: '0.0005' })]);

    clock.advance(10_000);
    expect((await h.post(PATHS.activeOrders)).json).toEqual([]);
    const history = (await h.post(PATHS.history, { clientOrderId: 'slow-1' })).json as Record<string, Array<Record<string, unknown>>>;
    expect(history['BTC_USDT']?.[0]).toMatchObject({ status: 'FILLED', dealStock: '0.001', dealFee: '0.065', ftime: 1_760_000_020 });
    expect((await h.post(PATHS.deals, { orderId: placed.orderId })).json).toMatchObject({ records: [{ amount: '0.0005' }, { amount: '0.0005' }] });
    expect((await h.post(PATHS.tradeBalance, { ticker: 'USDT' })).json).toEqual({ available: '934.935', freeze: '0' });
  });
});
