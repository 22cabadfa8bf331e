import { afterEach, describe, expect, it } from 'vitest';
import { InputError } from '../../src/domain/errors.ts';
import { Decimal } from '../../src/domain/money.ts';
import type { Stp } from '../../src/domain/order.ts';
import { ApiClient, REGION_URLS, resolveBaseUrl } from '../../src/api/client.ts';
import { failure, harness, ORIGIN, type Harness } from './helpers.ts';

async function expectInputError(h: Harness, promise: Promise<unknown>, field: string, rule?: RegExp): Promise<void> {
  const error = await failure(promise);
  expect(error).toBeInstanceOf(InputError);
  const problem = (error as InputError).problems[0];
  expect(problem?.field).toBe(field);
  if (rule !== undefined) expect(problem?.rule).toMatch(rule);
  expect(h.calls()).toBe(0);
  expect(h.events).toEqual([]);
}

describe('inputs are checked before anything is sent', () => {
  let h: Harness;
  afterEach(async () => {
    await h.agent.close();
  });
  const one = new Decimal('1');

  it.each([
    [{ limit: 0 }, 'limit', /from 1 to 100/],
    [{ limit: 101 }, 'limit', /from 1 to 100/],
    [{ limit: 2.5 }, 'limit', /integer/],
    [{ offset: -1 }, 'offset', /from 0 to 10000/],
    [{ offset: 10001 }, 'offset', /from 0 to 10000/],
    [{ offset: 9950, limit: 100 }, 'offset', /offset \+ limit must not exceed 10000/],
    [{ offset: 9990 }, 'offset', /9990 \+ 30/],
  ])('refuses codes(%j) naming `%s`', async (params, field, rule) => {
    h = harness();
    await expectInputError(h, h.client.codes(params), field, rule);
  });

  it('accepts the code list bounds themselves', async () => {
    h = harness();
    h.pool.intercept({ path: '/api/v4/main-account/codes/my', method: 'POST' }).reply(201, { total: 0, data: [], limit: 100, offset: 9900 }).times(2);
    await h.client.codes({ limit: 100, offset: 9900 });
    await h.client.codes({ limit: 1, offset: 0 });
    expect(h.calls()).toBe(2);
  });

  it.each(['', 'has space', 'a'.repeat(65), 'emoji-🙂', 'slash/id'])('refuses clientOrderId %j', async (clientOrderId) => {
    h = harness();
    await expectInputError(h, h.client.buyStockMarket({ market: 'BTC_USDT', baseAmount: one, clientOrderId }), 'clientOrderId', /letters, digits/);
  });

  it('refuses an stp value that is neither a short nor a long form, naming both', async () => {
    h = harness();
    await expectInputError(h, h.client.buyMarket({ market: 'BTC_USDT', quoteAmount: one, stp: 'cancel_all' as Stp }), 'stp', /no, cb \(cancel both\), cn \(cancel new\) or co \(cancel old\); the long forms/);
  });

  it.each([
    [new Decimal('0'), /greater than 0/],
    [new Decimal('-1'), /greater than 0/],
    [new Decimal('NaN'), /greater than 0/],
    [0.5 as unknown as Decimal, /Decimal/],
  ])('refuses a base amount of %s', async (baseAmount, rule) => {
    h = harness();
    await expectInputError(h, h.client.buyStockMarket({ market: 'BTC_USDT', baseAmount }), 'baseAmount', rule);
  });

  it('refuses a non-positive quote amount, transfer amount and withdraw amount, each by its name', async () => {
    h = harness();
    await expectInputError(h, h.client.buyMarket({ market: 'BTC_USDT', quoteAmount: new Decimal(0) }), 'quoteAmount');
    await expectInputError(h, h.client.transferToSpot({ ticker: 'USDT', amount: new Decimal(-5) }), 'amount');
    await expectInputError(h, h.client.flexWithdraw({ plan: 'p-1', amount: new Decimal(0) }), 'amount');
  });

  it.each(['btc_usdt', 'BTCUSDT', 'BTC_USDT/../x', '', 'BTC_'])('refuses market %j', async (market) => {
    h = harness();
    await expectInputError(h, h.client.buyStockMarket({ market, baseAmount: one }), 'market', /BASE_QUOTE/);
  });

  it('refuses a market with a path in it before building the order book URL', async () => {
    h = harness();
    await expectInputError(h, h.client.orderBook('BTC_USDT?limit=1'), 'market');
    await expectInputError(h, h.client.orderBook('BTC_USDT', 101), 'limit');
  });

  it.each(['', ' ', 'has space', 'x'.repeat(101)])('refuses flex plan %j', async (plan) => {
    h = harness();
    await expectInputError(h, h.client.flexWithdraw({ plan, amount: one }), 'plan');
  });

  it.each(['abc', '-1', '1.5', '', '123456789012345678901'])('refuses order id %j', async (orderId) => {
    h = harness();
    await expectInputError(h, h.client.orderDeals({ orderId }), 'orderId', /digits/);
    await expectInputError(h, h.client.orderHistory({ orderId }), 'orderId');
  });

  it('refuses a bad ticker and out-of-range list bounds', async () => {
    h = harness();
    await expectInputError(h, h.client.mainBalance('US DT'), 'ticker');
    await expectInputError(h, h.client.tradeBalance(''), 'ticker');
    await expectInputError(h, h.client.activeOrders({ limit: 101 }), 'limit');
    // A transfer takes at most 8 decimals.
    await expectInputError(h, h.client.transferToSpot({ ticker: 'USDT', amount: new Decimal('1.123456789') }), 'amount', /at most 8 decimals/);
    // The exchange answers an id without a market with 422; nothing is sent.
    await expectInputError(h, h.client.activeOrders({ clientOrderId: 'x-1' }), 'market', /required to look active orders up by clientOrderId or orderId/);
    await expectInputError(h, h.client.orderHistory({ limit: 501 }), 'limit');
    await expectInputError(h, h.client.flexPlans({ limit: 0 }), 'limit');
    await expectInputError(h, h.client.flexInvestments({ offset: -1 }), 'offset');
  });

  it('refuses private calls without credentials, naming `api-key`', async () => {
    h = harness();
    const client = new ApiClient({ baseUrl: ORIGIN, dispatcher: h.agent, rateLimits: false, onRequest: (e) => h.events.push(e) });
    await expectInputError(h, client.mainBalances(), 'api-key', /API key and secret are required/);
    await expectInputError(h, client.buyStockMarket({ market: 'BTC_USDT', baseAmount: one }), 'api-key');
  });

  it('refuses a market that the exchange does not list, naming `market`', async () => {
    h = harness();
    h.pool.intercept({ path: '/api/v4/public/markets', method: 'GET' }).reply(200, []);
    const error = await failure(h.client.market('DOGE_USDT'));
    expect((error as InputError).problems[0]?.field).toBe('market');
  });
});

