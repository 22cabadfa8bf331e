import type { MarketRules } from '../../domain/market.ts';
import type { Decimal } from '../../domain/money.ts';
import type { RulesOrigin } from '../rules/origin.ts';
import type { RunFacts } from './facts.ts';

/**
 * What the backtest driver hands to the report: the facts of one run, folded as they happened
 * (facts.ts) but never turned into a figure. Every figure in the report (totals, value, PnL,
 * drawdown) is computed from this by build.ts, so the driver never has to agree with the report
 * on a formula.
 */

/** One order the engine placed (buys only: stacker never sells). */
export interface ReportOrder {
  instance: string;
  slotTimeMs: number;
  clientOrderId: string;
  market: string;
  /** Domain OrderStatus: FILLED, PARTIAL_FILLED, CANCELED, ... */
  status: string;
  /** Base asked. */
  amount: Decimal;
  filledBase: Decimal;
  /** Quote paid for the filled base, fee not included. */
  filledQuote: Decimal;
  fee: Decimal;
  feeAsset: string | null;
  /** When the fill happened (open time of the filling candle). The slot time when absent. */
  fillTimeMs?: number;
}

/** A decision the guards refused before anything was sent. */
export interface ReportRefusal {
  instance: string;
  slotTimeMs: number;
  reason: string;
  message: string;
}

export interface ReportFlexOp {
  instance: string;
  slotTimeMs: number;
  plan: string;
  ticker: string;
  amount: Decimal;
  status: 'done' | 'refused' | 'failed';
}

export interface EquityPoint {
  timeMs: number;
  /** Market close/open at that time. */
  price: Decimal;
  /** Quote held + base held × price (each main + trade + flex): what the account is worth. */
  value: Decimal;
}

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
  };
  /** Downsampled by the driver (≤ 2000 points), time-ascending. */
  chartCandles: Array<{ timeSec: number; close: Decimal }>;
  initialWallet: Record<string, Decimal>;
  /** main + trade + flex per asset. */
  finalBalances: Record<string, Decimal>;
  instances: Array<{ instance: string; strategy: string; schedule: string; timezone: string }>;
  /** Orders, refusals, flex operations and the account's value (sampled at every slot and chart point), folded. */
  facts: RunFacts;
  slots: number;
  /** The first slot of the run and the market's price then (the lump-sum benchmark buys there); null without a slot. */
  firstSlot?: { timeMs: number; price: Decimal } | null;
  settings: { slippagePct: Decimal; flexAprPct: Decimal | null };
  /** The market rules traded on, and where they came from. */
  rules: { values: MarketRules; origin: RulesOrigin };
}
