import { type Decimal, formatDecimal, isAboveZero, roundDown, roundUp } from './money.ts';

/** The rules of one market, in our names (units and sides in the names, see docs/design.md, Conventions). */
export interface MarketRules {
  readonly name: string;
  readonly base: string;
  readonly quote: string;
  /** Max decimals of an amount in the base asset (wire `stockPrec`). */
  readonly basePrecision: number;
  /** Max decimals of a price or total in the quote asset (wire `moneyPrec`). */
  readonly quotePrecision: number;
  readonly feePrecision: number;
  /** Percent: 0.1 means 0.1 %. */
  readonly makerFeePct: Decimal;
  readonly takerFeePct: Decimal;
  readonly minBaseAmount: Decimal;
  readonly minQuoteTotal: Decimal;
  /** null when the exchange says "0", i.e. no upper limit. */
  readonly maxQuoteTotal: Decimal | null;
  readonly tradesEnabled: boolean;
  readonly type: string;
}

export interface RuleViolation {
  readonly field: 'amount' | 'total' | 'market';
  readonly rule: 'precision' | 'min-amount' | 'min-total' | 'max-total' | 'positive' | 'trading-disabled';
  readonly message: string;
}

/**
 * The refusal reason (kebab-case, as counted in metrics) for each rule a market order breaks:
 * one table, so a strategy's early refusal and the engine's guard name a violation alike.
 */
export const RULE_REFUSAL_REASONS: Readonly<Record<RuleViolation['rule'], string>> = {
  'trading-disabled': 'trading-disabled',
  positive: 'below-min-amount',
  precision: 'amount-precision',
  'min-amount': 'below-min-amount',
  'min-total': 'below-min-total',
  'max-total': 'above-max-total',
};

/** Round a base quantity down to what the market accepts. */
export function roundBaseAmount(rules: MarketRules, baseAmount: Decimal): Decimal {
  return roundDown(baseAmount, rules.basePrecision);
}

/**
 * Check a base quantity against the market's limits at an expected price. Returns every
 * violation rather than the first, so a caller can report all at once.
 */
export function checkBaseOrder(rules: MarketRules, baseAmount: Decimal, price: Decimal): RuleViolation[] {
  const found: RuleViolation[] = [];
  if (!rules.tradesEnabled) {
    found.push({ field: 'market', rule: 'trading-disabled', message: `trading is disabled on ${rules.name}` });
  }
  if (!isAboveZero(baseAmount)) {
    found.push({ field: 'amount', rule: 'positive', message: 'amount must be greater than 0' });
    return found;
  }
  if (baseAmount.decimalPlaces() > rules.basePrecision) {
    found.push({ field: 'amount', rule: 'precision', message: `amount has more than ${rules.basePrecision} decimals` });
  }
  if (baseAmount.lt(rules.minBaseAmount)) {
    found.push({ field: 'amount', rule: 'min-amount', message: `amount ${formatDecimal(baseAmount)} is less than min amount ${formatDecimal(rules.minBaseAmount)}` });
  }
  const total = baseAmount.mul(price);
  if (total.lt(rules.minQuoteTotal)) {
    found.push({ field: 'total', rule: 'min-total', message: `total ${formatDecimal(total)} is less than min total ${formatDecimal(rules.minQuoteTotal)}` });
  }
  if (rules.maxQuoteTotal !== null && total.gt(rules.maxQuoteTotal)) {
    found.push({ field: 'total', rule: 'max-total', message: `total ${formatDecimal(total)} is more than max total ${formatDecimal(rules.maxQuoteTotal)}` });
  }
  return found;
}

/** Fee in quote for a quote total at a percent rate, rounded up to the fee precision (the exchange never undercharges). */
export function takerFee(rules: MarketRules, quoteTotal: Decimal): Decimal {
  return roundUp(quoteTotal.mul(feeRate(rules.takerFeePct)), rules.feePrecision);
}

/** pct / 100, once per rate: a division per fill adds up over years of slots (exact: /100 of a decimal is a decimal). */
const feeRates = new WeakMap<Decimal, Decimal>();
function feeRate(pct: Decimal): Decimal {
  let rate = feeRates.get(pct);
  if (rate === undefined) {
    rate = pct.div(100);
    feeRates.set(pct, rate);
  }
  return rate;
}
