import { type MarketRules, takerFee } from '../domain/market.ts';
import { Decimal, ZERO, roundDown } from '../domain/money.ts';
import type { Deal, Order, OrderStatus, Stp } from '../domain/order.ts';
import { type FillPlan, slicePlan } from './fills.ts';
import type { SimIds } from './ids.ts';
import type { Books, Posting } from './ledger.ts';

/**
 * Gradual settlement (tests of order tracking): an order is accepted NEW with nothing filled,
 * its funds frozen, and fills in `steps` equal parts, one every `stepMs` of sim time. It is
 * evaluated lazily whenever the sim is read, so no timers run.
 */
export interface SettlementOptions {
  readonly steps: number;
  readonly stepMs: number;
}

/** An order as the sim reports it: the domain order plus when it reached a final status. */
export interface SimOrder extends Order {
  readonly finishedAtSec: number | null;
}

/** A deal plus the synthetic maker order it matched (the wire's `dealOrderId`). */
export interface SimDeal extends Deal {
  readonly counterOrderId: string;
}

export interface OrderFilter {
  readonly market?: string;
  readonly clientOrderId?: string;
  /** Wins over clientOrderId when both are given. */
  readonly orderId?: string;
}

export interface NewOrder {
  readonly type: 'stock market' | 'market';
  readonly rules: MarketRules;
  /** Base for a stock market order, quote for a market order. */
  readonly amount: Decimal;
  readonly clientOrderId: string;
  readonly stp: Stp;
  readonly plan: FillPlan;
}

interface OrderState extends NewOrder {
  readonly seq: number;
  readonly orderId: string;
  readonly createdMs: number;
  readonly steps: number;
  readonly stepMs: number;
  /** Immediate orders spend `spot` directly; gradual ones spend what they froze. */
  readonly immediate: boolean;
  applied: number;
  filledBase: Decimal;
  filledQuote: Decimal;
  fee: Decimal;
  reserved: Decimal;
  status: OrderStatus;
  finishedMs: number | null;
  readonly deals: SimDeal[];
}

/**
 * The orders of the account and how they settle into the books. Placement assumes the caller
 * validated the order and checked the balance; every money movement is posted to the ledger
 * with the order id as ref. Fees are cumulative: after each deal the fee charged so far is the
 * taker fee of the quote filled so far, rounded up, so the deals of an order add up to exactly
 * the fee of its total however it was split.
 */
export class Orders {
  readonly #books: Books;
  readonly #ids: SimIds;
  readonly #settlement: SettlementOptions | null;
  #orders: OrderState[] = [];
  readonly #byId = new Map<string, OrderState>();
  /** Orders not yet final, so `advance` does not walk the whole history on every read. */
  #pending: OrderState[] = [];
  /** Finished orders, oldest first, and how many of them to keep (SimHistory.finishedOrders). */
  #finished: OrderState[] = [];
  readonly #keepFinished: number;
  #forgotten = 0;

  constructor(books: Books, ids: SimIds, settlement: SettlementOptions | null, keepFinished = Number.POSITIVE_INFINITY) {
    if (!(keepFinished >= 1)) throw new RangeError('keep at least one finished order');
    this.#keepFinished = keepFinished;
    if (settlement !== null && (!Number.isSafeInteger(settlement.steps) || settlement.steps < 1 || !(settlement.stepMs >= 0))) {
      throw new RangeError('settlement needs steps >= 1 and stepMs >= 0');
    }
    this.#books = books;
    this.#ids = ids;
    this.#settlement = settlement;
  }

