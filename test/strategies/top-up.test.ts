import { describe, expect, it } from 'vitest';
import { decideWith, judgeWith } from '../../strategies/sdk-testing.ts';
import { topUp } from '../../strategies/top-up.ts';

describe('top-up', () => {
  it('moves what is missing up to TARGET from main to the trade balance', async () => {
    const intents = await decideWith(topUp, { TICKER: 'USDT', TARGET: '100' }, { trade: { USDT: { available: '30' } }, main: { USDT: '500' } });
    expect(JSON.parse(JSON.stringify(intents))).toEqual([{ kind: 'transfer', ticker: 'USDT', amount: '70', from: 'main', to: 'spot' }]);
  });

  it('moves all main has when that is less, and the engine lets it through', async () => {
    const judged = await judgeWith(topUp, { TICKER: 'USDT', TARGET: '100' }, { trade: { USDT: { available: '30' } }, main: { USDT: '12.5' } });
    expect(judged.map(({ intent, refused }) => [intent.kind, refused])).toEqual([['transfer', null]]);
  });

  it('rounds what is missing up to the 8 decimals a transfer takes, so the trade balance reaches TARGET', async () => {
    const intents = await decideWith(topUp, { TICKER: 'USDT', TARGET: '100' }, { trade: { USDT: { available: '99.999999995' } }, main: { USDT: '500' } });
    expect(JSON.parse(JSON.stringify(intents))).toEqual([{ kind: 'transfer', ticker: 'USDT', amount: '0.00000001', from: 'main', to: 'spot' }]);
  });

  it('only notes when the trade balance is at TARGET already', async () => {
    const intents = await decideWith(topUp, { TICKER: 'USDT', TARGET: '100' }, { trade: { USDT: { available: '100' } } });
    expect(intents.map((i) => i.kind)).toEqual(['note']);
  });
});
