import { Decimal, ZERO, formatDecimal } from '../../domain/money.ts';
import { type Benchmarks, type PeriodRow, type RefusalSummary, benchmarks, periods, ranOut, refusalSummary } from './analysis.ts';
import { type ReportRules, reportRules } from './rules.ts';
import { type DrawdownFacts, UNKNOWN_ASSET } from './facts.ts';
import type { BacktestRun, EquityPoint, ReportOrder } from './run.ts';

/**
 * The backtest report: every figure a person reads, computed from a BacktestRun with Decimal
 * and written as decimal strings. SCHEMA.md documents each field, its unit and its formula;
 * a change to a field's meaning is a new schema version.
 */
export const REPORT_SCHEMA = 'stacker.backtest-report/1';

/**
 * Rounding rule: compute at full precision, round once when a figure is written. Sums of
 * exchange amounts (base acquired, quote spent, fees, balances) are exact and written as they
 * are; anything that went through a multiplication by a price or a division (values, PnL,
 * average prices, drawdowns) is rounded to 8 decimals, percentages to 4, both half-even.
 */
export const VALUE_PLACES = 8;
export const PCT_PLACES = 4;
export const ROUNDING = Decimal.ROUND_HALF_EVEN;

export interface DrawdownEpisode {
  /** peakValue − troughValue, quote. */
  amount: string;
  /** amount / peakValue × 100; null when the peak is not above zero. */
  pct: string | null;
  peakTimeMs: number;
  peakValue: string;
  troughTimeMs: number;
  troughValue: string;
}

export interface InstanceTotals {
  instance: string;
  orders: number;
  filled: number;
  refusals: number;
  baseAcquired: string;
  quoteSpent: string;
  averagePrice: string | null;
}

/** `main: 15 USDT a day, 100 USDT a month (UTC)`: one cap as the summary and the page say it. */
export function accountCapText(cap: ReportAccountCap): string {
  const limits = [
    ...(cap.perDay === null ? [] : [`${cap.perDay} ${cap.asset} a day`]),
    ...(cap.perWeek === null ? [] : [`${cap.perWeek} ${cap.asset} a week`]),
    ...(cap.perMonth === null ? [] : [`${cap.perMonth} ${cap.asset} a month`]),
  ];
  return `${cap.account}: ${limits.join(', ')} (${cap.timeZone})`;
}

/** An account cap the run counted over all of the account's instances (null: that period has none). */
export interface ReportAccountCap {
  account: string;
  perDay: string | null;
  perWeek: string | null;
  perMonth: string | null;
  asset: string;
  timeZone: string;
}

export interface BacktestReport {
  schema: typeof REPORT_SCHEMA;
  market: string;
  base: string;
  quote: string;
  period: { fromMs: number; toMs: number; from: string; to: string };
  data: {
    file: string;
    candles: number;
    intervalSec: number;
    firstTimeSec: number;
    lastTimeSec: number;
    firstOpen: string;
    lastClose: string;
    gaps: { count: number; missingCandles: number; largest: { afterTimeSec: number; missing: number } | null };
    offGrid: { count: number; firstTimeSec: number } | null;
  };
  slots: number;
  slotsInGaps: { count: number; firstMs: number } | null;
  slotsAfterData: { count: number; firstMs: number } | null;
  slotsSkippedByClockChange: { count: number; first: string } | null;
  instances: Array<{ instance: string; strategy: string; schedule: string; timezone: string }>;
  settings: { slippagePct: string; flexAprPct: string | null; accountCaps: ReportAccountCap[] };
  rules: ReportRules;
  orders: { total: number; filled: number; byStatus: Record<string, number> };
  totals: {
    baseAcquired: string;
    quoteSpent: string;
    fees: Record<string, string>;
    averagePrice: string | null;
    quoteSpentWithFees: string;
    averagePriceWithFees: string | null;
  };
  value: {
    initialPrice: string;
    finalPrice: string;
    initial: string;
    final: string;
    pnl: string;
    pnlPct: string | null;
    unvaluedAssets: string[];
  };
  wallet: { initial: Record<string, string>; final: Record<string, string> };
  drawdown: { samples: number; max: DrawdownEpisode | null; maxPct: DrawdownEpisode | null };
  refusals: {
    total: number;
    byReason: Record<string, number>;
    /** By reason, most first: how many, first and last time, per year. */
    summary: RefusalSummary[];
    /** The first buy refused for insufficient funds (the wallet ran out), and how many were from then on; null when none was. */
    ranOut: { atMs: number; at: string; refusedFromThen: number; lastAtMs: number; last: string; filledAfter: number } | null;
  };
  /** The strategy beside one lump sum of the same money at the first slot, and beside holding the starting wallet. */
  benchmarks: Benchmarks;
  /** Per UTC year and month: what was invested and bought, fees, average cost, value at the period's end, return. */
  periods: { yearly: PeriodRow[]; monthly: PeriodRow[] };
  flex: { total: number; byStatus: Record<string, number>; interest: { ticker: string; amount: string } | null };
  byInstance: InstanceTotals[];
  /** Instances whose strategy failed and that were disabled, as live: when, why, and how many of their slots did not run. */
  strategyFailures: Array<{ instance: string; atMs: number; at: string; reason: string; slotsNotRun: number }>;
}

