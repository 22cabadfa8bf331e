import { InputError, type InputProblem } from '../../domain/errors.ts';
import type { MarketRules } from '../../domain/market.ts';
import { type Decimal, DecimalFormatError, parseDecimalStrict } from '../../domain/money.ts';
import type { RuleField } from './origin.ts';

/**
 * Market rules given by hand on the backtest's command line. Each flag sets one field over
 * whichever source the rules came from; with no source for the market, the flags define it,
 * and then every flag marked `required` must be there (the others have a stated default).
 */

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

export type RuleOverrides = { -readonly [F in RuleField]?: MarketRules[F] };

interface RuleFlag {
  readonly flag: string;
  readonly key: keyof RuleFlags;
  readonly field: RuleField;
  /** The value's name in --help. */
  readonly arg: 'n' | 'decimal' | 'decimal|none';
  /** What --help says. */
  readonly help: string;
  /** Needed when the flags alone define the market; otherwise the default named in `help`. */
  readonly required: boolean;
  readonly parse: (text: string) => MarketRules[RuleField];
}

const MAX_PRECISION = 30;

/** In RuleField order: the order overrides are reported in. */
export const RULE_FLAGS: readonly RuleFlag[] = [
  { flag: '--base-precision', key: 'basePrecision', field: 'basePrecision', arg: 'n', required: true, help: 'decimals of an amount in the base asset', parse: (t) => precision(t, '--base-precision') },
  { flag: '--quote-precision', key: 'quotePrecision', field: 'quotePrecision', arg: 'n', required: true, help: 'decimals of a price or total in the quote asset', parse: (t) => precision(t, '--quote-precision') },
  { flag: '--fee-precision', key: 'feePrecision', field: 'feePrecision', arg: 'n', required: true, help: 'decimals a fee is rounded up to', parse: (t) => precision(t, '--fee-precision') },
  { flag: '--min-amount', key: 'minAmount', field: 'minBaseAmount', arg: 'decimal', required: true, help: 'smallest order amount, base asset', parse: (t) => decimal(t, '--min-amount') },
  { flag: '--min-total', key: 'minTotal', field: 'minQuoteTotal', arg: 'decimal', required: true, help: 'smallest order total, quote asset', parse: (t) => decimal(t, '--min-total') },
  { flag: '--max-total', key: 'maxTotal', field: 'maxQuoteTotal', arg: 'decimal|none', required: false, help: 'largest order total, quote asset, or none (default: none)', parse: maxTotal },
  { flag: '--maker-fee-pct', key: 'makerFeePct', field: 'makerFeePct', arg: 'decimal', required: false, help: 'maker fee, percent (default: the taker fee; market buys always take)', parse: (t) => decimal(t, '--maker-fee-pct', 100) },
  { flag: '--taker-fee-pct', key: 'takerFeePct', field: 'takerFeePct', arg: 'decimal', required: true, help: 'taker fee, percent: 0.1 means 0.1 %', parse: (t) => decimal(t, '--taker-fee-pct', 100) },
];

/** Every rule flag given, checked; one InputError with every bad one. */
export function parseRuleFlags(flags: RuleFlags): RuleOverrides {
  const problems: InputProblem[] = [];
  const overrides: Record<string, unknown> = {};
  for (const spec of RULE_FLAGS) {
    const text = flags[spec.key];
    if (text === undefined) continue;
    try {
      overrides[spec.field] = spec.parse(text);
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      problems.push(...error.problems);
    }
  }
  if (problems.length > 0) throw new InputError(problems);
  return overrides as RuleOverrides;
}

/** The fields the overrides set, in RuleField order. */
export function overriddenFields(overrides: RuleOverrides): RuleField[] {
  return RULE_FLAGS.map((spec) => spec.field).filter((field) => overrides[field] !== undefined);
}

/** The required flags not given: what the flags lack to define a market alone. */
export function missingRuleFlags(overrides: RuleOverrides): string[] {
  return RULE_FLAGS.filter((spec) => spec.required && overrides[spec.field] === undefined).map((spec) => spec.flag);
}

export function applyOverrides(rules: MarketRules, overrides: RuleOverrides): MarketRules {
  return { ...rules, ...overrides };
}

/** A market defined by the flags alone; null when a required flag is missing (see missingRuleFlags). */
export function rulesFromFlags(market: string, overrides: RuleOverrides): MarketRules | null {
  const { basePrecision, quotePrecision, feePrecision, minBaseAmount, minQuoteTotal, takerFeePct } = overrides;
  if (basePrecision === undefined || quotePrecision === undefined || feePrecision === undefined) return null;
  if (minBaseAmount === undefined || minQuoteTotal === undefined || takerFeePct === undefined) return null;
  const [base, quote] = market.split('_') as [string, string];
  return {
    name: market,
    base,
    quote,
    basePrecision,
    quotePrecision,
    feePrecision,
    makerFeePct: overrides.makerFeePct ?? takerFeePct,
    takerFeePct,
    minBaseAmount,
    minQuoteTotal,
    maxQuoteTotal: overrides.maxQuoteTotal ?? null,
    tradesEnabled: true,
    type: 'spot',
  };
}

function precision(text: string, flag: string): number {
  if (/^\d{1,2}$/.test(text) && Number(text) <= MAX_PRECISION) return Number(text);
  throw InputError.one(flag, `must be a whole number of decimals from 0 to ${MAX_PRECISION} (got ${JSON.stringify(text)})`);
}

function decimal(text: string, flag: string, max?: number): Decimal {
  const range = max === undefined ? 'of zero or more' : `from 0 to ${max}`;
  let value: Decimal | null = null;
  try {
    value = parseDecimalStrict(text, flag);
  } catch (error) {
    if (!(error instanceof DecimalFormatError)) throw error;
  }
  if (value === null || value.isNegative() || (max !== undefined && value.gt(max))) {
    throw InputError.one(flag, `must be a plain decimal ${range}, such as 0.1 (got ${JSON.stringify(text)})`);
  }
  return value;
}

function maxTotal(text: string): Decimal | null {
  if (text === 'none') return null;
  const value = decimal(text, '--max-total');
  if (value.isZero()) throw InputError.one('--max-total', 'must be above 0, or none for no upper limit (got "0")');
  return value;
}
