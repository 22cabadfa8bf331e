import { type ClientOrderIdParts, deriveClientOrderId, instanceHash, parseClientOrderId } from '../domain/client-order-id.ts';
import { type ForeignOrder, ForeignOrderError } from '../domain/errors.ts';
import type { Order } from '../domain/order.ts';
import type { IntentRecord, NewLedgerFinding, StoredOrder } from '../store/journal.ts';
import { formatDecimal } from '../domain/money.ts';
import { FatalEngineError, classifyError, errorMessage } from './error-policy.ts';
import { orderResult } from './executor.ts';
import { recordOrder } from './order-log.ts';
import { isTerminalStatus } from '../domain/order.ts';
import { HistoryUnreadableError } from './history-unreadable.ts';
import { DEFAULT_ACCOUNT, type EngineDeps, accountBudgetScope, accountOfInstance, accountPrefix, accountReservationId, onAccount } from './runtime.ts';

/** An instance whose id scheme is recognised in the exchange's history (enabled or not). */
export interface LedgerInstance {
  readonly instance: string;
  readonly timezone: string;
  /** The asset its budgets count (the quote of the market it buys); null: the order's quote. */
  readonly budgetAsset: string | null;
  readonly orderSettleWindowMs: number;
}

export interface LedgerOptions {
  /**
   * Orders of slots before this moment that the journal lacks are adopted: they were placed by
   * an earlier run whose journal lost them (WAL frames after a crash, a journal rebuilt from
   * scratch). An order of a later slot that this run did not send is foreign.
   */
  readonly adoptBeforeMs: number;
  /** How far back a journal that never read the history looks. */
  readonly firstLookBackMs: number;
  /** Record adoptions as acknowledged: a rebuild the user asked for. */
  readonly acknowledgeAdoptions: boolean;
}

export interface LedgerReport {
  readonly fromMs: number;
  readonly toMs: number;
  /** The accounts whose history was read and compared. */
  readonly accounts: readonly string[];
  /** The accounts whose history could not be read this time (the exchange or the network failed). */
  readonly unreadable: readonly HistoryUnreadableError[];
  /** Orders read that carry a known instance's id scheme. */
  readonly ours: number;
  readonly adopted: readonly Order[];
  /** Lost answers (unknown / not-found intents) whose orders turned up. */
  readonly linked: readonly Order[];
  /** not-found intents the history confirmed absent: their budget was given back. */
  readonly cleared: readonly string[];
}

/** The exchange keeps about six months of order history; a day is kept in hand. */
const HISTORY_KEPT_MS = 179 * 24 * 3_600_000;
const MINUTE_MS = 60_000;
/** How long after its send the reads keep reaching back to a not-found buy given its budget back (see #notFoundBuys). */
const LATE_ORDER_WATCH_MS = 24 * 3_600_000;
/**
 * How long a not-found buy stays missing from the history before its budget is given back. The
 * settle window bounds the lookups, not the history: an exchange whose history lags more than
 * the window showed the order after its budget was freed and spent again. Keeping the budget
 * counted an hour longer only ever buys less.
 */
const CLEAR_AFTER_MS = 3_600_000;

/**
 * How much less than CLEAR_AFTER_MS the exchange's clock may show: it is read to the second, and
 * this machine's clock, which stamped the send, may have been that far off it (a clock stepped
 * forward by an hour is what the check is for).
 */
const EXCHANGE_CLOCK_SLACK_MS = 60_000;
/** How far apart the two reads must be that both do not show a not-found buy before its budget is given back. */
const CONFIRM_ABSENT_MS = 5 * MINUTE_MS;
/** How old an order the journal holds must be before a read of the history is expected to show it. */
const SHOWN_AFTER_MS = 5 * MINUTE_MS;
/** The journal's newest orders a read is checked against (a per-minute schedule places 60 an hour). */
const KNOWN_ORDERS_CHECKED = 500;