describe('options and base URL', () => {
  it('resolves regions and origins, and refuses anything else naming `base-url`', () => {
    expect(resolveBaseUrl('global')).toBe(REGION_URLS.global);
    expect(resolveBaseUrl('eu')).toBe('https://whitebit.eu');
    expect(resolveBaseUrl('http://127.0.0.1:43121')).toBe('http://127.0.0.1:43121');
    expect(resolveBaseUrl('https://whitebit.com/')).toBe('https://whitebit.com');
    for (const bad of ['asia', 'ftp://x.test', 'https://x.test/api', 'https://x.test/?a=1', 'https://user:pw@x.test', '']) {
      const error = (() => {
        try {
          resolveBaseUrl(bad);
        } catch (e) {
          return e;
        }
        return null;
      })();
      expect(error).toBeInstanceOf(InputError);
      expect((error as InputError).problems[0]?.field).toBe('base-url');
      expect((error as InputError).message).not.toContain('pw');
    }
  });

  it('refuses a key or secret that is not printable ASCII without saying what it is: undici would refuse the header and the daemon waited for ever', () => {
    const refused = (apiKey: string, apiSecret: string): string[] => {
      try {
        new ApiClient({ baseUrl: ORIGIN, credentials: { apiKey, apiSecret } });
      } catch (error) {
        expect((error as InputError).message).not.toContain('KEY123');
        return (error as InputError).problems.map((p) => `${p.field}: ${p.rule}`);
      }
      return [];
    };
    expect(refused('KEY123\u200b', 'SECRET123')).toEqual(['api-key: contains U+200B, which is not printable ASCII (an invisible character pasted with it?); keys and secrets are printable ASCII only']);
    expect(refused('KEY123', '"SECRET123"')).toEqual(['api-secret: starts or ends with a quote (copied with the quotes around it?); write it without them']);
    expect(refused('KEY123 ', '')).toEqual(['api-key: contains whitespace (a stray space, newline or quote when it was pasted?)', 'api-secret: must not be empty']);
    expect(refused('KEY123', 'SECRET123')).toEqual([]);
  });

  it('reports every bad option at once', () => {
    let error: unknown = null;
    try {
      new ApiClient({ baseUrl: 'nope', connections: 0, retry: { maxAttempts: 0, baseDelayMs: 1, maxDelayMs: 1 }, rateLimits: { trade: { limit: 0, windowMs: 1 } } });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).problems.map((p) => p.field)).toEqual(['base-url', 'connections', 'retry', 'rateLimits.trade.limit']);
  });
});
