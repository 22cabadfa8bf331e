import { isTerminalStatus } from '../domain/order.ts';
import type { ChangedOrder, Journal, StoredOrder } from '../store/journal.ts';
import { changedOrderPages } from '../store/changed-order-pages.ts';
import { compareText, oldestOrderFirst } from '../store/journal-rules.ts';
import { PositionBook } from './position-book.ts';

/**
 * How far back each later read looks from the newest change it saw: a write is stamped before it
 * commits, so one stamped just before the newest seen may commit after the read.
 */
export const CHANGE_MARGIN_MS = 60_000;

export interface FollowedOrdersOptions {
  /** Orders read per page; the daemon's other work runs between pages. */
  readonly pageSize?: number;
  /** How many of each instance's newest orders are kept for `recentOf`. */
  readonly recentPerInstance: number;
  /** Gives the event loop a turn between pages (default: one macrotask, setImmediate). */
  readonly betweenPages?: () => Promise<void>;
  /** Time that only moves forward (default performance.now), against which a clock set back between reads shows. */
  readonly monotonicMs?: () => number;
}

const DEFAULT_PAGE = 500;

/**
 * A journal's orders as a status page open for months sees them: their positions and each
 * instance's newest orders, kept up to date from what changed.
 *
 * The first read goes through every order, a page at a time with the daemon's other work in
 * between: a year of a per-minute schedule is half a million orders, seconds in one piece, which
 * a slot due meanwhile would wait out. Later reads take only what was recorded or updated since
 * the newest change seen or the latest read's clock, whichever is earlier (less
 * CHANGE_MARGIN_MS), each change put in place of the version counted before; a clock set back
 * by more than the margin starts them over. An order is kept only while it can still be read again (not yet terminal, or
 * changed within the margin): a terminal order never changes, so once counted it is dropped,
 * and memory holds the open orders and the last minute's, not every order ever placed.
 */
export class FollowedOrders {
  #book = new PositionBook();
  readonly #journal: Pick<Journal, 'changedOrders'>;
  readonly #pageSize: number;
  readonly #recentPerInstance: number;
  readonly #betweenPages: () => Promise<void>;
  readonly #monotonicMs: () => number;
  /** Orders that a later read may return again, as counted. */
  readonly #kept = new Map<string, ChangedOrder>();
  /** Each instance's newest orders, newest first (as listOrders orders them). */
  readonly #recent = new Map<string, StoredOrder[]>();
  #newestMs: number | null = null;
  /** The latest clock a read ran at (and monotonic time then): reads look back from it or from the newest change, whichever is earlier. */
  #readClockMs: number | null = null;
  #readMonotonicMs = 0;
  #version = 0;
  #reading: Promise<void> | null = null;

  constructor(journal: Pick<Journal, 'changedOrders'>, options: FollowedOrdersOptions) {
    this.#journal = journal;
    this.#pageSize = options.pageSize ?? DEFAULT_PAGE;
    this.#recentPerInstance = options.recentPerInstance;
    this.#betweenPages = options.betweenPages ?? (() => new Promise((resolve) => setImmediate(resolve)));
    this.#monotonicMs = options.monotonicMs ?? (() => performance.now());
  }

  get book(): PositionBook {
    return this.#book;
  }

  /** Counts each change taken in: positions need working out again only when it moved. */
  get version(): number {
    return this.#version;
  }

  /** How many orders are held in memory to be recognised when read again. */
  get kept(): number {
    return this.#kept.size;
  }

