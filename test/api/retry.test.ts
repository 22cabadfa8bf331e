import { afterEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { NetworkError, RateLimitError, ServiceUnavailableError, ExchangeValidationError, outcomeUnknown } from '../../src/domain/errors.ts';
import { Decimal } from '../../src/domain/money.ts';
import { backoffDelayMs, withRetry } from '../../src/api/backoff.ts';
import { ApiClient } from '../../src/api/client.ts';
import { ORIGIN, failure, harness, jsonBody, type Harness } from './helpers.ts';

const reset = (): Error => Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });

describe('retries of reads', () => {
  let h: Harness;
  afterEach(async () => {
    await h.agent.close();
  });

  it('retries a public read after two 503s and reports each attempt', async () => {
    h = harness({ random: () => 0.999 });
    h.pool.intercept({ path: '/api/v4/public/ping', method: 'GET' }).reply(503, 'down').times(2);
    h.pool.intercept({ path: '/api/v4/public/ping', method: 'GET' }).reply(200, ['pong']);
    expect(await h.client.ping()).toBe('pong');
    expect(h.calls()).toBe(3);
    // Full jitter with random≈1 sits just under the exponential ceiling: 250, then 500.
    expect(h.sleeps).toEqual([249, 499]);
    expect(h.events.map((e) => [e.attempt, e.status, e.errorCode])).toEqual([
      [1, 503, 'E_UNAVAILABLE'],
      [2, 503, 'E_UNAVAILABLE'],
      [3, 200, null],
    ]);
  });

  it('retries a private read after a connection reset with a fresh nonce and signature', async () => {
    h = harness();
    h.pool.intercept({ path: '/api/v4/trade-account/balance', method: 'POST' }).replyWithError(reset());
    h.pool.intercept({ path: '/api/v4/trade-account/balance', method: 'POST' }).reply(200, { USDT: { available: '10', freeze: '0' } });
    const balances = await h.client.tradeBalances();
    expect(balances.get('USDT')?.available.toString()).toBe('10');
    expect(h.calls()).toBe(2);
    const sent = (h.agent.getCallHistory()?.calls() ?? []).map((c) => [jsonBody(c.body).nonce, c.headers?.['x-txc-signature']]);
    expect(sent[0]).not.toEqual(sent[1]);
    expect(sent[0]?.[0]).not.toBe(sent[1]?.[0]);
  });

  it('retries a code listing after a 429 rate limit', async () => {
    h = harness();
    h.pool.intercept({ path: '/api/v4/main-account/codes/my', method: 'POST' }).reply(429, 'Too Many Requests');
    h.pool.intercept({ path: '/api/v4/main-account/codes/my', method: 'POST' }).reply(201, { total: 0, data: [], limit: 30, offset: 0 });
    expect((await h.client.codes()).total).toBe(0);
    expect(h.calls()).toBe(2);
  });

  it('tries a failed read no more once the stop signal is aborted (a stopping daemon finishes its slot sooner), and as often as allowed before', async () => {
    const stop = new AbortController();
    h = harness({ stop: stop.signal, retry: { maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 1000 } });
    h.pool.intercept({ path: '/api/v4/public/ping', method: 'GET' }).reply(503, 'down').times(5);
    h.pool.intercept({ path: '/api/v4/public/ping', method: 'GET' }).reply(200, ['pong']);
    expect(await failure(h.client.ping())).toBeInstanceOf(ServiceUnavailableError);
    expect(h.calls()).toBe(4);
    stop.abort();
    expect(await failure(h.client.ping())).toBeInstanceOf(ServiceUnavailableError);
    expect(h.calls()).toBe(5);
    expect(h.sleeps).toHaveLength(3);
    // A read that succeeds still does: only the retries end.
    expect(await h.client.ping()).toBe('pong');
  });

  describe("a gateway's Retry-After", () => {
    it('on a 429 is waited out before the read is tried again (seconds), not a backoff of a quarter second', async () => {
      h = harness();
      h.pool.intercept({ path: '/api/v4/trade-account/balance', method: 'POST' }).reply(429, '<html>429 Too Many Requests</html>', { headers: { 'retry-after': '12' } });
      h.pool.intercept({ path: '/api/v4/trade-account/balance', method: 'POST' }).reply(200, { USDT: { available: '10', freeze: '0' } });
      expect((await h.client.tradeBalances()).get('USDT')?.available.toString()).toBe('10');
      expect(h.sleeps).toEqual([12_000]);
    });

    it("on a 503 as an HTTP-date, counted from the gateway's own Date (its clock, not ours)", async () => {
      h = harness();
      const gatewayNow = Date.UTC(2026, 0, 2, 9, 0, 0);
      const headers = { date: new Date(gatewayNow).toUTCString(), 'retry-after': new Date(gatewayNow + 20_000).toUTCString() };
      h.pool.intercept({ path: '/api/v4/public/markets', method: 'GET' }).reply(503, 'Service Unavailable', { headers });
      h.pool.intercept({ path: '/api/v4/public/markets', method: 'GET' }).reply(200, []);
      expect(await h.client.markets()).toEqual([]);
      expect(h.sleeps).toEqual([20_000]);
    });

    it('shorter than the backoff, or unreadable, leaves the backoff as it is', async () => {
      h = harness({ random: () => 0.999 });
      h.pool.intercept({ path: '/api/v4/public/ping', method: 'GET' }).reply(429, 'slow down', { headers: { 'retry-after': '0' } });
      h.pool.intercept({ path: '/api/v4/public/ping', method: 'GET' }).reply(429, 'slow down', { headers: { 'retry-after': 'in a while' } });
      h.pool.intercept({ path: '/api/v4/public/ping', method: 'GET' }).reply(200, ['pong']);
      expect(await h.client.ping()).toBe('pong');
      expect(h.sleeps).toEqual([249, 499]);
    });

    it('longer than 30 s is not waited out within the read: the failure comes at once, with the wait asked', async () => {
      h = harness();
      h.pool.intercept({ path: '/api/v4/public/ping', method: 'GET' }).reply(429, 'slow down', { headers: { 'retry-after': '120' } });
      const error = await failure(h.client.ping());
      expect(error).toBeInstanceOf(RateLimitError);
      expect((error as RateLimitError).retryAfterMs).toBe(120_000);
      expect(h.calls()).toBe(1);
      expect(h.sleeps).toEqual([]);
    });

    it('is cut short by a stop: the read fails at once instead of holding the stop for its wait', async () => {
      const stop = new AbortController();
      h = harness();
      // The client's own sleep, which a stop cuts short (the harness's returns at once).
      const client = new ApiClient({ baseUrl: ORIGIN, dispatcher: h.agent, stop: stop.signal, rateLimits: false });
      h.pool.intercept({ path: '/api/v4/public/ping', method: 'GET' }).reply(429, 'slow down', { headers: { 'retry-after': '30' } });
      h.pool.intercept({ path: '/api/v4/public/ping', method: 'GET' }).reply(200, ['pong']);
      const started = Date.now();
      const pending = failure(client.ping());
      setTimeout(() => stop.abort(), 100);
      expect(await pending).toBeInstanceOf(RateLimitError);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(h.calls()).toBe(1);
    });
  });

  it('gives up after maxAttempts and throws the last error', async () => {
    h = harness({ retry: { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 1000 } });
    h.pool.intercept({ path: '/api/v4/orders', method: 'POST' }).reply(502, 'bad gateway').times(3);
    expect(await failure(h.client.activeOrders({}))).toBeInstanceOf(ServiceUnavailableError);
    expect(h.calls()).toBe(3);
    expect(h.sleeps).toHaveLength(2);
  });

  it('caps the delay at maxDelayMs', async () => {
    h = harness({ retry: { maxAttempts: 6, baseDelayMs: 250, maxDelayMs: 1000 }, random: () => 0.999999 });
    h.pool.intercept({ path: '/api/v4/public/markets', method: 'GET' }).reply(500, { error: ['Internal server error.'] }).times(6);
    expect(await failure(h.client.markets())).toBeInstanceOf(ServiceUnavailableError);
    expect(h.sleeps).toEqual([249, 499, 999, 999, 999]);
  });

  it('does not retry a refusal', async () => {
    h = harness();
    h.pool.intercept({ path: '/api/v4/main-account/balance', method: 'POST' }).reply(422, { code: 0, message: 'Validation failed', errors: { ticker: ['validation.string'] } });
    expect(await failure(h.client.mainBalances())).toBeInstanceOf(ExchangeValidationError);
    expect(h.calls()).toBe(1);
    expect(h.sleeps).toEqual([]);
  });

  it('does not retry at all when retry is false', async () => {
    h = harness({ retry: false });
    h.pool.intercept({ path: '/api/v4/public/ping', method: 'GET' }).reply(503, '');
    expect(await failure(h.client.ping())).toBeInstanceOf(ServiceUnavailableError);
    expect(h.calls()).toBe(1);
  });
});

