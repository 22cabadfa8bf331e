import { describe, expect, it } from 'vitest';
import { dca } from '../../strategies/dca.ts';
import { decideWith, marketRules } from '../../strategies/sdk-testing.ts';

// Three hourly closes averaging 70000: a 10 % dip is a price of 63000 or less.
const HOURS = [
  { timeSec: 1_714_543_200, close: '69000' },
  { timeSec: 1_714_546_800, close: '70000' },
  { timeSec: 1_714_550_400, close: '71000' },
];
const ENV = { MARKET: 'BTC_USDT', AMOUNT: '0.0005', DIP_PCT: '10', DIP_LOOKBACK: '3h' };
const view = (price: string, candles = HOURS) => ({
  markets: [marketRules()],
  prices: { BTC_USDT: price },
  trade: { USDT: { available: '1000' } },
  candles: { BTC_USDT: candles },
});
const buys = async (env: Record<string, string>, spec: ReturnType<typeof view>) =>
  (await decideWith(dca, env, spec)).flatMap((i) => (i.kind === 'buy-stock-market' ? [i.amount.toString()] : []));

describe('dca: buy the dip', () => {
  it('buys DIP_MULTIPLIER (default 2) times the amount at 10 % below the average: 63000 <= 70000 x 0.9', async () => {
    expect(await buys(ENV, view('63000'))).toEqual(['0.001']);
    const intents = await decideWith(dca, ENV, view('63000'));
    expect(intents[0]).toMatchObject({ kind: 'note', message: expect.stringContaining('10 % below the average close of its last 3 candles, 70000') });
  });

  it('buys the normal amount when the price is less far below the average (64000: 8.57 %)', async () => {
    expect(await buys(ENV, view('64000'))).toEqual(['0.0005']);
  });

  it('multiplies AMOUNT_QUOTE too: 2 x 50 / 63000, rounded down', async () => {
    expect(await buys({ ...ENV, AMOUNT: '', AMOUNT_QUOTE: '50', DIP_MULTIPLIER: '2' }, view('63000'))).toEqual(['0.001587']);
  });

  it('buys the normal amount, and says why, when the window has no candles', async () => {
    const intents = await decideWith(dca, ENV, view('50000', []));
    expect(intents.map((i) => i.kind)).toEqual(['note', 'buy-stock-market']);
    expect(intents[0]).toMatchObject({ message: expect.stringContaining('no candles') });
  });

  it('reads candles only when DIP_PCT is set, over DIP_LOOKBACK of the market', () => {
    const withDip = dca.parseParams({ ...ENV, DIP_LOOKBACK: '30d' }, 'dca.env');
    expect(dca.reads?.(withDip)).toContain('candles');
    expect(dca.candleWindows?.(withDip)).toEqual([{ market: 'BTC_USDT', lookbackSec: 30 * 86_400 }]);
    const plain = dca.parseParams({ MARKET: 'BTC_USDT', AMOUNT: '0.0005' }, 'dca.env');
    expect(dca.reads?.(plain)).not.toContain('candles');
    expect(dca.candleWindows?.(plain)).toEqual([]);
  });

  it('refuses a DIP_LOOKBACK outside 1h..60d and a DIP_MULTIPLIER below 1, naming the key', () => {
    expect(() => dca.parseParams({ ...ENV, DIP_LOOKBACK: '61d' }, 'dca.env')).toThrow(/DIP_LOOKBACK: must be a duration from 1h to 60d/);
    expect(() => dca.parseParams({ ...ENV, DIP_MULTIPLIER: '0.5' }, 'dca.env')).toThrow(/DIP_MULTIPLIER/);
  });
});
