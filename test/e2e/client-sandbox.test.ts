import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';
import { Decimal, formatDecimal } from '../../src/domain/money.ts';
import {
  AuthError,
  ExchangeRefusedError,
  ExchangeValidationError,
  InputError,
  NetworkError,
  NonceError,
  RateLimitError,
  ServiceUnavailableError,
  outcomeUnknown,
} from '../../src/domain/errors.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.ts';

// The real client against the real sandbox over 127.0.0.1: every endpoint, every documented error.
let sandbox: Sandbox;
let client: ApiClient;
const noRetry = { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 };

beforeAll(async () => {
  sandbox = await startSandbox();
  client = new ApiClient({ baseUrl: sandbox.url, credentials: { apiKey: sandbox.apiKey, apiSecret: sandbox.apiSecret }, retry: noRetry });
});
afterAll(async () => {
  await client.close();
  await sandbox.stop();
});

describe('public endpoints', () => {
  it('answers ping, time, markets, ticker and order book', async () => {
    expect(await client.ping()).toBe('pong');
    expect(Math.abs((await client.serverTimeMs()) - Date.now())).toBeLessThan(5_000);
    const btc = await client.market('BTC_USDT');
    expect([btc.basePrecision, btc.quotePrecision, formatDecimal(btc.minQuoteTotal), btc.maxQuoteTotal]).toEqual([6, 2, '5', null]);
    expect(formatDecimal((await client.ticker('ETH_USDT')).lastPrice)).toBe('3150.42');
    const book = await client.orderBook('BTC_USDT', 5);
    expect(book.asks.length).toBeGreaterThan(0);
    expect(book.asks[0]?.[0].gte(book.bids[0]?.[0] ?? 0)).toBe(true);
  });

  it('refuses an unknown market by name before or at the exchange', async () => {
    await expect(client.market('DOGE_USDT')).rejects.toBeInstanceOf(InputError);
  });
});

describe('main account', () => {
  it('reads all balances and one ticker, unknown tickers as zero', async () => {
    const all = await client.mainBalances();
    expect(formatDecimal(all.get('BTC') ?? new Decimal(-1))).toBe('0.05');
    expect(formatDecimal(await client.mainBalance('ETH'))).toBe('1.2');
    expect(formatDecimal(await client.mainBalance('XYZ'))).toBe('0');
  });

  it('pages codes within the documented bounds and iterates all of them', async () => {
    const page = await client.codes({ limit: 2, offset: 1 });
    expect([page.limit, page.offset, page.codes.length, page.total]).toEqual([2, 1, 2, 5]);
    const all = [];
    for await (const code of client.allCodes({ pageSize: 2 })) all.push(code);
    expect(all).toHaveLength(5);
    await expect(client.codes({ limit: 101 })).rejects.toThrow(/limit/);
    await expect(client.codes({ offset: 10_001 })).rejects.toBeInstanceOf(InputError);
  });

  it('transfers main to spot and moves both balances exactly', async () => {
    const mainBefore = await client.mainBalance('USDT');
    const spotBefore = (await client.tradeBalance('USDT')).available;
    await client.transferToSpot({ ticker: 'USDT', amount: new Decimal('12.34567891') });
    expect(formatDecimal(mainBefore.minus(await client.mainBalance('USDT')))).toBe('12.34567891');
    expect(formatDecimal((await client.tradeBalance('USDT')).available.minus(spotBefore))).toBe('12.34567891');
  });

  it('refuses a transfer above the main balance as a business rule', async () => {
    await expect(client.transferToSpot({ ticker: 'BTC', amount: new Decimal('1000') })).rejects.toBeInstanceOf(ExchangeRefusedError);
  });
});

