import { afterEach, describe, expect, it } from 'vitest';
import { Decimal, formatDecimal } from '../../src/domain/money.ts';
import { harness, jsonBody, type Harness } from './helpers.ts';

const CODES = '/api/v4/main-account/codes/my';

function code(n: number): Record<string, unknown> {
  return { amount: '1', code: `WB-CODE-${n}`, date: 1760000000 + n, status: 'Activated', ticker: 'USDT', external_id: `ext-${n}` };
}

describe('endpoints', () => {
  let h: Harness;
  afterEach(async () => {
    await h.agent.close();
  });

  it('pages through all codes until the total is reached', async () => {
    h = harness();
    const all = Array.from({ length: 5 }, (_, i) => code(i));
    h.pool
      .intercept({ path: CODES, method: 'POST' })
      .reply(201, (opts) => {
        const { limit, offset } = jsonBody(opts.body) as { limit: number; offset: number };
        return { total: all.length, data: all.slice(offset, offset + limit), limit, offset };
      })
      .persist();
    const seen: string[] = [];
    for await (const record of h.client.allCodes({ pageSize: 2 })) seen.push(record.code);
    expect(seen).toEqual(['WB-CODE-0', 'WB-CODE-1', 'WB-CODE-2', 'WB-CODE-3', 'WB-CODE-4']);
    const asked = (h.agent.getCallHistory()?.calls() ?? []).map((c) => [jsonBody(c.body).limit, jsonBody(c.body).offset]);
    expect(asked).toEqual([
      [2, 0],
      [2, 2],
      [2, 4],
    ]);
  });

  it('stops on an empty page and does not yield a code twice when a new one shifts the pages', async () => {
    h = harness();
    h.pool.intercept({ path: CODES, method: 'POST' }).reply(201, { total: 9, data: [code(1), code(2)], limit: 2, offset: 0 });
    // A code created meanwhile pushes code 2 onto the second page.
    h.pool.intercept({ path: CODES, method: 'POST' }).reply(201, { total: 10, data: [code(2), code(3)], limit: 2, offset: 2 });
    h.pool.intercept({ path: CODES, method: 'POST' }).reply(201, { total: 10, data: [], limit: 2, offset: 4 });
    const seen: string[] = [];
    for await (const record of h.client.allCodes({ pageSize: 2 })) seen.push(record.code);
    expect(seen).toEqual(['WB-CODE-1', 'WB-CODE-2', 'WB-CODE-3']);
    expect(h.calls()).toBe(3);
  });

  it('never asks beyond offset + limit = 10000', async () => {
    h = harness();
    h.pool
      .intercept({ path: CODES, method: 'POST' })
      .reply(201, (opts) => {
        const { limit, offset } = jsonBody(opts.body) as { limit: number; offset: number };
        return { total: 20_000, data: Array.from({ length: limit }, (_, i) => code(offset + i)), limit, offset };
      })
      .persist();
    let count = 0;
    for await (const _ of h.client.allCodes({ pageSize: 100 })) count += 1;
    expect(count).toBe(10_000);
    const last = (h.agent.getCallHistory()?.calls() ?? []).at(-1);
    expect(jsonBody(last?.body)).toMatchObject({ limit: 100, offset: 9900 });
  });

  it('filters flex investments by plan and status on the wire names', async () => {
    h = harness();
    h.pool.intercept({ path: '/api/v4/main-account/smart-flex/investments', method: 'POST' }).reply(200, { data: [], limit: 100, offset: 0 });
    await h.client.flexInvestments({ plan: 'plan-1', active: true, limit: 100 });
    const body = jsonBody(h.agent.getCallHistory()?.calls()[0]?.body);
    expect(body).toMatchObject({ plan: 'plan-1', investmentStatus: 1, limit: 100 });
    expect(body).not.toHaveProperty('ticker');
  });

  it('finds one market and one ticker among the lists', async () => {
    h = harness();
    h.pool.intercept({ path: '/api/v4/public/markets', method: 'GET' }).reply(200, [
      { name: 'BTC_USDT', stock: 'BTC', money: 'USDT', stockPrec: '6', moneyPrec: '2', feePrec: '4', makerFee: '0.1', takerFee: '0.1', minAmount: '0.00001', minTotal: '5', maxTotal: '0' },
    ]);
    h.pool.intercept({ path: '/api/v4/public/ticker', method: 'GET' }).reply(200, { BTC_USDT: { last_price: '65000', quote_volume: '1', base_volume: '2', change: '0.5' } });
    expect((await h.client.market('BTC_USDT')).basePrecision).toBe(6);
    expect(formatDecimal((await h.client.ticker('BTC_USDT')).lastPrice)).toBe('65000');
  });

  it('asks for one balance by ticker and accepts the unwrapped answer', async () => {
    h = harness();
    h.pool.intercept({ path: '/api/v4/main-account/balance', method: 'POST' }).reply(200, { main_balance: '36.48' });
    h.pool.intercept({ path: '/api/v4/trade-account/balance', method: 'POST' }).reply(200, { available: '12.5', freeze: '0' });
    expect(formatDecimal(await h.client.mainBalance('USDT'))).toBe('36.48');
    expect(formatDecimal((await h.client.tradeBalance('USDT')).available)).toBe('12.5');
    expect((h.agent.getCallHistory()?.calls() ?? []).map((c) => jsonBody(c.body).ticker)).toEqual(['USDT', 'USDT']);
  });

  it('answers a market buy whose answer left its clientOrderId empty with the id it sent: the journal and the tax CSV keep it', async () => {
    h = harness();
    h.pool.intercept({ path: '/api/v4/order/stock_market', method: 'POST' }).reply(200, {
      orderId: 7, clientOrderId: '', market: 'BTC_USDT', side: 'buy', type: 'stock market', timestamp: 1760000000,
      dealMoney: '65', dealStock: '0.001', amount: '0.001', left: '0', dealFee: '0.065', status: 'FILLED', stp: 'no',
    });
    const order = await h.client.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.001'), clientOrderId: 'dca-0123456789ab-1760000000000-0' });
    expect(order.clientOrderId).toBe('dca-0123456789ab-1760000000000-0');
  });

  it('reports each attempt to onRequest with scope, status and duration, and survives a throwing observer', async () => {
    h = harness({
      onRequest: () => {
        throw new Error('observer bug');
      },
    });
    h.pool.intercept({ path: '/api/v4/order/stock_market', method: 'POST' }).reply(200, {
      orderId: 7, clientOrderId: 'a', market: 'BTC_USDT', side: 'buy', type: 'stock market', timestamp: 1760000000,
      dealMoney: '65', dealStock: '0.001', amount: '0.001', left: '0', dealFee: '0.065', status: 'FILLED', stp: 'no',
    });
    const order = await h.client.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.001'), clientOrderId: 'a' });
    expect(order.status).toBe('FILLED');

    const events = harness();
    try {
      events.pool.intercept({ path: '/api/v4/main-account/balance', method: 'POST' }).reply(200, {});
      await events.client.mainBalances();
      expect(events.events).toEqual([{ method: 'POST', path: '/api/v4/main-account/balance', scope: 'main-account', attempt: 1, status: 200, durationMs: 0, errorCode: null }]);
    } finally {
      await events.agent.close();
    }
  });
});
