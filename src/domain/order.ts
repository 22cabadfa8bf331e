import type { Decimal } from './money.ts';

/**
 * Order statuses in SPEC spelling. The real exchange also writes PARTIALLY_FILLED and
 * CANCELED_STP; the wire parser maps spellings onto these.
 */
export const ORDER_STATUSES = [
  'NEW',
  'PARTIAL_FILLED',
  'FILLED',
  'CANCELED',
  'PARTIAL_CANCELED',
  'CANCELED_TAKER_BAND',
  'CANCELED_STP',
  'AUTO_CANCELED_REDUCE_ONLY',
  'AUTO_CANCELED_LIQUIDATION',
] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

const TERMINAL: ReadonlySet<OrderStatus> = new Set<OrderStatus>([
  'FILLED',
  'CANCELED',
  'PARTIAL_CANCELED',
  'CANCELED_TAKER_BAND',
  'CANCELED_STP',
  'AUTO_CANCELED_REDUCE_ONLY',
  'AUTO_CANCELED_LIQUIDATION',
]);

export function isTerminalStatus(status: OrderStatus): boolean {
  return TERMINAL.has(status);
}

export const STP_MODES = ['no', 'cancel_both', 'cancel_new', 'cancel_old'] as const;
export type Stp = (typeof STP_MODES)[number];

export type OrderSide = 'buy' | 'sell';
export type OrderType = 'limit' | 'market' | 'stock market' | 'stop limit' | 'stop market' | (string & {});

/** Letters, digits, dash, dot, underscore; 1 to 64 characters (SPEC limits, WHITEBIT.md length). */
export const CLIENT_ORDER_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

export function isValidClientOrderId(id: string): boolean {
  return CLIENT_ORDER_ID_PATTERN.test(id);
}

/** An order as the exchange reports it, in our names. */
export interface Order {
  /** Kept as text: the engine's ids are integers that need not fit a JS number. */
  readonly orderId: string;
  /** "" when none was supplied. */
  readonly clientOrderId: string;
  readonly market: string;
  readonly side: OrderSide;
  readonly type: OrderType;
  readonly createdAtSec: number;
  /** Order quantity: base for stock-market and limit orders, quote for buy market orders. */
  readonly amount: Decimal;
  /** Unfilled remainder in the unit of `amount`. */
  readonly left: Decimal;
  readonly filledBase: Decimal;
  readonly filledQuote: Decimal;
  readonly fee: Decimal;
  readonly feeAsset: string | null;
  /** null for market orders. */
  readonly price: Decimal | null;
  readonly status: OrderStatus;
  /** true when the exchange did not send a status and it was derived from the fills. */
  readonly statusDerived: boolean;
  readonly stp: Stp;
  /** Stop orders only: 0 not triggered, 1 triggered. */
  readonly stopActivated: 0 | 1 | null;
}

/** One execution (deal) of an order. */
export interface Deal {
  readonly dealId: string;
  readonly orderId: string;
  readonly clientOrderId: string;
  readonly timeSec: number;
  readonly price: Decimal;
  readonly baseAmount: Decimal;
  readonly quoteAmount: Decimal;
  readonly fee: Decimal;
  readonly feeAsset: string | null;
  readonly role: 'maker' | 'taker';
}
