import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Decimal } from '../../../src/domain/money.ts';
import { REPORT_SCHEMA, buildReport, reportToJson, roundPct, roundValue } from '../../../src/backtest/report/build.ts';
import type { BacktestReport } from '../../../src/backtest/report/build.ts';
import type { EquityPoint } from '../../../src/backtest/report/run.ts';
import { RunFacts } from '../../../src/backtest/report/facts.ts';
import { DAY, HOUR, T0, syntheticParts, syntheticRun } from './fixture.ts';

const d = (text: string): Decimal => new Decimal(text);

function equityOf(values: readonly string[]): EquityPoint[] {
  return values.map((value, i) => ({ timeMs: T0 + i * HOUR, price: d('1'), value: d(value) }));
}

describe('backtest report: figures', () => {
  const report = buildReport(syntheticRun());

  it('counts orders by status and counts an order as filled only when it bought base', () => {
    // 3 FILLED + 1 CANCELED with nothing filled.
    expect(report.orders).toEqual({ total: 4, filled: 3, byStatus: { CANCELED: 1, FILLED: 3 } });
  });

  it('sums base acquired, quote spent and fees exactly', () => {
    // base 1 + 1.25 + 0.8 = 3.05; quote 100 × 3 = 300; fee 0.1 × 3 = 0.3 USDT.
    expect(report.totals.baseAcquired).toBe('3.05');
    expect(report.totals.quoteSpent).toBe('300');
    expect(report.totals.fees).toEqual({ USDT: '0.3' });
    expect(report.totals.quoteSpentWithFees).toBe('300.3');
  });

  it('computes the average price as quote spent over base acquired, 8 decimals half-even', () => {
    // 300 / 3.05 = 98.36065573|77... → 98.36065574
    expect(report.totals.averagePrice).toBe('98.36065574');
    // (300 + 0.3) / 3.05 = 98.45901639|34... → 98.45901639
    expect(report.totals.averagePriceWithFees).toBe('98.45901639');
  });

  it('values the initial wallet at the first open and the final balances at the last close', () => {
    // initial: 1000 USDT + 0 BTC × 100 = 1000
    // final:   699.7 USDT + 3.05 BTC × 120 = 699.7 + 366 = 1065.7
    expect(report.value).toEqual({
      initialPrice: '100',
      finalPrice: '120',
      initial: '1000',
      final: '1065.7',
      pnl: '65.7', // 1065.7 − 1000
      pnlPct: '6.57', // 65.7 / 1000 × 100
      unvaluedAssets: [],
    });
  });

  it('measures the max drawdown peak to trough over the equity samples', () => {
    // values: 1000, 999.9, 979.9, 979.8, 1080.95 (new peak), 974.2, 1065.7
    // before the new peak the deepest fall is 1000 − 979.8 = 20.2 (2.02 %);
    // after it: 1080.95 − 974.2 = 106.75, and 106.75 / 1080.95 × 100 = 9.8755|724... → 9.8756
    const episode = {
      amount: '106.75',
      pct: '9.8756',
      peakTimeMs: T0 + 2 * DAY + HOUR,
      peakValue: '1080.95',
      troughTimeMs: T0 + 2 * DAY + 5 * HOUR,
      troughValue: '974.2',
    };
    expect(report.drawdown).toEqual({ samples: 7, max: episode, maxPct: episode });
  });

  it('finds the same deepest drawdowns as an exact walk, also where values differ in their last digits', () => {
    // Values around a large base, apart by as little as 1e-12 of it: floats alone would tie them.
    const value = fc.tuple(fc.integer({ min: 0, max: 9 }), fc.integer({ min: 0, max: 2000 })).map(([big, small]) => new Decimal(`1${'0'.repeat(big)}`).mul(1000).add(new Decimal(small).div(1e9)));
    fc.assert(
      fc.property(fc.array(value, { minLength: 1, maxLength: 60 }), (values) => {
        const facts = new RunFacts({ base: 'BTC', quote: 'USDT', fromMs: T0, toMs: T0 + values.length * HOUR });
        values.forEach((v, i) => facts.addSample({ timeMs: T0 + i * HOUR, price: d('1'), value: v }));
        // The plain walk: every sample compared exactly with the running peak.
        let peak = values[0] as Decimal;
        let maxAmount = new Decimal(0);
        let maxShare: { amount: Decimal; peak: Decimal } = { amount: new Decimal(0), peak };
        for (const v of values) {
          if (v.gt(peak)) peak = v;
          const amount = peak.sub(v);
          if (amount.gt(maxAmount)) maxAmount = amount;
          if (maxShare.amount.isZero() ? amount.gt(0) : amount.mul(maxShare.peak).gt(maxShare.amount.mul(peak))) maxShare = { amount, peak };
        }
        expect(facts.drawdown.max?.amount.toFixed()).toBe(maxAmount.toFixed());
        expect(facts.drawdown.maxPct?.amount.toFixed()).toBe(maxShare.amount.toFixed());
        expect(facts.drawdown.maxPct?.peak.value.toFixed()).toBe(maxShare.amount.isZero() ? values[0]?.toFixed() : maxShare.peak.toFixed());
      }),
      { numRuns: 300 },
    );
  });

  it('reports the largest drawdown in quote and the largest in percent separately when they differ', () => {
    // 100 → 50 is −50 (50 %); 200 → 120 is −80 (40 %).
    const { drawdown } = buildReport(syntheticRun({ equity: equityOf(['100', '50', '200', '120']) }));
    expect(drawdown.max).toMatchObject({ amount: '80', pct: '40', peakValue: '200', troughValue: '120', peakTimeMs: T0 + 2 * HOUR, troughTimeMs: T0 + 3 * HOUR });
    expect(drawdown.maxPct).toMatchObject({ amount: '50', pct: '50', peakValue: '100', troughValue: '50', peakTimeMs: T0, troughTimeMs: T0 + HOUR });
  });

  it('reports a zero drawdown at the first sample when the value never falls, and none without samples', () => {
    const rising = buildReport(syntheticRun({ equity: equityOf(['10', '10', '12']) })).drawdown;
    expect(rising.max).toEqual({ amount: '0', pct: '0', peakTimeMs: T0, peakValue: '10', troughTimeMs: T0, troughValue: '10' });
    expect(buildReport(syntheticRun({ equity: [] })).drawdown).toEqual({ samples: 0, max: null, maxPct: null });
  });

  it('walks the samples in time order: one out of order is a bug in whoever sampled, and is refused', () => {
    const samples = equityOf(['100', '50', '200', '120']);
    const shuffled = [samples[2]!, samples[0]!, samples[3]!, samples[1]!];
    expect(() => syntheticRun({ equity: shuffled })).toThrow(RangeError);
  });

  it('counts refusals by reason, candles, gaps and slots', () => {
    expect(report.refusals).toMatchObject({ total: 3, byReason: { E_BUDGET: 2, E_MIN_AMOUNT: 1 }, ranOut: null });
    expect(report.data).toMatchObject({ file: 'btc-usdt-1h.csv', candles: 68, intervalSec: 3600, firstOpen: '100', lastClose: '120' });
    // gaps of 2 and 3 candles
    expect(report.data.gaps).toEqual({ count: 2, missingCandles: 5, largest: { afterTimeSec: (T0 + 30 * HOUR) / 1000, missing: 3 } });
    expect(report.slots).toBe(7);
  });

  it('gives per-instance totals, including an instance that bought nothing', () => {
    expect(report.byInstance).toEqual([
      { instance: 'dca-btc', orders: 3, filled: 3, refusals: 1, baseAcquired: '3.05', quoteSpent: '300', averagePrice: '98.36065574' },
      { instance: 'dip-btc', orders: 1, filled: 0, refusals: 2, baseAcquired: '0', quoteSpent: '0', averagePrice: null },
    ]);
  });

  it('states the period, instances and settings', () => {
    expect(report.period).toEqual({ fromMs: T0, toMs: T0 + 3 * DAY, from: '2024-01-01T00:00:00.000Z', to: '2024-01-04T00:00:00.000Z' });
    expect(report.instances.map((i) => i.instance)).toEqual(['dca-btc', 'dip-btc']);
    expect(report.settings).toEqual({ slippagePct: '0.1', flexAprPct: null, accountCaps: [] });
  });

  it('leaves assets other than base and quote out of the value and names them', () => {
    const run = syntheticRun({ initialWallet: { USDT: d('1000'), ETH: d('2') }, finalBalances: { USDT: d('699.7'), BTC: d('3.05'), ETH: d('2') } });
    const { value } = buildReport(run);
    expect(value.initial).toBe('1000');
    expect(value.final).toBe('1065.7');
    expect(value.unvaluedAssets).toEqual(['ETH']);
  });

  it('has no average price and no PnL percentage where they are undefined', () => {
    const report = buildReport(syntheticRun({ orders: [], initialWallet: {}, finalBalances: {} }));
    expect(report.totals.averagePrice).toBeNull();
    expect(report.totals.averagePriceWithFees).toBeNull();
    expect(report.value.pnlPct).toBeNull();
    expect(report.value.pnl).toBe('0');
  });

  it('keeps a fee whose asset the exchange did not name under "?"', () => {
    const orders = syntheticParts().orders;
    orders[0] = { ...orders[0]!, feeAsset: null };
    expect(buildReport(syntheticRun({ orders })).totals.fees).toEqual({ '?': '0.1', USDT: '0.2' });
  });

  it('rounds values to 8 decimals and percentages to 4, half to even', () => {
    expect(roundValue(d('0.000000005'))).toBe('0');
    expect(roundValue(d('0.000000015'))).toBe('0.00000002');
    expect(roundValue(d('1.123456789'))).toBe('1.12345679');
    expect(roundPct(d('1.00005'))).toBe('1');
    expect(roundPct(d('1.00015'))).toBe('1.0002');
    expect(roundPct(d('-2.5'))).toBe('-2.5');
  });
});

