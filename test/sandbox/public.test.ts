import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { candleReplay, firstOf, fixedPrices } from '../../src/sim/prices.ts';
import { Harness, PATHS, manualClock } from './helpers.ts';

let harness: Harness;
const clock = manualClock(1_760_000_123_456);
beforeAll(async () => {
  harness = await Harness.start({ clock });
});
afterAll(async () => {
  await harness.stop();
});

describe('public endpoints', () => {
  it('answers ping with ["pong"]', async () => {
    const reply = await harness.get('/api/v4/public/ping');
    expect([reply.status, reply.contentType, reply.json]).toEqual([200, 'application/json', ['pong']]);
  });

  it('answers time in Unix seconds from the sandbox clock', async () => {
    expect((await harness.get('/api/v4/public/time')).json).toEqual({ time: 1_760_000_123 });
  });

  it('lists markets with precisions, fees and limits as strings', async () => {
    const reply = await harness.get('/api/v4/public/markets');
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual([
      {
        name: 'BTC_USDT', stock: 'BTC', money: 'USDT', stockPrec: '6', moneyPrec: '2', feePrec: '8', makerFee: '0.1', takerFee: '0.1',
        minAmount: '0.00001', minTotal: '5', maxTotal: '0', tradesEnabled: true, isCollateral: false, type: 'spot', isTradFiFutures: false, delistedAt: null,
      },
      {
        name: 'ETH_USDT', stock: 'ETH', money: 'USDT', stockPrec: '4', moneyPrec: '2', feePrec: '8', makerFee: '0.1', takerFee: '0.1',
        minAmount: '0.001', minTotal: '5', maxTotal: '1000000', tradesEnabled: true, isCollateral: false, type: 'spot', isTradFiFutures: false, delistedAt: null,
      },
    ]);
  });

  it('answers tickers keyed by market with the price source as last_price', async () => {
    const reply = await harness.get('/api/v4/public/ticker');
    expect(reply.json).toEqual({
      BTC_USDT: { base_id: 1, quote_id: 825, last_price: '65000', quote_volume: '0', base_volume: '0', isFrozen: false, change: '0' },
      ETH_USDT: { base_id: 1027, quote_id: 825, last_price: '3150.42', quote_volume: '0', base_volume: '0', isFrozen: false, change: '0' },
    });
  });

  it('answers an order book for a known market and a flat 422 for an unknown one', async () => {
    const book = await harness.get('/api/v4/public/orderbook/ETH_USDT?limit=5');
    expect(book.status).toBe(200);
    expect(book.json).toMatchObject({ ticker_id: 'ETH_USDT', timestamp: 1_760_000_123, asks: [['3150.42', expect.any(String)]] });
    const unknown = await harness.get('/api/v4/public/orderbook/DOGE_USDT');
    expect([unknown.status, unknown.json]).toEqual([422, { market: ['Market is not available.'] }]);
    expect((await harness.get('/api/v4/public/orderbook/ETH_USDT?limit=101')).status).toBe(422);
  });

  it('answers an unknown route, or a known path with the wrong method, with 404 and an empty body', async () => {
    for (const reply of [await harness.get('/api/v4/public/nothing'), await harness.get(PATHS.mainBalance), await harness.raw('/api/v4/public/ping', '{}', {})]) {
      expect([reply.status, reply.text]).toEqual([404, '']);
    }
  });
});

describe('a synthetic book', () => {
  it('shows the ladder the fills walk', async () => {
    const h = await Harness.start({ fills: { bookStepPct: '0.1', bookLevelBase: '0.01' } });
    try {
      const reply = await h.get('/api/v4/public/orderbook/BTC_USDT?limit=3');
      expect(reply.json).toMatchObject({
        asks: [['65000', '0.01'], ['65065', '0.01'], ['65130', '0.01']],
        bids: [['65000', '0.01'], ['64935', '0.01'], ['64870', '0.01']],
      });
    } finally {
      await h.stop();
    }
  });
});

