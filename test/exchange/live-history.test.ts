import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';
import { Decimal } from '../../src/domain/money.ts';
import { LiveExchange } from '../../src/exchange/live.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.ts';

// LiveExchange.orderHistory over real HTTP: the exchange answers at most 31 days per request,
// so a long read is cut into windows, and no order may fall between two of them.
let sandbox: Sandbox;
let exchange: LiveExchange;
beforeEach(async () => {
  sandbox = await startSandbox();
  exchange = new LiveExchange(new ApiClient({ baseUrl: sandbox.url, credentials: { apiKey: sandbox.apiKey, apiSecret: sandbox.apiSecret } }));
});
afterEach(async () => {
  await exchange.close();
  await sandbox.stop();
});

const SPAN_SEC = 30 * 24 * 3600;

describe('reading the order history over months', () => {
  it('finds an order whose time falls within the second where two request windows meet', async () => {
    let order = sandbox.exchange.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.001'), clientOrderId: 'seam-1' });
    // The seam is a whole second; the order must sit inside it, not on it.
    while (Number.isInteger(order.createdAtSec)) order = sandbox.exchange.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.001'), clientOrderId: 'seam-1' });
    const seam = Math.floor(order.createdAtSec);
    const read = await exchange.orderHistory({ sinceSec: seam - SPAN_SEC, untilSec: seam + 5 });
    expect(read.map((o) => o.orderId)).toContain(order.orderId);
  });

  it('lists each order once, oldest first, across windows and pages', async () => {
    const placed = Array.from({ length: 3 }, (_, i) => sandbox.exchange.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.001'), clientOrderId: `many-${i}` }));
    const now = Math.ceil(Date.now() / 1000);
    const read = await exchange.orderHistory({ sinceSec: now - 3 * SPAN_SEC, untilSec: now });
    expect(read.map((o) => o.orderId)).toEqual(placed.map((o) => o.orderId));
  });
});

describe('reading the order history of an exchange that holds its pages to fewer orders than asked', () => {
  // Asked for 500 a page, it answers 10 and does not say so (the sandbox's history-page fault):
  // every order is read all the same, each once, whatever the page size turns out to be.
  it('reads every order, page after page, until a page comes back empty', async () => {
    sandbox.faults.historyPageCap = 10;
    const placed = Array.from({ length: 23 }, (_, i) => sandbox.exchange.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.0001'), clientOrderId: `capped-${i}` }));
    const now = Math.ceil(Date.now() / 1000);
    const read = await exchange.orderHistory({ sinceSec: now - 3600, untilSec: now + 5 });
    expect(read.map((o) => o.orderId)).toEqual(placed.map((o) => o.orderId));
  });

  it('reads on past a page of orders read already (rows moved down by orders landing meanwhile)', async () => {
    const placed = Array.from({ length: 4 }, (_, i) => sandbox.exchange.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.0001'), clientOrderId: `moved-${i}` }));
    const [a, b, c, d] = placed.map((order) => ({ ...order }));
    // Newest first, two a page: between the first and the second request two orders land on top.
    const pages = [[d, c], [d, c], [b, a], []];
    const shifting = new LiveExchange({ clockCorrectionMs: async () => 0, orderHistory: async () => pages.shift() ?? [] } as unknown as ApiClient);
    const read = await shifting.orderHistory({ sinceSec: 0, untilSec: 10 });
    expect(read.map((o) => o.orderId)).toEqual(placed.map((o) => o.orderId));
  });

  it('ends the read, and says so once, when pages bring only orders already read again and again (an exchange that does not page)', async () => {
    const first = sandbox.exchange.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.001'), clientOrderId: 'first' });
    let asked = 0;
    const warned: string[] = [];
    const notPaging = new LiveExchange(
      {
        clockCorrectionMs: async () => 0,
        orderHistory: async () => {
          asked += 1;
          return [{ ...first }];
        },
      } as unknown as ApiClient,
      { warn: (fields) => warned.push(String(fields['event'])) },
    );
    const read = await notPaging.orderHistory({ sinceSec: 0, untilSec: 10 });
    expect(read.map((o) => o.orderId)).toEqual([first.orderId]);
    expect(asked).toBe(4);
    await notPaging.orderHistory({ sinceSec: 0, untilSec: 10 });
    expect(warned).toEqual(['history-not-paged']);
  });
});

describe('reading the order history when this machine’s clock is off the exchange’s', () => {
  // The window asked for is in this machine's time; the exchange stamps and filters orders by its
  // own clock. The ledger reads the last minutes this way before every slot: a window that is not
  // moved onto the exchange's clock misses every recent order.
  for (const [what, offsetMs] of [
    ['half an hour behind', -30 * 60_000],
    ['two hours ahead', 2 * 3_600_000],
  ] as const) {
    it(`finds an order placed a moment ago when the exchange's clock runs ${what}`, async () => {
      const skewed = await startSandbox({ clock: { nowMs: () => Date.now() + offsetMs } });
      const client = new LiveExchange(new ApiClient({ baseUrl: skewed.url, credentials: { apiKey: skewed.apiKey, apiSecret: skewed.apiSecret } }));
      try {
        const placed = skewed.exchange.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.001'), clientOrderId: 'skewed-1' });
        const nowSec = Date.now() / 1000;
        const read = await client.orderHistory({ sinceSec: Math.floor(nowSec - 60), untilSec: Math.ceil(nowSec + 60) });
        expect(read.map((o) => o.orderId)).toEqual([placed.orderId]);
      } finally {
        await client.close();
        await skewed.stop();
      }
    });
  }
});
