import type { Stp } from '../../src/domain/order.ts';
import { afterEach, describe, expect, it } from 'vitest';
import { Decimal } from '../../src/domain/money.ts';
import { ApiClient } from '../../src/api/client.ts';
import { fixedClock, harness, ORIGIN, type Harness } from './helpers.ts';

/**
 * Golden requests: fixed clock and nonce → the exact method, path, body bytes and headers.
 * The signatures below were computed outside our code, with openssl.
 */

const GOLDEN_KEY = 'golden-key-abcdef';
const GOLDEN_SECRET = 'golden-secret-0123456789';

interface Captured {
  method: string;
  path: string;
  body: string | null;
  headers: Record<string, string>;
}

function capture(h: Harness, method: 'GET' | 'POST', path: string, status: number, reply: unknown): Captured[] {
  const seen: Captured[] = [];
  h.pool.intercept({ path, method }).reply(status, (opts) => {
    seen.push({ method: opts.method, path: opts.path, body: (opts.body as string | null | undefined) ?? null, headers: { ...(opts.headers as Record<string, string>) } });
    return reply as object;
  });
  return seen;
}

function goldenClient(nowMs: number, nonceWindow = true): Harness {
  return harness({ credentials: { apiKey: GOLDEN_KEY, apiSecret: GOLDEN_SECRET }, clock: fixedClock(nowMs), nonceWindow });
}

