import { afterEach, describe, expect, it } from 'vitest';
import { Harness, PATHS } from './helpers.ts';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});
const start = async (): Promise<Harness> => (harness = await Harness.start());

const validation = (errors: Record<string, string[]>) => ({ code: 0, message: 'Validation failed', errors });

describe('main balance', () => {
  it('answers every asset keyed by ticker with main_balance strings', async () => {
    const h = await start();
    const reply = await h.post(PATHS.mainBalance);
    expect([reply.status, reply.json]).toEqual([200, { BTC: { main_balance: '0.05' }, ETH: { main_balance: '1.2' }, USDT: { main_balance: '10000' } }]);
  });

  it('answers one asset unwrapped when a ticker is given, "0" for an unknown one', async () => {
    const h = await start();
    expect((await h.post(PATHS.mainBalance, { ticker: 'ETH' })).json).toEqual({ main_balance: '1.2' });
    expect((await h.post(PATHS.mainBalance, { ticker: 'DOGE' })).json).toEqual({ main_balance: '0' });
  });

  it('refuses a ticker that is not a string with 400 code 0', async () => {
    const h = await start();
    const reply = await h.post(PATHS.mainBalance, { ticker: 5 });
    expect([reply.status, reply.json]).toEqual([400, validation({ ticker: ['validation.string'] })]);
  });
});

describe('trade balance', () => {
  it('answers only assets holding something, keyed, with available and freeze', async () => {
    const h = await start();
    expect((await h.post(PATHS.tradeBalance)).json).toEqual({ USDT: { available: '1000', freeze: '0' } });
  });

  it('answers one asset unwrapped, and 422 code 30 for an unknown currency', async () => {
    const h = await start();
    expect((await h.post(PATHS.tradeBalance, { ticker: 'BTC' })).json).toEqual({ available: '0', freeze: '0' });
    const unknown = await h.post(PATHS.tradeBalance, { ticker: 'DOGE' });
    expect([unknown.status, unknown.json]).toEqual([422, { code: 30, message: 'Validation failed', errors: { ticker: ['Currency was not found.'] } }]);
  });
});

describe('transfers', () => {
  it('moves main → spot with from/to and answers 201 []', async () => {
    const h = await start();
    const reply = await h.post(PATHS.transfer, { ticker: 'USDT', amount: '250.5', from: 'main', to: 'spot' });
    expect([reply.status, reply.json]).toEqual([201, []]);
    expect((await h.post(PATHS.mainBalance, { ticker: 'USDT' })).json).toEqual({ main_balance: '9749.5' });
    expect((await h.post(PATHS.tradeBalance, { ticker: 'USDT' })).json).toEqual({ available: '1250.5', freeze: '0' });
  });

  it('moves spot → main, also with the deprecated method field', async () => {
    const h = await start();
    expect((await h.post(PATHS.transfer, { ticker: 'USDT', amount: '100', method: 'withdraw' })).status).toBe(201);
    expect((await h.post(PATHS.transfer, { ticker: 'USDT', amount: '50', from: 'spot', to: 'main' })).status).toBe(201);
    expect(h.sandbox.exchange.mainBalance('USDT').toFixed()).toBe('10150');
  });

  it('refuses missing and invalid fields at once with 400 code 0', async () => {
    const h = await start();
    const reply = await h.post(PATHS.transfer, { from: 'main', to: 'main' });
    expect(reply.status).toBe(400);
    expect(reply.json).toEqual(validation({ ticker: ['The ticker field is required.'], amount: ['The amount field is required.'] }));
    const same = await h.post(PATHS.transfer, { ticker: 'USDT', amount: '1', from: 'main', to: 'main' });
    expect(same.json).toEqual(validation({ to: ['The to and from must be different.'] }));
    const collateral = await h.post(PATHS.transfer, { ticker: 'USDT', amount: '1', from: 'main', to: 'collateral' });
    expect(collateral.json).toEqual(validation({ to: ['The selected to is invalid.'] }));
    const ticker = await h.post(PATHS.transfer, { ticker: 'DOGE', amount: '1', from: 'main', to: 'spot' });
    expect(ticker.json).toEqual(validation({ ticker: ['The selected ticker is invalid.'] }));
    const precise = await h.post(PATHS.transfer, { ticker: 'USDT', amount: '1.123456789', from: 'main', to: 'spot' });
    expect([precise.status, precise.json]).toEqual([400, validation({ amount: ['The amount may not have more than 8 decimal places.'] })]);
  });

  it('refuses more than is available with 422 code 3', async () => {
    const h = await start();
    const reply = await h.post(PATHS.transfer, { ticker: 'BTC', amount: '1', from: 'main', to: 'spot' });
    expect([reply.status, reply.json]).toEqual([
      422,
      { code: 3, message: 'Inner validation failed', errors: { amount: ["You don't have such amount for transfer (available 0.05, in amount: 1)"] } },
    ]);
  });
});

describe('codes', () => {
  it('answers 201 with the envelope, newest first, default limit 30 offset 0', async () => {
    const h = await start();
    const reply = await h.post(PATHS.codes);
    expect(reply.status).toBe(201);
    const page = reply.json as { total: number; limit: number; offset: number; data: Array<Record<string, unknown>> };
    expect([page.total, page.limit, page.offset, page.data.length]).toEqual([5, 30, 0, 5]);
    expect(Object.keys(page.data[0]!).sort()).toEqual(['amount', 'code', 'date', 'external_id', 'status', 'ticker']);
    const dates = page.data.map((c) => c.date as number);
    expect(dates).toEqual([...dates].sort((a, b) => b - a));
  });

  it('pages with limit and offset', async () => {
    const h = await start();
    const reply = await h.post(PATHS.codes, { limit: 2, offset: 4 });
    expect(reply.json).toMatchObject({ total: 5, limit: 2, offset: 4 });
    expect((reply.json as { data: unknown[] }).data).toHaveLength(1);
  });

  it('refuses limit outside 1–100 and offset outside 0–10000 with 400 code 0', async () => {
    const h = await start();
    const cases: Array<[Record<string, unknown>, Record<string, string[]>]> = [
      [{ limit: 101 }, { limit: ['The limit may not be greater than 100.'] }],
      [{ limit: 0 }, { limit: ['The limit must be at least 1.'] }],
      [{ limit: 'ten' }, { limit: ['The limit must be an integer.'] }],
      [{ offset: 10_001 }, { offset: ['The offset may not be greater than 10000.'] }],
      [{ offset: -1 }, { offset: ['The offset must be at least 0.'] }],
      [{ offset: 9_990, limit: 20 }, { offset: ['The offset plus limit may not be greater than 10000.'] }],
    ];
    for (const [params, errors] of cases) {
      const reply = await h.post(PATHS.codes, params);
      expect([reply.status, reply.json]).toEqual([400, validation(errors)]);
    }
    expect((await h.post(PATHS.codes, { limit: 100, offset: 9_900 })).status).toBe(201);
  });
});