/**
 * The exchange is the second ledger (docs/exactly-once.md). Reading its order history and
 * comparing it with the journal catches what the journal alone cannot know:
 * - an order whose answer was lost and whose lookups came back empty (the history lagged): it
 *   is linked to its intent, recorded and counted;
 * - orders of ours the journal lost (a crash took WAL frames, the journal was rebuilt): adopted
 *   with their slot, transitions and spend, logged `order-adopted`, reported until acknowledged;
 * - orders carrying an instance's id scheme that this journal did not send and cannot have lost
 *   (another stacker on the same key): ForeignOrderError, and trading stops.
 * It reads from where the last complete read ended, less the longest settle window (the history
 * may show an order late), or back `firstLookBackMs` for a journal that never read it.
 */
export class ExchangeLedger {
  readonly #deps: EngineDeps;
  /** Per account, its instances by the hash their order ids carry: an account's history is read for its own instances only. */
  readonly #byAccount: ReadonlyMap<string, ReadonlyMap<string, LedgerInstance>>;
  readonly #options: LedgerOptions;
  readonly #overlapMs: number;
  /** Per account, the check under way: callers arriving meanwhile share it. */
  readonly #running = new Map<string, Promise<LedgerReport>>();
  /** Per account, when its last complete check (read and compared) started, in this run. */
  readonly #checkedAtMs = new Map<string, number>();
  /** Not-found buys an hour old, and the read that first did not show them: a read CONFIRM_ABSENT_MS later that does not either gives their budget back. */
  readonly #absentSince = new Map<string, number>();
  /** Comparisons write the journal: one account's at a time, though their reads overlap. */
  #comparing: Promise<unknown> = Promise.resolve();

  constructor(deps: EngineDeps, instances: readonly LedgerInstance[], options: LedgerOptions) {
    this.#deps = deps;
    const byAccount = new Map<string, Map<string, LedgerInstance>>();
    for (const instance of instances) {
      const account = accountOfInstance(deps, instance.instance);
      const own = byAccount.get(account) ?? new Map<string, LedgerInstance>();
      own.set(instanceHash(instance.instance), instance);
      byAccount.set(account, own);
    }
    this.#byAccount = byAccount;
    this.#options = options;
    this.#overlapMs = Math.max(10 * MINUTE_MS, ...instances.map((instance) => instance.orderSettleWindowMs));
  }

