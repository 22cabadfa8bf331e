import { describe, expect, it } from 'vitest';
import { buildReport } from '../../../src/backtest/report/build.ts';
import { alignDecimals, renderSummary } from '../../../src/backtest/report/summary.ts';
import { syntheticParts, syntheticRun } from './fixture.ts';

const ESC = '\u001b';

describe('backtest terminal summary', () => {
  const report = buildReport(syntheticRun());

  it('shows the headline figures with their units, exactly as the report writes them', () => {
    const text = renderSummary(report, { color: false });
    expect(text).toMatch(/^Backtest BTC_USDT {2}2024-01-01 00:00Z → 2024-01-04 00:00Z {2}\(btc-usdt-1h\.csv\)\n/);
    expect(text).toMatch(/Candles processed +68 +1h candles, 2 gaps, 5 missing/);
    expect(text).toMatch(/Orders +4 +CANCELED 1, FILLED 3/);
    expect(text).toMatch(/Refusals +3 +E_BUDGET 2, E_MIN_AMOUNT 1/);
    expect(text).toMatch(/Base acquired +3\.05 +BTC/);
    expect(text).toMatch(/Average price +98\.36065574 +USDT per BTC/);
    expect(text).toMatch(/Final value +1065\.7 +USDT at last close 120/);
    expect(text).toMatch(/PnL +\+65\.7 +USDT \(\+6\.57 %\)/);
    expect(text).toMatch(/Max drawdown +9\.8756 +% \(106\.75 USDT\), 2024-01-03 01:00Z → 2024-01-03 05:00Z/);
    expect(text).not.toContain('Largest fall in quote');
  });

  it('leads with the deepest drawdown in % and its dates, the figure the comparison and the chart call the max drawdown; a larger fall in quote follows with its own', () => {
    const byAmount = { amount: '19265.29397936', pct: '54.6956', peakTimeMs: Date.UTC(2021, 3, 14, 7), peakValue: '35222.9', troughTimeMs: Date.UTC(2021, 5, 22, 14), troughValue: '15957.6' };
    const byPct = { amount: '3446.732', pct: '60.3008', peakTimeMs: Date.UTC(2020, 1, 13, 7), peakValue: '5715.9', troughTimeMs: Date.UTC(2020, 2, 13, 2), troughValue: '2269.17' };
    const text = renderSummary({ ...report, drawdown: { ...report.drawdown, max: byAmount, maxPct: byPct } }, { color: false });
    const lines = text.split('\n');
    const at = lines.findIndex((line) => line.startsWith('  Max drawdown'));
    expect(lines[at]).toMatch(/Max drawdown +60\.3008 +% \(3446\.732 USDT\), 2020-02-13 07:00Z → 2020-03-13 02:00Z$/);
    expect(lines[at + 1]).toMatch(/Largest fall in quote +19265\.29397936 +USDT \(54\.6956 %\), 2021-04-14 07:00Z → 2021-06-22 14:00Z$/);
  });

  it('breaks a run of several years down by year, and a run within one year by month', () => {
    const row = (period: string, invested: string) => ({ period, invested, baseBought: '0.1', fees: '0.1', averageCost: '1000', valueAtEnd: '120', returnPct: '20' });
    const years = { ...report, periods: { yearly: [row('2023', '100'), row('2024', '100')], monthly: [row('2023-12', '100'), row('2024-01', '100')] } };
    const byYear = renderSummary(years, { color: false });
    expect(byYear).toMatch(/\n {2}Year {2}Invested \(USDT\)/);
    expect(byYear).toMatch(/\n {2}2024 +100 /);
    expect(byYear).toContain("that year's buys");
    expect(byYear).not.toContain('Month');
    const months = { ...report, periods: { yearly: [row('2024', '200')], monthly: [row('2024-01', '100'), row('2024-02', '100')] } };
    const byMonth = renderSummary(months, { color: false });
    expect(byMonth).toMatch(/\n {2}Month +Invested \(USDT\)/);
    expect(byMonth).toMatch(/\n {2}2024-02 +100 /);
    expect(byMonth).toContain("that month's buys");
    expect(byMonth).not.toMatch(/\n {2}Year /);
    const one = { ...report, periods: { yearly: [row('2024', '100')], monthly: [row('2024-01', '100')] } };
    expect(renderSummary(one, { color: false })).not.toMatch(/\n {2}(Year|Month) /);
  });

  it('says a file of one candle has no interval to read, rather than calling it 0d candles', () => {
    const one = { ...report, data: { ...report.data, candles: 1, intervalSec: 0 } };
    expect(renderSummary(one, { color: false })).toMatch(/Candles processed +1 +interval unknown \(one candle\), 2 gaps/);
  });

  it('counts one gap and one slot that ran out in the singular, and gives a fee of 0 its unit', () => {
    const one = { ...report, data: { ...report.data, gaps: { ...report.data.gaps, count: 1 } }, refusals: { ...report.refusals, ranOut: { atMs: Date.UTC(2024, 0, 2), at: '2024-01-02T00:00:00.000Z', refusedFromThen: 1, lastAtMs: Date.UTC(2024, 0, 2), last: '2024-01-02T00:00:00.000Z', filledAfter: 0 } }, totals: { ...report.totals, fees: {} } };
    const text = renderSummary(one, { color: false });
    expect(text).toMatch(/1h candles, 1 gap, 5 missing/);
    expect(text).toMatch(/Ran out of money +on 2024-01-02 00:00Z: the buys of 1 slot refused for insufficient funds/);
    expect(text).toMatch(/Fees +0 +USDT/);
  });

  it('says when the money ran out first and last, and that buys still filled after it when the balance covered one again', () => {
    const ranOut = { atMs: Date.UTC(2021, 2, 22), at: '2021-03-22T00:00:00.000Z', refusedFromThen: 92, lastAtMs: Date.UTC(2022, 11, 26), last: '2022-12-26T00:00:00.000Z', filledAfter: 1 };
    const text = renderSummary({ ...report, refusals: { ...report.refusals, ranOut } }, { color: false });
    expect(text).toMatch(/Ran out of money +on 2021-03-22 00:00Z: the buys of 92 slots refused for insufficient funds from then on, the last on 2022-12-26 00:00Z; 1 buy still filled after it, when the balance covered one again/);
  });

  it('says a wallet that never held one buy\'s money so, rather than that it ran out, and a drawdown of 0 as no fall', () => {
    const ranOut = { atMs: Date.UTC(2024, 0, 1, 9), at: '2024-01-01T09:00:00.000Z', refusedFromThen: 3, lastAtMs: Date.UTC(2024, 0, 3, 9), last: '2024-01-03T09:00:00.000Z', filledAfter: 0 };
    const none = { ...report, orders: { ...report.orders, total: 0, filled: 0, byStatus: {} }, refusals: { ...report.refusals, ranOut } };
    const text = renderSummary(none, { color: false });
    expect(text).toMatch(/No money to buy +the wallet never held enough for one buy: those of 3 slots refused for insufficient funds, from 2024-01-01 09:00Z to 2024-01-03 09:00Z\n/);
    expect(text).not.toContain('Ran out of money');
    const flat = { ...report, drawdown: { ...report.drawdown, max: { ...(report.drawdown.max as NonNullable<typeof report.drawdown.max>), amount: '0', pct: '0' } } };
    expect(renderSummary(flat, { color: false })).toMatch(/Max drawdown +0 +%: the account's value never fell below an earlier high\n/);
  });

  it('says when rows of the data are off its interval grid, and where the first one is', () => {
    const off = { ...report, data: { ...report.data, offGrid: { count: 2, firstTimeSec: Date.UTC(2024, 0, 2, 9, 5) / 1000 } } };
    expect(renderSummary(off, { color: false })).toContain("; 2 rows off the interval's grid (the first at 2024-01-02 09:05Z): not every candle spans the interval");
    expect(renderSummary(report, { color: false })).not.toContain('off the interval');
  });

  it('lines the values up on their decimal point', () => {
    const lines = renderSummary(report, { color: false }).split('\n');
    const dotColumn = (label: string): number => {
      const line = lines.find((l) => l.trimStart().startsWith(label)) ?? '';
      return line.indexOf('.', line.indexOf(label) + label.length);
    };
    expect(dotColumn('Base acquired')).toBe(dotColumn('Average price'));
    expect(dotColumn('Final value')).toBe(dotColumn('Average price'));
  });

  it('adds a per-instance table when there are several instances', () => {
    const text = renderSummary(report, { color: false });
    expect(text).toMatch(/Instance +Orders +Filled +Refusals +Base \(BTC\) +Quote \(USDT\) +Avg price/);
    expect(text).toMatch(/dca-btc +3 +3 +1 +3\.05 +300 +98\.36065574/);
    expect(text).toMatch(/dip-btc +1 +0 +2 +0 +0 +—/);
  });

  it('writes no escape code without colour, and colours the PnL green when it is positive', () => {
    expect(renderSummary(report, { color: false })).not.toContain(ESC);
    const coloured = renderSummary(report, { color: true });
    expect(coloured).toContain(`${ESC}[32m+65.7`);
    expect(coloured.replace(/\u001b\[\d+m/g, '')).toBe(renderSummary(report, { color: false }));
  });

  it("colours the lump sum's return as it colours the strategy's own beside it", () => {
    const lumpSum = { invested: '100', base: '1', price: '100', timeMs: Date.UTC(2024, 0, 1), valueAtEnd: '90', returnPct: '-10' };
    const withLump = { ...report, benchmarks: { ...report.benchmarks, lumpSum } } as typeof report;
    expect(renderSummary(withLump, { color: true })).toMatch(new RegExp(`Lump sum instead +${ESC}\\[31m-10${ESC}\\[0m`));
  });

  it('shows control characters in instance names as "?" instead of sending them to the terminal', () => {
    const orders = syntheticParts().orders;
    orders[0] = { ...orders[0]!, instance: `evil${ESC}[2Jname` };
    const run = syntheticRun({ orders });
    run.instances[0] = { ...run.instances[0]!, instance: `evil${ESC}[2Jname` };
    const text = renderSummary(buildReport(run), { color: false });
    expect(text).not.toContain(ESC);
    expect(text).toContain('evil?[2Jname');
  });

  it('aligns decimals without adding digits', () => {
    expect(alignDecimals(['1.5', '100', '0.25', '—'])).toEqual(['  1.5 ', '100   ', '  0.25', '  —   ']);
  });
});