describe('smart flex', () => {
  it('lists plans and investments and withdraws with 201 data.transaction_id', async () => {
    const plans = await client.flexPlans();
    expect(plans.length).toBeGreaterThanOrEqual(2);
    const [investment] = await client.flexInvestments({ active: true });
    expect(investment).toBeDefined();
    const before = await client.mainBalance('USDT');
    const result = await client.flexWithdraw({ plan: investment!.planId, amount: new Decimal('25.5') });
    expect(result.transactionId).not.toBe('');
    expect(formatDecimal((await client.mainBalance('USDT')).minus(before))).toBe('25.5');
  });

  it('rejects a flex withdraw above the invested amount with 422 code 2 under `amount`', async () => {
    const [investment] = await client.flexInvestments({ active: true });
    const error = await client.flexWithdraw({ plan: investment!.planId, amount: new Decimal('999999') }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExchangeRefusedError);
    expect(error).toMatchObject({ httpStatus: 422, exchangeCode: 2 });
    expect(Object.keys((error as ExchangeRefusedError).fieldErrors)).toEqual(['amount']);
  });

  it('rejects a flex withdraw from a plan without an active investment with 422 code 2 under `plan`', async () => {
    const active = new Set((await client.flexInvestments({ active: true })).map((i) => i.planId));
    const idle = (await client.flexPlans()).find((p) => !active.has(p.planId));
    const error = await client.flexWithdraw({ plan: idle!.planId, amount: new Decimal('1') }).catch((e: unknown) => e);
    expect(error).toMatchObject({ httpStatus: 422, exchangeCode: 2 });
    expect(Object.keys((error as ExchangeRefusedError).fieldErrors)).toEqual(['plan']);
  });
});

describe('trading', () => {
  it('buys a base quantity with a client order id and STP, then finds it in history and its deals', async () => {
    await client.transferToSpot({ ticker: 'USDT', amount: new Decimal('500') });
    const order = await client.buyStockMarket({ market: 'ETH_USDT', baseAmount: new Decimal('0.01'), clientOrderId: 'e2e-eth-1', stp: 'cn' });
    expect(order).toMatchObject({ clientOrderId: 'e2e-eth-1', status: 'FILLED', stp: 'cn', type: 'stock market' });
    // 0.01 × 3150.42 = 31.5042 quote; taker fee 0.1 % = 0.0315042
    expect([formatDecimal(order.filledBase), formatDecimal(order.filledQuote), formatDecimal(order.fee)]).toEqual(['0.01', '31.5042', '0.0315042']);
    const history = await client.orderHistory({ market: 'ETH_USDT', clientOrderId: 'e2e-eth-1' });
    expect(history.map((o) => o.orderId)).toEqual([order.orderId]);
    const deals = await client.orderDeals({ orderId: order.orderId });
    expect(deals.reduce((sum, d) => sum.plus(d.baseAmount), new Decimal(0)).eq('0.01')).toBe(true);
    expect(await client.activeOrders({ market: 'ETH_USDT' })).toEqual([]);
    expect(await client.orderHistory({ clientOrderId: 'never-sent-1' })).toEqual([]);
  });

  it('buys by quote amount on the market endpoint', async () => {
    const order = await client.buyMarket({ market: 'BTC_USDT', quoteAmount: new Decimal('10') });
    expect(order.type).toBe('market');
    expect(order.filledBase.gt(0)).toBe(true);
  });

  it('refuses orders that break market rules or the balance, naming the field', async () => {
    const tooSmall = await client.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.000001') }).catch((e: unknown) => e);
    expect(tooSmall).toBeInstanceOf(ExchangeValidationError);
    expect(Object.keys((tooSmall as ExchangeValidationError).fieldErrors)).toEqual(['amount']);
    const tooPrecise = await client.buyStockMarket({ market: 'ETH_USDT', baseAmount: new Decimal('0.00101') }).catch((e: unknown) => e);
    expect(tooPrecise).toBeInstanceOf(ExchangeValidationError);
    const broke = await client.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('5') }).catch((e: unknown) => e);
    expect(broke).toBeInstanceOf(ExchangeRefusedError);
    expect((broke as ExchangeRefusedError).fieldErrors.amount).toEqual(['Not enough balance.']);
    await expect(client.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.001'), clientOrderId: 'bad id!' })).rejects.toBeInstanceOf(InputError);
  });
});