  /** The accounts whose history this ledger reads. */
  get accounts(): readonly string[] {
    return [...this.#byAccount.keys()];
  }

  /** When the oldest of the accounts' last checks started; null while one has not been checked in this run. */
  get lastCheckedAtMs(): number | null {
    let oldest: number | null = null;
    for (const account of this.#byAccount.keys()) {
      const at = this.#checkedAtMs.get(account);
      if (at === undefined) return null;
      oldest = oldest === null ? at : Math.min(oldest, at);
    }
    return oldest;
  }

  /**
   * When this account's history was last read and compared in this run; null before the first
   * time. Each account's history is its own ledger: one whose exchange fails or hangs keeps only
   * its own instances waiting.
   */
  accountCheckedAtMs(account: string): number | null {
    return this.#checkedAtMs.get(account) ?? null;
  }

  /**
   * Every account's history (at start, hourly): the reads go together, and an account that
   * cannot be read is reported in `unreadable`, not thrown, so the others are compared. Throws
   * only what stops trading (a refused key, another client's orders).
   */
  async check(): Promise<LedgerReport> {
    const settled = await Promise.allSettled([...this.#byAccount.keys()].map((account) => this.checkAccount(account)));
    const reports: LedgerReport[] = [];
    for (const result of settled) {
      if (result.status === 'rejected') throw result.reason;
      reports.push(result.value);
    }
    return {
      fromMs: Math.min(...reports.map((report) => report.fromMs)),
      toMs: Math.max(...reports.map((report) => report.toMs)),
      accounts: reports.flatMap((report) => report.accounts),
      unreadable: reports.flatMap((report) => report.unreadable),
      ours: reports.reduce((sum, report) => sum + report.ours, 0),
      adopted: reports.flatMap((report) => report.adopted),
      linked: reports.flatMap((report) => report.linked),
      cleared: reports.flatMap((report) => report.cleared),
    };
  }

  /** One account's history (before each of its instances' slots). */
  checkAccount(account: string): Promise<LedgerReport> {
    let running = this.#running.get(account);
    if (running === undefined) {
      running = this.#checkAccount(account).finally(() => {
        this.#running.delete(account);
      });
      this.#running.set(account, running);
    }
    return running;
  }

  async #checkAccount(account: string): Promise<LedgerReport> {
    const deps = this.#deps;
    const startedAtMs = deps.clock.nowMs();
    const own = onAccount(deps, account);
    // An account this run has no exchange for has no history to read.
    if (own === null || !this.#byAccount.has(account)) return this.#compared(account, startedAtMs, startedAtMs, [], []);
    const notFound = (await this.#notFoundBuys(startedAtMs)).filter((intent) => (intent.account ?? DEFAULT_ACCOUNT) === account);
    const fromMs = await this.#readFrom(account, startedAtMs, notFound);
    let orders: readonly Order[];
    try {
      // An hour past now: the exchange's clock may run ahead of this one, and its orders carry its times.
      orders = await own.exchange.orderHistory({ sinceSec: Math.floor(fromMs / 1000), untilSec: Math.ceil((startedAtMs + 3_600_000) / 1000) });
    } catch (error) {
      if (classifyError(error) === 'fatal') throw new FatalEngineError(`${accountPrefix(own)}reading the order history: ${errorMessage(error)}`, error);
      return { fromMs, toMs: startedAtMs, accounts: [], unreadable: [new HistoryUnreadableError(account, accountPrefix(own), error)], ours: 0, adopted: [], linked: [], cleared: [] };
    }
    const comparison = this.#comparing.then(() => this.#compared(account, fromMs, startedAtMs, orders, notFound));
    this.#comparing = comparison.catch(() => undefined);
    return comparison;
  }

  /**
   * Where an account's read starts: where its last complete check started (in this run, or for
   * every account in the journal), less the longest settle window, as the history may show an
   * order late; back to the send of a not-found buy (to clear it, or to find it late); never
   * before what the exchange keeps.
   */
  async #readFrom(account: string, startedAtMs: number, notFound: readonly IntentRecord[]): Promise<number> {
    const through = await this.#deps.journal.ledgerCheckedThrough();
    let since = Math.max(through ?? Number.NEGATIVE_INFINITY, this.#checkedAtMs.get(account) ?? Number.NEGATIVE_INFINITY);
    if (since > startedAtMs) {
      // Written while this machine's clock was ahead, since set right: read from it, the window
      // started after it ended, and the exchange refused every read (422) until real time caught
      // up, hours without a slot and with the blame on the exchange.
      if (!this.#toldFutureMark) {
        this.#toldFutureMark = true;
        this.#deps.logger.warn(
          { event: 'ledger-mark-ahead', checkedThrough: new Date(since).toISOString() },
          `the journal's last history check is marked ${new Date(since).toISOString()}, after this machine's clock now: the clock was ahead when it was written (since set right); the history is read up to now`,
        );
      }
      since = startedAtMs;
    }
    let fromMs = since === Number.NEGATIVE_INFINITY ? startedAtMs - this.#options.firstLookBackMs : since - this.#overlapMs;
    // A not-found buy is cleared only by a read that covers its send, and found late only by one too.
    for (const intent of notFound) fromMs = Math.min(fromMs, (intent.sentAtMs ?? intent.createdAtMs) - MINUTE_MS);
    return Math.max(fromMs, startedAtMs - HISTORY_KEPT_MS);
  }

  /**
   * The exchange's time now, read from it; this machine's where the exchange keeps its time (a
   * paper account); null when it cannot be read (nothing is given back then).
   */
  async #exchangeNowMs(account: string, startedAtMs: number): Promise<number | null> {
    const exchange = onAccount(this.#deps, account)?.exchange;
    if (exchange?.serverTimeMs === undefined) return startedAtMs;
    return exchange.serverTimeMs().catch(() => null);
  }

  /** Compare one account's history with the journal, and count the account as checked. */
  #toldFutureMark = false;

  async #compared(account: string, fromMs: number, startedAtMs: number, orders: readonly Order[], notFound: readonly IntentRecord[]): Promise<LedgerReport> {
    const deps = this.#deps;
    const instances = this.#byAccount.get(account);
    const adopted: Order[] = [];
    const linked: Order[] = [];
    const foreign: ForeignOrder[] = [];
    // Of those, the ones whose finding is still to be written (a second order's is written as it is counted).
    const unrecorded: ForeignOrder[] = [];
    // Ids of ours the history shows, in lower case: one shown in another case is still there (see the not-found check below).
    const seen = new Set<string>();
    // Orders already reported as foreign are known: reported once, acknowledged by a human, not held against the next start.
    const reported = new Set((await deps.journal.listFindings()).flatMap((finding) => (finding.kind === 'foreign' && finding.orderId !== null ? [finding.orderId] : [])));
    let ours = 0;
    for (const shown of orders) {
      const parts = parseClientOrderId(shown.clientOrderId);
      const owner = parts === null ? undefined : instances?.get(parts.instanceHash);
      if (parts === null || owner === undefined) continue;
      ours += 1;
      seen.add(shown.clientOrderId.toLowerCase());
      const stored = await deps.journal.getOrder(shown.orderId);
      if (stored !== null) {
        if (isTerminalStatus(stored.status)) await this.#corrected(owner, stored, shown);
        continue;
      }
      const intent = await intentOf(deps.journal, owner.instance, parts, shown.clientOrderId);
      // Shown in another case than it was sent: journalled as sent (as the lookup by id records it),
      // the intent's id, or for an order adopted without one the id its slot derives.
      const sent = intent?.clientOrderId ?? derivedIdOf(owner.instance, parts, shown.clientOrderId);
      const order = sent !== null && sent !== shown.clientOrderId ? { ...shown, clientOrderId: sent } : shown;
      if (reported.has(order.orderId)) {
        // Reported by a stacker that did not count a second order yet, or one placed after an
        // answer read as a refusal: counted now, against its intent.
        if (intent?.status === 'done') await this.#recordSecond(owner, account, intent, order, null);
        else if (intent !== null && placedAfterAll(intent)) await this.#recordPlacedAfterAll(owner, account, intent, order);
        continue;
      }
      const verdict = intent === null ? await this.#unjournalled(owner, parts.slotTimeMs) : await this.#journalled(intent);
      if (verdict.kind === 'skip') continue;
      if (verdict.kind === 'foreign') {
        const found: ForeignOrder = { instance: owner.instance, clientOrderId: order.clientOrderId, orderId: order.orderId, market: order.market, at: { kind: 'placed', ms: Math.round(order.createdAtSec * 1000) }, why: verdict.why, twin: verdict.why.includes(TWIN), ...(verdict.why.includes(RESENT) ? { resent: true } : {}), ...(verdict.why.includes(MISSED_UNSENT) ? { missedSlot: true } : {}) };
        // A second order of an intent this journal sent: the money was spent for that slot, so it is counted at once, with its finding.
        if (intent?.status === 'done') await this.#recordSecond(owner, account, intent, order, findingOf(found));
        else unrecorded.push(found);
        foreign.push(found);
        continue;
      }
      if (verdict.kind === 'placed-after-all' && intent !== null) {
        await this.#recordPlacedAfterAll(owner, account, intent, order);
        linked.push(order);
        continue;
      }
      if (verdict.kind === 'link' && intent !== null) {
        await recordOrder(deps, owner.instance, order, intent.intentId);
        await deps.journal.updateIntent(intent.intentId, { status: 'done', result: orderResult(order) });
        deps.metrics.orderPlaced(owner.instance, order.createdAtSec * 1000);
        deps.logger.warn(
          { event: 'order-found-late', instance: owner.instance, clientOrderId: order.clientOrderId, orderId: order.orderId, was: intent.status },
          `order ${order.clientOrderId} of a lost answer (${intent.status}) turned up in the exchange's history; recorded and counted`,
        );
        linked.push(order);
        continue;
      }
      await this.#adopt(owner, account, parts.slotTimeMs, parts.index, order);
      adopted.push(order);
    }

    if (foreign.length > 0) {
      for (const order of unrecorded) await deps.journal.recordFinding(findingOf(order));
      const error = new ForeignOrderError(foreign);
      throw new FatalEngineError(error.message, error);
    }

    const cleared: string[] = [];
    // This machine's clock alone cannot say an hour has passed: stepped forward (NTP, a VM
    // resumed), it gave back the budget of an order the exchange was still to show, and spent it
    // again. The exchange's clock must say so too, read once a check, only when a buy is due.
    let exchangeNowMs: number | null | undefined;
    let readShowsKnown: boolean | undefined;
    for (const intent of notFound) {
      if (intent.clientOrderId === null || seen.has(intent.clientOrderId.toLowerCase())) continue;
      const sentAtMs = intent.sentAtMs ?? intent.createdAtMs;
      if (fromMs > sentAtMs - MINUTE_MS) continue;
      if (startedAtMs - sentAtMs < CLEAR_AFTER_MS) continue;
      if (exchangeNowMs === undefined) exchangeNowMs = await this.#exchangeNowMs(account, startedAtMs);
      if (exchangeNowMs === null || exchangeNowMs - sentAtMs < CLEAR_AFTER_MS - EXCHANGE_CLOCK_SLACK_MS) continue;
      // Absent from two reads minutes apart, not one: a history whose rows move between pages
      // (orders landing while it is paged) can leave a row out of one read, and one answering
      // nothing for a while (an outage answered `[]`) out of every read in it; the budget given
      // back on such a read was spent again although the order was placed.
      const firstAbsentMs = this.#absentSince.get(intent.intentId);
      if (firstAbsentMs === undefined) {
        this.#absentSince.set(intent.intentId, startedAtMs);
        continue;
      }
      if (startedAtMs - firstAbsentMs < CONFIRM_ABSENT_MS) continue;
      // Nor on a read that misses orders the journal knows the exchange took in its window.
      readShowsKnown ??= await this.#showsKnownOrders(instances, seen, fromMs, startedAtMs);
      if (!readShowsKnown) continue;
      this.#absentSince.delete(intent.intentId);
      // Its instance's budget, its account's cap, or both, held it.
      const releasedOwn = await deps.journal.releaseBudget(intent.intentId);
      const releasedCap = await deps.journal.releaseBudget(accountReservationId(intent.intentId));
      if (!releasedOwn && !releasedCap) continue;
      await deps.journal.recordFinding({
        kind: 'cleared',
        instance: intent.instance,
        clientOrderId: intent.clientOrderId,
        orderId: null,
        market: intent.intent.kind === 'buy-stock-market' ? intent.intent.market : null,
        detail: 'not in the order history read from before it was sent: its budget was given back',
        acknowledged: true,
      });
      deps.logger.warn(
        { event: 'not-found-cleared', instance: intent.instance, clientOrderId: intent.clientOrderId },
        `order ${intent.clientOrderId} is not in the exchange's history from before it was sent until now: it was never placed; its budget is given back`,
      );
      cleared.push(intent.clientOrderId);
    }

    this.#checkedAtMs.set(account, startedAtMs);
    // The journal's mark is where every account has been checked through: the next start reads from there.
    const checkedThrough = this.lastCheckedAtMs;
    if (checkedThrough !== null && checkedThrough > ((await deps.journal.ledgerCheckedThrough()) ?? Number.NEGATIVE_INFINITY)) await deps.journal.setLedgerCheckedThrough(checkedThrough);
    if (adopted.length + linked.length + cleared.length > 0) {
      deps.logger.info(
        { event: 'ledger-checked', ...(deps.accounts === undefined ? {} : { account }), ours, adopted: adopted.length, linked: linked.length, cleared: cleared.length, from: new Date(fromMs).toISOString() },
        `${accountPrefix(onAccount(deps, account) ?? deps)}exchange history read from ${new Date(fromMs).toISOString()}: ${ours} orders of ours, ${adopted.length} adopted, ${linked.length} lost answers found, ${cleared.length} cleared`,
      );
    }
    return { fromMs, toMs: startedAtMs, accounts: [account], unreadable: [], ours, adopted, linked, cleared };
  }

