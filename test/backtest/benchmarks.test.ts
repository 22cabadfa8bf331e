import { describe, expect, it } from 'vitest';
import { Decimal, roundDown, roundUp } from '../../src/domain/money.ts';
import { candlesBetween, reportOver, written } from './committed-candles.ts';

/** The open of the committed candle opening at `iso`. */
function openAt(iso: string): Decimal {
  const [candle] = candlesBetween(Date.parse(iso), Date.parse(iso));
  if (candle === undefined) throw new Error(`no candle at ${iso}`);
  return candle.open;
}

describe('the lump-sum benchmark of a backtest report', () => {
  it('buys at the price the strategy\'s own buys would pay then: slippage in, rounded up to the price precision', async () => {
    const report = (await reportOver('STRATEGY=dca\nSCHEDULE="0 9 * * *"\nTIMEZONE=UTC\nMARKET=BTC_USDT\nAMOUNT_QUOTE=10\n', ['--from', '2021-01-01', '--to', '2021-03-31', '--wallet', 'USDT=2000', '--slippage-pct', '1'])) as {
      totals: { fees: Record<string, string> };
      data: { lastClose: string };
      benchmarks: { strategy: { invested: string }; lumpSum: { timeMs: number; price: string; invested: string; base: string; valueAtEnd: string; returnPct: string } };
    };
    // The first slot is 1 January 09:00: its candle's open, 1 % up, to the demo market's 2 decimals.
    const price = roundUp(openAt('2021-01-01T09:00:00Z').mul('1.01'), 2);
    const invested = new Decimal(report.benchmarks.strategy.invested);
    // The same money, paying the same fees (documented): what is left of it buys base at that
    // price, cut to the demo market's 6 amount decimals as one order would be.
    const base = roundDown(invested.sub(report.totals.fees['USDT'] as string).div(price), 6);
    const value = base.mul(report.data.lastClose);
    expect(report.benchmarks.lumpSum).toEqual({
      timeMs: Date.parse('2021-01-01T09:00:00Z'),
      price: price.toFixed(),
      invested: invested.toFixed(),
      base: written(base, 8),
      valueAtEnd: written(value, 8),
      returnPct: written(value.sub(invested).div(invested).mul(100), 4),
    });
  });
});
