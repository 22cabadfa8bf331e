import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';
import { mapErrorResponse } from '../../src/api/error-map.ts';
import { scopeOf } from '../../src/api/paths.ts';
import { ExchangeError, ExchangeRefusedError, ExchangeValidationError } from '../../src/domain/errors.ts';
import { LiveExchange } from '../../src/exchange/live.ts';
import { type RefusalStyle, rejectionAnswer } from '../../src/sandbox/responses.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.ts';
import { SimCore } from '../../src/sim/core.ts';
import { parseStp } from '../../src/sim/order-rules.ts';
import { fixedPrices } from '../../src/sim/prices.ts';
import { SimRejection } from '../../src/sim/rejection.ts';
import { toExchangeError } from '../../src/sim/rejection-errors.ts';
import { SimAccount } from '../../src/sim/sim-account.ts';
import { DEMO_EMPTY_FLEX_PLAN_ID, DEMO_FLEX_PLAN_ID, DEMO_MARKETS } from '../../src/sim/seed.ts';
import { d, demoSim, manualClock, rejectionOf } from './helpers.ts';

const ORDER = '/api/v4/order/stock_market';
const QUOTE_ORDER = '/api/v4/order/market';
const TRANSFER = '/api/v4/main-account/transfer';
const CODES = '/api/v4/main-account/codes/my';
const FLEX_WITHDRAW = '/api/v4/main-account/smart-flex/investments/withdraw';

/** Everything the engine can decide on, and a person can read, of an exchange error; not the HTTP details. */
function facts(error: unknown) {
  if (!(error instanceof ExchangeError)) throw new Error(`expected an ExchangeError, got ${String(error)}`);
  return {
    class: error.constructor.name,
    code: error.code,
    retryable: error.retryable,
    exchangeCode: error.exchangeCode,
    exchangeMessage: error.exchangeMessage,
    fieldErrors: error.fieldErrors,
    refusal: error.refusal,
  };
}

/** What the HTTP client raises when the sandbox answers this rejection at `path`. */
function viaSandboxAndClient(rejection: SimRejection, path: string, style: RefusalStyle) {
  const answer = rejectionAnswer(rejection, style);
  if (!('json' in answer)) throw new Error('a rejection is answered with JSON');
  return mapErrorResponse({ status: answer.status, path, scope: scopeOf(path), signed: true, body: { kind: 'json', value: answer.json } });
}

