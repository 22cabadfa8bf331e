import { Decimal } from '../../src/domain/money.ts';
import type { NotifyEvent, OrderFilledEvent, OrderRefusedEvent, OrderStuckEvent } from '../../src/domain/notification.ts';

/** Events as the engine emits them, for the notify tests. */
export const AT_MS = Date.UTC(2026, 0, 2, 9, 0, 0);

/** What the events of one order of dca-btc share. */
const ORDER = { atMs: AT_MS, mode: 'live', instance: 'dca-btc', clientOrderId: 'dca-btc-7d16a56a1027-1767344400000-0' } as const;

export function filled(overrides: Partial<OrderFilledEvent> = {}): OrderFilledEvent {
  return {
    kind: 'order-filled',
    ...ORDER,
    orderId: '4180284841',
    market: 'BTC_USDT',
    status: 'FILLED',
    filledBase: new Decimal('0.001'),
    filledQuote: new Decimal('65.12'),
    fee: new Decimal('0.06512'),
    feeAsset: 'USDT',
    averagePrice: new Decimal('65120'),
    ...overrides,
  };
}

/** A buy its daily budget refused. */
export function refusal(overrides: Partial<OrderRefusedEvent> = {}): OrderRefusedEvent {
  return {
    kind: 'order-refused',
    ...ORDER,
    intent: 'buy-stock-market',
    reason: 'over-budget',
    message: 'estimated value 65 USDT is over budget (day: 100 spent + 65 > 150 USDT)',
    ...overrides,
  };
}

export const stopped: NotifyEvent = { kind: 'trading-stopped', atMs: AT_MS, mode: 'live', code: 'E_AUTH', reason: 'the exchange refused the key' };

/** A market order the exchange has kept answering open for 20 minutes. */
export function stuck(overrides: Partial<OrderStuckEvent> = {}): OrderStuckEvent {
  return {
    kind: 'order-stuck',
    atMs: AT_MS,
    mode: 'live',
    instance: 'dca-btc',
    orderId: '4180284841',
    clientOrderId: 'dca-btc-7d16a56a1027-1767344400000-0',
    market: 'BTC_USDT',
    status: 'NEW',
    sinceMs: AT_MS - 20 * 60_000,
    why: 'the exchange answers status "ACCEPTED", which this stacker does not know (taken as NEW)',
    ...overrides,
  };
}
