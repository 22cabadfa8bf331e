import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';
import { ServiceUnavailableError, outcomeUnknown } from '../../src/domain/errors.ts';
import { Decimal } from '../../src/domain/money.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.ts';

// An order refused for its nonce ("Too many requests." as JSON, HTTP 429) is signed again and
// sent once more: a refusal at the exchange's door did nothing. An exchange that took the order
// and still answered so (a throttle using the nonce's words) would fill it twice; the order is
// looked up by its clientOrderId first.
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

  it('that the exchange did not take is sent again, once', async () => {
    sandbox.faults.inject({ path: ORDER_PATH, kind: 'status', status: 429, body: NONCE_REFUSAL, times: 1 });
    const order = await buy();
    expect(sandbox.exchange.orderHistory({}).map((o) => o.orderId)).toEqual([order.orderId]);
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
