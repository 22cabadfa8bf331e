import { afterEach, describe, expect, it } from 'vitest';
import {
  AuthError,
  ClientOrderIdTakenError,
  ExchangeError,
  ExchangeRefusedError,
  ExchangeValidationError,
  NonceError,
  ProtocolError,
  RateLimitError,
  ServiceUnavailableError,
  ThrottledError,
  outcomeUnknown,
} from '../../src/domain/errors.ts';
import { Decimal } from '../../src/domain/money.ts';
import { mapErrorResponse } from '../../src/api/error-map.ts';
import { decodeBody } from '../../src/api/json.ts';
import { failure, harness, jsonBody, type Harness } from './helpers.ts';

/** The nonces of the signed requests sent so far, in order. */
function sentNonces(h: Harness): number[] {
  return (h.agent.getCallHistory()?.calls() ?? []).map((call) => Number(jsonBody(call.body).nonce));
}

const FLEX = '/api/v4/main-account/smart-flex/investments/withdraw';
const PLAN = '8c1a6e0e-3d1a-4b59-9d7c-0b2b3f1e9a11';

interface Expected {
  readonly cls: new (...args: never[]) => ExchangeError;
  readonly code: string;
  readonly retryable: boolean;
  readonly httpStatus: number;
  readonly exchangeCode: number | null;
  readonly fieldErrors?: Record<string, string[]>;
  readonly exchangeMessage?: string;
}

function expectError(error: unknown, expected: Expected): void {
  expect(error).toBeInstanceOf(expected.cls);
  const e = error as ExchangeError;
  expect(e.code).toBe(expected.code);
  expect(e.retryable).toBe(expected.retryable);
  expect(e.httpStatus).toBe(expected.httpStatus);
  expect(e.exchangeCode).toBe(expected.exchangeCode);
  expect(Object.getPrototypeOf(e.fieldErrors)).toBe(Object.prototype);
  expect(e.fieldErrors).toEqual(expected.fieldErrors ?? {});
  if (expected.exchangeMessage !== undefined) expect(e.exchangeMessage).toBe(expected.exchangeMessage);
}

