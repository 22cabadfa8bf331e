import { describe, expect, it } from 'vitest';
import { buildReport } from '../../../src/backtest/report/build.ts';
import { Decimal } from '../../../src/domain/money.ts';
import { DAY, HOUR, T0, syntheticParts, syntheticRun } from './fixture.ts';

// The synthetic run (fixture.ts): three buys of 100 USDT + 0.1 fee at 100, 80 and 125 (3.05 BTC),
// last close 120, first slot at T0 + 1h at price 100.
describe('the analysis a DCA user asks for', () => {
  it('puts the strategy beside one lump sum of the same money at the first slot, and beside the whole wallet bought at once and held', () => {
    const report = buildReport(syntheticRun({ firstSlot: { timeMs: T0 + HOUR, price: new Decimal('100') } }));
    // Strategy: 300.3 in (fees in), 3.05 BTC, worth 3.05 × 120 = 366: +21.8781 %.
    expect(report.benchmarks.strategy).toEqual({ invested: '300.3', base: '3.05', valueAtEnd: '366', returnPct: '21.8781' });
    // Lump sum: the 300 it paid besides fees buys 3 BTC at 100, worth 360: (360 − 300.3) / 300.3 = +19.8801 %.
    expect(report.benchmarks.lumpSum).toEqual({ timeMs: T0 + HOUR, price: '100', invested: '300.3', base: '3', valueAtEnd: '360', returnPct: '19.8801' });
    // The whole 1000 USDT at once at 100, the 0.1 % taker fee paid: 9.990009 BTC (6 decimals) for
    // 999.0009 + 0.9990009 fee, 0.0000991 left over; at 120: 1198.80108 + 0.0000991.
    expect(report.benchmarks.holdWallet).toEqual({ timeMs: T0 + HOUR, price: '100', initialValue: '1000', base: '9.990009', finalValue: '1198.8011791', returnPct: '19.8801' });
  });

  it('buys and holds with the whole wallet, its own base kept, never paying more than the quote there is', () => {
    const run = syntheticRun({ firstSlot: { timeMs: T0 + HOUR, price: new Decimal('100') } });
    // 0.5 BTC besides the 1000 USDT: worth 1050 at the first open, held with what the USDT buys.
    const hold = buildReport({ ...run, initialWallet: { USDT: new Decimal('1000'), BTC: new Decimal('0.5') } }).benchmarks.holdWallet;
    expect(hold).toMatchObject({ initialValue: '1050', base: '10.490009', finalValue: '1258.8011791' });
    // 100.1 USDT pays for exactly 1 BTC and its 0.1 fee: nothing left over, never 1.000001.
    const exact = buildReport({ ...run, initialWallet: { USDT: new Decimal('100.1'), BTC: new Decimal('0') } }).benchmarks.holdWallet;
    expect(exact).toMatchObject({ base: '1', finalValue: '120' });
  });

  it('has no lump sum and no buy and hold without a first slot', () => {
    const report = buildReport(syntheticRun({ firstSlot: null }));
    expect(report.benchmarks.lumpSum).toBeNull();
    expect(report.benchmarks.holdWallet).toBeNull();
  });

  it('breaks the run into months and years: invested, bought, fees, average cost (fees in), value at the end, return', () => {
    const report = buildReport(syntheticRun());
    const january = { period: '2024-01', invested: '300', baseBought: '3.05', fees: '0.3', averageCost: '98.45901639', valueAtEnd: '366', returnPct: '21.8781' };
    expect(report.periods.monthly).toEqual([january]);
    expect(report.periods.yearly).toEqual([{ ...january, period: '2024' }]);
  });

  it('carries the position across periods: a month without buys is valued at its own last price', () => {
    const run = syntheticRun();
    const february = T0 + 31 * DAY;
    const report = buildReport(
      syntheticRun({
        toMs: february + DAY,
        candles: { ...run.candles, lastClose: new Decimal('150') },
        equity: [...syntheticParts().equity, { timeMs: february + HOUR, price: new Decimal('150'), value: new Decimal('1157.2') }],
      }),
    );
    // February: nothing bought; 3.05 BTC at 150 = 457.5 against the 300.3 put in: +52.3477 %.
    expect(report.periods.monthly[1]).toEqual({ period: '2024-02', invested: '0', baseBought: '0', fees: '0', averageCost: null, valueAtEnd: '457.5', returnPct: '52.3477' });
  });

  it('summarises refusals by reason, most first, with first and last time and a count per year, and says when the money ran out', () => {
    const run = syntheticRun();
    const short = (ms: number) => ({ instance: 'dca-btc', slotTimeMs: ms, reason: 'insufficient-funds', message: 'the trade balance has 1 USDT' });
    const report = buildReport(syntheticRun({ refusals: [...syntheticParts().refusals, short(T0 + 2 * DAY), short(T0 + 366 * DAY)] }));
    expect(report.refusals.summary).toEqual([
      { reason: 'E_BUDGET', count: 2, firstTimeMs: T0 + HOUR + HOUR / 2, lastTimeMs: T0 + 2 * DAY + HOUR + HOUR / 2, byYear: { '2024': 2 } },
      { reason: 'insufficient-funds', count: 2, firstTimeMs: T0 + 2 * DAY, lastTimeMs: T0 + 366 * DAY, byYear: { '2024': 1, '2025': 1 } },
      { reason: 'E_MIN_AMOUNT', count: 1, firstTimeMs: T0 + 3 * DAY, lastTimeMs: T0 + 3 * DAY, byYear: { '2024': 1 } },
    ]);
    expect(report.refusals.ranOut).toEqual({ atMs: T0 + 2 * DAY, at: '2024-01-03T00:00:00.000Z', refusedFromThen: 2, lastAtMs: T0 + 366 * DAY, last: '2025-01-01T00:00:00.000Z', filledAfter: 0 });
    expect(buildReport(run).refusals.ranOut).toBeNull();
  });

  it('counts a slot that ran out once, though its transfer and the buy it was to fund were both refused for funds', () => {
    const short = (ms: number, message: string) => ({ instance: 'dca-btc', slotTimeMs: ms, reason: 'insufficient-funds', message });
    const slot = (ms: number) => [short(ms, 'the transfer moves 40 USDT; main has 1'), short(ms, 'the buy needs about 65.13 USDT; spot has 25')];
    const report = buildReport(syntheticRun({ refusals: [...slot(T0 + 2 * DAY), ...slot(T0 + 3 * DAY)] }));
    expect(report.refusals.summary.find((row) => row.reason === 'insufficient-funds')?.count).toBe(4);
    expect(report.refusals.ranOut).toMatchObject({ atMs: T0 + 2 * DAY, refusedFromThen: 2, lastAtMs: T0 + 3 * DAY });
  });
});