  place(order: NewOrder, nowMs: number): SimOrder {
    const immediate = this.#settlement === null;
    const state: OrderState = {
      ...order,
      seq: this.#orders.length + this.#forgotten + 1,
      orderId: this.#ids.next('order'),
      createdMs: nowMs,
      steps: this.#settlement?.steps ?? 1,
      stepMs: this.#settlement?.stepMs ?? 0,
      immediate,
      applied: 0,
      filledBase: ZERO,
      filledQuote: ZERO,
      fee: ZERO,
      reserved: ZERO,
      status: 'NEW',
      finishedMs: null,
      deals: [],
    };
    this.#orders.push(state);
    this.#byId.set(state.orderId, state);
    const quote = order.rules.quote;
    if (immediate) {
      this.#applyStep(state, nowMs);
    } else {
      this.#pending.push(state);
      state.reserved = order.plan.quote.add(order.plan.fee);
      this.#books.post(nowMs, state.orderId, [
        { account: 'spot', asset: quote, delta: state.reserved.neg(), reason: 'freeze' },
        { account: 'spot-freeze', asset: quote, delta: state.reserved, reason: 'freeze' },
      ]);
    }
    return view(state);
  }

  /** Apply every settlement step due at or before `nowMs`, across orders in time order. */
  advance(nowMs: number): void {
    if (this.#pending.length === 0) return;
    for (;;) {
      let next: OrderState | null = null;
      for (const s of this.#pending) {
        if (s.finishedMs !== null || dueMs(s) > nowMs) continue;
        if (next === null || dueMs(s) < dueMs(next)) next = s;
      }
      if (next === null) break;
      this.#applyStep(next, dueMs(next));
    }
    this.#pending = this.#pending.filter((s) => s.finishedMs === null);
  }

  #applyStep(s: OrderState, timeMs: number): void {
    s.applied += 1;
    const last = s.applied === s.steps;
    const target = last ? s.plan.base : roundDown(s.plan.base.mul(s.applied).div(s.steps), s.rules.basePrecision);
    const { base: baseAsset, quote } = s.rules;
    const source = s.immediate ? 'spot' : 'spot-freeze';
    // The whole plan at once (an order that settles as it is placed) is exactly its levels, and
    // its fee so far after the last of them is the plan's fee: same sum, same rule.
    const whole = s.filledBase.isZero() && last;
    const parts = whole ? s.plan.levels : slicePlan(s.plan, s.filledBase, target);
    for (let i = 0; i < parts.length; i += 1) {
      const part = parts[i] as (typeof parts)[number];
      // An order's first deal adds to zero: its own amounts, without the additions (a backtest fills one order a slot).
      const filledQuote = s.filledQuote.isZero() ? part.quote : s.filledQuote.add(part.quote);
      const feeSoFar = whole && i === parts.length - 1 ? s.plan.fee : takerFee(s.rules, filledQuote);
      const dealFee = s.fee.isZero() ? feeSoFar : feeSoFar.sub(s.fee);
      const deal: SimDeal = {
        dealId: this.#ids.next('deal'),
        orderId: s.orderId,
        clientOrderId: s.clientOrderId,
        timeSec: timeMs / 1000,
        price: part.price,
        baseAmount: part.base,
        quoteAmount: part.quote,
        fee: dealFee,
        feeAsset: quote,
        role: 'taker',
        counterOrderId: this.#ids.next('counter-order'),
      };
      const postings: Posting[] = [
        { account: source, asset: quote, delta: part.quote.neg(), reason: 'buy' },
        { account: 'spot', asset: baseAsset, delta: part.base, reason: 'buy' },
        { account: source, asset: quote, delta: dealFee.neg(), reason: 'fee' },
      ];
      this.#books.post(timeMs, s.orderId, postings);
      if (!s.immediate) s.reserved = s.reserved.sub(part.quote).sub(dealFee);
      s.filledBase = s.filledBase.isZero() ? part.base : s.filledBase.add(part.base);
      s.filledQuote = filledQuote;
      s.fee = feeSoFar;
      s.deals.push(deal);
    }
    if (!last) {
      s.status = s.filledBase.isZero() ? 'NEW' : 'PARTIAL_FILLED';
      return;
    }
    if (!s.reserved.isZero()) {
      this.#books.post(timeMs, s.orderId, [
        { account: 'spot-freeze', asset: quote, delta: s.reserved.neg(), reason: 'unfreeze' },
        { account: 'spot', asset: quote, delta: s.reserved, reason: 'unfreeze' },
      ]);
      s.reserved = ZERO;
    }
    s.status = !s.plan.stoppedByBand ? 'FILLED' : s.filledBase.isZero() ? 'CANCELED' : 'CANCELED_TAKER_BAND';
    s.finishedMs = timeMs;
    this.#remember(s);
  }

  /** Keep the newest finished orders only; forgetting in batches keeps it O(1) per order. */
  #remember(s: OrderState): void {
    if (this.#keepFinished === Number.POSITIVE_INFINITY) return;
    this.#finished.push(s);
    if (this.#finished.length < 2 * this.#keepFinished) return;
    const forget = this.#finished.splice(0, this.#finished.length - this.#keepFinished);
    for (const old of forget) this.#byId.delete(old.orderId);
    const gone = new Set(forget);
    const kept = this.#orders.filter((o) => !gone.has(o));
    this.#forgotten += this.#orders.length - kept.length;
    this.#orders = kept;
  }

  get(orderId: string): SimOrder | undefined {
    const s = this.#byId.get(orderId);
    return s ? view(s) : undefined;
  }

  /** Orders that reached a final status, newest first. */
  history(filter: OrderFilter = {}): SimOrder[] {
    return this.#select(filter, true);
  }

  /** Orders still settling, newest first. */
  active(filter: OrderFilter = {}): SimOrder[] {
    return this.#select(filter, false);
  }

  /** Only orders still settling can be open: the short list, not every order ever placed. */
  isClientOrderIdOpen(market: string, clientOrderId: string): boolean {
    return clientOrderId !== '' && this.#pending.some((s) => s.finishedMs === null && s.rules.name === market && s.clientOrderId === clientOrderId);
  }

  deals(orderId: string): SimDeal[] {
    return this.#byId.get(orderId)?.deals.slice() ?? [];
  }

  #select(filter: OrderFilter, finished: boolean): SimOrder[] {
    return this.#orders
      .filter((s) => (s.finishedMs !== null) === finished)
      .filter((s) => filter.market === undefined || s.rules.name === filter.market)
      .filter((s) =>
        filter.orderId !== undefined
          ? s.orderId === filter.orderId
          : filter.clientOrderId === undefined || s.clientOrderId === filter.clientOrderId,
      )
      .sort((a, b) => b.seq - a.seq)
      .map(view);
  }
}

function dueMs(s: OrderState): number {
  return s.createdMs + (s.applied + 1) * s.stepMs;
}

function view(s: OrderState): SimOrder {
  const left = s.type === 'market' ? s.amount.sub(s.filledQuote) : s.amount.sub(s.filledBase);
  return {
    orderId: s.orderId,
    clientOrderId: s.clientOrderId,
    market: s.rules.name,
    side: 'buy',
    type: s.type,
    createdAtSec: s.createdMs / 1000,
    amount: s.amount,
    left: left.isNegative() ? ZERO : left,
    filledBase: s.filledBase,
    filledQuote: s.filledQuote,
    fee: s.fee,
    feeAsset: s.rules.quote,
    price: null,
    status: s.status,
    statusDerived: false,
    stp: s.stp,
    // Stop orders are not simulated (no endpoint here creates one).
    stopActivated: null,
    finishedAtSec: s.finishedMs === null ? null : s.finishedMs / 1000,
  };
}
