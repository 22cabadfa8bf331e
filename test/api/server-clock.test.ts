import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';
import { NonceWindowError, outcomeUnknown } from '../../src/domain/errors.ts';
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

/**
 * The client measures the exchange's clock `fromMs` ahead of this machine's, then (within the ten
 * minutes it trusts a measure) the two move apart to `toMs`, and an order goes out: it must be
 * placed exactly once.
 */
async function orderAcrossClockJump(fromMs: number, toMs: number, clientOrderId: string): Promise<ApiClient> {
  const skew = { ms: fromMs };
  const s = await skewedSandbox(skew);
  const c = clientOf(s);
  expect((await c.tradeBalance('USDT')).available.toFixed()).toBe('1000');
  skew.ms = toMs;
  const order = await c.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.001'), clientOrderId });
  expect(order.clientOrderId).toBe(clientOrderId);
  expect(s.exchange.orderHistory({ clientOrderId })).toHaveLength(1);
  return c;
}

/**
 * The sandbox takes the next order, then answers it refused for its nonce's time, as a gateway
 * sending it again would get it; its history shows the order only 10 s later, so a lookup at once
 * finds nothing.
 */
function takenThenRefusedForTheWindow(s: Sandbox, side: 'lesser' | 'greater' = 'lesser'): void {
  s.faults.historyLagMs = 10_000;
  s.faults.inject({ path: '/api/v4/order/stock_market', kind: 'status', status: 400, body: { code: 0, errors: {}, message: `Your nonce is more than 5 seconds ${side} than the current nonce` }, commit: true });
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
    // The exchange's clock jumps a minute ahead after the client measured it.
    const c = await orderAcrossClockJump(0, 60_000, 'after-skew-1');
    expect(Math.abs(((await c.clockOffsetMs()) ?? 0) - 60_000)).toBeLessThan(1000);
  });

  it("keeps trading when this machine's clock, behind the exchange's, is stepped forward (NTP after a VM resumed): the next order is placed once", async () => {
    // The host runs a minute behind (the client signs a minute ahead of local time), then NTP
    // steps the host clock forward by that minute.
    const c = await orderAcrossClockJump(60_000, 0, 'after-step-1');
    expect((await c.tradeBalance('USDT')).available.lt('1000')).toBe(true);
  });

  it('does not send an order again after a window refusal the clocks do not explain: they agree, so the refusal came after the nonce left (a gateway sending it again), and the order may be placed', async () => {
    const s = await skewedSandbox({ ms: 0 });
    const c = clientOf(s);
    await c.tradeBalance('USDT');
    takenThenRefusedForTheWindow(s);
    const error = await c.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.001'), clientOrderId: 'gateway-again-1' }).catch((e: unknown) => e);
    expect(outcomeUnknown(error)).toBe(true);
    expect((error as Error).message).toMatch(/although the clocks agree/);
    s.faults.historyLagMs = 0;
    expect(s.exchange.orderHistory({ clientOrderId: 'gateway-again-1' })).toHaveLength(1);
  });

  it("does not send an order again after a window refusal when the exchange's time was never read before it: the clocks, measured now, agree with the nonce it was signed with", async () => {
    const s = await skewedSandbox({ ms: 0 });
    const c = clientOf(s);
    // The exchange's time cannot be read before the order: it is signed on this machine's clock.
    s.faults.inject({ path: '/api/v4/public/time', kind: 'status', status: 503, body: 'maintenance', times: 1 });
    takenThenRefusedForTheWindow(s);
    const error = await c.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.001'), clientOrderId: 'never-measured-1' }).catch((e: unknown) => e);
    expect(outcomeUnknown(error)).toBe(true);
    s.faults.historyLagMs = 0;
    expect(s.exchange.orderHistory({ clientOrderId: 'never-measured-1' })).toHaveLength(1);
  });

  it("does not send an order again after a window refusal when the exchange's time cannot be read to say the clocks disagree: a lost answer, not a clock to fix", async () => {
    const s = await skewedSandbox({ ms: 0 });
    const c = clientOf(s);
    s.faults.inject({ path: '/api/v4/public/time', kind: 'status', status: 503, body: 'maintenance', times: 50 });
    takenThenRefusedForTheWindow(s);
    const error = await c.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.001'), clientOrderId: 'unreadable-1' }).catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(NonceWindowError);
    expect(outcomeUnknown(error)).toBe(true);
    expect((error as Error).message).toMatch(/the exchange's time could not be read to say the clocks disagree/);
    s.faults.historyLagMs = 0;
    expect(s.exchange.orderHistory({ clientOrderId: 'unreadable-1' })).toHaveLength(1);
  });

  it('judges a window refusal against the correction the nonce was drawn with, not the offset measured: a small offset is not corrected for, and a later move of the same size does not explain it', async () => {
    // Measured 1.5 s ahead (too small to correct: the nonce is this machine's time), then the exchange's clock goes to 2.6 s behind:
    // the nonce is 2.6 s off, inside the window, so a window refusal came after it was taken (4.1 s from the offset measured).
    const skew = { ms: 1_500 };
    const s = await skewedSandbox(skew);
    const c = clientOf(s);
    await c.tradeBalance('USDT');
    skew.ms = -2_600;
    takenThenRefusedForTheWindow(s, 'greater');
    const error = await c.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.001'), clientOrderId: 'small-offset-1' }).catch((e: unknown) => e);
    expect(outcomeUnknown(error)).toBe(true);
    s.faults.historyLagMs = 0;
    expect(s.exchange.orderHistory({ clientOrderId: 'small-offset-1' })).toHaveLength(1);
  });

  it('does not send a transfer again after a nonce refusal that cannot tell (a throttle may answer so after the transfer was made): a lost answer, settled by the balances', async () => {
    const s = await skewedSandbox({ ms: 0 });
    const c = clientOf(s);
    const before = await c.mainBalances();
    s.faults.inject({ path: '/api/v4/main-account/transfer', kind: 'status', status: 429, body: { code: 0, errors: {}, message: 'Too many requests.' }, commit: true });
    const error = await c.transferToSpot({ ticker: 'USDT', amount: new Decimal('10') }).catch((e: unknown) => e);
    expect(outcomeUnknown(error)).toBe(true);
    expect((await c.mainBalances()).get('USDT')?.toFixed()).toBe(before.get('USDT')?.sub(10).toFixed());
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
