import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_RATE_LIMITS } from '../../src/api/rate-limit.ts';
import { scopeOf } from '../../src/api/paths.ts';
import { SANDBOX_RATE_LIMITS } from '../../src/sandbox/rate-limit.ts';
import { flexRoutes } from '../../src/sandbox/routes/flex.ts';
import { mainAccountRoutes } from '../../src/sandbox/routes/main-account.ts';
import { publicRoutes } from '../../src/sandbox/routes/public.ts';
import { tradeRoutes } from '../../src/sandbox/routes/trade.ts';
import { Harness, PATHS, manualClock } from './helpers.ts';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

describe('rate limits', () => {
  it('are the strictest documented value per endpoint, per 10 seconds, and the client keeps under the same table', () => {
    expect(SANDBOX_RATE_LIMITS).toEqual({
      public: { limit: 2000, windowMs: 10_000 },
      'order-book': { limit: 600, windowMs: 10_000 },
      kline: { limit: 1000, windowMs: 10_000 },
      'main-account': { limit: 1000, windowMs: 10_000 },
      trade: { limit: 10_000, windowMs: 10_000 },
      'trade-query': { limit: 12_000, windowMs: 10_000 },
      'active-orders': { limit: 1000, windowMs: 10_000 },
    });
    expect(DEFAULT_RATE_LIMITS).toBe(SANDBOX_RATE_LIMITS);
  });

  it('count each sandbox endpoint in the scope the client counts it in', () => {
    const routes = [...publicRoutes, ...mainAccountRoutes, ...flexRoutes, ...tradeRoutes];
    const examples: Record<string, string> = { '/api/v4/public/orderbook/BTC_USDT': 'order-book' };
    for (const route of routes) {
      const path = typeof route.path === 'string' ? route.path : Object.keys(examples).find((p) => (route.path as RegExp).test(p));
      expect(path, String(route.path)).toBeDefined();
      expect([path, route.scope]).toEqual([path, scopeOf(path as string)]);
    }
    expect(scopeOf('/api/v4/orders')).toBe('active-orders');
    expect(scopeOf('/api/v4/public/orderbook/depth/BTC_USDT')).toBe('public');
  });

  it('answer the order book 429 after 600 requests in 10 s, while other public endpoints still answer', async () => {
    const clock = manualClock();
    const h = (harness = await Harness.start({ clock }));
    for (let i = 0; i < 600; i += 1) expect((await h.get('/api/v4/public/orderbook/BTC_USDT')).status).toBe(200);
    expect((await h.get('/api/v4/public/orderbook/BTC_USDT')).status).toBe(429);
    expect((await h.get('/api/v4/public/ping')).status).toBe(200);
    clock.advance(10_000);
    expect((await h.get('/api/v4/public/orderbook/BTC_USDT')).status).toBe(200);
  });

  it('answer 429 with a non-JSON body once a public window is full, and admit again as it slides', async () => {
    const clock = manualClock();
    const h = (harness = await Harness.start({ clock, rateLimitOverrides: { public: { limit: 3, windowMs: 1_000 } } }));
    for (let i = 0; i < 3; i += 1) expect((await h.get('/api/v4/public/ping')).status).toBe(200);
    const limited = await h.get('/api/v4/public/time');
    expect(limited.status).toBe(429);
    expect(limited.contentType).not.toMatch(/json/);
    expect(() => JSON.parse(limited.text)).toThrow();
    clock.advance(999);
    expect((await h.get('/api/v4/public/ping')).status).toBe(429);
    clock.advance(1);
    expect((await h.get('/api/v4/public/ping')).status).toBe(200);
  });

  it('count private calls per key and scope, so the 429 is told apart from a nonce 429 by its body', async () => {
    const h = (harness = await Harness.start({ rateLimitOverrides: { 'main-account': { limit: 2, windowMs: 60_000 } } }));
    expect((await h.post(PATHS.mainBalance)).status).toBe(200);
    expect((await h.post(PATHS.codes)).status).toBe(201);
    const limited = await h.post(PATHS.mainBalance);
    expect([limited.status, limited.json]).toEqual([429, undefined]);
    // Another scope is not affected.
    expect((await h.post(PATHS.tradeBalance)).status).toBe(200);
    // A nonce refusal is a 429 too, but with the exchange's JSON body.
    const nonce = await h.post(PATHS.tradeBalance, {}, { nonce: '1' });
    expect([nonce.status, nonce.json]).toEqual([429, { code: 0, errors: {}, message: 'Your nonce is more than 5 seconds lesser than the current nonce' }]);
  });

  it('can be switched off', async () => {
    const h = (harness = await Harness.start({ rateLimits: false, rateLimitOverrides: { public: { limit: 1, windowMs: 60_000 } } }));
    for (let i = 0; i < 5; i += 1) expect((await h.get('/api/v4/public/ping')).status).toBe(200);
  });
});
