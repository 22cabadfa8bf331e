import { type Order, type OrderStatus, isTerminalStatus } from '../domain/order.ts';
import type { StoredOrder } from '../store/journal.ts';
import { tell } from './observer.ts';
import { type EngineDeps, LIVE_STUCK_ORDER_MS } from './runtime.ts';

/** How the tracker's read of an open order went in this pass. */
export type OrderRead =
  | { readonly kind: 'read'; readonly order: Order }
  | { readonly kind: 'not-found' }
  | { readonly kind: 'failed'; readonly error: string }
  | { readonly kind: 'no-account'; readonly account: string };

/** One open order the tracker followed in a pass, with what it knows of it. */
export interface FollowedOrder {
  readonly order: StoredOrder;
  /** Its intent's instance; null for an order the journal holds without an intent. */
  readonly instance: string | null;
  /** When its intent was sent; null without an intent (then when the journal first saw it counts). */
  readonly sentAtMs: number | null;
  readonly read: OrderRead;
}

/** An order open longer than a market order ever should be, as /healthz and /metrics show it. */
export interface StuckOrder {
  readonly orderId: string;
  readonly clientOrderId: string;
  readonly instance: string | null;
  readonly market: string;
  /** The status the exchange last gave (the journal's when it gave none this pass). */
  readonly status: OrderStatus;
  /** When it was sent (or first seen): what its age counts from. */
  readonly sinceMs: number;
  /** Why it is still open, from the last read: the status the exchange keeps answering, not found, or the read's error. */
  readonly why: string;
}

/**
 * Orders the tracker keeps following long after a market order ends: the exchange keeps answering
 * them open (a status word stacker does not know, a matching engine that stalls), does not find
 * them, or cannot be read. Following them is right (the budget stays counted, nothing is
 * cancelled or resent), but silently forever is not: the operator hears of each once, with what
 * to do, and /healthz lists them until they turn final. Their age counts from what the journal
 * stored (the intent's send, else when the order was first seen), so a restart still knows which
 * are stuck; it tells of them once more, as it remembers only in memory who was told.
 */
export class StuckOrders {
  readonly #deps: EngineDeps;
  /** Orders already told of in this run. */
  readonly #told = new Set<string>();
  #stuck: readonly StuckOrder[] = [];

  constructor(deps: EngineDeps) {
    this.#deps = deps;
  }

  get list(): readonly StuckOrder[] {
    return this.#stuck;
  }

  /** After a tracking pass, with every open order it followed: what is stuck now, telling of the new ones. */
  passed(followed: readonly FollowedOrder[]): void {
    const deps = this.#deps;
    const thresholdMs = deps.timing.stuckOrderMs ?? LIVE_STUCK_ORDER_MS;
    const nowMs = deps.clock.nowMs();
    const stuck: StuckOrder[] = [];
    const open = new Set<string>();
    for (const { order, instance, sentAtMs, read } of followed) {
      const status = read.kind === 'read' ? read.order.status : order.status;
      if (isTerminalStatus(status)) continue;
      open.add(order.orderId);
      // A limit or stop order may rightly rest for days; stacker sends neither, but never calls one stuck.
      if (RESTING_TYPES.has(order.type)) continue;
      const sinceMs = sentAtMs ?? order.firstSeenAtMs;
      if (nowMs - sinceMs < thresholdMs) continue;
      const found: StuckOrder = { orderId: order.orderId, clientOrderId: order.clientOrderId, instance, market: order.market, status, sinceMs, why: whyOpen(read, status) };
      stuck.push(found);
      if (!this.#told.has(order.orderId)) {
        this.#told.add(order.orderId);
        this.#tell(found, nowMs);
      }
    }
    // An order that turned final (or left the journal's open orders) is no longer anyone's concern.
    for (const orderId of this.#told) if (!open.has(orderId)) this.#told.delete(orderId);
    this.#stuck = stuck;
  }

  /** The journal holds no open order: nothing is stuck. */
  nothingOpen(): void {
    this.#stuck = [];
    this.#told.clear();
  }

  #tell(order: StuckOrder, nowMs: number): void {
    const deps = this.#deps;
    const since = new Date(order.sinceMs).toISOString();
    const minutes = Math.floor((nowMs - order.sinceMs) / 60_000);
    deps.logger.warn(
      { event: 'order-stuck', instance: order.instance, orderId: order.orderId, clientOrderId: order.clientOrderId, market: order.market, status: order.status, since, why: order.why },
      `order ${order.clientOrderId} (${order.orderId}) is still open since ${since}, ${minutes} min, when a market order ends in seconds (${order.why}): ` +
        'check it at the exchange; stacker keeps it open and asks again, cancels and resends nothing, and its budget stays counted',
    );
    tell(deps, () => ({
      kind: 'order-stuck',
      atMs: nowMs,
      mode: deps.mode,
      instance: order.instance,
      orderId: order.orderId,
      clientOrderId: order.clientOrderId,
      market: order.market,
      status: order.status,
      sinceMs: order.sinceMs,
      why: order.why,
    }));
  }
}

const RESTING_TYPES: ReadonlySet<string> = new Set(['limit', 'stop limit', 'stop market']);

function whyOpen(read: OrderRead, status: OrderStatus): string {
  switch (read.kind) {
    case 'read': {
      const word = read.order.unrecognized?.status;
      return word === undefined ? `the exchange still answers ${status}` : `the exchange answers status ${JSON.stringify(word)}, which this stacker does not know (taken as ${status})`;
    }
    case 'not-found':
      return 'the exchange finds it neither in its order history nor among the active orders';
    case 'failed':
      return `its status could not be read: ${read.error}`;
    case 'no-account':
      return `it was sent on account ${read.account}, which is not configured now, so it is not read`;
  }
}
