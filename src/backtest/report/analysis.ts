import { Decimal, ZERO, formatDecimal, roundDown } from '../../domain/money.ts';
import { takerFee } from '../../domain/market.ts';
import type { PeriodFacts } from './facts.ts';
import type { BacktestRun } from './run.ts';

/**
 * What a DCA user asks of a backtest beyond the totals: would one lump sum have done better,
 * how each year and month went, and what the refusals were, summarised by reason and year.
 * Computed from the run like every other figure (exact decimals, rounded once by the caller's
 * rules: values and prices to 8 decimals, percentages to 4).
 */

export interface Rounding {
  value(x: Decimal): string;
  pct(x: Decimal): string;
}

/** One way of spending: what went in, what it bought, what that is worth at the end. */
export interface Outcome {
  /** Quote spent, fees in. */
  invested: string;
  /** Base held from it (base fees taken off). */
  base: string;
  /** base × the last close. */
  valueAtEnd: string;
  /** (valueAtEnd − invested) / invested × 100; null when nothing was invested. */
  returnPct: string | null;
}

export interface Benchmarks {
  /** The strategy's own buys. */
  strategy: Outcome;
  /** The same total spent at once at the first slot's price, paying the same fees: null without a slot or a buy. */
  lumpSum: (Outcome & { timeMs: number; price: string }) | null;
  /**
   * Buy and hold with the whole wallet: all of its quote spent in one buy at the first slot's
   * price (the taker fee paid, the dust kept), its base kept, all held to the end; null without a slot.
   */
  holdWallet: { timeMs: number; price: string; initialValue: string; base: string; finalValue: string; returnPct: string | null } | null;
}

export interface PeriodRow {
  /** `2024` or `2024-05` (UTC). */
  period: string;
  /** Quote spent on buys filled in the period, fees not included. */
  invested: string;
  baseBought: string;
  /** Fees in the quote paid in the period. */
  fees: string;
  /** (invested + fees) / base bought, in the period; null when nothing was bought. */
  averageCost: string | null;
  /** Base bought up to the period's end × the close of the period's last candle. */
  valueAtEnd: string;
  /** (valueAtEnd − everything invested up to then, fees in) / that × 100; null when nothing was invested yet. */
  returnPct: string | null;
}

export interface RefusalSummary {
  reason: string;
  count: number;
  firstTimeMs: number;
  lastTimeMs: number;
  /** Count per UTC year, keys sorted. */
  byYear: Record<string, number>;
}

export function benchmarks(run: BacktestRun, round: Rounding): Benchmarks {
  const fill = spent(run);
  const lastClose = run.candles.lastClose;
  const first = run.firstSlot ?? null;
  let lumpSum: Benchmarks['lumpSum'] = null;
  if (first !== null && fill.withFees.gt(0) && first.price.gt(0)) {
    // The same money in one buy: what the buys paid besides fees buys base at the first slot's
    // price, cut to the market's amount decimals as an order is (the dust stays unspent).
    const base = roundDown(fill.withFees.sub(fill.quoteFees).div(first.price), run.rules.values.basePrecision);
    lumpSum = { timeMs: first.timeMs, price: formatDecimal(first.price), ...outcome(fill.withFees, base, lastClose, round) };
  }
  return {
    strategy: outcome(fill.withFees, fill.base, lastClose, round),
    lumpSum,
    holdWallet: first === null || !first.price.gt(0) ? null : holdWallet(run, first, round),
  };
}

