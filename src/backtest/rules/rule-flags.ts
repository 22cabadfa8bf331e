import { InputError, type InputProblem } from '../../domain/errors.ts';
import type { MarketRules } from '../../domain/market.ts';
import { type Decimal, DecimalFormatError, parseDecimalStrict } from '../../domain/money.ts';
import { MARKET_RULE_INPUTS, type MarketRuleInput, type RuleField, type RuleFlags } from '../../domain/market-rule-inputs.ts';

/**
 * Market rules given by hand on the backtest's command line. Each flag sets one field over
 * whichever source the rules came from; with no source for the market, the flags define it,
 * and then every flag marked `required` must be there (the others have a stated default).
 */

export type { RuleFlags } from '../../domain/market-rule-inputs.ts';

export type RuleOverrides = { -readonly [F in RuleField]?: MarketRules[F] };

interface RuleFlag extends MarketRuleInput {
  readonly parse: (text: string) => MarketRules[RuleField];
}

const MAX_PRECISION = 30;

const PARSE: Readonly<Record<RuleField, (text: string, flag: string) => MarketRules[RuleField]>> = {
  basePrecision: (t, f) => precision(t, f),
  quotePrecision: (t, f) => precision(t, f),
  feePrecision: (t, f) => precision(t, f),
  minBaseAmount: (t, f) => decimal(t, f),
  minQuoteTotal: (t, f) => decimal(t, f),
  maxQuoteTotal: (t) => maxTotal(t),
  makerFeePct: (t, f) => decimal(t, f, 100),
  takerFeePct: (t, f) => decimal(t, f, 100),
};

/** In RuleField order: the order overrides are reported in. The names and help are the CLI's (src/domain/market-rule-inputs.ts). */
export const RULE_FLAGS: readonly RuleFlag[] = MARKET_RULE_INPUTS.map((input) => ({ ...input, parse: (text: string) => PARSE[input.field](text, input.flag) }));

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
