import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';
import { ServiceUnavailableError, outcomeUnknown } from '../../src/domain/errors.ts';
import { Decimal } from '../../src/domain/money.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.ts';

// An order refused for its nonce ("Too many requests." as JSON, HTTP 429) is looked up by its
// clientOrderId: an exchange that took it and still answered so (a throttle using the nonce's
// words) answers with it. Not found at once (a history may lag), it is a lost answer, never sent
// again: the answer cannot tell a refusal at the door from a throttle after the fact.
const ORDER_PATH = '/api/v4/order/stock_market';
const HISTORY_PATH = '/api/v4/trade-account/order/history';
const NONCE_REFUSAL = { code: 0, errors: {}, message: 'Too many requests.' };

let sandbox: Sandbox;
let client: ApiClient;
beforeEach(async () => {
  sandbox = await startSandbox();
  client = new ApiClient({ baseUrl: sandbox.url, credentials: { apiKey: sandbox.apiKey, apiSecret: sandbox.apiSecret } });
});
afterEach(async () => {
  await client.close();
  await sandbox.stop();
});

const buy = () => client.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.001'), clientOrderId: 'nonce-1' });

describe('an order refused for its nonce', () => {
  it('that the exchange took all the same is found by its clientOrderId, answered with it, and not sent again', async () => {
    sandbox.faults.inject({ path: ORDER_PATH, kind: 'status', status: 429, body: NONCE_REFUSAL, commit: true, times: 1 });
    const order = await buy();
    const placed = sandbox.exchange.orderHistory({});
    expect(placed).toHaveLength(1);
    expect(order).toMatchObject({ orderId: placed[0]?.orderId, clientOrderId: 'nonce-1' });
  });

  it('that the exchange took and its history does not show yet is a lost answer, not sent again: never bought twice', async () => {
    sandbox.faults.historyLagMs = 1_000;
    sandbox.faults.inject({ path: ORDER_PATH, kind: 'status', status: 429, body: NONCE_REFUSAL, commit: true, times: 1 });
    const error = await buy().then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(outcomeUnknown(error)).toBe(true);
    expect((error as Error).message).toMatch(/not sent again on an answer that cannot tell/);
    expect(sandbox.exchange.orderHistory({})).toHaveLength(1);
  });

  it('that the exchange did not take is a lost answer too, not sent again: its words cannot tell it from a throttle after the fact', async () => {
    sandbox.faults.inject({ path: ORDER_PATH, kind: 'status', status: 429, body: NONCE_REFUSAL, times: 1 });
    const error = await buy().then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(outcomeUnknown(error)).toBe(true);
    expect(sandbox.exchange.orderHistory({})).toHaveLength(0);
  });

  it('is a lost answer, not sent again, when it cannot be looked up', async () => {
    sandbox.faults.inject({ path: ORDER_PATH, kind: 'status', status: 429, body: NONCE_REFUSAL, commit: true, times: 1 });
    sandbox.faults.inject({ path: HISTORY_PATH, kind: 'status', status: 503, body: 'maintenance', times: 10 });
    const error = await buy().then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(outcomeUnknown(error)).toBe(true);
    expect((error as Error).message).toMatch(/looking it up before sending it again failed.*whether the exchange took it is not known/);
    expect(sandbox.exchange.orderHistory({})).toHaveLength(1);
  });
});
