import { DEFAULT_ACCOUNT } from '../domain/account.ts';
import type { Decimal } from '../domain/money.ts';
import { isTerminalStatus } from '../domain/order.ts';
import { changedOrderPages } from '../store/changed-order-pages.ts';
import type { ChangedOrder, Journal, StoredOrder } from '../store/journal.ts';
import { type MarketPosition, countsInPosition, fillsCsvHeader, fillsCsvRow } from './cost-basis.ts';
import { PositionBook } from './position-book.ts';

/** Who an order was sent for, as journalled with its intent. */
export interface OrderOwner {
  readonly account: string;
  readonly instance: string | null;
}

/** An order counted, with its owner: what taking it back needs. */
interface Counted {
  readonly order: StoredOrder;
  readonly owner: OrderOwner;
}

/** What the fold keeps of each order besides its sums: the CSV's rows, the page's buys. */
export interface ReportFoldOptions {
  /** Keep each filled order's CSV row (`stacker report --csv`). */
  readonly csvRows: boolean;
  /** Keep each filled buy (`stacker report --html` draws them). */
  readonly buys: boolean;
}

/**
 * `stacker report`'s figures folded as the journal's orders are read, a page at a time: the
 * positions per account and all together, the filled buys per instance, the accounts seen, and
 * only what an output asked for (a CSV row, a buy to draw). A journal years old is half a
 * million orders; kept whole they took 1.5–2 GB, where the sums take a few kilobytes.
 *
 * The pages are read while a daemon may write (by change, Journal.changedOrders): an order that
 * changes under the read comes again, later, and its earlier version is taken back. Only an
 * order not final yet can (the journal never changes a final one: recordOrderSnapshot), so only
 * those are kept until the read ends: a few orders in flight.
 */
export class ReportFold {
  readonly #options: ReportFoldOptions;
  readonly #all = new PositionBook();
  readonly #byAccount = new Map<string, PositionBook>();
  readonly #instances = new Map<string, { instance: string; account: string; orders: number }>();
  readonly #accounts = new Set<string>();
  /** Orders not final when read: their version counted, to be taken back if they come again. */
  readonly #open = new Map<string, Counted>();
  readonly #csv = new Map<string, { readonly createdAtSec: number; readonly orderId: string; readonly line: string }>();
  readonly #buys = new Map<string, StoredOrder>();

  constructor(options: ReportFoldOptions) {
    this.#options = options;
  }

  /** Counts `order` for `owner`, in place of the version read before if it came already. */
  add(order: StoredOrder, owner: OrderOwner): void {
    const before = this.#open.get(order.orderId) ?? null;
    if (before !== null) this.#take(before.order, before.owner, -1);
    this.#accounts.add(owner.account);
    this.#book(owner.account).replace(before?.order ?? null, order);
    this.#all.replace(before?.order ?? null, order);
    this.#take(order, owner, 1);
    if (isTerminalStatus(order.status)) this.#open.delete(order.orderId);
    else this.#open.set(order.orderId, { order, owner });
  }

  /** The accounts of every order read, counted or not, sorted. */
  accounts(): string[] {
    return [...this.#accounts].sort();
  }

  /** The positions of all accounts together (one exchange's prices, or none). */
  positions(prices: ReadonlyMap<string, Decimal> | null): MarketPosition[] {
    return this.#all.positions(prices);
  }

  /** Per account with a filled buy, its positions at its own prices; accounts sorted by name. */
  positionsByAccount(pricesOf: (account: string) => ReadonlyMap<string, Decimal> | null): { account: string; markets: MarketPosition[] }[] {
    return [...this.#byAccount.keys()]
      .sort()
      .map((account) => ({ account, markets: (this.#byAccount.get(account) as PositionBook).positions(pricesOf(account)) }))
      .filter((group) => group.markets.length > 0);
  }

  /** Each instance with the account(s) its filled buys went to and how many, sorted by instance then account. */
  instances(): { instance: string; account: string; orders: number }[] {
    return [...this.#instances.values()].filter((row) => row.orders > 0).sort((a, b) => (a.instance < b.instance ? -1 : a.instance > b.instance ? 1 : a.account < b.account ? -1 : 1));
  }

  /** The CSV of the filled orders, oldest first (kept only with `csvRows`). */
  csv(): string {
    const rows = [...this.#csv.values()].sort((a, b) => a.createdAtSec - b.createdAtSec || (a.orderId < b.orderId ? -1 : 1));
    return `${[fillsCsvHeader(), ...rows.map((row) => row.line)].join('\n')}\n`;
  }

  /** The filled buys (kept only with `buys`). */
  buys(): StoredOrder[] {
    return [...this.#buys.values()];
  }

  #book(account: string): PositionBook {
    let book = this.#byAccount.get(account);
    if (book === undefined) {
      book = new PositionBook();
      this.#byAccount.set(account, book);
    }
    return book;
  }

  /** The per-order parts: the instance's count, the CSV row, the buy to draw; `sign` -1 takes them back. */
  #take(order: StoredOrder, owner: OrderOwner, sign: 1 | -1): void {
    if (countsInPosition(order)) {
      const instance = owner.instance ?? '(none)';
      const key = `${instance}\0${owner.account}`;
      const row = this.#instances.get(key) ?? { instance, account: owner.account, orders: 0 };
      row.orders += sign;
      this.#instances.set(key, row);
    }
    const filled = order.filledBase.gt(0);
    if (this.#options.csvRows && filled) {
      if (sign > 0) this.#csv.set(order.orderId, { createdAtSec: order.createdAtSec, orderId: order.orderId, line: fillsCsvRow(order) });
      else this.#csv.delete(order.orderId);
    }
    if (this.#options.buys && countsInPosition(order)) {
      if (sign > 0) this.#buys.set(order.orderId, order);
      else this.#buys.delete(order.orderId);
    }
  }
}

/**
 * The orders `wanted` keeps, folded as they are read a page at a time with the account and
 * instance of each from its intent as journalled (never from today's config, which may have
 * changed since). An intent read per order took 180 s on PostgreSQL for a per-minute year (half
 * a million round trips); kept whole, the orders took 1.5–2 GB.
 */
export async function foldJournalOrders(store: Pick<Journal, 'changedOrders'>, options: ReportFoldOptions, wanted: (order: ChangedOrder) => boolean, pageSize = PAGE): Promise<ReportFold> {
  const fold = new ReportFold(options);
  for await (const page of changedOrderPages(store, 0, pageSize)) {
    for (const order of page) {
      if (!wanted(order)) continue;
      const { instance, account, ...stored } = order;
      fold.add(stored, { account: account ?? DEFAULT_ACCOUNT, instance });
    }
  }
  return fold;
}

/** Orders read at a time. */
const PAGE = 5_000;