describe('a candle replay behind the sandbox', () => {
  it('moves the ticker and the fill price as the sandbox clock passes: the ticker shows the open under way, a buy fills at the next open, as in a backtest', async () => {
    const clock = manualClock(0);
    const csvText = ['time,open,high,low,close,volume', '60,64000,64100,63900,64050,1', '120,64050,64500,64000,64400,1', ''].join('\n');
    const prices = firstOf(candleReplay({ market: 'BTC_USDT', csvText, speed: 60, clock }), fixedPrices({ ETH_USDT: '3000' }));
    const h = await Harness.start({ clock, prices });
    try {
      const last = async (): Promise<unknown> => ((await h.get('/api/v4/public/ticker')).json as Record<string, { last_price: string }>)['BTC_USDT']?.last_price;
      expect(await last()).toBe('64000');
      // Half a wall second at speed 60 is half a virtual minute: the first candle is under way,
      // and its open is the last price known; the next open is the price a buy now fills at.
      clock.advance(500);
      expect(await last()).toBe('64000');
      const between = await h.post(PATHS.stockMarket, { market: 'BTC_USDT', side: 'buy', amount: '0.001' });
      expect(between.json).toMatchObject({ dealMoney: '64.05' });
      // At the second candle's open, its open is both.
      clock.advance(500);
      expect(await last()).toBe('64050');
      // Past the last candle's close: its close.
      clock.advance(5_000);
      expect(await last()).toBe('64400');
      const order = await h.post(PATHS.stockMarket, { market: 'BTC_USDT', side: 'buy', amount: '0.001' });
      expect(order.json).toMatchObject({ dealMoney: '64.4', dealFee: '0.0644' });
    } finally {
      await h.stop();
    }
  });
});

describe('the 24 h volume of a candle replay', () => {
  // Hourly candles from T0, one virtual hour per wall second: candle i trades around 100 + i
  // (open and close, a unit either side), 0.1 BTC in even hours and 0.2 in odd ones.
  const T0 = 1_699_999_200;
  const rows = Array.from({ length: 30 }, (_, i) => `${T0 + i * 3600},${100 + i},${101 + i},${99 + i},${100 + i},${i % 2 === 0 ? '0.1' : '0.2'}`);
  const csvText = ['time,open,high,low,close,volume', ...rows, ''].join('\n');

  it('sums, in exact decimals, the volumes of the candles that closed in the 24 h up to the replay\'s now; quote at each candle\'s average price', async () => {
    const clock = manualClock(0);
    const prices = firstOf(candleReplay({ market: 'BTC_USDT', csvText, speed: 3600, clock }), fixedPrices({ ETH_USDT: '3000' }));
    const h = await Harness.start({ clock, prices });
    try {
      const ticker = async (market: string): Promise<unknown> => {
        const record = ((await h.get('/api/v4/public/ticker')).json as Record<string, { base_volume: string; quote_volume: string }>)[market];
        return { base: record?.base_volume, quote: record?.quote_volume };
      };
      // The replay has just begun: no candle has closed yet.
      expect(await ticker('BTC_USDT')).toEqual({ base: '0', quote: '0' });
      // Two hours in: candles 0 and 1 have closed (0.1 + 0.2 is 0.3 here, never 0.30000000000000004).
      clock.advance(2_000);
      expect(await ticker('BTC_USDT')).toEqual({ base: '0.3', quote: '30.2' });
      // 26 h in: the candles that closed after 2 h, 2 to 25 (twelve of 0.1, twelve of 0.2); 0 and 1 have left the window.
      clock.advance(24_000);
      expect(await ticker('BTC_USDT')).toEqual({ base: '3.6', quote: '409.2' });
      // Half an hour later candle 26 has not closed yet: the same 24 candles.
      clock.advance(500);
      expect(await ticker('BTC_USDT')).toEqual({ base: '3.6', quote: '409.2' });
      // A market at fixed prices has no trades to count.
      expect(await ticker('ETH_USDT')).toEqual({ base: '0', quote: '0' });
    } finally {
      await h.stop();
    }
  });

  it("gives the change in percent from the price 24 h before the replay's now, to two decimals as the exchange writes it", async () => {
    const clock = manualClock(0);
    const prices = firstOf(candleReplay({ market: 'BTC_USDT', csvText, speed: 3600, clock }), fixedPrices({ ETH_USDT: '3000' }));
    const h = await Harness.start({ clock, prices });
    try {
      const change = async (market: string): Promise<unknown> => ((await h.get('/api/v4/public/ticker')).json as Record<string, { change: string }>)[market]?.change;
      // At the first candle: nothing has moved.
      expect(await change('BTC_USDT')).toBe('0');
      // Two hours in the price is 102; a day before the replay's first price stood, 100.
      clock.advance(2_000);
      expect(await change('BTC_USDT')).toBe('2');
      // 26 h in: 126 against 102 a day earlier, +23.5294… %.
      clock.advance(24_000);
      expect(await change('BTC_USDT')).toBe('23.53');
      expect(await change('ETH_USDT')).toBe('0');
    } finally {
      await h.stop();
    }
  });
});

describe('request size', () => {
  it('answers 413 to a body above the limit', async () => {
    const h = await Harness.start({ maxBodyBytes: 256 });
    try {
      const reply = await h.post(PATHS.mainBalance, { padding: 'x'.repeat(300) });
      expect(reply.status).toBe(413);
    } finally {
      await h.stop();
    }
  });
});