describe('error mapping through the client', () => {
  let h: Harness;
  afterEach(async () => {
    await h.agent.close();
  });

  function reply(method: 'GET' | 'POST', path: string, status: number, body: string | object): void {
    h.pool.intercept({ path, method }).reply(status, typeof body === 'string' ? body : body);
  }
  const withdraw = (): Promise<unknown> => h.client.flexWithdraw({ plan: PLAN, amount: new Decimal('10') });

  it('rejects a flex withdraw missing its fields with 400 code 0 as validation (validation.required / validation.numeric)', async () => {
    h = harness();
    reply('POST', FLEX, 400, { code: 0, message: 'Validation failed', errors: { plan: ['validation.required'], amount: ['validation.numeric'] } });
    expectError(await failure(withdraw()), {
      cls: ExchangeValidationError,
      code: 'E_EXCHANGE_VALIDATION',
      retryable: false,
      httpStatus: 400,
      exchangeCode: 0,
      fieldErrors: { plan: ['validation.required'], amount: ['validation.numeric'] },
      exchangeMessage: 'Validation failed',
    });
  });

  it('rejects a flex withdraw above the invested amount with 422 code 2 under `amount` as a refusal', async () => {
    h = harness();
    reply('POST', FLEX, 422, { code: 2, message: 'Inner validation failed', errors: { amount: ['Withdraw amount exceeds total invested'] } });
    const error = await failure(withdraw());
    expectError(error, {
      cls: ExchangeRefusedError,
      code: 'E_EXCHANGE_REFUSED',
      retryable: false,
      httpStatus: 422,
      exchangeCode: 2,
      fieldErrors: { amount: ['Withdraw amount exceeds total invested'] },
    });
    expect(outcomeUnknown(error)).toBe(false);
    expect((error as ExchangeError).path).toBe(FLEX);
  });

  it('rejects a flex withdraw without an active investment with 422 code 2 under `plan`, whatever the message says', async () => {
    h = harness();
    reply('POST', FLEX, 422, { code: 2, message: 'No active investment', errors: { plan: ['The user has no active investment in this plan.'] } });
    expectError(await failure(withdraw()), {
      cls: ExchangeRefusedError,
      code: 'E_EXCHANGE_REFUSED',
      retryable: false,
      httpStatus: 422,
      exchangeCode: 2,
      fieldErrors: { plan: ['The user has no active investment in this plan.'] },
    });
  });

  it('keeps no control character of an exchange\'s text: printed on a terminal, one would be an escape sequence (a cleared screen, a window title)', async () => {
    h = harness({ retry: false });
    reply('POST', '/api/v4/trade-account/balance', 422, { code: 30, message: 'Validation failed\u001b]0;owned\u0007\u001b[2J', errors: { 'amount\u001b[31m': ['too\u009b small\r\n'] } });
    const error = (await failure(h.client.tradeBalances())) as ExchangeError;
    expect(error.exchangeMessage).toBe('Validation failed ]0;owned  [2J');
    expect(error.fieldErrors).toEqual({ 'amount [31m': ['too  small  '] });
  });

  it('reads a JSON 429 "Too many requests." on a signed request as a nonce error, not a rate limit', async () => {
    h = harness();
    for (let i = 0; i < 3; i += 1) reply('POST', '/api/v4/trade-account/balance', 429, { code: 0, errors: {}, message: 'Too many requests.' });
    expectError(await failure(h.client.tradeBalances()), { cls: NonceError, code: 'E_NONCE', retryable: false, httpStatus: 429, exchangeCode: 0 });
    // A refusal at the door, for a nonce another process on the key drew: signed twice more,
    // each time a random 1–250 ms past the refused one (random() is 0.5 here: 126 ms), never
    // as a rate-limit retry. The clock stands still, so the gaps are the skips alone.
    expect(sentNonces(h)).toEqual([0, 127, 254].map((gap) => 1_760_000_000_000 + gap));
  });

  it('reads a 5xx as the service failing even when its body is worded as a nonce refusal: an order behind it may be done, and is never signed again', async () => {
    h = harness({ retry: false });
    reply('POST', '/api/v4/order/stock_market', 503, { code: 0, errors: {}, message: 'Too many requests.' });
    const error = await failure(h.client.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.001'), clientOrderId: 'dca-1' }));
    expectError(error, { cls: ServiceUnavailableError, code: 'E_UNAVAILABLE', retryable: true, httpStatus: 503, exchangeCode: 0 });
    expect(outcomeUnknown(error)).toBe(true);
    expect(sentNonces(h)).toHaveLength(1);
  });

  it('without nonceWindow ("greater than the last"), signs a refused nonce again once, with the next one', async () => {
    h = harness({ nonceWindow: false });
    for (let i = 0; i < 2; i += 1) reply('POST', '/api/v4/trade-account/balance', 429, { code: 0, errors: {}, message: 'Too many requests.' });
    expectError(await failure(h.client.tradeBalances()), { cls: NonceError, code: 'E_NONCE', retryable: false, httpStatus: 429, exchangeCode: 0 });
    expect(sentNonces(h)).toEqual([1_760_000_000_000, 1_760_000_000_001]);
  });

  it('reads a non-JSON 429 from the gateway as a rate limit', async () => {
    h = harness({ retry: false });
    reply('POST', '/api/v4/trade-account/balance', 429, '<html><body><h1>429 Too Many Requests</h1></body></html>');
    expectError(await failure(h.client.tradeBalances()), {
      cls: RateLimitError,
      code: 'E_RATE_LIMIT',
      retryable: true,
      httpStatus: 429,
      exchangeCode: null,
      exchangeMessage: '429 Too Many Requests',
    });
  });

  it('reads "Too many requests." on a public (unsigned) endpoint as a rate limit: there is no nonce to blame', async () => {
    h = harness({ retry: false });
    reply('GET', '/api/v4/public/markets', 429, { code: 0, errors: {}, message: 'Too many requests.' });
    expectError(await failure(h.client.markets()), { cls: RateLimitError, code: 'E_RATE_LIMIT', retryable: true, httpStatus: 429, exchangeCode: 0 });
  });

  it('reads the transfer throttle "Too Many Attempts." as a rate limit even on a 400, and as a refusal: the transfer did not happen', async () => {
    h = harness();
    reply('POST', '/api/v4/main-account/transfer', 400, { message: 'Too Many Attempts.', code: 0 });
    const error = await failure(h.client.transferToSpot({ ticker: 'USDT', amount: new Decimal('5') }));
    expectError(error, { cls: ThrottledError, code: 'E_RATE_LIMIT', retryable: true, httpStatus: 400, exchangeCode: 0 });
    expect(outcomeUnknown(error)).toBe(false);
  });

  it.each([400, 429])('reads the same throttle on an order (HTTP %i) as not placed: the exchange turned it away before doing anything', async (status) => {
    h = harness();
    reply('POST', '/api/v4/order/stock_market', status, { message: 'Too Many Attempts.', code: 0 });
    const error = await failure(h.client.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.001') }));
    expectError(error, { cls: ThrottledError, code: 'E_RATE_LIMIT', retryable: true, httpStatus: status, exchangeCode: 0 });
    expect(outcomeUnknown(error)).toBe(false);
    expect(h.calls()).toBe(1);
  });

  it("reads a gateway's 429 text on an order as a lost answer, and so a 5xx whatever its body: the backend may have taken it", async () => {
    h = harness();
    reply('POST', '/api/v4/order/stock_market', 429, '<html>429 Too Many Requests</html>');
    const gateway = await failure(h.client.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.001') }));
    expect(gateway).toBeInstanceOf(RateLimitError);
    expect(gateway).not.toBeInstanceOf(ThrottledError);
    expect(outcomeUnknown(gateway)).toBe(true);
    reply('POST', '/api/v4/order/stock_market', 502, { message: 'Too Many Attempts.', code: 0 });
    const failing = await failure(h.client.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.001') }));
    expect(failing).not.toBeInstanceOf(ThrottledError);
    expect(outcomeUnknown(failing)).toBe(true);
  });

  it('reads an order answered 200 with an error body that names no refusal ({success:false,message:"Internal error"}) as an answer it cannot read: a lost answer, never a refusal', async () => {
    h = harness();
    reply('POST', '/api/v4/order/stock_market', 200, { success: false, message: 'Internal error', result: null });
    const error = await failure(h.client.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.001'), clientOrderId: 'ok-1' }));
    expectError(error, { cls: ProtocolError, code: 'E_PROTOCOL', retryable: false, httpStatus: 200, exchangeCode: null, exchangeMessage: 'Internal error' });
    expect(outcomeUnknown(error)).toBe(true);
    // Naming a field does not make it a refusal on an order: the backend may have placed it.
    reply('POST', '/api/v4/order/stock_market', 200, { success: false, message: { amount: ['Something went wrong.'] }, result: null });
    const naming = await failure(h.client.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.001'), clientOrderId: 'ok-1b' }));
    expect(naming).toBeInstanceOf(ProtocolError);
    expect(outcomeUnknown(naming)).toBe(true);
    // Nor do words that would be a refusal in a 4xx.
    reply('POST', '/api/v4/order/stock_market', 200, { success: false, message: { amount: ['Not enough balance.'] }, result: null });
    const balance = await failure(h.client.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.001'), clientOrderId: 'ok-1c' }));
    expect(balance).toBeInstanceOf(ProtocolError);
    expect(outcomeUnknown(balance)).toBe(true);
  });

  it('reads "This client order id is already used" (code 36) as the order that id names being at the exchange: a lost answer, looked up, never a refusal', async () => {
    h = harness();
    const fieldErrors = { clientOrderId: ['This client order id is already used by the current account.'] };
    reply('POST', '/api/v4/order/stock_market', 422, { code: 36, message: 'Validation failed', errors: fieldErrors });
    const error = await failure(h.client.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.001'), clientOrderId: 'ok-2' }));
    expectError(error, { cls: ClientOrderIdTakenError, code: 'E_EXCHANGE_VALIDATION', retryable: false, httpStatus: 422, exchangeCode: 36, fieldErrors });
    expect(outcomeUnknown(error)).toBe(true);
    // Another clientOrderId problem is the request's own: refused.
    reply('POST', '/api/v4/order/stock_market', 422, { code: 36, message: 'Validation failed', errors: { clientOrderId: ['ClientOrderId field should contain only latin letters, numbers and dashes.'] } });
    const malformed = await failure(h.client.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.001'), clientOrderId: 'ok-3' }));
    expect(malformed).toBeInstanceOf(ExchangeValidationError);
    expect(outcomeUnknown(malformed)).toBe(false);
  });

  it.each([
    [400, { code: 0, message: 'Nonce not provided.' }],
    [400, { code: 0, message: 'Your nonce is more than 5 seconds lesser than the current nonce' }],
    [422, { code: 0, message: 'Invalid nonceWindow.' }],
  ])('reads nonce messages as nonce errors on any status (%i %j)', async (status, body) => {
    h = harness();
    reply('POST', '/api/v4/main-account/balance', status, body);
    expectError(await failure(h.client.mainBalances()), { cls: NonceError, code: 'E_NONCE', retryable: false, httpStatus: status, exchangeCode: 0 });
  });

  it.each([
    [401, { code: 10, message: 'Unauthorized request.' }, 10],
    [400, { code: 9, message: 'Invalid payload.' }, 9],
    [403, { code: 0, message: "You don't have permission to use this endpoint. Please contact support for more details" }, 0],
    [422, { code: 2, message: 'This action is unauthorized. Enable your key in API settings' }, 2],
    [401, { code: 4, message: 'This API Key is not authorized to perform this action.' }, 4],
    [400, { code: 0, message: 'Payload not provided.' }, 0],
    [400, { code: 0, message: 'Request not provided.' }, 0],
    [401, { code: 0, message: 'Invalid API key, signature, or nonce' }, 0],
    [403, { message: 'Forbidden' }, null],
  ])('reads %i %j as an auth failure', async (status, body, exchangeCode) => {
    h = harness();
    reply('POST', '/api/v4/main-account/balance', status, body);
    expectError(await failure(h.client.mainBalances()), { cls: AuthError, code: 'E_AUTH', retryable: false, httpStatus: status, exchangeCode });
    expect(h.calls()).toBe(1);
  });

  it.each([
    [403, '<html><head><title>Attention Required! | Cloudflare</title></head><body>Sorry, you have been blocked. Ray ID: 8a1b</body></html>'],
    [401, '401 Authorization Required'],
    [403, ''],
  ])("reads a %i that is not the exchange's JSON (%j) as a gateway's block: transient, not an auth failure, and says so", async (status, body) => {
    h = harness({ retry: false });
    reply('POST', '/api/v4/trade-account/balance', status, body);
    const error = await failure(h.client.tradeBalances());
    expectError(error, { cls: RateLimitError, code: 'E_RATE_LIMIT', retryable: true, httpStatus: status, exchangeCode: null });
    expect((error as ExchangeError).exchangeMessage).toMatch(/^blocked by a gateway in front of the exchange \(not the exchange's JSON, so no verdict on the API key\): /);
    if (status === 403 && body !== '') expect((error as ExchangeError).exchangeMessage).toContain('Attention Required! | Cloudflare Sorry, you have been blocked.');
  });

  it("retries a read a gateway's 403 page blocked once, and reads the answer after it", async () => {
    h = harness();
    reply('POST', '/api/v4/trade-account/balance', 403, '<html><title>Attention Required! | Cloudflare</title></html>');
    reply('POST', '/api/v4/trade-account/balance', 200, { USDT: { available: '5', freeze: '0' } });
    const balances = await h.client.tradeBalances();
    expect(balances.get('USDT')?.available.toFixed()).toBe('5');
    expect(h.calls()).toBe(2);
  });

  it('reads a 503 HTML maintenance page as service unavailable (retryable, outcome unknown for a write)', async () => {
    h = harness();
    reply('POST', '/api/v4/order/stock_market', 503, '<!DOCTYPE html><html><head><title>Maintenance</title></head><body>We are down for maintenance</body></html>');
    const error = await failure(h.client.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.001') }));
    expectError(error, { cls: ServiceUnavailableError, code: 'E_UNAVAILABLE', retryable: true, httpStatus: 503, exchangeCode: null });
    expect((error as ExchangeError).exchangeMessage).toBe('Maintenance We are down for maintenance');
    expect(outcomeUnknown(error)).toBe(true);
  });

  it('reads 500 {"error":["Internal server error."]} as service unavailable with that message', async () => {
    h = harness({ retry: false });
    reply('GET', '/api/v4/public/markets', 500, { error: ['Internal server error.'] });
    expectError(await failure(h.client.markets()), {
      cls: ServiceUnavailableError,
      code: 'E_UNAVAILABLE',
      retryable: true,
      httpStatus: 500,
      exchangeCode: null,
      exchangeMessage: 'Internal server error.',
    });
  });

  it('reads the legacy envelope {response:null,status:422,errors:{…}} (no code) as validation', async () => {
    h = harness();
    reply('POST', '/api/v4/orders', 422, {
      response: null,
      status: 422,
      errors: { orderId: ['Finished order id 435453454535 not found on your account'] },
      notification: null,
      warning: 'Finished order id 435453454535 not found on your account',
      _token: null,
    });
    expectError(await failure(h.client.activeOrders({ market: 'BTC_USDT', orderId: '435453454535' })), {
      cls: ExchangeValidationError,
      code: 'E_EXCHANGE_VALIDATION',
      retryable: false,
      httpStatus: 422,
      exchangeCode: null,
      fieldErrors: { orderId: ['Finished order id 435453454535 not found on your account'] },
    });
  });

  it('reads the legacy envelope inside an HTTP 200 as an error, not as data', async () => {
    h = harness();
    reply('POST', '/api/v4/trade-account/balance', 200, { response: null, status: 422, errors: { ticker: ['Currency was not found.'] }, notification: null });
    expectError(await failure(h.client.tradeBalance('XYZ')), {
      cls: ExchangeValidationError,
      code: 'E_EXCHANGE_VALIDATION',
      retryable: false,
      httpStatus: 200,
      exchangeCode: null,
      fieldErrors: { ticker: ['Currency was not found.'] },
    });
  });

  it('reads the legacy 503 envelope as service unavailable', async () => {
    h = harness({ retry: false });
    reply('POST', '/api/v4/trade-account/balance', 503, { response: null, status: 503, errors: { message: [''] }, notification: null });
    expectError(await failure(h.client.tradeBalances()), { cls: ServiceUnavailableError, code: 'E_UNAVAILABLE', retryable: true, httpStatus: 503, exchangeCode: null });
  });

  it('reads an HTTP 200 {success:false,message:"Service is temporarily unavailable"} on an order as service unavailable: a lost answer, looked up, never a refusal', async () => {
    h = harness({ retry: false });
    reply('POST', '/api/v4/order/stock_market', 200, { success: false, message: 'Service is temporarily unavailable', result: null });
    const error = await failure(h.client.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.001'), clientOrderId: 'a' }));
    expectError(error, { cls: ServiceUnavailableError, code: 'E_UNAVAILABLE', retryable: true, httpStatus: 200, exchangeCode: null, exchangeMessage: 'Service is temporarily unavailable' });
    expect(outcomeUnknown(error)).toBe(true);
  });

  it('reads a flat public 422 {"market":["Market is not available."]} as validation', async () => {
    h = harness();
    reply('GET', '/api/v4/public/orderbook/NOPE_USDT', 422, { market: ['Market is not available.'] });
    expectError(await failure(h.client.orderBook('NOPE_USDT')), {
      cls: ExchangeValidationError,
      code: 'E_EXCHANGE_VALIDATION',
      retryable: false,
      httpStatus: 422,
      exchangeCode: null,
      fieldErrors: { market: ['Market is not available.'] },
    });
  });

  it('reads the public error body {success:false,message,params:[]} as validation', async () => {
    h = harness();
    reply('GET', '/api/v4/public/ticker', 400, { success: false, message: 'ERROR MESSAGE', params: [] });
    expectError(await failure(h.client.tickers()), {
      cls: ExchangeValidationError,
      code: 'E_EXCHANGE_VALIDATION',
      retryable: false,
      httpStatus: 400,
      exchangeCode: null,
      exchangeMessage: 'ERROR MESSAGE',
    });
  });

  it('reads an HTTP 200 {success:false,message:{field:[…]},result:null} as validation with field errors', async () => {
    h = harness();
    reply('GET', '/api/v4/public/markets', 200, { success: false, message: { end: ['End field must be greater then start.'] }, result: null });
    expectError(await failure(h.client.markets()), {
      cls: ExchangeValidationError,
      code: 'E_EXCHANGE_VALIDATION',
      retryable: false,
      httpStatus: 200,
      exchangeCode: null,
      fieldErrors: { end: ['End field must be greater then start.'] },
    });
  });

  it('reads {success:false,message,errors:[]} with an empty errors array as a plain empty field map', async () => {
    h = harness();
    reply('GET', '/api/v4/public/ticker', 451, { success: false, message: 'Not available in your region', errors: [] });
    expectError(await failure(h.client.tickers()), { cls: ExchangeRefusedError, code: 'E_EXCHANGE_REFUSED', retryable: false, httpStatus: 451, exchangeCode: null, fieldErrors: {} });
  });

  it('reads "Not enough balance." under code 32 "Validation failed" as a refusal (a business rule, not bad input)', async () => {
    h = harness();
    reply('POST', '/api/v4/order/stock_market', 422, { code: 32, message: 'Validation failed', errors: { amount: ['Not enough balance.'] } });
    expectError(await failure(h.client.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('1') })), {
      cls: ExchangeRefusedError,
      code: 'E_EXCHANGE_REFUSED',
      retryable: false,
      httpStatus: 422,
      exchangeCode: 32,
      fieldErrors: { amount: ['Not enough balance.'] },
    });
  });

  it('reads an order 400 "Inner validation failed" code 10 as a refusal', async () => {
    h = harness();
    reply('POST', '/api/v4/order/market', 400, { code: 10, message: 'Inner validation failed', errors: { amount: ['Not enough balance.'] } });
    expectError(await failure(h.client.buyMarket({ market: 'BTC_USDT', quoteAmount: new Decimal('10') })), {
      cls: ExchangeRefusedError,
      code: 'E_EXCHANGE_REFUSED',
      retryable: false,
      httpStatus: 400,
      exchangeCode: 10,
      fieldErrors: { amount: ['Not enough balance.'] },
    });
  });

  it('reads order validation codes 30–43 as validation (36: clientOrderId)', async () => {
    h = harness();
    reply('POST', '/api/v4/order/stock_market', 422, { code: 36, message: 'Validation failed', errors: { clientOrderId: ['This client order id is already used by the current account.'] } });
    expectError(await failure(h.client.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('1'), clientOrderId: 'dup' })), {
      cls: ExchangeValidationError,
      code: 'E_EXCHANGE_VALIDATION',
      retryable: false,
      httpStatus: 422,
      exchangeCode: 36,
      fieldErrors: { clientOrderId: ['This client order id is already used by the current account.'] },
    });
  });

  it('reads the EU region 453 as validation', async () => {
    h = harness();
    reply('POST', '/api/v4/order/market', 453, { code: 30, message: 'Validation failed', errors: { orderType: ['This order type is not available'] } });
    expectError(await failure(h.client.buyMarket({ market: 'BTC_EUR', quoteAmount: new Decimal('10') })), {
      cls: ExchangeValidationError,
      code: 'E_EXCHANGE_VALIDATION',
      retryable: false,
      httpStatus: 453,
      exchangeCode: 30,
      fieldErrors: { orderType: ['This order type is not available'] },
    });
  });

  it('reads an empty 404 and a non-JSON 200 as protocol errors', async () => {
    h = harness();
    reply('GET', '/api/v4/public/markets', 404, '');
    reply('GET', '/api/v4/public/ticker', 200, 'OK');
    expectError(await failure(h.client.markets()), { cls: ProtocolError, code: 'E_PROTOCOL', retryable: false, httpStatus: 404, exchangeCode: null });
    expectError(await failure(h.client.tickers()), { cls: ProtocolError, code: 'E_PROTOCOL', retryable: false, httpStatus: 200, exchangeCode: null });
  });

  it('answers an order-history lookup of an unknown clientOrderId (422 "OrderHistory was not found.") with no orders, a success in the request log (the metrics counted it a validation error)', async () => {
    h = harness();
    reply('POST', '/api/v4/trade-account/order/history', 422, { code: 30, message: 'Validation failed', errors: { orderHistory: ['OrderHistory was not found.'] } });
    expect(await h.client.orderHistory({ clientOrderId: 'never-sent' })).toEqual([]);
    expect(h.events.map((event) => [event.path, event.status, event.errorCode])).toEqual([['/api/v4/trade-account/order/history', 422, null]]);
  });

  it('still fails an order-history lookup on any other validation error', async () => {
    h = harness();
    reply('POST', '/api/v4/trade-account/order/history', 422, { code: 31, message: 'Validation failed', errors: { market: ['Market is not available'] } });
    expect(await failure(h.client.orderHistory({ market: 'NOPE_USDT' }))).toBeInstanceOf(ExchangeValidationError);
  });
});

describe('error mapping rules', () => {
  const map = (status: number, text: string, scope: 'public' | 'main-account' | 'trade' | 'trade-query', signed = true): ExchangeError =>
    mapErrorResponse({ status, path: '/p', scope, signed, body: decodeBody(text) });

  it('lets the message decide over the status: main-account endpoints invert 400 and 422', () => {
    expect(map(422, '{"code":0,"message":"Validation failed","errors":{"ticker":["validation.string"]}}', 'main-account')).toBeInstanceOf(ExchangeValidationError);
    expect(map(400, '{"code":1,"message":"Inner validation failed","errors":{"amount":["Invalid argument."]}}', 'trade-query')).toBeInstanceOf(ExchangeRefusedError);
  });

  it('falls back to the status by endpoint family when the message is unknown', () => {
    expect(map(400, '{"code":0,"message":"?","errors":{}}', 'main-account')).toBeInstanceOf(ExchangeValidationError);
    expect(map(422, '{"code":0,"message":"?","errors":{}}', 'main-account')).toBeInstanceOf(ExchangeRefusedError);
    expect(map(422, '{"code":0,"message":"?","errors":{}}', 'trade')).toBeInstanceOf(ExchangeValidationError);
    expect(map(400, '{"code":0,"message":"?","errors":{}}', 'trade')).toBeInstanceOf(ExchangeRefusedError);
  });

  it('keeps a string field message and drops non-string entries', () => {
    const error = map(422, '{"code":30,"message":"Validation failed","errors":{"amount":"Amount field is required.","side":[1,"Side field is required."]}}', 'trade');
    expect(error.fieldErrors).toEqual({ amount: ['Amount field is required.'], side: ['Side field is required.'] });
  });

  it('takes the legacy 500 body {"errors":{"message":["Server Error"]}} message', () => {
    const error = map(500, '{"errors":{"message":["Server Error"]},"code":null}', 'trade');
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(error.exchangeMessage).toBe('Server Error');
  });
});
