import { afterEach, describe, expect, it } from 'vitest';
import { SANDBOX_RATE_LIMITS } from '../../src/sandbox/rate-limit.ts';
import { Harness, PATHS, manualClock } from './helpers.ts';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

describe('rate limits', () => {
  it('default to the SPEC and WHITEBIT.md numbers per 10 seconds', () => {
    expect(SANDBOX_RATE_LIMITS).toEqual({
      public: { limit: 2000, windowMs: 10_000 },
      'main-account': { limit: 1000, windowMs: 10_000 },
      order: { limit: 10_000, windowMs: 10_000 },
      'trade-query': { limit: 12_000, windowMs: 10_000 },
    });
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
