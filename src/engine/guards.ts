import { RULE_REFUSAL_REASONS, checkBaseOrder } from '../domain/market.ts';
import type { Decimal } from '../domain/money.ts';
import { formatDecimal, isAboveZero } from '../domain/money.ts';
import type { BuyStockMarketIntent, MoneyIntent } from '../domain/intent.ts';
import type { IntentError } from '../store/journal.ts';
import type { SlotView } from './contract.ts';

/**
 * The engine's own checks on a money intent, run whatever the strategy checked: a strategy's
 * checks give a clear reason early, these are the safety net (a buggy or hostile strategy module
 * still cannot exceed MAX_ORDER_QUOTE or send an order the market rules refuse). Budgets and the
 * kill switch are checked later, right before the send, because they depend on the journal and
 * on time.
 */
export interface StaticLimits {
  readonly maxOrderQuote: Decimal | null;
  /**
   * The markets the instance declares, by key (Strategy.markets): a buy on another is refused,
   * whatever the exchange lists. null or absent: not limited.
   */
  readonly markets?: Readonly<Record<string, string>> | null;
  /**
   * The asset the instance's budgets and MAX_ORDER_QUOTE count in (Strategy.budgetAsset): a buy
   * spending another is refused, since its estimate would be counted against them in the wrong
   * unit. null or absent: none declared.
   */
  readonly budgetAsset?: string | null;
}

export function staticGuard(intent: MoneyIntent, view: SlotView, limits: StaticLimits): IntentError | null {
  if (intent.kind !== 'buy-stock-market') return null;
  return buyGuard(intent, view, limits);
}

function buyGuard(intent: BuyStockMarketIntent, view: SlotView, limits: StaticLimits): IntentError | null {
  const declared = limits.markets ?? null;
  if (declared !== null && !Object.values(declared).includes(intent.market)) {
    const named = Object.entries(declared).map(([key, market]) => `${key}=${market}`);
    return {
      code: 'undeclared-market',
      message: `the buy of ${formatDecimal(intent.amount)} ${intent.market} is on a market this instance does not declare (${named.length === 0 ? 'its strategy has no param.market key' : named.join(', ')}): an instance buys only on the markets its param.market keys name, the ones checked at start`,
    };
  }
  const rules = safe(() => view.market(intent.market));
  if (rules === undefined) return { code: 'unknown-market', message: `the exchange does not list ${intent.market}` };
  const budgetAsset = limits.budgetAsset ?? null;
  if (budgetAsset !== null && rules.quote !== budgetAsset) {
    return {
      code: 'budget-asset-mismatch',
      message: `the buy of ${formatDecimal(intent.amount)} ${intent.market} spends ${rules.quote}, not ${budgetAsset}, the asset this instance's budgets and MAX_ORDER_QUOTE count in (its strategy's budgetAsset): a buy is counted against them only in that asset`,
    };
  }
  const price = safe(() => view.price(intent.market));
  if (price === undefined || !isAboveZero(price)) return { code: 'no-price', message: `no price is known for ${intent.market}` };
  const violations = checkBaseOrder(rules, intent.amount, price);
  const first = violations[0];
  if (first !== undefined) return { code: RULE_REFUSAL_REASONS[first.rule], message: violations.map((v) => v.message).join('; ') };
  const estimate = quoteAt(intent.amount, price);
  if (limits.maxOrderQuote !== null && estimate.gt(limits.maxOrderQuote)) {
    return {
      code: 'above-max-order',
      message: `estimated value ${formatDecimal(estimate)} ${rules.quote} is above MAX_ORDER_QUOTE ${formatDecimal(limits.maxOrderQuote)}`,
    };
  }
  return null;
}

/** The estimated quote value of a buy at the view's price: what budgets count. */
export function estimatedQuote(intent: BuyStockMarketIntent, view: SlotView): Decimal | null {
  const price = safe(() => view.price(intent.market));
  return price === undefined ? null : quoteAt(intent.amount, price);
}

let lastQuote: { amount: Decimal; price: Decimal; quote: Decimal } | null = null;

/**
 * amount × price, the last one kept: a buy's guard, its plan and its budget each need the same
 * product (decimals are immutable values, so the same two give the same product).
 */
export function quoteAt(amount: Decimal, price: Decimal): Decimal {
  const last = lastQuote;
  if (last !== null && last.amount === amount && last.price === price) return last.quote;
  const quote = amount.mul(price);
  lastQuote = { amount, price, quote };
  return quote;
}

/**
 * `undefined` for a part the view was not given, rather than the view's programming error. A buy
 * never meets it (checkDecision refuses one whose strategy does not read markets and prices); the
 * budget's estimate may.
 */
function safe<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}