  /**
   * Read what changed since the last read; `nowMs`: the journal's clock now. Callers that ask
   * while a read runs share it: two reads applying the same pages would count an order twice
   * once it was dropped.
   */
  catchUp(nowMs: number): Promise<void> {
    if (this.#reading === null) {
      this.#reading = this.#read(nowMs).finally(() => {
        this.#reading = null;
      });
    }
    return this.#reading;
  }

  recentOf(instance: string): readonly StoredOrder[] {
    return this.#recent.get(instance) ?? [];
  }

  async #read(nowMs: number): Promise<void> {
    // The clock is behind the latest clock a read ran at, plus the time that passed since, by
    // more than the margin: it was set back, and what it stamped meanwhile may lie before where
    // this read would start. Start over. (Set back and forward again between two reads, a few
    // seconds apart while a page is open, it cannot be told.)
    const monotonicMs = this.#monotonicMs();
    if (this.#readClockMs !== null && nowMs - this.#readClockMs < monotonicMs - this.#readMonotonicMs - CHANGE_MARGIN_MS) this.#startOver();
    const fromMs = this.#resumeFromMs() ?? 0;
    if (this.#readClockMs === null || nowMs > this.#readClockMs) {
      this.#readClockMs = nowMs;
      this.#readMonotonicMs = monotonicMs;
    }
    for await (const page of changedOrderPages(this.#journal, fromMs, this.#pageSize)) {
      for (const order of page) this.#take(order);
      const last = page.length < this.#pageSize ? null : (page[page.length - 1] as ChangedOrder);
      this.#forgetSettled(last);
      if (last !== null) await this.#betweenPages();
    }
  }

  #take(order: ChangedOrder): void {
    const before = this.#kept.get(order.orderId) ?? null;
    if (before !== null && sameVersion(before, order)) return;
    this.#book.replace(before, order);
    this.#kept.set(order.orderId, order);
    this.#version += 1;
    if (this.#newestMs === null || order.updatedAtMs > this.#newestMs) this.#newestMs = order.updatedAtMs;
    if (before !== null && before.instance !== null && before.instance !== order.instance) this.#dropRecent(before.instance, order.orderId);
    if (order.instance !== null) this.#addRecent(order.instance, order);
  }

  /**
   * Where the next read starts: what changed since is stamped after the newest change seen and
   * after the latest read's clock, less the margin for a write stamped before it committed.
   * Never earlier than before (both only grow), so an order dropped is never read again.
   */
  #resumeFromMs(): number | null {
    return this.#newestMs === null || this.#readClockMs === null ? null : Math.min(this.#newestMs, this.#readClockMs) - CHANGE_MARGIN_MS;
  }

  #startOver(): void {
    this.#readClockMs = null;
    this.#book = new PositionBook();
    this.#kept.clear();
    this.#recent.clear();
    this.#newestMs = null;
    this.#version += 1;
  }

  /**
   * Drop the terminal orders no later read can return: changed before where the next read
   * starts, and already passed by this one (`readTo`: where its last page ended; null: done).
   */
  #forgetSettled(readTo: ChangedOrder | null): void {
    const horizon = this.#resumeFromMs();
    if (horizon === null) return;
    for (const [orderId, order] of this.#kept) {
      const passed = readTo === null || order.updatedAtMs < readTo.updatedAtMs || (order.updatedAtMs === readTo.updatedAtMs && compareText(orderId, readTo.orderId) <= 0);
      if (passed && order.updatedAtMs < horizon && isTerminalStatus(order.status)) this.#kept.delete(orderId);
    }
  }

  #addRecent(instance: string, changed: ChangedOrder): void {
    const list = (this.#recent.get(instance) ?? []).filter((kept) => kept.orderId !== changed.orderId);
    const { instance: _instance, account: _account, ...order } = changed;
    list.push(order);
    list.sort((a, b) => oldestOrderFirst(b, a));
    this.#recent.set(instance, list.slice(0, this.#recentPerInstance));
  }

  #dropRecent(instance: string, orderId: string): void {
    const list = this.#recent.get(instance);
    if (list !== undefined) this.#recent.set(instance, list.filter((kept) => kept.orderId !== orderId));
  }
}

/** The same version of an order: a repeat of it read again within the margin. */
function sameVersion(a: StoredOrder, b: StoredOrder): boolean {
  return (
    a.updatedAtMs === b.updatedAtMs &&
    a.status === b.status &&
    a.filledBase.eq(b.filledBase) &&
    a.filledQuote.eq(b.filledQuote) &&
    a.fee.eq(b.fee) &&
    a.feeAsset === b.feeAsset &&
    a.intentId === b.intentId
  );
}
