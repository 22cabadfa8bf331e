import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../cli/run-cli.ts';
import { Decimal, roundUp } from '../../src/domain/money.ts';
import type { PeriodRow } from '../../src/backtest/report/analysis.ts';
import { candlesBetween, reportOver, written as round } from './committed-candles.ts';

describe('the per-month and per-year rows of a backtest report', () => {
  it('value every period at the close of its last candle (UTC), months without buys and a last month cut mid-way included', async () => {
    // 0.01 BTC at 09:00 UTC on 1 January and 1 June: most months buy nothing, and the run
    // stops mid-December, mid-candle.
    const from = '2021-01-01';
    const to = '2021-12-15T12:30:00Z';
    const report = (await reportOver('STRATEGY=dca\nSCHEDULE="0 9 1 1,6 *"\nTIMEZONE=UTC\nMARKET=BTC_USDT\nAMOUNT=0.01\n', ['--from', from, '--to', to, '--wallet', 'USDT=5000'])) as { periods: { monthly: PeriodRow[]; yearly: PeriodRow[] } };

    // Expected from the CSV and the documented rules: a buy fills at the open of the 09:00 candle,
    // pays the demo taker fee (0.1 %, rounded up to 8 decimals); a period is worth the BTC held
    // then at the close of its last candle, against everything paid so far, fees in.
    const candles = candlesBetween(Date.parse(`${from}T00:00:00Z`), Date.parse(to));
    const keyOf = (ms: number, unit: 'month' | 'year'): string => new Date(ms).toISOString().slice(0, unit === 'month' ? 7 : 4);
    const expected = (unit: 'month' | 'year'): PeriodRow[] => {
      let held = new Decimal(0);
      let paid = new Decimal(0);
      const keys = [...new Set(candles.map((c) => keyOf(c.timeMs, unit)))];
      return keys.map((key) => {
        const inPeriod = candles.filter((c) => keyOf(c.timeMs, unit) === key);
        const buys = inPeriod.filter((c) => /-(01|06)-01T09:00/.test(new Date(c.timeMs).toISOString()));
        const quote = buys.reduce((sum, c) => sum.add(c.open.mul('0.01')), new Decimal(0));
        const fees = buys.reduce((sum, c) => sum.add(roundUp(c.open.mul('0.01').mul('0.001'), 8)), new Decimal(0));
        const base = new Decimal('0.01').mul(buys.length);
        held = held.add(base);
        paid = paid.add(quote).add(fees);
        const value = held.mul((inPeriod.at(-1) as { close: Decimal }).close);
        return {
          period: key,
          invested: round(quote, 8),
          baseBought: round(base, 8),
          fees: round(fees, 8),
          averageCost: base.isZero() ? null : round(quote.add(fees).div(base), 8),
          valueAtEnd: round(value, 8),
          returnPct: paid.isZero() ? null : round(value.sub(paid).div(paid).mul(100), 4),
        };
      });
    };
    expect(report.periods.monthly).toEqual(expected('month'));
    expect(report.periods.yearly).toEqual(expected('year'));
    // The last, partial month ends at the last candle the run read (12:00, opened before --to).
    expect(report.periods.monthly.at(-1)?.valueAtEnd).toBe(round(new Decimal('0.02').mul((candles.at(-1) as { close: Decimal }).close), 8));
  });
});

describe('a buy whose slot falls in a gap of the data', () => {
  it('counts in the period of the candle it fills on, and the gap is valued at the last price known by its end', async () => {
    // Hourly candles at 100 through January 2023, none in February, 50 from 1 March to the 3rd.
    const rows = ['time,open,high,low,close,volume'];
    const hours = (fromMs: number, days: number, price: number): void => {
      for (let h = 0; h < days * 24; h += 1) rows.push(`${fromMs / 1000 + h * 3600},${price},${price},${price},${price},1`);
    };
    hours(Date.UTC(2023, 0, 1), 31, 100);
    hours(Date.UTC(2023, 2, 1), 3, 50);
    const dir = mkdtempSync(join(tmpdir(), 'stacker-gap-periods-'));
    try {
      const csv = join(dir, 'BTCUSDT_1h_gap.csv');
      writeFileSync(csv, `${rows.join('\n')}\n`);
      const env = join(dir, 'daily.env');
      writeFileSync(env, 'STRATEGY=dca\nSCHEDULE="0 0 * * *"\nMARKET=BTC_USDT\nAMOUNT=0.1\n');
      const result = await runCli(['backtest', '--data', csv, '--market', 'BTC_USDT', '--strategy', env, '--wallet', 'USDT=100000', '--json']);
      expect(result.code, result.stderr).toBe(0);
      const monthly = (JSON.parse(result.stdout) as { periods: { monthly: PeriodRow[] } }).periods.monthly;
      const row = (period: string): Pick<PeriodRow, 'invested' | 'baseBought' | 'valueAtEnd'> | undefined => {
        const found = monthly.find((r) => r.period === period);
        return found === undefined ? undefined : { invested: found.invested, baseBought: found.baseBought, valueAtEnd: found.valueAtEnd };
      };
      // 31 January buys of 0.1 at 100. February's 28 slots fill at the 1 March open (50), with March's own 3.
      expect(row('2023-01')).toEqual({ invested: '310', baseBought: '3.1', valueAtEnd: '310' });
      expect(row('2023-02')).toEqual({ invested: '0', baseBought: '0', valueAtEnd: '310' });
      expect(row('2023-03')).toEqual({ invested: '155', baseBought: '3.1', valueAtEnd: '310' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
