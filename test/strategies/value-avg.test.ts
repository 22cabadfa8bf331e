import { describe, expect, it } from 'vitest';
import { decideWith, judgeWith, marketRules } from '../../strategies/sdk-testing.ts';
import { valueAvg } from '../../strategies/value-avg.ts';

const ENV = { MARKET: 'BTC_USDT', TARGET_STEP_QUOTE: '50' };
const AT_65000 = { markets: [marketRules()], prices: { BTC_USDT: '65000' }, trade: { USDT: { available: '10000' } } };
const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

describe('value-avg', () => {
  it('buys the first step on the first slot: 50 / 65000 = 0.000769… → 0.000769, and counts the slot', async () => {
    expect(plain(await decideWith(valueAvg, ENV, AT_65000))).toEqual([
      { kind: 'set-state', key: 'slots', value: '1' },
      { kind: 'buy-stock-market', market: 'BTC_USDT', amount: '0.000769', stp: 'no' },
    ]);
  });

  it('buys the gap to the path: slot 3 targets 150; 0.001 BTC held (main + trade) is worth 65, so 85 / 65000 → 0.001307', async () => {
    const intents = await decideWith(valueAvg, ENV, { ...AT_65000, state: { slots: '2' }, main: { BTC: '0.0004' }, trade: { USDT: { available: '10000' }, BTC: { available: '0.0005', freeze: '0.0001' } } });
    expect(plain(intents)).toEqual([
      { kind: 'set-state', key: 'slots', value: '3' },
      { kind: 'buy-stock-market', market: 'BTC_USDT', amount: '0.001307', stp: 'no' },
    ]);
  });

  it('buys nothing above the path and says so in a note, not a refusal (nothing was refused; stacker never sells); the path still advances', async () => {
    const intents = await decideWith(valueAvg, ENV, { ...AT_65000, state: { slots: '1' }, trade: { USDT: { available: '10000' }, BTC: { available: '0.002' } } });
    expect(plain(intents)).toEqual([
      { kind: 'set-state', key: 'slots', value: '2' },
      expect.objectContaining({ kind: 'note', message: expect.stringContaining('nothing to buy'), data: expect.objectContaining({ target: '100', value: '130' }) }),
    ]);
  });

  it('buys at most MAX_ORDER_QUOTE of a larger gap, and the engine lets that through', async () => {
    const judged = await judgeWith(valueAvg, ENV, { ...AT_65000, state: { slots: '4' }, maxOrderQuote: '20' });
    expect(judged.map(({ intent, refused }) => [intent.kind, refused])).toEqual([
      ['set-state', null],
      ['note', null],
      ['buy-stock-market', null],
    ]);
    expect(plain(judged[2]?.intent)).toMatchObject({ amount: '0.000307' });
  });

  it('is refused by the engine when the trade balance cannot pay the gap', async () => {
    const judged = await judgeWith(valueAvg, ENV, { ...AT_65000, trade: { USDT: { available: '10' } } });
    expect(judged.map(({ refused }) => refused)).toEqual([null, 'insufficient-funds']);
  });
});
