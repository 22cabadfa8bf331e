import { afterEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { NonceSource } from '../../src/api/nonce.ts';
import { SlidingWindowLimiter } from '../../src/api/rate-limit.ts';
import { fixedClock, harness, jsonBody, type Harness } from './helpers.ts';
import { VirtualTime } from './virtual-time.ts';

/** A clock step: stall (same ms), creep forward, leap forward, or jump backwards. */
const clockStep = fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1000, max: 100_000 }), fc.integer({ min: -100_000, max: -1 }));

describe('nonce source', () => {
  it('hands out strictly increasing, unique nonces under concurrent callers while the clock stalls and jumps backwards', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(clockStep, fc.integer({ min: 1, max: 20 })), { minLength: 1, maxLength: 40 }), async (plan) => {
        const clock = fixedClock(1_760_000_000_000);
        const nonces = new NonceSource(clock);
        const drawn: string[] = [];
        const expected: number[] = [];
        let modelLast = 0;
        for (const [step, burst] of plan) {
          clock.advance(step);
          // A burst of concurrent callers, each drawing after its own number of awaits.
          await Promise.all(
            Array.from({ length: burst }, async (_, i) => {
              for (let k = 0; k < i % 3; k++) await Promise.resolve();
              drawn.push(nonces.next());
            }),
          );
          // Model: the clock when it is ahead of the last nonce, else the last nonce plus one.
          for (let i = 0; i < burst; i++) {
            modelLast = clock.nowMs() > modelLast ? clock.nowMs() : modelLast + 1;
            expected.push(modelLast);
          }
        }
        expect(drawn).toEqual(expected.map(String));
        for (let i = 1; i < drawn.length; i++) expect(BigInt(drawn[i]!) > BigInt(drawn[i - 1]!)).toBe(true);
        expect(new Set(drawn).size).toBe(drawn.length);
        expect(drawn.every((n) => /^\d{13,}$/.test(n))).toBe(true);
      }),
    );
  });

  it('follows the clock whenever the clock is ahead', () => {
    const clock = fixedClock(1_000);
    const nonces = new NonceSource(clock);
    expect(nonces.next()).toBe('1000');
    expect(nonces.next()).toBe('1001');
    clock.set(500);
    expect(nonces.next()).toBe('1002');
    clock.set(5_000.9);
    expect(nonces.next()).toBe('5000');
  });
});

describe('nonce source within the exchange\'s window', () => {
  it('counts on past a clock that stalls or steps back a little, and starts again from the clock once the last nonce is further ahead than the window', () => {
    const clock = fixedClock(100_000);
    const nonces = new NonceSource(clock, { windowMs: 5_000 });
    expect(nonces.next()).toBe('100000');
    clock.set(99_000);
    // One second back: still inside the window, so strictly increasing as before.
    expect(nonces.next()).toBe('100001');
    clock.set(160_000);
    expect(nonces.next()).toBe('160000');
    // The clock's correction drops by a minute: counting on from 160000 would be refused forever.
    clock.set(100_000);
    expect(nonces.next()).toBe('100000');
    expect(nonces.next()).toBe('100001');
  });

  it('without the window stays strictly increasing however far the clock steps back', () => {
    const clock = fixedClock(160_000);
    const nonces = new NonceSource(clock);
    expect(nonces.next()).toBe('160000');
    clock.set(100_000);
    expect(nonces.next()).toBe('160001');
  });
});

describe('nonces through the client', () => {
  let h: Harness;
  afterEach(async () => {
    await h.agent.close();
  });

  it('signs 50 concurrent private requests with 50 different nonces while the clock stands still', async () => {
    h = harness();
    h.pool.intercept({ path: '/api/v4/trade-account/balance', method: 'POST' }).reply(200, {}).times(50);
    await Promise.all(Array.from({ length: 50 }, () => h.client.tradeBalances()));
    const sent = (h.agent.getCallHistory()?.calls() ?? []).map((c) => String(jsonBody(c.body).nonce));
    expect(sent).toHaveLength(50);
    expect(new Set(sent).size).toBe(50);
  });
});

describe('rate limiter', () => {
  it('never admits more than `limit` requests in any window, and admits everyone eventually', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 5, max: 2000 }),
        fc.array(fc.integer({ min: 0, max: 3000 }), { minLength: 1, maxLength: 60 }),
        async (limit, windowMs, arrivals) => {
          const time = new VirtualTime(1_000_000);
          const limiter = new SlidingWindowLimiter({ limit, windowMs }, { nowMs: time.nowMs, sleep: time.sleep });
          const admitted: number[] = [];
          const tasks = arrivals.map(async (arrivalMs) => {
            await time.sleep(arrivalMs);
            await limiter.acquire();
            admitted.push(time.nowMs());
          });
          await time.run();
          await Promise.all(tasks);
          expect(admitted).toHaveLength(arrivals.length);
          const sorted = [...admitted].sort((a, b) => a - b);
          // limit+1 admissions always span at least a full window.
          for (let i = 0; i + limit < sorted.length; i++) expect(sorted[i + limit]! - sorted[i]!).toBeGreaterThanOrEqual(windowMs);
        },
      ),
    );
  });

  it('admits without waiting while under the limit', async () => {
    const time = new VirtualTime(0);
    const limiter = new SlidingWindowLimiter({ limit: 3, windowMs: 1000 }, { nowMs: time.nowMs, sleep: time.sleep });
    const admitted: number[] = [];
    const tasks = Array.from({ length: 4 }, async () => {
      await limiter.acquire();
      admitted.push(time.nowMs());
    });
    await time.run();
    await Promise.all(tasks);
    expect(admitted).toEqual([0, 0, 0, 1000]);
  });

  it('does not turn a backwards clock step into a long wait', async () => {
    let now = 10_000_000;
    const slept: number[] = [];
    const limiter = new SlidingWindowLimiter({ limit: 1, windowMs: 1000 }, {
      nowMs: () => now,
      sleep: async (ms) => {
        slept.push(ms);
        now += ms;
      },
    });
    await limiter.acquire();
    now -= 3_600_000;
    await limiter.acquire();
    expect(slept).toEqual([1000]);
  });

  it('keeps each scope to its own budget in the client', async () => {
    const time = new VirtualTime(1_760_000_000_000);
    const h = harness({ rateLimits: { public: { limit: 2, windowMs: 1000 } }, clock: { nowMs: time.nowMs }, sleep: time.sleep });
    try {
      h.pool.intercept({ path: '/api/v4/public/ping', method: 'GET' }).reply(200, ['pong']).times(3);
      h.pool.intercept({ path: '/api/v4/trade-account/balance', method: 'POST' }).reply(200, {}).times(3);
      const done: Array<[string, number]> = [];
      const tasks = [
        ...Array.from({ length: 3 }, () => h.client.ping().then(() => done.push(['public', time.nowMs()]))),
        ...Array.from({ length: 3 }, () => h.client.tradeBalances().then(() => done.push(['trade-query', time.nowMs()]))),
      ];
      await time.run();
      await Promise.all(tasks);
      const start = 1_760_000_000_000;
      expect(done.filter(([s]) => s === 'public').map(([, t]) => t - start)).toEqual([0, 0, 1000]);
      expect(done.filter(([s]) => s === 'trade-query').map(([, t]) => t - start)).toEqual([0, 0, 0]);
    } finally {
      await h.agent.close();
    }
  });
});