describe('writes are tried exactly once', () => {
  let h: Harness;
  afterEach(async () => {
    await h.agent.close();
  });

  it('sends a stock market order once on a 503: the outcome is unknown and the engine looks it up', async () => {
    h = harness();
    h.pool.intercept({ path: '/api/v4/order/stock_market', method: 'POST' }).reply(503, '').persist();
    const error = await failure(h.client.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.001'), clientOrderId: 'c-1' }));
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(outcomeUnknown(error)).toBe(true);
    expect(h.calls()).toBe(1);
    expect(h.sleeps).toEqual([]);
  });

  it('sends a market order once on a connection reset (request sent, outcome unknown)', async () => {
    h = harness();
    h.pool.intercept({ path: '/api/v4/order/market', method: 'POST' }).replyWithError(reset()).persist();
    const error = await failure(h.client.buyMarket({ market: 'BTC_USDT', quoteAmount: new Decimal('10') }));
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).requestSent).toBe(true);
    expect(outcomeUnknown(error)).toBe(true);
    expect(h.calls()).toBe(1);
  });

  it('sends a flex withdraw once on a 500', async () => {
    h = harness();
    h.pool.intercept({ path: '/api/v4/main-account/smart-flex/investments/withdraw', method: 'POST' }).reply(500, { error: ['Internal server error.'] }).persist();
    expect(await failure(h.client.flexWithdraw({ plan: 'p-1', amount: new Decimal('1') }))).toBeInstanceOf(ServiceUnavailableError);
    expect(h.calls()).toBe(1);
  });

  it('sends a transfer once on a reset and once on a 429', async () => {
    h = harness();
    h.pool.intercept({ path: '/api/v4/main-account/transfer', method: 'POST' }).replyWithError(reset());
    h.pool.intercept({ path: '/api/v4/main-account/transfer', method: 'POST' }).reply(429, 'slow down');
    expect(await failure(h.client.transferToSpot({ ticker: 'USDT', amount: new Decimal('1') }))).toBeInstanceOf(NetworkError);
    const limited = await failure(h.client.transferToSpot({ ticker: 'USDT', amount: new Decimal('1') }));
    expect(limited).toBeInstanceOf(RateLimitError);
    // A gateway's 429 may come after its backend took the transfer: looked for, never resent.
    expect(outcomeUnknown(limited)).toBe(true);
    expect(h.calls()).toBe(2);
  });

  it('accepts a transfer answered 201 with [] or with {}', async () => {
    h = harness();
    h.pool.intercept({ path: '/api/v4/main-account/transfer', method: 'POST' }).reply(201, []);
    h.pool.intercept({ path: '/api/v4/main-account/transfer', method: 'POST' }).reply(201, {});
    h.pool.intercept({ path: '/api/v4/main-account/transfer', method: 'POST' }).reply(201, '');
    for (let i = 0; i < 3; i++) await expect(h.client.transferToSpot({ ticker: 'USDT', amount: new Decimal('1') })).resolves.toBeUndefined();
  });
});

describe('backoff', () => {
  it('stays within [0, min(max, base·2^(n−1))) for any random value', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 0, max: 5000 }), fc.integer({ min: 0, max: 60_000 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (attempt, base, extra, r) => {
        const policy = { maxAttempts: 5, baseDelayMs: base, maxDelayMs: base + extra };
        const delay = backoffDelayMs(attempt, policy, () => r);
        const ceiling = Math.min(policy.maxDelayMs, base * 2 ** (attempt - 1));
        expect(delay).toBeGreaterThanOrEqual(0);
        expect(delay).toBeLessThanOrEqual(ceiling);
        expect(Number.isInteger(delay)).toBe(true);
      }),
    );
  });

  it('only retries errors that say they are retryable', async () => {
    let attempts = 0;
    const sleeps: number[] = [];
    await expect(
      withRetry(
        async () => {
          attempts += 1;
          throw new Error('a bug, not a transient failure');
        },
        { maxAttempts: 5, baseDelayMs: 1, maxDelayMs: 1 },
        { sleep: async (ms) => void sleeps.push(ms), random: () => 0 },
      ),
    ).rejects.toThrow('a bug');
    expect(attempts).toBe(1);
    expect(sleeps).toEqual([]);
  });
});