describe('backtest report: JSON', () => {
  it('gives byte-identical JSON for the same run built twice', () => {
    const first = reportToJson(buildReport(syntheticRun()));
    const second = reportToJson(buildReport(syntheticRun()));
    expect(second).toBe(first);
    expect(first.endsWith('}\n')).toBe(true);
    expect(first).toContain('\n  "schema": "stacker.backtest-report/1",\n');
  });

  it('does not depend on the order the driver listed instances, wallets or statuses in', () => {
    const run = syntheticRun();
    const reordered = syntheticRun({
      instances: [...run.instances].reverse(),
      initialWallet: { BTC: d('0'), USDT: d('1000') },
      finalBalances: { BTC: d('3.05'), USDT: d('699.7') },
      orders: [...syntheticParts().orders].reverse(),
      refusals: [...syntheticParts().refusals].reverse(),
    });
    expect(reportToJson(buildReport(reordered))).toBe(reportToJson(buildReport(run)));
  });

  it('writes every money figure as a decimal string, never a JSON number', () => {
    const parsed = JSON.parse(reportToJson(buildReport(syntheticRun()))) as BacktestReport;
    expect(parsed.schema).toBe(REPORT_SCHEMA);
    const moneyFields = [parsed.totals.baseAcquired, parsed.totals.quoteSpent, parsed.value.final, parsed.value.pnl, parsed.drawdown.max?.amount];
    for (const field of moneyFields) expect(typeof field).toBe('string');
    expect(reportToJson(buildReport(syntheticRun()))).not.toMatch(/e[+-]\d/);
  });
});