describe('golden requests', () => {
  let h: Harness;
  afterEach(async () => {
    await h.agent.close();
  });

  it('pings with a bare GET and no credentials headers', async () => {
    h = goldenClient(1_760_000_000_000);
    const seen = capture(h, 'GET', '/api/v4/public/ping', 200, ['pong']);
    expect(await h.client.ping()).toBe('pong');
    expect(seen).toEqual([{ method: 'GET', path: '/api/v4/public/ping', body: null, headers: { accept: 'application/json' } }]);
  });

  it('asks for the order book with the market in the path and the limit in the query', async () => {
    h = goldenClient(1_760_000_000_000);
    const seen = capture(h, 'GET', '/api/v4/public/orderbook/BTC_USDT?limit=5', 200, { ticker_id: 'BTC_USDT', timestamp: 1760000000, asks: [['65010.5', '0.1']], bids: [] });
    const book = await h.client.orderBook('BTC_USDT', 5);
    expect(seen[0]?.path).toBe('/api/v4/public/orderbook/BTC_USDT?limit=5');
    expect(book.asks.map(([p, q]) => [p.toString(), q.toString()])).toEqual([['65010.5', '0.1']]);
    expect(book.timeSec).toBe(1760000000);
  });

  it('signs the main balance request exactly as an independent openssl run does', async () => {
    h = goldenClient(1_760_000_000_000);
    const seen = capture(h, 'POST', '/api/v4/main-account/balance', 200, { USDT: { main_balance: '36.48' } });
    await h.client.mainBalances();
    const body = '{"request":"/api/v4/main-account/balance","nonce":"1760000000000","nonceWindow":true}';
    // BODY='{"request":"/api/v4/main-account/balance","nonce":"1760000000000","nonceWindow":true}'
    // printf '%s' "$BODY" | base64 -w0
    const payload = 'eyJyZXF1ZXN0IjoiL2FwaS92NC9tYWluLWFjY291bnQvYmFsYW5jZSIsIm5vbmNlIjoiMTc2MDAwMDAwMDAwMCIsIm5vbmNlV2luZG93Ijp0cnVlfQ==';
    // printf '%s' "$PAYLOAD" | openssl dgst -sha512 -hmac "golden-secret-0123456789"
    const signature = 'adb28ac5b96853be8a10a1bf80c7834405b340c2807fdd99fe9fc5221a3ab4ca24a3436ce53ea07cb52db9c73d430c263b373a2acf6cb593fc08d29c7ac2055e';
    expect(seen).toEqual([
      {
        method: 'POST',
        path: '/api/v4/main-account/balance',
        body,
        headers: {
          'content-type': 'application/json',
          'x-txc-apikey': GOLDEN_KEY,
          'x-txc-payload': payload,
          'x-txc-signature': signature,
          accept: 'application/json',
        },
      },
    ]);
  });

  it('places a stock market buy with side, base amount, clientOrderId and the short stp form (also when given the long one), signed as openssl does', async () => {
    h = goldenClient(1_760_000_000_001);
    const seen = capture(h, 'POST', '/api/v4/order/stock_market', 200, {
      orderId: 4986126152,
      clientOrderId: 'stk-btc-20251009T0900-0',
      market: 'BTC_USDT',
      side: 'buy',
      type: 'stock market',
      timestamp: 1760000000.123456,
      dealMoney: '32.5',
      dealStock: '0.0005',
      amount: '0.0005',
      left: '0',
      dealFee: '0.0325',
      feeAsset: 'USDT',
      status: 'FILLED',
      stp: 'cn',
    });
    const order = await h.client.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.00050'), clientOrderId: 'stk-btc-20251009T0900-0', stp: 'cancel_new' as Stp });
    // BODY='{"request":"/api/v4/order/stock_market","nonce":"1760000000001","nonceWindow":true,"market":"BTC_USDT","side":"buy","amount":"0.0005","clientOrderId":"stk-btc-20251009T0900-0","stp":"cn"}'
    // printf '%s' "$BODY" | base64 -w0 | openssl dgst -sha512 -hmac "golden-secret-0123456789"
    expect(seen[0]?.body).toBe(
      '{"request":"/api/v4/order/stock_market","nonce":"1760000000001","nonceWindow":true,"market":"BTC_USDT","side":"buy","amount":"0.0005","clientOrderId":"stk-btc-20251009T0900-0","stp":"cn"}',
    );
    expect(seen[0]?.headers['x-txc-signature']).toBe(
      '14b34a63ffa365b156ce02c53d1e6b83047dc4a14e29c926b86c680e866de07267b58d5c1579b3ed99c16ab2029c62bb1813587d6c3a3c460d8ad2f4fa53bcb2',
    );
    expect(order.orderId).toBe('4986126152');
    expect(order.stp).toBe('cn');
  });

  it('spends a quote amount on /api/v4/order/market and omits optional fields it was not given', async () => {
    h = goldenClient(1_760_000_000_000);
    const seen = capture(h, 'POST', '/api/v4/order/market', 200, {
      orderId: 1, clientOrderId: '', market: 'ETH_USDT', side: 'buy', type: 'market', timestamp: 1760000000,
      dealMoney: '25', dealStock: '0.0079', amount: '25', left: '0', dealFee: '0.025', status: 'FILLED', stp: 'no',
    });
    await h.client.buyMarket({ market: 'ETH_USDT', quoteAmount: new Decimal('25.00') });
    expect(seen[0]?.body).toBe('{"request":"/api/v4/order/market","nonce":"1760000000000","nonceWindow":true,"market":"ETH_USDT","side":"buy","amount":"25"}');
  });

  it('draws a fresh nonce for each request even when the clock stands still', async () => {
    h = goldenClient(1_760_000_000_000);
    const first = capture(h, 'POST', '/api/v4/trade-account/balance', 200, {});
    const second = capture(h, 'POST', '/api/v4/trade-account/balance', 200, {});
    await h.client.tradeBalances();
    await h.client.tradeBalances();
    expect(first[0]?.body).toBe('{"request":"/api/v4/trade-account/balance","nonce":"1760000000000","nonceWindow":true}');
    expect(second[0]?.body).toBe('{"request":"/api/v4/trade-account/balance","nonce":"1760000000001","nonceWindow":true}');
  });

  it('sends codes paging, the transfer direction and the flex plan as named on the wire', async () => {
    h = goldenClient(1_760_000_000_000);
    const codes = capture(h, 'POST', '/api/v4/main-account/codes/my', 201, { total: 0, data: [], limit: 10, offset: 20 });
    const transfer = capture(h, 'POST', '/api/v4/main-account/transfer', 201, []);
    const withdraw = capture(h, 'POST', '/api/v4/main-account/smart-flex/investments/withdraw', 201, { data: { transaction_id: 'tx-1' } });
    await h.client.codes({ limit: 10, offset: 20 });
    await h.client.transferToSpot({ ticker: 'USDT', amount: new Decimal('12.50') });
    await h.client.flexWithdraw({ plan: '8c1a6e0e-3d1a-4b59-9d7c-0b2b3f1e9a11', amount: new Decimal('10') });
    expect(codes[0]?.body).toBe('{"request":"/api/v4/main-account/codes/my","nonce":"1760000000000","nonceWindow":true,"limit":10,"offset":20}');
    expect(transfer[0]?.body).toBe(
      '{"request":"/api/v4/main-account/transfer","nonce":"1760000000001","nonceWindow":true,"ticker":"USDT","amount":"12.5","from":"main","to":"spot"}',
    );
    expect(withdraw[0]?.body).toBe(
      '{"request":"/api/v4/main-account/smart-flex/investments/withdraw","nonce":"1760000000002","nonceWindow":true,"plan":"8c1a6e0e-3d1a-4b59-9d7c-0b2b3f1e9a11","amount":"10"}',
    );
  });

  it('sends order ids as JSON integers, exact beyond 2^53', async () => {
    h = goldenClient(1_760_000_000_000);
    const history = capture(h, 'POST', '/api/v4/trade-account/order/history', 200, []);
    const deals = capture(h, 'POST', '/api/v4/trade-account/order', 200, { records: [], offset: 0, limit: 50 });
    await h.client.orderHistory({ orderId: '18446744073709551615' });
    await h.client.orderDeals({ orderId: '5123456789', limit: 50 });
    expect(history[0]?.body).toBe('{"request":"/api/v4/trade-account/order/history","nonce":"1760000000000","nonceWindow":true,"orderId":18446744073709551615}');
    expect(deals[0]?.body).toBe('{"request":"/api/v4/trade-account/order","nonce":"1760000000001","nonceWindow":true,"orderId":5123456789,"limit":50}');
  });

  it('leaves nonceWindow out of the body when it is turned off', async () => {
    h = goldenClient(1_760_000_000_000, false);
    const seen = capture(h, 'POST', '/api/v4/main-account/balance', 200, { main_balance: '1' });
    await h.client.mainBalance('USDT');
    expect(seen[0]?.body).toBe('{"request":"/api/v4/main-account/balance","nonce":"1760000000000","ticker":"USDT"}');
  });

  it('reads public endpoints without credentials, server time in seconds or milliseconds', async () => {
    h = harness();
    const client = new ApiClient({ baseUrl: ORIGIN, dispatcher: h.agent, rateLimits: false });
    h.pool.intercept({ path: '/api/v4/public/time', method: 'GET' }).reply(200, { time: 1760000000 });
    h.pool.intercept({ path: '/api/v4/public/time', method: 'GET' }).reply(200, { time: 1635467280514 });
    expect(await client.serverTimeMs()).toBe(1_760_000_000_000);
    expect(await client.serverTimeMs()).toBe(1_635_467_280_514);
    const urls = (h.agent.getCallHistory()?.calls() ?? []).map((c) => c.fullUrl);
    expect(urls).toEqual([`${ORIGIN}/api/v4/public/time`, `${ORIGIN}/api/v4/public/time`]);
  });
});