const ROUND = { value: (x: Decimal) => roundValue(x), pct: (x: Decimal) => roundPct(x) };

function ranOutAt(run: BacktestRun): BacktestReport['refusals']['ranOut'] {
  const found = ranOut(run);
  return found === null ? null : { atMs: found.atMs, at: isoTime(found.atMs), refusedFromThen: found.refusedFromThen, lastAtMs: found.lastAtMs, last: isoTime(found.lastAtMs), filledAfter: found.filledAfter };
}

export function roundValue(value: Decimal): string {
  return formatDecimal(value.toDecimalPlaces(VALUE_PLACES, ROUNDING));
}

export function roundPct(value: Decimal): string {
  return formatDecimal(value.toDecimalPlaces(PCT_PLACES, ROUNDING));
}

/** quote / base at VALUE_PLACES, or null when nothing was bought. */
export function averagePrice(quote: Decimal, base: Decimal): string | null {
  return base.isZero() ? null : roundValue(quote.div(base));
}

/** An order counts as filled when it bought any base (a partly filled, then canceled order counts). */
export function isFilled(order: ReportOrder): boolean {
  return order.filledBase.gt(0);
}

export function buildReport(run: BacktestRun): BacktestReport {
  const { facts } = run;
  const baseAcquired = facts.orders.base;
  const quoteSpent = facts.orders.quote;
  const fees = facts.fees;
  const quoteFees = fees.get(run.quote) ?? ZERO;
  const baseFees = fees.get(run.base) ?? ZERO;

  const initialValue = valueOf(run.initialWallet, run, run.candles.firstOpen);
  const finalValue = valueOf(run.finalBalances, run, run.candles.lastClose);
  const pnl = finalValue.sub(initialValue);
  const largestGap = run.candles.gaps.reduce<{ afterTimeSec: number; missing: number } | null>(
    (best, gap) => (best === null || gap.missing > best.missing ? { afterTimeSec: gap.afterTimeSec, missing: gap.missing } : best),
    null,
  );

  return {
    schema: REPORT_SCHEMA,
    market: run.market,
    base: run.base,
    quote: run.quote,
    period: { fromMs: run.fromMs, toMs: run.toMs, from: isoTime(run.fromMs), to: isoTime(run.toMs) },
    data: {
      file: run.dataFile,
      candles: run.candles.count,
      intervalSec: run.candles.intervalSec,
      firstTimeSec: run.candles.firstTimeSec,
      lastTimeSec: run.candles.lastTimeSec,
      firstOpen: formatDecimal(run.candles.firstOpen),
      lastClose: formatDecimal(run.candles.lastClose),
      gaps: {
        count: run.candles.gaps.length,
        missingCandles: run.candles.gaps.reduce((total, gap) => total + gap.missing, 0),
        largest: largestGap,
      },
      offGrid: run.candles.offGrid === null ? null : { count: run.candles.offGrid.count, firstTimeSec: run.candles.offGrid.firstTimeSec },
    },
    slots: run.slots,
    slotsInGaps: run.slotsInGaps ?? null,
    slotsAfterData: run.slotsAfterData ?? null,
    slotsSkippedByClockChange: run.slotsSkippedByClockChange ?? null,
    instances: [...run.instances]
      .sort((a, b) => compareText(a.instance, b.instance))
      .map((i) => ({ instance: i.instance, strategy: i.strategy, schedule: i.schedule, timezone: i.timezone })),
    settings: {
      slippagePct: formatDecimal(run.settings.slippagePct),
      flexAprPct: run.settings.flexAprPct === null ? null : formatDecimal(run.settings.flexAprPct),
      accountCaps: [...(run.settings.accountCaps ?? [])]
        .sort(([a], [b]) => compareText(a, b))
        .map(([account, cap]) => ({
          account,
          perDay: cap.limits.day === undefined ? null : formatDecimal(cap.limits.day),
          perWeek: cap.limits.week === undefined ? null : formatDecimal(cap.limits.week),
          perMonth: cap.limits.month === undefined ? null : formatDecimal(cap.limits.month),
          asset: cap.asset,
          timeZone: cap.timeZone,
        })),
    },
    rules: reportRules(run.rules),
    orders: { total: facts.orders.orders, filled: facts.orders.filled, byStatus: sortedRecord([...facts.byStatus]) },
    totals: {
      baseAcquired: formatDecimal(baseAcquired),
      quoteSpent: formatDecimal(quoteSpent),
      fees: sortedRecord([...fees].map(([asset, amount]) => [asset, formatDecimal(amount)])),
      averagePrice: averagePrice(quoteSpent, baseAcquired),
      quoteSpentWithFees: formatDecimal(quoteSpent.add(quoteFees)),
      averagePriceWithFees: averagePrice(quoteSpent.add(quoteFees), baseAcquired.sub(baseFees)),
    },
    value: {
      initialPrice: formatDecimal(run.candles.firstOpen),
      finalPrice: formatDecimal(run.candles.lastClose),
      initial: roundValue(initialValue),
      final: roundValue(finalValue),
      pnl: roundValue(pnl),
      pnlPct: initialValue.isZero() ? null : roundPct(pnl.div(initialValue).mul(100)),
      unvaluedAssets: unvaluedAssets(run),
    },
    wallet: { initial: walletRecord(run.initialWallet), final: walletRecord(run.finalBalances) },
    drawdown: drawdowns(facts.drawdown),
    refusals: {
      total: facts.refusalCount,
      byReason: sortedRecord([...facts.byReason.values()].map((r) => [r.reason, r.count])),
      summary: refusalSummary(run),
      ranOut: ranOutAt(run),
    },
    benchmarks: benchmarks(run, ROUND),
    periods: { yearly: periods(run, 'year', ROUND), monthly: periods(run, 'month', ROUND) },
    flex: {
      total: facts.flexCount,
      byStatus: sortedRecord([...facts.flexByStatus]),
      interest: run.flexInterest === undefined || run.flexInterest === null ? null : { ticker: run.flexInterest.ticker, amount: formatDecimal(run.flexInterest.amount) },
    },
    byInstance: instanceTotals(run),
    strategyFailures: (run.strategyFailures ?? []).map((f) => ({ instance: f.instance, atMs: f.atMs, at: new Date(f.atMs).toISOString(), reason: f.reason, slotsNotRun: f.slotsNotRun })),
  };
}

