import type { Logger } from 'pino';
import { errorMessage } from '../engine/error-policy.ts';
import type { LedgerReport } from '../engine/exchange-ledger.ts';
import type { BudgetHold } from '../engine/runtime.ts';
import type { OpenedStore } from '../store/opened-store.ts';

type Behind = NonNullable<OpenedStore['behind']>;

/**
 * A journal that may lack its newest orders, for the settle window after that was found: rebuilt,
 * an older copy put back (the store found it, at this start or one before it), or a new journal
 * whose first read of the exchange's history adopts orders of its instances (the data dir lost
 * whole). Meanwhile the order of its last moments may not show in the history yet, so a slot
 * missed within the window is left to the history (catch-up neither runs nor journals it), and
 * a buy counted against a budget waits (BudgetHold): counted without that order, the day's
 * budget was spent again.
 */
export class JournalBehind {
  readonly #store: Pick<OpenedStore, 'noteBehind'>;
  readonly #settleWindowMs: number;
  readonly #logger: Pick<Logger, 'warn' | 'info'>;
  #behind: Behind | null;
  #toldEnded = false;

  constructor(store: Pick<OpenedStore, 'behind' | 'noteBehind'>, settleWindowMs: number, nowMs: number, logger: Pick<Logger, 'warn' | 'info'>) {
    this.#store = store;
    this.#settleWindowMs = settleWindowMs;
    this.#logger = logger;
    this.#behind = store.behind !== null && nowMs - store.behind.sinceMs < settleWindowMs ? store.behind : null;
    if (this.#behind !== null) this.#logHold();
  }

  /** Why and since when the journal may lack orders, for catch-up; null when it may not. */
  get behind(): Behind | null {
    return this.#behind;
  }

  /** The hold on budgeted buys (or on every buy) at `nowMs`; null once the window is over, or when there is none. */
  budgetHold(nowMs: number): BudgetHold | null {
    const hold = this.#hold();
    if (hold === null) return null;
    if (nowMs < hold.untilMs) return hold;
    if (!this.#toldEnded) {
      // Said by the first buy after it, which the hold would have refused: where buying resumed.
      this.#toldEnded = true;
      this.#logger.info(
        { event: 'hold-ended', since: new Date(hold.sinceMs).toISOString(), until: new Date(hold.untilMs).toISOString(), everyBuy: hold.everyBuy },
        `the settle window after the journal was found behind is over (${new Date(hold.untilMs).toISOString()}): ${hold.everyBuy ? 'buys' : 'buys counted against a budget'} are sent again`,
      );
    }
    return null;
  }

  /**
   * The start's first read of the history: a new journal it adopts orders for was lost, not
   * started for the first time. When the newest of them was placed within the settle window
   * before now, every buy waits, not only those under a budget: the journal was lost moments
   * ago, or another stacker is trading these instances on this key now (a data dir of its own,
   * its key lock elsewhere), and the next slot may be bought already. Another's next order then
   * shows in the history and stops this one (E_FOREIGN_ORDER) before it buys anything twice.
   * A journal not new that lacks such recent orders is held the same way (#lacksRecentOrders).
   */
  firstHistoryRead(newJournal: boolean, report: LedgerReport | null, nowMs: number): void {
    if (report === null || report.adopted.length === 0) return;
    const newestMs = Math.max(...report.adopted.map((order) => order.createdAtSec * 1000));
    const everyBuy = nowMs - newestMs < this.#settleWindowMs;
    if (!newJournal || this.#behind !== null) {
      if (everyBuy && this.#behind?.everyBuy !== true) this.#lacksRecentOrders(report.adopted.length, newestMs, nowMs);
      return;
    }
    const reason = everyBuy
      ? `a new journal, but the exchange's history holds ${report.adopted.length} order(s) of its instances (adopted), the newest placed ${Math.max(0, Math.round((nowMs - newestMs) / 1000))} s before this start: the journal was lost moments ago, or another stacker is trading these instances on this API key now`
      : `a new journal, but the exchange's history holds ${report.adopted.length} order(s) of its instances (adopted): the journal was lost`;
    this.#behind = { sinceMs: nowMs, reason, ...(everyBuy ? { everyBuy } : {}) };
    this.#logger.warn({ event: 'journal-lost-found-by-history', adopted: report.adopted.length, newest: new Date(newestMs).toISOString() }, `${reason}, with the data dir or its files (a volume recreated?), not started for the first time`);
    this.#logHold();
    this.#note(this.#behind);
  }

  /**
   * A journal not new (an older copy put back, a copy of another daemon's journal, a crash that
   * took its last writes) that lacks orders of its instances placed moments ago: as for a new one,
   * every buy waits, since another stacker may be trading these instances now.
   */
  #lacksRecentOrders(adopted: number, newestMs: number, nowMs: number): void {
    const reason = `the exchange's history holds ${adopted} order(s) of its instances that the journal lacked (adopted), the newest placed ${Math.max(0, Math.round((nowMs - newestMs) / 1000))} s before this start: the journal lost its last moments, or another stacker is trading these instances on this API key now`;
    this.#behind = { sinceMs: nowMs, reason, everyBuy: true };
    this.#logger.warn({ event: 'journal-lacks-recent-orders', adopted, newest: new Date(newestMs).toISOString() }, reason);
    this.#logHold();
    this.#note(this.#behind);
  }

  #note(behind: Behind): void {
    try {
      this.#store.noteBehind(behind);
    } catch (error) {
      this.#logger.warn(
        { event: 'journal-identity-unwritten', error: errorMessage(error) },
        `could not note beside the journal that it may lack orders (${errorMessage(error)}): a restart within the settle window would not hold budgets`,
      );
    }
  }

  #hold(): BudgetHold | null {
    const behind = this.#behind;
    return behind === null ? null : { sinceMs: behind.sinceMs, untilMs: behind.sinceMs + this.#settleWindowMs, reason: behind.reason, everyBuy: behind.everyBuy === true };
  }

  #logHold(): void {
    const hold = this.#hold();
    if (hold === null) return;
    const until = new Date(hold.untilMs).toISOString();
    this.#logger.warn(
      { event: 'budgets-held', since: new Date(hold.sinceMs).toISOString(), until, reason: hold.reason, everyBuy: hold.everyBuy },
      hold.everyBuy
        ? `${hold.reason}: until ${until} (the settle window), every buy is refused (journal-behind), budget or none, since the next slot may be bought already; if another stacker trades this key, its next order stops this one (E_FOREIGN_ORDER)`
        : `${hold.reason}: until ${until} (the settle window), buys counted against a budget are refused (journal-behind), since an order of the journal's last moments may not show in the exchange's history yet; instances without budgets trade on`,
    );
  }
}
