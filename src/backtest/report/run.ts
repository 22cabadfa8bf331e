import type { MarketRules } from '../../domain/market.ts';
import type { Decimal } from '../../domain/money.ts';
import type { RulesOrigin } from '../rules/origin.ts';
import type { RunFacts } from './facts.ts';
import type { AccountCap } from '../../engine/runtime.ts';

/**
 * What the backtest driver hands to the report: the facts of one run, folded as they happened
 * (facts.ts) but never turned into a figure. Every figure in the report (totals, value, PnL,
 * drawdown) is computed from this by build.ts, so the driver never has to agree with the report
 * on a formula.
 */

export type { EquityPoint, ReportFlexOp, ReportOrder, ReportRefusal } from './facts.ts';

export interface BacktestRun {
  schema: 'stacker.backtest/1';
  market: string;
  base: string;
  quote: string;
  fromMs: number;
  toMs: number;
  /** Base name only: a path would leak the user's directory layout into a shared report. */
  dataFile: string;
  candles: {
    count: number;
    intervalSec: number;
    firstTimeSec: number;
    lastTimeSec: number;
    firstOpen: Decimal;
    lastClose: Decimal;
    gaps: Array<{ afterTimeSec: number; missing: number }>;
    /** Rows whose step is no whole number of intervals: how many, and the first one's open time; null when none. */
    offGrid: { count: number; firstTimeSec: number } | null;
  };
  /** Downsampled by the driver (≤ 2000 points), time-ascending. */
  chartCandles: Array<{ timeSec: number; close: Decimal }>;
  initialWallet: Record<string, Decimal>;
  /** main + trade + flex per asset. */
  finalBalances: Record<string, Decimal>;
  instances: Array<{ instance: string; strategy: string; schedule: string; timezone: string }>;
  /** Orders, refusals, flex operations and the account's value (at every slot and every candle's close for the drawdown; drawn at slots and chart points), folded. */
  facts: RunFacts;
  slots: number;
  /** The interest the seeded flex investment earned over the run, in its ticker; absent or null without --flex. */
  flexInterest?: { ticker: string; amount: Decimal } | null;
  /** Slots that fell in a gap of the data and filled at the first open after it (counted whatever the strategy decided); absent or null when none. */
  slotsInGaps?: SlotRun | null;
  /** Slots of the period after the last candle's open: not run, as no open is left to fill them at; absent or null when none. */
  slotsAfterData?: SlotRun | null;
  /** Slots at a wall time their zone skipped (clocks going forward): never run; absent or null when none. */
  slotsSkippedByClockChange?: SkippedWallTimes | null;
  /** The first slot of the run and what a market buy then pays (fill rule, slippage in: the lump-sum benchmark buys there); null without a slot. */
  firstSlot?: { timeMs: number; price: Decimal } | null;
  /** accountCaps: the account caps counted (BacktestInput.accountCaps), by account name; absent or empty without. */
  settings: { slippagePct: Decimal; flexAprPct: Decimal | null; accountCaps?: ReadonlyMap<string, AccountCap> };
  /** The market rules traded on, and where they came from. */
  rules: { values: MarketRules; origin: RulesOrigin };
  /** Instances the engine disabled (their strategy threw, answered wrong or not at all): when, why, and how many of their slots did not run after. */
  strategyFailures?: StrategyFailure[];
}

/** How many slots named a wall time that did not exist, and the first of them as its wall time and zone (`2020-03-29 02:30 Europe/Berlin`). */
export interface SkippedWallTimes {
  count: number;
  first: string;
}

/** How many slots, and the first of them. */
export interface SlotRun {
  count: number;
  firstMs: number;
}

export interface StrategyFailure {
  instance: string;
  atMs: number;
  reason: string;
  slotsNotRun: number;
}
