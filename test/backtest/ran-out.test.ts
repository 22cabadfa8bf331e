import { describe, expect, it } from 'vitest';
import { reportOver } from './committed-candles.ts';

type Refusals = { refusals: { total: number; byReason: Record<string, number>; ranOut: { at: string } | null }; orders: { filled: number } };

describe('a backtest whose money runs out at the exchange', () => {
  it('says when it ran out, as when the guard refuses: the exchange refusing "Not enough balance." is insufficient-funds', async () => {
    // 10 USDT a day with 1 % slippage, from 20.15 USDT: after the first fill 10.05 or so is left,
    // which covers the buy at the price the slot decides at (the guard passes it) but not at the
    // slipped open it fills at, so the exchange refuses each of the nine buys left.
    const env = 'STRATEGY=dca\nSCHEDULE="0 9 * * *"\nTIMEZONE=UTC\nMARKET=BTC_USDT\nAMOUNT_QUOTE=10\nSTP=cn\n';
    const report = (await reportOver(env, ['--from', '2022-01-01', '--to', '2022-01-10', '--wallet', 'USDT=20.15', '--slippage-pct', '1'])) as Refusals;

    expect(report.orders.filled).toBe(1);
    expect(report.refusals.byReason).toEqual({ 'insufficient-funds': 9 });
    expect(report.refusals.ranOut).toMatchObject({ at: '2022-01-02T09:00:00.000Z' });
  });
});