  /**
   * Whether a read shows the orders the journal knows this account's instances placed in its
   * window (from a few minutes after its start to a few minutes before its end, a lag allowed):
   * one that leaves any out (an outage answered `[]`, rows moved between pages) cannot say an
   * order is absent either.
   */
  async #showsKnownOrders(instances: ReadonlyMap<string, LedgerInstance> | undefined, seen: ReadonlySet<string>, fromMs: number, startedAtMs: number): Promise<boolean> {
    if (instances === undefined) return true;
    for (const order of await this.#deps.journal.listOrders({ firstSeenFromMs: fromMs, limit: KNOWN_ORDERS_CHECKED })) {
      const placedMs = order.createdAtSec * 1000;
      if (placedMs < fromMs + MINUTE_MS || placedMs > startedAtMs - SHOWN_AFTER_MS) continue;
      const parts = parseClientOrderId(order.clientOrderId);
      if (parts === null || !instances.has(parts.instanceHash)) continue;
      if (!seen.has(order.clientOrderId.toLowerCase())) return false;
    }
    return true;
  }

  /** An order whose intent the journal has, under another order id or none. */
  async #journalled(intent: IntentRecord): Promise<Verdict> {
    switch (intent.status) {
      case 'pending':
      case 'sent':
        // The slot in flight in this process: its own answer records it.
        return { kind: 'skip' };
      case 'unknown':
      case 'not-found':
        return { kind: 'link' };
      case 'done':
        // Sent more than once: a stacker from before exactly-once sent a lost answer's order again.
        if (intent.attempts > 1) return { kind: 'foreign', why: `this journal's intent ${intent.intentId} ${TWIN}: it was sent ${intent.attempts} times, ${RESENT}; the slot was bought twice, and this order is counted against it` };
        return { kind: 'foreign', why: `this journal's intent ${intent.intentId} ${TWIN}: the slot was bought twice, and this order is counted against it` };
      case 'refused':
      case 'failed':
        if (placedAfterAll(intent)) return { kind: 'placed-after-all' };
        return { kind: 'foreign', why: `this journal never sent it (its intent ${intent.intentId} was ${intent.status} before it was sent)` };
    }
  }

  /** An order no intent of the journal sent. */
  async #unjournalled(owner: LedgerInstance, slotTimeMs: number): Promise<Verdict> {
    const slot = await this.#deps.journal.getSlot({ instance: owner.instance, slotTimeMs });
    if (slot !== null) return { kind: 'foreign', why: `this journal ran slot ${new Date(slotTimeMs).toISOString()} ${slot.status === 'missed' ? MISSED_UNSENT : `(${slot.status}) without sending it`}` };
    if (slotTimeMs >= this.#options.adoptBeforeMs) return { kind: 'foreign', why: `its slot ${new Date(slotTimeMs).toISOString()} falls in this run, which did not send it` };
    return { kind: 'adopt' };
  }

  /**
   * Where an order found in the history counts: its instance's budget (the instance's asset, else
   * the order's quote) and its account's cap, in the same transaction as the order: a crash
   * between the two would leave an order the cap never counts, and the account could overspend.
   * Counted on the account with a cap or without: one set later in the period counts it (as the
   * executor's reservations do).
   */
  #spendScope(owner: LedgerInstance, account: string, order: Order): { asset: string; timeZone: string; accountCap: { scope: string; asset: string; timeZone: string } } {
    const asset = owner.budgetAsset ?? order.market.split('_')[1] ?? order.market;
    const cap = this.#deps.accounts?.capOf(account) ?? null;
    return { asset, timeZone: owner.timezone, accountCap: { scope: accountBudgetScope(account), asset: cap?.asset ?? asset, timeZone: cap?.timeZone ?? owner.timezone } };
  }

  /**
   * A final order of ours the history shows as having spent more than the journal holds (a fee
   * corrected later; a fill the answer did not have, answered without a status and taken as
   * cancelled by an older stacker): recorded from the history, its budget settled again at what
   * it spent, and said. The journal moves a final order only so (leavesOrderAsIs), never back.
   */
  async #corrected(owner: LedgerInstance, stored: StoredOrder, shown: Order): Promise<void> {
    const deps = this.#deps;
    // Under the id the journal holds it by: a history may write it in another case.
    const transition = await recordOrder(deps, owner.instance, { ...shown, clientOrderId: stored.clientOrderId || shown.clientOrderId }, stored.intentId);
    if (transition === null) return;
    const was = `${stored.status}, filled ${formatDecimal(stored.filledBase)} for ${formatDecimal(stored.filledQuote)}, fee ${formatDecimal(stored.fee)}`;
    const now = `${transition.toStatus}, filled ${formatDecimal(transition.filledBase)} for ${formatDecimal(transition.filledQuote)}, fee ${formatDecimal(transition.fee)}`;
    deps.logger.warn(
      { event: 'order-corrected', instance: owner.instance, orderId: stored.orderId, clientOrderId: stored.clientOrderId, was, now },
      `order ${stored.orderId} (${stored.clientOrderId}) was journalled final as ${was}; the exchange's history shows ${now}: recorded, and its budget counts what it spent`,
    );
  }

  /** A second order of an intent this journal sent and recorded: journalled against that intent and counted, with its finding (null: written before). */
  async #recordSecond(owner: LedgerInstance, account: string, intent: IntentRecord, order: Order, finding: NewLedgerFinding | null): Promise<void> {
    const deps = this.#deps;
    const transition = await deps.journal.recordSecondOrder({ intentId: intent.intentId, instance: owner.instance, slotTimeMs: intent.slotTimeMs, order, ...this.#spendScope(owner, account, order), finding });
    if (transition !== null) deps.metrics.orderTransition(owner.instance, transition.toStatus);
    deps.logger.warn(
      { event: 'order-second', instance: owner.instance, intentId: intent.intentId, clientOrderId: order.clientOrderId, orderId: order.orderId, market: order.market, sent: intent.attempts, filledQuote: order.filledQuote.toFixed() },
      `order ${order.orderId} is a second order of intent ${intent.intentId} (${order.clientOrderId}${intent.attempts > 1 ? `, sent ${intent.attempts} times` : ''}): recorded against ${owner.instance}'s slot and counted in its budgets and reports`,
    );
  }

  /**
   * An order of an intent this journal sent and then journalled refused or failed: the answer
   * read as a refusal, or a failure before the answer, and the exchange placed the order after
   * all. Its money was spent: recorded against the intent and counted in its budgets (under a
   * reservation of its own, as a second order is), said at error, and written as a finding
   * already acknowledged, since nothing is left for a person to do. Not another client's order:
   * trading goes on.
   */
  async #recordPlacedAfterAll(owner: LedgerInstance, account: string, intent: IntentRecord, order: Order): Promise<void> {
    const deps = this.#deps;
    const was = `${intent.status}${intent.error === null ? '' : ` (${intent.error.code})`}`;
    const finding: NewLedgerFinding = {
      kind: 'adopted',
      instance: owner.instance,
      clientOrderId: order.clientOrderId,
      orderId: order.orderId,
      market: order.market,
      detail: `placed although its answer was journalled ${was}: recorded against intent ${intent.intentId} and counted`,
      acknowledged: true,
    };
    const transition = await deps.journal.recordSecondOrder({ intentId: intent.intentId, instance: owner.instance, slotTimeMs: intent.slotTimeMs, order, ...this.#spendScope(owner, account, order), finding });
    if (transition !== null) deps.metrics.orderTransition(owner.instance, transition.toStatus);
    deps.metrics.orderPlaced(owner.instance, order.createdAtSec * 1000);
    deps.logger.error(
      { event: 'order-placed-after-all', instance: owner.instance, intentId: intent.intentId, clientOrderId: order.clientOrderId, orderId: order.orderId, market: order.market, was, filledQuote: order.filledQuote.toFixed() },
      `order ${order.orderId} (${order.clientOrderId}) is in the exchange's history although its answer was journalled ${was}: the exchange placed it after all; recorded against ${owner.instance}'s slot and counted in its budgets and reports`,
    );
  }

  async #adopt(owner: LedgerInstance, account: string, slotTimeMs: number, index: number, order: Order): Promise<void> {
    const deps = this.#deps;
    const reason = `found in the exchange's order history; the journal had no record of it (lost with the journal, or with a crash)`;
    const adopted = await deps.journal.adoptOrder({
      instance: owner.instance,
      slotTimeMs,
      index,
      order,
      ...this.#spendScope(owner, account, order),
      reason,
      acknowledged: this.#options.acknowledgeAdoptions,
      ...(deps.accounts === undefined ? {} : { account }),
    });
    if (adopted.transition !== null) deps.metrics.orderTransition(owner.instance, adopted.transition.toStatus);
    deps.logger.warn(
      {
        event: 'order-adopted',
        instance: owner.instance,
        clientOrderId: order.clientOrderId,
        orderId: order.orderId,
        market: order.market,
        slot: new Date(slotTimeMs).toISOString(),
        status: order.status,
        filledBase: order.filledBase.toFixed(),
        filledQuote: order.filledQuote.toFixed(),
      },
      `adopted order ${order.clientOrderId} (${order.status}) from the exchange's history: the journal did not have it; it now counts against ${owner.instance}'s budgets`,
    );
  }

  /**
   * The not-found buys a read must reach back to: those whose budget is still held (a read that
   * shows nothing clears them), and those given back within LATE_ORDER_WATCH_MS of their send.
   * An exchange's backend may take an order after its gateway gave up, and its history may show
   * it later still; once the next reads started past its send, an order landing after its budget
   * was given back would never be seen, recorded or counted.
   */
  async #notFoundBuys(nowMs: number): Promise<IntentRecord[]> {
    const intents = await this.#deps.journal.listIntents({ statuses: ['not-found'] });
    if (intents.length === 0) return [];
    const held = new Set((await this.#deps.journal.heldBudgetReservations()).map((reservation) => reservation.reservationId));
    return intents.filter((intent) => held.has(intent.intentId) || held.has(accountReservationId(intent.intentId)) || nowMs - (intent.sentAtMs ?? intent.createdAtMs) < LATE_ORDER_WATCH_MS);
  }
}

/** How a finding says its order is a second one of an intent this journal sent (kept in the finding's text). */
export const TWIN = 'placed another order with the same id';

/** How a finding says its slot was journalled missed: another client's order, or one a history lagging past the settle window showed after a journal loss. */
export const MISSED_UNSENT = '(missed) without sending it';

/** How a finding says the intent of that second order was sent more than once, by a stacker that still resent orders. */
export const RESENT = 'a resend by an older stacker, which sent a lost answer\'s order again (this one never does)';

function findingOf(order: ForeignOrder): NewLedgerFinding {
  return { kind: 'foreign', instance: order.instance, clientOrderId: order.clientOrderId, orderId: order.orderId, market: order.market, detail: order.why };
}

type Verdict = { readonly kind: 'skip' | 'link' | 'adopt' | 'placed-after-all' } | { readonly kind: 'foreign'; readonly why: string };

/** An intent sent, then journalled refused or failed: an order under its id is the exchange having placed it after all. */
function placedAfterAll(intent: IntentRecord): boolean {
  return (intent.status === 'refused' || intent.status === 'failed') && intent.sentAtMs !== null;
}

/**
 * The intent an order of ours in the history belongs to: by its clientOrderId, or, when the
 * exchange gives the id back in another case, the intent of its slot and index whose id it is
 * once case is set aside.
 */
async function intentOf(journal: EngineDeps['journal'], instance: string, parts: ClientOrderIdParts, clientOrderId: string): Promise<IntentRecord | null> {
  const exact = await journal.findIntentByClientOrderId(clientOrderId);
  if (exact !== null) return exact;
  const folded = clientOrderId.toLowerCase();
  const slot = await journal.listIntents({ instance, slotTimeMs: parts.slotTimeMs });
  return slot.find((intent) => intent.index === parts.index && intent.clientOrderId?.toLowerCase() === folded) ?? null;
}

/** The id the slot and index of `parts` derive for `instance`, when `shown` is it in another case; null when it is not (a prefix of its own). */
function derivedIdOf(instance: string, parts: ClientOrderIdParts, shown: string): string | null {
  const derived = deriveClientOrderId(instance, parts.slotTimeMs, parts.index);
  return derived.toLowerCase() === shown.toLowerCase() ? derived : null;
}
