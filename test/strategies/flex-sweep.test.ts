import { describe, expect, it } from 'vitest';
import { type Intent, intentProblems, readsOf } from '../../src/engine/contract.ts';
import { parseInstanceParams } from '../../src/engine/params.ts';
import { flexSweep } from '../../strategies/flex-sweep.ts';
import { judgeWith } from '../../strategies/sdk-testing.ts';
import { type ViewSpec, investment, plan, slotView } from './view.ts';

const SOURCE = 'config/strategies/flex-sweep-usdt.env';
const PLAN_A = '0b7b4a47-9a4f-4c4e-8d0e-2f1b6a7c9d11';
const PLAN_B = '5f0c2a61-3b7e-4d1a-9c55-8e2d4f6a1b20';
const PLAN_BTC = '9a1e3c5d-7f20-4b8c-a1d3-5e7f9b2c4d60';

async function decide(env: Record<string, string>, spec: ViewSpec): Promise<unknown[]> {
  const params = parseInstanceParams(flexSweep, { STRATEGY: 'flex-sweep', SCHEDULE: '30 8 * * *', ...env }, SOURCE);
  const intents: readonly Intent[] = await flexSweep.decide(slotView({ ...spec, reads: readsOf(flexSweep, params) }), params);
  for (const intent of intents) expect(intentProblems(intent)).toEqual([]);
  return JSON.parse(JSON.stringify(intents)) as unknown[];
}

