import type { MarketRules } from '../domain/market.ts';
import { type Decimal, formatDecimal, isAboveZero, roundDown } from '../domain/money.ts';
import { CLIENT_ORDER_ID_PATTERN, type Stp, readStp } from '../domain/order.ts';
import { SimRejection } from './rejection.ts';

/**
 * Order refusals with the exchange's codes and messages (docs/exchange-api.md §6–7): 30 generic
 * validation, 31 market, 32 amount, 36 clientOrderId; 10 "Not enough balance." is a business
 * refusal. Where the exchange documents no message (max total, stp) the text follows the style
 * of its neighbours and says so below.
 */
export const ORDER_CODES = { validation: 30, market: 31, amount: 32, clientOrderId: 36, notEnoughBalance: 10 } as const;

/**
 * Accept the short (`cn`) and the deprecated long (`cancel_new`) forms, as the exchange does
 * until its announced deadline; absent means `no`.
 */
export function parseStp(value: unknown): Stp {
  if (value === undefined) return 'no';
  const stp = typeof value === 'string' ? readStp(value) : null;
  if (stp !== null) return stp;
  // Not documented by the exchange; worded like its side-field message.
  throw SimRejection.validation(ORDER_CODES.validation, 'stp', "Stp field should contain only 'no', 'cb', 'cn' or 'co' values.");
}

/** `undefined` or `""` mean none; anything else must be 1–64 of [A-Za-z0-9._-]. */
export function parseClientOrderId(value: unknown): string {
  if (value === undefined || value === null || value === '') return '';
  if (typeof value !== 'string') {
    throw SimRejection.validation(ORDER_CODES.clientOrderId, 'clientOrderId', 'ClientOrderId field should be a string.');
  }
  if (!CLIENT_ORDER_ID_PATTERN.test(value)) {
    throw SimRejection.validation(
      ORDER_CODES.clientOrderId,
      'clientOrderId',
      'ClientOrderId field should contain only latin letters, numbers and dashes.',
    );
  }
  return value;
}

export function marketNotAvailable(): SimRejection {
  return SimRejection.validation(ORDER_CODES.market, 'market', 'Market is not available.');
}

function requirePositive(amount: Decimal): void {
  if (!isAboveZero(amount)) throw SimRejection.validation(ORDER_CODES.amount, 'amount', 'Amount should be greater than 0.');
}

/** The smallest step at `places` decimals, as text: 6 → "0.000001". */
function stepText(places: number): string {
  return places === 0 ? '1' : `0.${'0'.repeat(places - 1)}1`;
}

/**
 * A stock market buy: `baseAmount` of the base asset, checked at the best ask price
 * (`bestAsk`) against the market's precision, min amount, min total and max total.
 */
export function checkStockMarketBuy(rules: MarketRules, baseAmount: Decimal, bestAsk: Decimal): void {
  requirePositive(baseAmount);
  if (baseAmount.decimalPlaces() > rules.basePrecision) {
    throw SimRejection.validation(ORDER_CODES.amount, 'amount', `Min amount step = ${stepText(rules.basePrecision)}`);
  }
  if (baseAmount.lt(rules.minBaseAmount)) {
    throw SimRejection.validation(ORDER_CODES.amount, 'amount', `Given amount is less than min amount ${formatDecimal(rules.minBaseAmount)}`);
  }
  const total = baseAmount.mul(bestAsk);
  if (total.lt(rules.minQuoteTotal)) {
    throw SimRejection.validation(ORDER_CODES.validation, 'total', `Total (amount * price) is less than ${formatDecimal(rules.minQuoteTotal)}`);
  }
  if (rules.maxQuoteTotal !== null && total.gt(rules.maxQuoteTotal)) {
    // Not documented by the exchange; worded like its min-total message.
    throw SimRejection.validation(ORDER_CODES.validation, 'total', `Total (amount * price) is greater than ${formatDecimal(rules.maxQuoteTotal)}`);
  }
}

/**
 * A market buy spending `quoteAmount`: the amount is a total, so it is checked against the
 * price precision, min total and max total, and what it buys at the best ask against min amount.
 */
export function checkMarketBuy(rules: MarketRules, quoteAmount: Decimal, bestAsk: Decimal): void {
  requirePositive(quoteAmount);
  if (quoteAmount.decimalPlaces() > rules.quotePrecision) {
    // sic: the exchange writes "= =" in this message.
    throw SimRejection.validation(ORDER_CODES.amount, 'amount', `Min total step = = ${stepText(rules.quotePrecision)}`);
  }
  if (quoteAmount.lt(rules.minQuoteTotal)) {
    throw SimRejection.validation(ORDER_CODES.amount, 'amount', `Total amount should be no less than ${formatDecimal(rules.minQuoteTotal)} + trade fee`);
  }
  if (rules.maxQuoteTotal !== null && quoteAmount.gt(rules.maxQuoteTotal)) {
    // Not documented by the exchange; worded like its min-total message.
    throw SimRejection.validation(ORDER_CODES.amount, 'amount', `Total amount should be no greater than ${formatDecimal(rules.maxQuoteTotal)}`);
  }
  if (roundDown(quoteAmount.div(bestAsk), rules.basePrecision).lt(rules.minBaseAmount)) {
    throw SimRejection.validation(ORDER_CODES.amount, 'amount', `Given amount is less than min amount ${formatDecimal(rules.minBaseAmount)}`);
  }
}

export function notEnoughBalance(): SimRejection {
  return SimRejection.refused('insufficient-funds', ORDER_CODES.notEnoughBalance, 'amount', 'Not enough balance.');
}

export function clientOrderIdInUse(): SimRejection {
  return SimRejection.validation(ORDER_CODES.clientOrderId, 'clientOrderId', 'This client order id is already used by the current account.');
}