/** The whole wallet's quote in one buy at the first slot (see Benchmarks.holdWallet), held with the wallet's base to the last close. */
function holdWallet(run: BacktestRun, first: { timeMs: number; price: Decimal }, round: Rounding): NonNullable<Benchmarks['holdWallet']> {
  const rules = run.rules.values;
  const quote = run.initialWallet[run.quote] ?? ZERO;
  const unit = new Decimal(1).div(new Decimal(10).pow(rules.basePrecision));
  // The most base whose price and taker fee the quote covers: the fee's rounding up may take one amount step back.
  let bought = roundDown(quote.div(first.price.mul(new Decimal(1).add(rules.takerFeePct.div(100)))), rules.basePrecision);
  const cost = (base: Decimal): Decimal => base.mul(first.price).add(takerFee(rules, base.mul(first.price)));
  while (bought.gt(0) && cost(bought).gt(quote)) bought = Decimal.max(ZERO, bought.sub(unit));
  const base = bought.add(run.initialWallet[run.base] ?? ZERO);
  const initialValue = valueOf(run.initialWallet, run, run.candles.firstOpen);
  const finalValue = quote.sub(cost(bought)).add(base.mul(run.candles.lastClose));
  return {
    timeMs: first.timeMs,
    price: formatDecimal(first.price),
    initialValue: round.value(initialValue),
    base: round.value(base),
    finalValue: round.value(finalValue),
    returnPct: initialValue.isZero() ? null : round.pct(finalValue.sub(initialValue).div(initialValue).mul(100)),
  };
}

/** One row per UTC year or month with a candle in the run, oldest first. */
export function periods(run: BacktestRun, unit: 'year' | 'month', round: Rounding): PeriodRow[] {
  const rows = unit === 'year' ? run.facts.years : run.facts.months;
  let held = ZERO;
  let invested = ZERO;
  return [...rows.keys()].sort().map((period) => {
    const row = rows.get(period) as PeriodFacts;
    held = held.add(row.base).sub(row.baseFees);
    invested = invested.add(row.quote).add(row.fees);
    const value = held.mul(row.lastPrice);
    return {
      period,
      invested: formatDecimal(row.quote),
      baseBought: formatDecimal(row.base),
      fees: formatDecimal(row.fees),
      averageCost: row.base.isZero() ? null : round.value(row.quote.add(row.fees).div(row.base)),
      valueAtEnd: round.value(value),
      returnPct: invested.isZero() ? null : round.pct(value.sub(invested).div(invested).mul(100)),
    };
  });
}

/** Refusals by reason (most first, then by name), each with when it happened first and last and how often per year. */
export function refusalSummary(run: BacktestRun): RefusalSummary[] {
  return [...run.facts.byReason.values()]
    .map((s) => ({
      reason: s.reason,
      count: s.count,
      firstTimeMs: s.firstTimeMs,
      lastTimeMs: s.lastTimeMs,
      byYear: Object.fromEntries([...s.byYear].sort(([a], [b]) => (a < b ? -1 : 1))),
    }))
    .sort((a, b) => b.count - a.count || (a.reason < b.reason ? -1 : 1));
}

/** When the money ran out: the first buy refused for insufficient funds, and how many were refused so from then on; null when none was. */
export function ranOut(run: BacktestRun): { atMs: number; lastAtMs: number; refusedFromThen: number; filledAfter: number } | null {
  const found = run.facts.ranOut;
  return found === null ? null : { atMs: found.atMs, lastAtMs: found.lastAtMs, refusedFromThen: found.count, filledAfter: found.filledAfter };
}

/** Quote spent with the fees paid in it, and the base bought less the fees paid in base. */
function spent(run: BacktestRun): { withFees: Decimal; quoteFees: Decimal; base: Decimal } {
  const fees = run.facts.fees.get(run.quote) ?? ZERO;
  const base = run.facts.orders.base.sub(run.facts.fees.get(run.base) ?? ZERO);
  return { withFees: run.facts.orders.quote.add(fees), quoteFees: fees, base };
}

function outcome(invested: Decimal, base: Decimal, price: Decimal, round: Rounding): Outcome {
  const value = base.mul(price);
  return {
    invested: formatDecimal(invested),
    base: round.value(base),
    valueAtEnd: round.value(value),
    returnPct: invested.isZero() ? null : round.pct(value.sub(invested).div(invested).mul(100)),
  };
}

function valueOf(wallet: Record<string, Decimal>, run: BacktestRun, price: Decimal): Decimal {
  return (wallet[run.quote] ?? ZERO).add((wallet[run.base] ?? ZERO).mul(price));
}
