import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_EMPTY_FLEX_PLAN_ID, DEMO_FLEX_PLAN_ID } from '../../src/sim/seed.ts';
import { Harness, PATHS } from './helpers.ts';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});
const start = async (): Promise<Harness> => (harness = await Harness.start());

describe('flex plans and investments', () => {
  it('lists plans with string limits and rates', async () => {
    const h = await start();
    const reply = await h.post(PATHS.flexPlans, { ticker: 'USDT' });
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual([
      { id: DEMO_FLEX_PLAN_ID, ticker: 'USDT', minInvestment: '10', maxInvestment: '100000', maxRate: '8.5' },
      { id: DEMO_EMPTY_FLEX_PLAN_ID, ticker: 'USDT', minInvestment: '100', maxInvestment: '50000', maxRate: '6' },
    ]);
    expect((await h.post(PATHS.flexPlans, { ticker: 'BTC' })).json).toEqual([]);
  });

  it('lists investments filtered by plan and status', async () => {
    const h = await start();
    const reply = await h.post(PATHS.flexInvestments, { plan: DEMO_FLEX_PLAN_ID, investmentStatus: 1 });
    expect(reply.json).toMatchObject({ limit: 100, offset: 0, data: [{ planId: DEMO_FLEX_PLAN_ID, currency: 'USDT', invested: '1500', status: 1, withAutoReinvest: false }] });
    expect((await h.post(PATHS.flexInvestments, { plan: DEMO_EMPTY_FLEX_PLAN_ID })).json).toMatchObject({ data: [] });
  });
});

describe('flex withdraw', () => {
  it('answers 201 {"data":{"transaction_id"}} and credits the main balance', async () => {
    const h = await start();
    const reply = await h.post(PATHS.flexWithdraw, { plan: DEMO_FLEX_PLAN_ID, amount: '300' });
    expect(reply.status).toBe(201);
    const id = (reply.json as { data: { transaction_id: string } }).data.transaction_id;
    expect(reply.json).toEqual({ data: { transaction_id: expect.stringMatching(/^[0-9a-f-]{36}$/) } });
    expect((await h.post(PATHS.mainBalance, { ticker: 'USDT' })).json).toEqual({ main_balance: '10300' });
    expect(h.sandbox.exchange.ledger().filter((e) => e.ref === id).map((e) => [e.account, e.delta.toFixed()])).toEqual([
      ['flex', '-300'],
      ['main', '300'],
    ]);
  });

  it('answers 400 code 0 "Validation failed" with validation.required for each missing field', async () => {
    const h = await start();
    const reply = await h.post(PATHS.flexWithdraw, {});
    expect([reply.status, reply.json]).toEqual([
      400,
      { code: 0, message: 'Validation failed', errors: { plan: ['validation.required'], amount: ['validation.required'] } },
    ]);
  });

  it('answers 400 code 0 with validation.numeric when amount is not numeric', async () => {
    const h = await start();
    const reply = await h.post(PATHS.flexWithdraw, { plan: DEMO_FLEX_PLAN_ID, amount: 'ten' });
    expect([reply.status, reply.json]).toEqual([400, { code: 0, message: 'Validation failed', errors: { amount: ['validation.numeric'] } }]);
  });

  it('rejects a flex withdraw above the invested amount with 422 code 2 under `amount`', async () => {
    const h = await start();
    const reply = await h.post(PATHS.flexWithdraw, { plan: DEMO_FLEX_PLAN_ID, amount: '1500.00000001' });
    expect([reply.status, reply.json]).toEqual([
      422,
      { code: 2, message: 'Inner validation failed', errors: { amount: ['Withdraw amount exceeds total invested'] } },
    ]);
    expect(h.sandbox.exchange.mainBalance('USDT').toFixed()).toBe('10000');
  });

  it('rejects a withdraw from a plan without an active investment with 422 code 2 under `plan`', async () => {
    const h = await start();
    const reply = await h.post(PATHS.flexWithdraw, { plan: DEMO_EMPTY_FLEX_PLAN_ID, amount: '1' });
    expect([reply.status, reply.json]).toEqual([422, { code: 2, message: 'Inner validation failed', errors: { plan: ['Investment does not exist'] } }]);
  });

  it('rejects an unknown plan with 400 "The selected plan is invalid."', async () => {
    const h = await start();
    const reply = await h.post(PATHS.flexWithdraw, { plan: '11111111-2222-4333-8444-555555555555', amount: '1' });
    expect([reply.status, reply.json]).toEqual([400, { code: 0, message: 'Validation failed', errors: { plan: ['The selected plan is invalid.'] } }]);
  });
});