describe('auth, nonce, rate limit and faults', () => {
  it('answers a wrong secret with an auth error that does not carry the secret', async () => {
    const wrong = new ApiClient({ baseUrl: sandbox.url, credentials: { apiKey: sandbox.apiKey, apiSecret: 'not-the-secret-123' }, retry: noRetry });
    const error = await wrong.mainBalances().catch((e: unknown) => e);
    await wrong.close();
    expect(error).toBeInstanceOf(AuthError);
    expect(JSON.stringify(error) + String(error)).not.toContain('not-the-secret-123');
  });

  it('classifies a nonce that did not grow (two processes on one key) as a nonce error, not a rate limit', async () => {
    const options = {
      baseUrl: sandbox.url,
      credentials: { apiKey: sandbox.apiKey, apiSecret: sandbox.apiSecret },
      nonceWindow: false,
      clock: { nowMs: () => 1_000 },
      retry: noRetry,
    } as const;
    const first = new ApiClient(options);
    const second = new ApiClient(options);
    await first.mainBalances();
    await first.mainBalances();
    const error = await second.mainBalances().catch((e: unknown) => e);
    await first.close();
    await second.close();
    expect(error).toBeInstanceOf(NonceError);
    expect(error).toMatchObject({ httpStatus: 429, retryable: false });
  });

  it('gets through when another process on the key drew the same milliseconds (window mode): signed again past its run of nonces', async () => {
    // Two processes' estimates of the exchange's clock can be a second apart, so one draws the
    // values the other used a moment ago; concurrent requests there took consecutive values.
    // Both clients here sign with the same standing clock: the first takes T … T+5 at once.
    const at = Date.now();
    const attempts: string[] = [];
    const clientOf = (name: string, random: () => number): ApiClient =>
      new ApiClient({
        baseUrl: sandbox.url,
        credentials: { apiKey: sandbox.apiKey, apiSecret: sandbox.apiSecret },
        serverTime: false,
        clock: { nowMs: () => at },
        random,
        retry: noRetry,
        onRequest: (event) => {
          if (event.path === '/api/v4/main-account/balance') attempts.push(`${name} ${event.status ?? event.errorCode}`);
        },
      });
    const first = clientOf('first', Math.random);
    const second = clientOf('second', () => 0.5);
    const tooShort = clientOf('too-short', () => 0);
    try {
      await Promise.all(Array.from({ length: 6 }, () => first.mainBalances()));
      // Skips of 1 ms land on T+2 and T+4, still inside the run: refused three times, as the exchange would.
      expect(await tooShort.mainBalances().catch((e: unknown) => e)).toBeInstanceOf(NonceError);
      // 126 ms past the refused nonce is past the run.
      expect((await second.mainBalances()).has('USDT')).toBe(true);
      expect(attempts.filter((a) => !a.startsWith('first'))).toEqual(['too-short 429', 'too-short 429', 'too-short 429', 'second 429', 'second 200']);
    } finally {
      await Promise.all([first.close(), second.close(), tooShort.close()]);
    }
  });

  it('classifies the gateway 429 as a rate limit', async () => {
    sandbox.faults.inject({ path: '/api/v4/public/ticker', kind: 'status', status: 429, body: 'Too Many Requests', times: 1 });
    await expect(client.tickers()).rejects.toBeInstanceOf(RateLimitError);
  });

  it('reports an order whose response was lost after commit as outcome-unknown, and the lookup finds it', async () => {
    sandbox.faults.inject({ path: '/api/v4/order/stock_market', kind: 'drop-after-commit' });
    const error = await client.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.0001'), clientOrderId: 'e2e-lost-1' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect(outcomeUnknown(error)).toBe(true);
    expect(await client.orderHistory({ market: 'BTC_USDT', clientOrderId: 'e2e-lost-1' })).toHaveLength(1);
  });

  it('reports a 5xx on an order as unavailable and never resends it', async () => {
    const ordersBefore = (await client.orderHistory({ market: 'BTC_USDT' })).length;
    sandbox.faults.inject({ path: '/api/v4/order/stock_market', kind: 'status', status: 503, body: '<html>maintenance</html>', times: 1 });
    const error = await client.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.0001') }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect((await client.orderHistory({ market: 'BTC_USDT' })).length).toBe(ordersBefore);
  });

  it('keeps the books exact through all of the above', () => {
    expect(sandbox.exchange.verifyLedger()).toBe(true);
  });
});