describe('flex-sweep', () => {
  it('MODE=all withdraws the whole active investment of the plan', async () => {
    const intents = await decide({ PLAN: PLAN_A, MODE: 'all' }, { flex: [investment(PLAN_A, 'USDT', '250.5'), investment(PLAN_B, 'USDT', '80')] });
    expect(intents).toEqual([{ kind: 'flex-withdraw', plan: PLAN_A, amount: '250.5', group: PLAN_A }]);
  });

  it('MODE=all with TICKER withdraws every active investment in the asset, largest first, and skips other assets', async () => {
    const flex = [investment(PLAN_A, 'USDT', '60'), investment(PLAN_BTC, 'BTC', '0.5'), investment(PLAN_B, 'USDT', '80')];
    const intents = await decide({ TICKER: 'USDT', MODE: 'all' }, { flex });
    expect(intents).toEqual([
      { kind: 'flex-withdraw', plan: PLAN_B, amount: '80', group: PLAN_B },
      { kind: 'flex-withdraw', plan: PLAN_A, amount: '60', group: PLAN_A },
    ]);
  });

  it('matches PLAN regardless of the case the exchange writes the UUID in', async () => {
    const intents = await decide({ PLAN: PLAN_A.toUpperCase(), MODE: 'all' }, { flex: [investment(PLAN_A, 'USDT', '1')] });
    expect(intents).toEqual([{ kind: 'flex-withdraw', plan: PLAN_A, amount: '1', group: PLAN_A }]);
  });

  it('MODE=reserve withdraws just enough to bring main up to RESERVE: 150 − 40.25 = 109.75', async () => {
    const intents = await decide({ PLAN: PLAN_A, MODE: 'reserve', RESERVE: '150' }, { main: { USDT: '40.25' }, flex: [investment(PLAN_A, 'USDT', '250.5')] });
    expect(intents).toEqual([{ kind: 'flex-withdraw', plan: PLAN_A, amount: '109.75', group: PLAN_A }]);
  });

  it('MODE=reserve asks in whole units of the exchange\'s money moves (8 decimals), rounded up so the reserve is reached: never 0.000000000001', async () => {
    const intents = await decide({ PLAN: PLAN_A, MODE: 'reserve', RESERVE: '150.000000000001' }, { main: { USDT: '150' }, flex: [investment(PLAN_A, 'USDT', '800')] });
    expect(intents).toEqual([{ kind: 'flex-withdraw', plan: PLAN_A, amount: '0.00000001', group: PLAN_A }]);
    const more = await decide({ PLAN: PLAN_A, MODE: 'reserve', RESERVE: '150.123456789' }, { main: { USDT: '40' }, flex: [investment(PLAN_A, 'USDT', '800')] });
    expect(more).toEqual([{ kind: 'flex-withdraw', plan: PLAN_A, amount: '110.12345679', group: PLAN_A }]);
  });

  it('MODE=reserve spreads the shortfall over the largest investments first: 150 − 10 = 140 = 80 + 60', async () => {
    const flex = [investment(PLAN_A, 'USDT', '60'), investment(PLAN_B, 'USDT', '80')];
    const intents = await decide({ TICKER: 'USDT', MODE: 'reserve', RESERVE: '150' }, { main: { USDT: '10' }, flex });
    expect(intents).toEqual([
      { kind: 'flex-withdraw', plan: PLAN_B, amount: '80', group: PLAN_B },
      { kind: 'flex-withdraw', plan: PLAN_A, amount: '60', group: PLAN_A },
    ]);
  });

  it('MODE=reserve withdraws the whole investment, saying why, when what RESERVE needs would leave less than the plan\'s minimum; the engine lets it through', async () => {
    // 11495 − 10000 = 1495 of 1500 would leave 5, under the plan's minimum of 10: the exchange refuses that.
    const spec: ViewSpec = { main: { USDT: '10000' }, flex: [investment(PLAN_A, 'USDT', '1500')], flexPlans: [plan(PLAN_A, 'USDT', '10')] };
    const env = { PLAN: PLAN_A, MODE: 'reserve', RESERVE: '11495' };
    expect(await decide(env, spec)).toEqual([
      expect.objectContaining({ kind: 'note', message: expect.stringContaining('less than its minimum investment 10'), data: expect.objectContaining({ needed: '1495', minInvestment: '10' }) }),
      { kind: 'flex-withdraw', plan: PLAN_A, amount: '1500', group: PLAN_A },
    ]);
    const judged = await judgeWith(flexSweep, { STRATEGY: 'flex-sweep', SCHEDULE: '30 8 * * *', ...env }, spec);
    expect(judged.filter(({ intent }) => intent.kind === 'flex-withdraw').map(({ refused }) => refused)).toEqual([null]);
    // Leaving the minimum or more is a partial withdrawal as before.
    expect(await decide({ ...env, RESERVE: '11490' }, spec)).toEqual([{ kind: 'flex-withdraw', plan: PLAN_A, amount: '1490', group: PLAN_A }]);
  });

  it('MODE=reserve caps at the invested amount and warns how far the reserve stays short: 200 − 10 − 140 = 50', async () => {
    const flex = [investment(PLAN_A, 'USDT', '60'), investment(PLAN_B, 'USDT', '80')];
    const intents = await decide({ TICKER: 'USDT', MODE: 'reserve', RESERVE: '200' }, { main: { USDT: '10' }, flex });
    expect(intents).toEqual([
      { kind: 'flex-withdraw', plan: PLAN_B, amount: '80', group: PLAN_B },
      { kind: 'flex-withdraw', plan: PLAN_A, amount: '60', group: PLAN_A },
      expect.objectContaining({ kind: 'note', level: 'warn', data: expect.objectContaining({ short: '50' }) }),
    ]);
  });

  it('MODE=reserve withdraws nothing when main is already at the reserve, and says so', async () => {
    const intents = await decide({ PLAN: PLAN_A, MODE: 'reserve', RESERVE: '150' }, { main: { USDT: '150' }, flex: [investment(PLAN_A, 'USDT', '250')] });
    expect(intents).toEqual([expect.objectContaining({ kind: 'note', level: 'info', message: expect.stringContaining('nothing to withdraw') })]);
  });

  it('MODE=reserve by TICKER is not a refusal when main already holds the reserve and nothing is invested', async () => {
    const intents = await decide({ TICKER: 'USDT', MODE: 'reserve', RESERVE: '150' }, { main: { USDT: '500' }, flex: [] });
    expect(intents).toEqual([expect.objectContaining({ kind: 'note', level: 'info' })]);
  });

  it.each([
    ['all by plan', { PLAN: PLAN_A, MODE: 'all' }],
    ['all by ticker', { TICKER: 'USDT', MODE: 'all' }],
    ['reserve by plan', { PLAN: PLAN_A, MODE: 'reserve', RESERVE: '150' }],
    ['reserve by ticker', { TICKER: 'USDT', MODE: 'reserve', RESERVE: '150' }],
  ])('refuses with no-active-investment (not a crash) when there is none: %s', async (_label, env) => {
    const flex = [investment(PLAN_A, 'USDT', '100', false), investment(PLAN_BTC, 'BTC', '1')];
    const intents = await decide(env, { main: { USDT: '0' }, flex });
    expect(intents).toEqual([expect.objectContaining({ kind: 'refusal', reason: 'no-active-investment' })]);
  });

  it('reads balances and flex only', () => {
    const params = flexSweep.parseParams({ TICKER: 'USDT', MODE: 'all' }, SOURCE);
    expect(readsOf(flexSweep, params)).toEqual(['balances', 'flex']);
  });
});