describe('backtest report: SCHEMA.md', () => {
  const schemaText = readFileSync(new URL('../../../src/backtest/report/SCHEMA.md', import.meta.url), 'utf8');
  // The single report's fields: the comparison document's own section comes after them.
  const documented = new Set([...schemaText.slice(0, schemaText.indexOf('## Comparisons')).matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]!));

  /** Field paths of a report: array items as `[]`, keys of a map documented as `.<name>` as that placeholder. */
  function paths(value: unknown, path: string, out: Set<string>): Set<string> {
    if (Array.isArray(value)) {
      for (const item of value) if (item !== null && typeof item === 'object') paths(item, `${path}[]`, out);
      return out;
    }
    if (value === null || typeof value !== 'object') return out;
    for (const [key, item] of Object.entries(value)) {
      const direct = path === '' ? key : `${path}.${key}`;
      const placeholder = [...documented].find((doc) => doc.startsWith(`${path}.<`) && doc.split('.').length === direct.split('.').length);
      const field = documented.has(direct) || placeholder === undefined ? direct : placeholder;
      // Plain objects are containers: only their fields need a row (unless the object may be null).
      const container = item !== null && typeof item === 'object' && !Array.isArray(item);
      if (!container || documented.has(field)) out.add(field);
      paths(item, field, out);
    }
    return out;
  }

  it('documents every field of a built report, and every documented field is in one', () => {
    const base = syntheticParts();
    const run = syntheticRun({
      flex: [{ instance: 'dca-btc', slotTimeMs: T0, plan: 'usdt-flex', ticker: 'USDT', amount: d('10'), status: 'done' }],
      // Every optional part present: a first slot (the lump sum) and a wallet that ran out.
      firstSlot: { timeMs: T0 + HOUR, price: d('100') },
      refusals: [...base.refusals, { instance: 'dca-btc', slotTimeMs: T0 + 2 * HOUR, reason: 'insufficient-funds', message: 'short' }],
    });
    const offGrid = { count: 1, firstTimeSec: (T0 + 5 * HOUR) / 1000 + 300 };
    const accountCaps = new Map([['main', { limits: { day: d('15') }, asset: 'USDT', timeZone: 'UTC' }]]);
    const slotRuns = { slotsInGaps: { count: 2, firstMs: T0 + HOUR }, slotsAfterData: { count: 1, firstMs: T0 + 9 * HOUR }, slotsSkippedByClockChange: { count: 1, first: '2024-03-31 02:30 Europe/Berlin' }, flexInterest: { ticker: 'USDT', amount: d('0.5') } };
    const found = paths(buildReport({ ...run, ...slotRuns, settings: { ...run.settings, accountCaps }, candles: { ...run.candles, offGrid }, strategyFailures: [{ instance: 'flaky', atMs: T0 + 3 * HOUR, reason: 'strategy flaky failed: boom', slotsNotRun: 2 }] }), '', new Set());
    expect([...found].filter((p) => !documented.has(p))).toEqual([]);
    expect([...documented].filter((p) => !found.has(p))).toEqual([]);
  });
});