/** Every refusal the sim core raises for an operation the Exchange port (or the sandbox) can ask of it. */
function catalogue(): Array<{ name: string; path: string; style: RefusalStyle; rejection: SimRejection }> {
  const sim = demoSim();
  const gradual = new SimCore({ clock: manualClock(), prices: fixedPrices({ BTC_USDT: '65000' }), settlement: { steps: 2, stepMs: 1000 } });
  gradual.addMarket(DEMO_MARKETS[0]!);
  gradual.seedSpot('USDT', d('1000'));
  gradual.buyStockMarket({ market: 'BTC_USDT', baseAmount: d('0.001'), clientOrderId: 'open-1' });
  const buy = (baseAmount: string, market = 'BTC_USDT', clientOrderId?: string) => () =>
    sim.buyStockMarket({ market, baseAmount: d(baseAmount), ...(clientOrderId === undefined ? {} : { clientOrderId }) });
  const spend = (quoteAmount: string, market = 'ETH_USDT') => () => sim.buyMarket({ market, quoteAmount: d(quoteAmount) });
  const transfer = (ticker: string, amount: string, from: 'main' | 'spot' = 'main', to: 'main' | 'spot' = 'spot') => () =>
    sim.transfer({ ticker, amount: d(amount), from, to });
  const order = (name: string, fn: () => unknown, path = ORDER) => ({ name, path, style: 'trade' as const, rejection: rejectionOf(fn) });
  const main = (name: string, path: string, fn: () => unknown) => ({ name, path, style: 'main-account' as const, rejection: rejectionOf(fn) });
  return [
    order('unknown market', buy('0.001', 'DOGE_USDT')),
    order('amount not above 0', buy('0')),
    order('amount finer than the base precision', buy('0.0000001')),
    order('amount below the minimum', buy('0.000001')),
    order('total below the minimum', buy('0.00005')),
    order('total above the maximum', buy('400', 'ETH_USDT')),
    order('not enough balance', buy('1')),
    order('malformed clientOrderId', buy('0.001', 'BTC_USDT', 'no spaces')),
    order('clientOrderId of an open order', () => gradual.buyStockMarket({ market: 'BTC_USDT', baseAmount: d('0.001'), clientOrderId: 'open-1' })),
    order('unknown stp', () => parseStp('sometimes')),
    order('quote total finer than the price precision', spend('10.001'), QUOTE_ORDER),
    order('quote total below the minimum', spend('4'), QUOTE_ORDER),
    order('quote total above the maximum', spend('1000001'), QUOTE_ORDER),
    order('quote total that buys less than the minimum amount', () => sim.buyMarket({ market: 'BTC_USDT', quoteAmount: d('0.5') }), QUOTE_ORDER),
    main('transfer to the same account', TRANSFER, transfer('USDT', '1', 'main', 'main')),
    main('transfer of an unknown ticker', TRANSFER, transfer('XYZ', '1')),
    main('transfer with more than 8 decimals', TRANSFER, transfer('USDT', '0.000000001')),
    main('transfer of nothing', TRANSFER, transfer('USDT', '0')),
    main('transfer of more than is available', TRANSFER, transfer('USDT', '1000000')),
    main('codes page out of bounds, two fields at once', CODES, () => sim.codes({ limit: 0, offset: -1 })),
    main('flex withdraw from an unknown plan', FLEX_WITHDRAW, () => sim.flexWithdraw('5b3b0a39-0000-4000-8000-000000000000', d('1'))),
    main('flex withdraw without an active investment', FLEX_WITHDRAW, () => sim.flexWithdraw(DEMO_EMPTY_FLEX_PLAN_ID, d('1'))),
    main('flex withdraw of nothing', FLEX_WITHDRAW, () => sim.flexWithdraw(DEMO_FLEX_PLAN_ID, d('0'))),
    main('flex withdraw above the invested amount', FLEX_WITHDRAW, () => sim.flexWithdraw(DEMO_FLEX_PLAN_ID, d('1500.01'))),
    main('flex withdraw leaving less than the plan minimum', FLEX_WITHDRAW, () => sim.flexWithdraw(DEMO_FLEX_PLAN_ID, d('1495'))),
  ];
}

describe('a sim refusal as the domain error (toExchangeError)', () => {
  it('raises, for every refusal the sim core makes, exactly what the HTTP client raises for the sandbox answer', () => {
    const cases = catalogue();
    expect(cases.length).toBe(25);
    for (const { name, path, style, rejection } of cases) {
      expect({ name, ...facts(toExchangeError(rejection)) }).toEqual({ name, ...facts(viaSandboxAndClient(rejection, path, style)) });
    }
  });

  it('tells validation from a business rule by class, with no HTTP details (none was involved)', () => {
    const sim = demoSim();
    const belowMin = toExchangeError(rejectionOf(() => sim.buyStockMarket({ market: 'BTC_USDT', baseAmount: d('0.000001') })));
    expect(belowMin).toBeInstanceOf(ExchangeValidationError);
    expect([belowMin.httpStatus, belowMin.path, belowMin.exchangeCode, belowMin.exchangeMessage, belowMin.fieldErrors]).toEqual([
      null,
      null,
      32,
      'Validation failed',
      { amount: ['Given amount is less than min amount 0.00001'] },
    ]);
    const broke = toExchangeError(rejectionOf(() => sim.buyStockMarket({ market: 'BTC_USDT', baseAmount: d('1') })));
    expect(broke).toBeInstanceOf(ExchangeRefusedError);
    expect([broke.exchangeCode, broke.exchangeMessage, broke.fieldErrors, broke.message]).toEqual([
      10,
      'Inner validation failed',
      { amount: ['Not enough balance.'] },
      'the simulated exchange answered code 10: Inner validation failed (amount: Not enough balance.)',
    ]);
  });

  it('reads a flex withdraw above the invested amount as a refusal the engine knows, code 2 under `amount`', () => {
    const error = toExchangeError(rejectionOf(() => demoSim().flexWithdraw(DEMO_FLEX_PLAN_ID, d('2000'))));
    expect(error).toBeInstanceOf(ExchangeRefusedError);
    expect([error.refusal, error.exchangeCode, error.fieldErrors]).toEqual(['amount-exceeds-investment', 2, { amount: ['Withdraw amount exceeds total invested'] }]);
    expect(error.retryable).toBe(false);
  });

  it('names the refusals the engine decides on (the same from the wire, as the test above shows), and only refusals', () => {
    const named = catalogue()
      .map(({ name, rejection }) => ({ name, error: toExchangeError(rejection) }))
      .filter(({ error }) => error.refusal !== null)
      .map(({ name, error }) => [name, error.refusal, error.constructor.name]);
    expect(new Set(named.map(([, refusal]) => refusal))).toEqual(new Set(['insufficient-funds', 'no-active-investment', 'amount-exceeds-investment']));
    expect(named.every(([, , kind]) => kind === 'ExchangeRefusedError')).toBe(true);
  });
});

