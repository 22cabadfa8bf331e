import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';
import { NonceWindowError } from '../../src/domain/errors.ts';
import { Decimal } from '../../src/domain/money.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.ts';

// The client against a sandbox whose clock is off this machine's, over real HTTP: with
// nonceWindow the exchange takes a nonce only within ±5 s of its own clock.
let sandbox: Sandbox | undefined;
let client: ApiClient | undefined;
afterEach(async () => {
  await client?.close();
  await sandbox?.stop();
  client = sandbox = undefined;
});

/** A sandbox whose clock runs `skew.ms` ahead of this machine's; the test may move it. */
async function skewedSandbox(skew: { ms: number }): Promise<Sandbox> {
  sandbox = await startSandbox({ clock: { nowMs: () => Date.now() + skew.ms } });
  return sandbox;
}

function clientOf(s: Sandbox): ApiClient {
  client = new ApiClient({ baseUrl: s.url, credentials: { apiKey: s.apiKey, apiSecret: s.apiSecret }, retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 } });
  return client;
}

describe("signing against the exchange's clock", () => {
  it('measures how far the exchange runs ahead or behind, to within a second, and signs so private calls pass', async () => {
    for (const ms of [30_000, -45_000]) {
      const s = await skewedSandbox({ ms });
      const c = clientOf(s);
      expect((await c.tradeBalance('USDT')).available.toFixed()).toBe('1000');
      const offset = await c.clockOffsetMs();
      expect(Math.abs((offset ?? 0) - ms)).toBeLessThan(1000);
      await c.close();
      await s.stop();
      client = sandbox = undefined;
    }
  });

  it('would be refused without the correction: the skew is real', async () => {
    const s = await skewedSandbox({ ms: 30_000 });
    client = new ApiClient({ baseUrl: s.url, credentials: { apiKey: s.apiKey, apiSecret: s.apiSecret }, clock: { nowMs: () => Date.now() } });
    // A client whose "exchange time" reads fail keeps local time and cannot correct.
    s.faults.inject({ path: '/api/v4/public/time', kind: 'status', status: 503, body: 'maintenance', times: 10 });
    const error = await client.tradeBalance('USDT').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NonceWindowError);
    expect((error as Error).message).toMatch(/could not be read to correct it/);
    expect((error as Error).message).toMatch(/set this machine's clock right \(NTP\)/);
  });

  it('re-measures after a window refusal and sends an order once more, exactly once placed', async () => {
    const skew = { ms: 0 };
    const s = await skewedSandbox(skew);
    const c = clientOf(s);
    expect((await c.tradeBalance('USDT')).available.toFixed()).toBe('1000');
    // The exchange's clock jumps after the client measured it (within the ten minutes it trusts a measure).
    skew.ms = 60_000;
    const order = await c.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.001'), clientOrderId: 'after-skew-1' });
    expect(order.clientOrderId).toBe('after-skew-1');
    expect(s.exchange.orderHistory({ clientOrderId: 'after-skew-1' })).toHaveLength(1);
    expect(Math.abs(((await c.clockOffsetMs()) ?? 0) - 60_000)).toBeLessThan(1000);
  });

  it("keeps trading when this machine's clock, behind the exchange's, is stepped forward (NTP after a VM resumed): the next order is placed once", async () => {
    // The host runs a minute behind: the client measures it and signs a minute ahead of local time.
    const skew = { ms: 60_000 };
    const s = await skewedSandbox(skew);
    const c = clientOf(s);
    expect((await c.tradeBalance('USDT')).available.toFixed()).toBe('1000');
    // NTP steps the host clock forward by that minute, inside the ten minutes a measure is trusted.
    skew.ms = 0;
    const order = await c.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.001'), clientOrderId: 'after-step-1' });
    expect(order.clientOrderId).toBe('after-step-1');
    expect(s.exchange.orderHistory({ clientOrderId: 'after-step-1' })).toHaveLength(1);
    expect((await c.tradeBalance('USDT')).available.lt('1000')).toBe(true);
  });

  it('says the clock cannot be corrected when the refusal comes back after re-measuring', async () => {
    const s = await skewedSandbox({ ms: 0 });
    const c = clientOf(s);
    await c.tradeBalance('USDT');
    // Time answers truthfully, but every signed request meets a clock 20 s further on: no measure fixes that.
    s.faults.inject({ path: '/api/v4/trade-account/balance', kind: 'status', status: 429, body: { code: 0, errors: {}, message: 'Your nonce is more than 5 seconds lesser than the current nonce' }, times: 2 });
    const error = await c.tradeBalance('USDT').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NonceWindowError);
    expect((error as Error).message).toMatch(/even after correcting for the -?0\.\d s measured/);
  });
});
