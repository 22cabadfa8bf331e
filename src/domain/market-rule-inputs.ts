/**
 * The market rules a person can type (a backtest's rule flags): which field each flag sets, its
 * name and help. Only names and words here, so the command line can list the flags without
 * loading the backtest; src/backtest/rules/rule-flags.ts parses them.
 */

/** The MarketRules fields that can be given by hand. */
export type RuleField = 'basePrecision' | 'quotePrecision' | 'feePrecision' | 'minBaseAmount' | 'minQuoteTotal' | 'maxQuoteTotal' | 'makerFeePct' | 'takerFeePct';

/** The flags as commander collects them (raw text). */
export interface RuleFlags {
  readonly basePrecision?: string;
  readonly quotePrecision?: string;
  readonly feePrecision?: string;
  readonly minAmount?: string;
  readonly minTotal?: string;
  readonly maxTotal?: string;
  readonly makerFeePct?: string;
  readonly takerFeePct?: string;
}

export interface MarketRuleInput {
  readonly flag: string;
  readonly key: keyof RuleFlags;
  readonly field: RuleField;
  /** The value's name in --help. */
  readonly arg: 'n' | 'decimal' | 'decimal|none';
  /** What --help says. */
  readonly help: string;
  /** Needed when the flags alone define the market; otherwise the default named in `help`. */
  readonly required: boolean;
}

/** In RuleField order. */
export const MARKET_RULE_INPUTS: readonly MarketRuleInput[] = [
  { flag: '--base-precision', key: 'basePrecision', field: 'basePrecision', arg: 'n', required: true, help: 'decimals of an amount in the base asset' },
  { flag: '--quote-precision', key: 'quotePrecision', field: 'quotePrecision', arg: 'n', required: true, help: 'decimals of a price or total in the quote asset' },
  { flag: '--fee-precision', key: 'feePrecision', field: 'feePrecision', arg: 'n', required: true, help: 'decimals a fee is rounded up to' },
  { flag: '--min-amount', key: 'minAmount', field: 'minBaseAmount', arg: 'decimal', required: true, help: 'smallest order amount, base asset' },
  { flag: '--min-total', key: 'minTotal', field: 'minQuoteTotal', arg: 'decimal', required: true, help: 'smallest order total, quote asset' },
  { flag: '--max-total', key: 'maxTotal', field: 'maxQuoteTotal', arg: 'decimal|none', required: false, help: 'largest order total, quote asset, or none (default: none)' },
  { flag: '--maker-fee-pct', key: 'makerFeePct', field: 'makerFeePct', arg: 'decimal', required: false, help: 'maker fee, percent (default: the taker fee; market buys always take)' },
  { flag: '--taker-fee-pct', key: 'takerFeePct', field: 'takerFeePct', arg: 'decimal', required: true, help: 'taker fee, percent: 0.1 means 0.1 %' },
];