describe('in-process refusals against the same refusals over HTTP (LiveExchange ↔ sandbox)', () => {
  let sandbox: Sandbox;
  let client: ApiClient;
  let live: LiveExchange;
  let local: SimAccount;

  beforeAll(async () => {
    sandbox = await startSandbox({ rateLimits: false });
    client = new ApiClient({ baseUrl: sandbox.url, credentials: { apiKey: sandbox.apiKey, apiSecret: sandbox.apiSecret }, retry: false });
    live = new LiveExchange(client);
    // The very account the sandbox serves, reached without HTTP.
    local = new SimAccount(sandbox.exchange);
  });
  afterAll(async () => {
    await client.close();
    await sandbox.stop();
  });

  const both = async (call: (exchange: LiveExchange | SimAccount) => Promise<unknown>) => {
    const outcome = async (exchange: LiveExchange | SimAccount) => {
      try {
        await call(exchange);
      } catch (error) {
        return facts(error);
      }
      throw new Error('expected a refusal');
    };
    return { overHttp: await outcome(live), inProcess: await outcome(local) };
  };
  const buy = (baseAmount: string, market = 'BTC_USDT') => (exchange: LiveExchange | SimAccount) =>
    exchange.buyStockMarket({ market, baseAmount: d(baseAmount), clientOrderId: 'parity-1', stp: 'no' });

  it.each([
    ['an amount below the market minimum', buy('0.000001')],
    ['a total below the market minimum', buy('0.00005')],
    ['more than the trade balance pays for', buy('1')],
    ['an amount finer than the base precision', buy('0.0000001')],
    ['a market the exchange does not list', buy('1', 'DOGE_USDT')],
  ])('refuses a buy of %s with the same error', async (_name, call) => {
    const { overHttp, inProcess } = await both(call);
    expect(inProcess).toEqual(overHttp);
  });

  it.each([
    ['a transfer of more than the main balance', (x: LiveExchange | SimAccount) => x.transferToSpot({ ticker: 'USDT', amount: d('1000000') })],
    ['a transfer of an unknown ticker', (x: LiveExchange | SimAccount) => x.transferToSpot({ ticker: 'XYZ', amount: d('1') })],
    ['a flex withdraw above the invested amount', (x: LiveExchange | SimAccount) => x.flexWithdraw({ plan: DEMO_FLEX_PLAN_ID, amount: d('2000') })],
    ['a flex withdraw from a plan without an investment', (x: LiveExchange | SimAccount) => x.flexWithdraw({ plan: DEMO_EMPTY_FLEX_PLAN_ID, amount: d('1') })],
  ])('refuses %s with the same error', async (_name, call) => {
    const { overHttp, inProcess } = await both(call);
    expect(inProcess).toEqual(overHttp);
  });
});
