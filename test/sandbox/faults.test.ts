import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { signRequest } from '../../src/api/sign.ts';
import { Harness, PATHS } from './helpers.ts';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

const order = (clientOrderId: string) => ({ market: 'BTC_USDT', side: 'buy', amount: '0.001', clientOrderId });

function ordersWith(h: Harness, clientOrderId: string): number {
  return h.sandbox.exchange.orderHistory({ clientOrderId }).length;
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('fault injection', () => {
  it('drop-after-commit: the client sees a reset, the ledger shows the order', async () => {
    const h = (harness = await Harness.start());
    h.sandbox.faults.inject({ path: PATHS.stockMarket, kind: 'drop-after-commit' });
    await expect(h.post(PATHS.stockMarket, order('lost-reply'))).rejects.toThrow();
    expect(ordersWith(h, 'lost-reply')).toBe(1);
    const [placed] = h.sandbox.exchange.orderHistory({ clientOrderId: 'lost-reply' });
    expect(h.sandbox.exchange.ledger().filter((e) => e.ref === placed!.orderId)).toHaveLength(3);
    // The way to resolve it: look the id up.
    const lookup = await h.post(PATHS.history, { clientOrderId: 'lost-reply' });
    expect(lookup.json).toMatchObject({ BTC_USDT: [{ clientOrderId: 'lost-reply', status: 'FILLED' }] });
  });

  it('reset: the connection dies before anything is performed', async () => {
    const h = (harness = await Harness.start());
    h.sandbox.faults.inject({ path: PATHS.stockMarket, kind: 'reset' });
    const ledgerBefore = h.sandbox.exchange.ledger().length;
    await expect(h.post(PATHS.stockMarket, order('never-placed'))).rejects.toThrow();
    expect(ordersWith(h, 'never-placed')).toBe(0);
    expect(h.sandbox.exchange.ledger()).toHaveLength(ledgerBefore);
    // Fired once: the next request goes through.
    expect((await h.post(PATHS.stockMarket, order('placed'))).status).toBe(200);
  });

  it('status: answers the injected status and body without performing', async () => {
    const h = (harness = await Harness.start());
    h.sandbox.faults.inject({ path: PATHS.stockMarket, kind: 'status', status: 503, body: '<html>maintenance</html>', times: 2 });
    for (let i = 0; i < 2; i += 1) {
      const reply = await h.post(PATHS.stockMarket, order('during-maintenance'));
      expect([reply.status, reply.text]).toEqual([503, '<html>maintenance</html>']);
    }
    expect(ordersWith(h, 'during-maintenance')).toBe(0);
    expect((await h.post(PATHS.stockMarket, order('after-maintenance'))).status).toBe(200);
  });

  it('status with commit: performs the operation, then answers the injected status', async () => {
    const h = (harness = await Harness.start());
    h.sandbox.faults.inject({ path: PATHS.flexWithdraw, kind: 'status', status: 500, body: { error: ['Internal server error.'] }, commit: true });
    const investment = h.sandbox.exchange.flexInvestments({ active: true })[0]!;
    const reply = await h.post(PATHS.flexWithdraw, { plan: investment.planId, amount: '10' });
    expect([reply.status, reply.json]).toEqual([500, { error: ['Internal server error.'] }]);
    expect(h.sandbox.exchange.mainBalance('USDT').toFixed()).toBe('10010');
  });

  it('latency: a client that gives up early still leaves a committed order behind', async () => {
    const h = (harness = await Harness.start());
    h.sandbox.faults.inject({ path: PATHS.stockMarket, kind: 'latency', latencyMs: 300 });
    const signed = signRequest(PATHS.stockMarket, h.nextNonce(), order('slow-reply'), h.sandbox.apiKey, h.sandbox.apiSecret, true);
    await expect(
      request(`${h.sandbox.url}${PATHS.stockMarket}`, { method: 'POST', body: signed.body, headers: signed.headers, signal: AbortSignal.timeout(50) }),
    ).rejects.toThrow();
    expect(ordersWith(h, 'slow-reply')).toBe(0);
    await until(() => ordersWith(h, 'slow-reply') === 1);
    expect(ordersWith(h, 'slow-reply')).toBe(1);
  });

  it('latency: the nonce is checked when the request arrives, so an order performed 8 s late is still taken', async () => {
    let elapsedMs = 0;
    const h = (harness = await Harness.start({ clock: { nowMs: () => Date.now() + elapsedMs } }));
    h.sandbox.faults.inject({ path: PATHS.stockMarket, kind: 'latency', latencyMs: 200 });
    const pending = h.post(PATHS.stockMarket, order('late-but-signed-in-time'));
    await until(() => h.sandbox.faults.pending().length === 0);
    // While the exchange sits on it, its clock moves past the ±5 s window of the nonce.
    elapsedMs = 8_000;
    expect((await pending).status).toBe(200);
    expect(ordersWith(h, 'late-but-signed-in-time')).toBe(1);
  });

  it('latency: stopping the sandbox during the delay performs nothing', async () => {
    const h = (harness = await Harness.start());
    h.sandbox.faults.inject({ path: PATHS.stockMarket, kind: 'latency', latencyMs: 60_000 });
    const pending = h.post(PATHS.stockMarket, order('stopped-while-waiting'));
    await until(() => h.sandbox.faults.pending().length === 0);
    await h.sandbox.stop();
    await expect(pending).rejects.toThrow();
    expect(ordersWith(h, 'stopped-while-waiting')).toBe(0);
  });

  it('status-word: performs the request and answers its order records with a status stacker does not know', async () => {
    const h = (harness = await Harness.start({ settlement: { steps: 1, stepMs: 60_000 } }));
    h.sandbox.faults.inject({ path: PATHS.stockMarket, kind: 'status-word', statusWord: 'ACCEPTED' });
    h.sandbox.faults.inject({ path: PATHS.activeOrders, kind: 'status-word', statusWord: 'ACCEPTED' });
    const placed = await h.post(PATHS.stockMarket, order('not-matched-yet'));
    expect(placed.json).toMatchObject({ clientOrderId: 'not-matched-yet', status: 'ACCEPTED', dealStock: '0' });
    expect(h.sandbox.exchange.activeOrders({ clientOrderId: 'not-matched-yet' })).toHaveLength(1);
    const active = await h.post(PATHS.activeOrders, { market: 'BTC_USDT' });
    expect(active.json).toMatchObject([{ clientOrderId: 'not-matched-yet', status: 'ACCEPTED' }]);
    // Fired once each: the sandbox's own word again after that.
    expect((await h.post(PATHS.activeOrders, { market: 'BTC_USDT' })).json).toMatchObject([{ status: 'NEW' }]);
    // A refusal carries no order and is left alone.
    h.sandbox.faults.inject({ path: PATHS.stockMarket, kind: 'status-word', statusWord: 'ACCEPTED' });
    const refused = await h.post(PATHS.stockMarket, { ...order('refused'), amount: 'x' });
    expect(refused.status).toBe(422);
    expect(refused.json).not.toHaveProperty('status');
  });

  it('status-word on the order history: each row under its market carries the word', async () => {
    const h = (harness = await Harness.start());
    await h.post(PATHS.stockMarket, order('finished'));
    h.sandbox.faults.inject({ path: PATHS.history, kind: 'status-word', statusWord: 'SETTLED' });
    expect((await h.post(PATHS.history, { clientOrderId: 'finished' })).json).toMatchObject({ BTC_USDT: [{ clientOrderId: 'finished', status: 'SETTLED' }] });
  });

  it('fires `times` times (Infinity allowed) on its path only, and clear() disarms everything', async () => {
    const h = (harness = await Harness.start());
    h.sandbox.faults.inject({ path: '/api/v4/public/ping', kind: 'status', status: 502, times: Infinity });
    for (let i = 0; i < 3; i += 1) expect((await h.get('/api/v4/public/ping')).status).toBe(502);
    expect((await h.get('/api/v4/public/time')).status).toBe(200);
    h.sandbox.faults.clear();
    expect(h.sandbox.faults.pending()).toEqual([]);
    expect((await h.get('/api/v4/public/ping')).status).toBe(200);
  });

  it('refuses malformed fault specs', async () => {
    const h = (harness = await Harness.start());
    expect(() => h.sandbox.faults.inject({ path: PATHS.stockMarket, kind: 'status' })).toThrow(/status/);
    expect(() => h.sandbox.faults.inject({ path: PATHS.stockMarket, kind: 'latency' })).toThrow(/latencyMs/);
    expect(() => h.sandbox.faults.inject({ path: 'api/v4', kind: 'reset' })).toThrow(/path/);
    expect(() => h.sandbox.faults.inject({ path: PATHS.stockMarket, kind: 'reset', times: 0 })).toThrow(/times/);
    expect(() => h.sandbox.faults.inject({ path: PATHS.stockMarket, kind: 'status-word' })).toThrow(/statusWord/);
  });
});