/** Deterministic bytes: the builder fixes the key order, 2-space indent, one trailing newline. */
export function reportToJson(report: BacktestReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

export { UNKNOWN_ASSET };

/** Quote held plus base held at `price`; other assets are listed as unvalued, not guessed. */
function valueOf(wallet: Record<string, Decimal>, run: BacktestRun, price: Decimal): Decimal {
  const quote = wallet[run.quote] ?? ZERO;
  const base = wallet[run.base] ?? ZERO;
  return quote.add(base.mul(price));
}

function unvaluedAssets(run: BacktestRun): string[] {
  const assets = new Set<string>();
  for (const wallet of [run.initialWallet, run.finalBalances]) {
    for (const [asset, amount] of Object.entries(wallet)) {
      if (asset !== run.base && asset !== run.quote && !amount.isZero()) assets.add(asset);
    }
  }
  return [...assets].sort(compareText);
}

/**
 * Peak-to-trough over the equity samples (walked in time order by facts.ts): the running peak
 * is the highest value seen so far; the drawdown at a sample is peak − value. `max` is the
 * sample with the largest amount, `maxPct` the one with the largest amount / peak. Ties keep
 * the earliest episode.
 */
function drawdowns(drawdown: DrawdownFacts): BacktestReport['drawdown'] {
  if (drawdown.max === null || drawdown.maxPct === null) return { samples: 0, max: null, maxPct: null };
  return { samples: drawdown.samples, max: episode(drawdown.max.peak, drawdown.max.trough), maxPct: episode(drawdown.maxPct.peak, drawdown.maxPct.trough) };
}

function episode(peak: EquityPoint, trough: EquityPoint): DrawdownEpisode {
  const amount = peak.value.sub(trough.value);
  return {
    amount: roundValue(amount),
    pct: peak.value.gt(0) ? roundPct(amount.div(peak.value).mul(100)) : null,
    peakTimeMs: peak.timeMs,
    peakValue: roundValue(peak.value),
    troughTimeMs: trough.timeMs,
    troughValue: roundValue(trough.value),
  };
}

function instanceTotals(run: BacktestRun): InstanceTotals[] {
  const names = new Set<string>([...run.instances.map((i) => i.instance), ...run.facts.byInstance.keys()]);
  return [...names].sort(compareText).map((instance) => {
    const facts = run.facts.byInstance.get(instance);
    const base = facts?.base ?? ZERO;
    const quote = facts?.quote ?? ZERO;
    return {
      instance,
      orders: facts?.orders ?? 0,
      filled: facts?.filled ?? 0,
      refusals: facts?.refusals ?? 0,
      baseAcquired: formatDecimal(base),
      quoteSpent: formatDecimal(quote),
      averagePrice: averagePrice(quote, base),
    };
  });
}

function walletRecord(wallet: Record<string, Decimal>): Record<string, string> {
  return sortedRecord(Object.entries(wallet).map(([asset, amount]) => [asset, formatDecimal(amount)]));
}

/** Map-like objects are written with keys in code-unit order, so insertion order never leaks. */
function sortedRecord<T>(entries: ReadonlyArray<readonly [string, T]>): Record<string, T> {
  const record: Record<string, T> = {};
  for (const [key, value] of [...entries].sort((a, b) => compareText(a[0], b[0]))) {
    // defineProperty, not assignment: a key spelled "__proto__" stays a plain field.
    Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return record;
}

/** Locale-free ordering: the same bytes on every machine. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function isoTime(ms: number): string {
  return Number.isFinite(ms) ? new Date(ms).toISOString() : '';
}
