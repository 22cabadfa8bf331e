import type { Decimal } from './money.ts';

/**
 * Order statuses in stacker's spelling. The real exchange also writes PARTIALLY_FILLED and
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

/**
 * Self-trade prevention in the exchange's current spelling: `no`, `cb` (cancel both), `cn`
 * (cancel the new order), `co` (cancel the old one). The long spellings are deprecated at the
 * exchange and will be refused after an announced deadline (docs/exchange-api.md): stacker
 * accepts them as input and reads them from older journals, and never sends them.
 */
export const STP_MODES = ['no', 'cb', 'cn', 'co'] as const;
export type Stp = (typeof STP_MODES)[number];

const STP_LONG_FORMS: Readonly<Record<string, Stp>> = { cancel_both: 'cb', cancel_new: 'cn', cancel_old: 'co' };

/** The STP mode a text names, in either spelling; null when it names none. */
export function readStp(text: string): Stp | null {
  if ((STP_MODES as readonly string[]).includes(text)) return text as Stp;
  return STP_LONG_FORMS[text] ?? null;
}

/** For messages: what a user may type. */
export const STP_INPUT_HELP = 'no, cb (cancel both), cn (cancel new) or co (cancel old); the long forms cancel_both, cancel_new and cancel_old are read too';

export type OrderSide = 'buy' | 'sell';
export type OrderType = 'limit' | 'market' | 'stock market' | 'stop limit' | 'stop market' | (string & {});

/** Letters, digits, dash, dot, underscore; 1 to 64 characters (docs/exchange-api.md §6). */
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
  /** true when the status was derived from the fills: the exchange sent none, or one this version does not know. */
  readonly statusDerived: boolean;
  readonly stp: Stp;
  /** Stop orders only: 0 not triggered, 1 triggered (the exchange may say when: any non-zero time is 1). */
  readonly stopActivated: 0 | 1 | null;
  /**
   * Values the exchange sent that stacker does not know (a status or STP mode added after this
   * version), kept as sent. `status` / `stp` above are then derived from the fills / `no`:
   * an order with a new status is still an order, never an unreadable answer. Such an order is
   * terminal only when everything is filled or it is a history row; otherwise it is NEW or
   * PARTIAL_FILLED and followed like any open order.
   */
  readonly unrecognized?: { readonly status?: string; readonly stp?: string };
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
