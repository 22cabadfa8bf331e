import { InputError } from '../domain/errors.ts';
import { type Decimal, isDecimal } from '../domain/money.ts';
import { type Stp, CLIENT_ORDER_ID_PATTERN, STP_INPUT_HELP, readStp } from '../domain/order.ts';

/**
 * Input checks run before anything is signed or sent: a request the exchange would refuse costs
 * a rate-limit slot and, for orders, a journal entry to reconcile. Each throws an InputError
 * naming the parameter and the rule.
 */

const MARKET_PATTERN = /^[A-Z0-9]{1,20}_[A-Z0-9]{1,20}$/;
const TICKER_PATTERN = /^[A-Za-z0-9]{1,32}$/;
const ORDER_ID_PATTERN = /^\d{1,20}$/;
const PLAN_PATTERN = /^[A-Za-z0-9._:-]{1,100}$/;

export function checkMarket(market: unknown, field = 'market'): string {
  if (typeof market !== 'string' || !MARKET_PATTERN.test(market)) {
    throw InputError.one(field, `must be BASE_QUOTE in capitals, such as BTC_USDT (got ${describe(market)})`);
  }
  return market;
}

export function checkTicker(ticker: unknown, field = 'ticker'): string {
  if (typeof ticker !== 'string' || !TICKER_PATTERN.test(ticker)) {
    throw InputError.one(field, `must be an asset ticker such as USDT: 1 to 32 letters or digits (got ${describe(ticker)})`);
  }
  return ticker;
}

/** A Decimal strictly above zero. */
export function checkPositiveAmount(amount: unknown, field: string): Decimal {
  if (!isDecimal(amount)) throw InputError.one(field, 'must be a Decimal (never a JS number: money does not go through floats)');
  if (!amount.isFinite() || !amount.gt(0)) throw InputError.one(field, `must be greater than 0 (got ${amount.toString()})`);
  return amount;
}

export function checkClientOrderId(id: unknown, field = 'clientOrderId'): string {
  if (typeof id !== 'string' || !CLIENT_ORDER_ID_PATTERN.test(id)) {
    throw InputError.one(field, `must be 1 to 64 characters of letters, digits, "-", "." or "_" (got ${describe(id)})`);
  }
  return id;
}

export function checkStp(stp: unknown, field = 'stp'): Stp {
  const read = typeof stp === 'string' ? readStp(stp) : null;
  if (read === null) throw InputError.one(field, `must be ${STP_INPUT_HELP} (got ${describe(stp)})`);
  return read;
}

export function checkOrderId(orderId: unknown, field = 'orderId'): string {
  if (typeof orderId !== 'string' || !ORDER_ID_PATTERN.test(orderId)) {
    throw InputError.one(field, `must be the exchange's order id: 1 to 20 digits (got ${describe(orderId)})`);
  }
  return orderId;
}

/** Flex plan ids are UUIDs on the real exchange; accept any plain identifier, refuse empty and blanks. */
export function checkPlan(plan: unknown, field = 'plan'): string {
  if (typeof plan !== 'string' || !PLAN_PATTERN.test(plan)) {
    throw InputError.one(field, `must be a plan id such as a UUID: 1 to 100 letters, digits, "-", "_", "." or ":" (got ${describe(plan)})`);
  }
  return plan;
}

export function checkIntegerIn(value: unknown, field: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw InputError.one(field, `must be an integer from ${min} to ${max} (got ${describe(value)})`);
  }
  return value;
}

export function optionalInteger(value: number | undefined, field: string, min: number, max: number): number | undefined {
  return value === undefined ? undefined : checkIntegerIn(value, field, min, max);
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
  if (typeof value === 'number') return String(value);
  if (isDecimal(value)) return value.toString();
  return value === null ? 'null' : typeof value;
}
