import type { AccountConfig } from '../config/accounts.ts';
import type { ExchangeDown, ExchangeReachability } from './exchange-reachability.ts';
import type { InstanceConfig } from '../config/instance-config.ts';
import { accountBudgetScope } from '../engine/runtime.ts';
import { type Decimal, ZERO, formatDecimal } from '../domain/money.ts';
import type { Engine, SlotRetryState } from '../engine/engine.ts';
import type { Exchange } from '../exchange/port.ts';
import type { MarketPosition } from '../report/cost-basis.ts';
import { FollowedOrders } from '../report/followed-orders.ts';
import type { PositionBook } from '../report/position-book.ts';
import { StoreError } from '../store/errors.ts';
import { BUDGET_PERIODS, type BudgetPeriod, type BudgetScope, type Journal, type SlotRecord, type StoredOrder } from '../store/journal.ts';
import type { OperatorControls } from './controls.ts';
import { settledSince } from './slot-shortfall.ts';

/**
 * The status document behind `GET /api/status` and the status page: per instance its
 * schedule, next and last slot, budget used and left per period, recent slots and orders with
 * their transitions; cost basis and P&L per market; health and why; the kill switch and who
 * turned it on. Built from the journal (the truth across restarts), the engine (what runs
 * now), the operator controls and the configuration, at each request. Money is decimal
 * strings; times are ISO 8601 UTC.
 */
export interface StatusDocument {
  readonly generatedAt: string;
  readonly mode: string;
  readonly version: string;
  readonly startedAt: string;
  /** `starting`: waiting at start (for the exchange), nothing scheduled yet, as /healthz says. */
  readonly health: { readonly status: 'ok' | 'unhealthy' | 'starting' | 'stopping'; readonly problems: readonly string[] };
  readonly killSwitch: {
    readonly on: boolean;
    /** Every source that holds it on (the status API, the file, STACKER_KILL_SWITCH). */
    readonly reasons: readonly string[];
    /** When it was turned on from the status API; null when the API did not (the page offers "off" only then). */
    readonly operatorSince: string | null;
  };
  /** Whether STACKER_CONTROL_TOKEN is set: without it every control answers 403. */
  readonly controls: { readonly enabled: boolean };
  readonly instances: readonly InstanceStatus[];
  /** The accounts the instances trade on, each with its cap used and left, and its own kill switch. */
  readonly accounts: readonly AccountStatus[];
  /** Cost basis per market from every order in the journal (src/report/cost-basis.ts), valued at the exchange's price. */
  readonly markets: readonly MarketPosition[];
  /** Why prices (and so values and P&L) are missing; null when they were read. */
  readonly pricesNote: string | null;
  /**
   * Instances the journal holds that do not run (their file gone, or ENABLED=false) and that spent
   * in a current budget period or have an intent unresolved, as the start found them: a file
   * renamed is a new instance with a fresh budget, and the old name's spending is told here.
   */
  readonly notRunning: readonly NotRunningStatus[];
}

export interface NotRunningStatus {
  readonly name: string;
  /** `no-file`: no NAME.env any more; `disabled`: its file says ENABLED=false. */
  readonly state: 'no-file' | 'disabled';
  readonly file: string;
  readonly spent: readonly { readonly period: string; readonly from: string; readonly amount: string; readonly asset: string; readonly timeZone: string }[];
  /** Its intents not resolved yet (a lost answer still looked up, a transfer to resolve by hand). */
  readonly unresolved: number;
  /** Paused from the status API since (a pause is the name's: a renamed file runs unpaused); null when not paused. */
  readonly pausedSince: string | null;
  readonly message: string;
}

export interface InstanceStatus {
  readonly name: string;
  readonly strategy: string;
  /** The account (API key) it trades on: ACCOUNT= in its file, `default` without. */
  readonly account: string;
  /** ENABLED in its file, and not disabled by a failing strategy in this run. */
  readonly enabled: boolean;
  readonly paused: { readonly since: string } | null;
  /** A slot of it is being run now (or waits to be tried again: `retrying`). */
  readonly running: boolean;
  /**
   * A scheduled slot whose snapshot failed for now (a 5xx, a timeout, a rate limit) and that
   * waits to be tried again: nothing was sent for it; null when none waits.
   */
  readonly retrying: RetryStatus | null;
  readonly schedule: string;
  readonly timezone: string;
  /** When the scheduler fires next; null when the instance does not run. */
  readonly nextSlot: string | null;
  readonly lastSlot: SlotStatus | null;
  readonly budget: BudgetStatus | null;
  /** Newest first. */
  readonly recentSlots: readonly SlotStatus[];
  /** Newest first, each with its transitions oldest first. */
  readonly recentOrders: readonly OrderStatus[];
}

export interface AccountStatus {
  readonly name: string;
  readonly instances: readonly string[];
  /** STACKER_ACCOUNT_<NAME>_BUDGET_QUOTE_PER_*: what all its instances spent; null without a cap. */
  readonly cap: BudgetStatus | null;
  /** The zone of the cap's days, weeks and months; null without a cap. */
  readonly capTimeZone: string | null;
  /** Its own kill switch, turned on from the status API (the one for every account is `killSwitch`). */
  readonly killSwitch: { readonly on: boolean; readonly since: string | null };
  /** Its exchange giving no usable answer since (timeouts, resets, 5xx, throttling), and the latest failure; null while it answers. */
  readonly exchangeDown: { readonly since: string; readonly lastError: string } | null;
}

export interface RetryStatus {
  readonly slotTime: string;
  /** Attempts that failed so far. */
  readonly attempts: number;
  readonly nextTry: string;
  /** The last failure, as the log says it. */
  readonly code: string;
  readonly error: string;
}

export interface SlotStatus {
  readonly slotTime: string;
  readonly status: string;
  readonly reason: string | null;
  /** A failed slot whose lost answers have since been found: what became of it ('done'); null otherwise. */
  readonly settled: 'done' | null;
}

export interface BudgetStatus {
  readonly asset: string;
  /**
   * `over`: what the period spent above its limit (a buy is reserved at its estimate and counts at its fill), "0" when nothing.
   * `held`: the part of `spent` reserved for buys not confirmed yet (sent, or their answer lost), "0" when none.
   */
  readonly periods: readonly { readonly period: string; readonly periodStart: string; readonly limit: string; readonly spent: string; readonly left: string; readonly over: string; readonly held: string }[];
}

export interface OrderStatus {
  readonly orderId: string;
  readonly clientOrderId: string;
  readonly market: string;
  readonly side: string;
  readonly status: string;
  readonly amount: string;
  readonly filledBase: string;
  readonly filledQuote: string;
  readonly fee: string;
  readonly feeAsset: string | null;
  readonly createdAt: string;
  readonly transitions: readonly { readonly at: string; readonly from: string | null; readonly to: string; readonly filledBase: string; readonly filledQuote: string; readonly fee: string }[];
}

export interface StatusSources {
  readonly mode: string;
  readonly version: string;
  readonly startedAtMs: number;
  readonly instances: readonly InstanceConfig[];
  /** Never their keys: the status document names accounts and their caps only. */
  readonly accounts?: readonly Pick<AccountConfig, 'name' | 'instances' | 'budgets' | 'budgetAsset' | 'budgetTimeZone'>[];
  readonly journal: Journal;
  readonly exchange: Pick<Exchange, 'prices'>;
  readonly engine: () => Engine | null;
  readonly controls: OperatorControls;
  /** Every kill-switch source but the operator's (file, environment): why it is on, or null. */
  readonly configuredKillSwitch: () => string | null;
  readonly controlsEnabled: boolean;
  /** The daemon's health as /healthz reports it. */
  /** `starting`: the daemon has not scheduled its slots yet (it waits for the exchange at start). */
  readonly health: () => { readonly problems: readonly string[]; readonly stopping: boolean; readonly starting?: boolean };
  readonly nowMs: () => number;
  /** How long a price read is reused: every open page asks every few seconds. Default 30 s. */
  readonly priceTtlMs?: number;
  /** Told each time the document could not be built for a journal that cannot be read (the daemon logs it, a line a minute). */
  readonly onUnreadable?: (message: string) => void;
  /** Whether each account's exchange answers (the API clients' requests); absent: not known. */
  readonly reachability?: Pick<ExchangeReachability, 'of'>;
}

/**
 * `/api/status` while the journal cannot be read (its database down or not answering): 503 with
 * what the daemon knows without it, so that the page shows the outage rather than a daemon that
 * does not answer. The instances, budgets, orders and positions come from the journal, so they
 * are left out until it can be read.
 */
export interface JournalUnreadableStatus extends Pick<StatusDocument, 'generatedAt' | 'mode' | 'version' | 'startedAt' | 'health' | 'killSwitch' | 'controls'> {
  readonly error: 'journal-unreadable';
  readonly message: string;
}

/** How much history per instance the document carries: enough to see what happened lately, small enough to send every few seconds. */
const RECENT_SLOTS = 5;
const RECENT_ORDERS = 5;

export class StatusBuilder {
  readonly #sources: StatusSources;
  /** The journal's orders as last read: their positions and each instance's newest. */
  readonly #orders: FollowedOrders;
  #lastPositions: { readonly version: number; readonly prices: ReadonlyMap<string, Decimal> | null; readonly positions: MarketPosition[] } | null = null;
  #prices: { readonly atMs: number; readonly markets: string; readonly prices: ReadonlyMap<string, Decimal> | null; readonly note: string | null } | null = null;
  #notRunning: readonly NotRunningStatus[] = [];

  constructor(sources: StatusSources) {
    this.#sources = sources;
    this.#orders = new FollowedOrders(sources.journal, { recentPerInstance: RECENT_ORDERS });
  }

  /** The instances that do not run, as the start found them (instances-without-file.ts): shown until the next start. */
  noteNotRunning(found: readonly NotRunningStatus[]): void {
    this.#notRunning = found;
  }

  async document(): Promise<StatusDocument> {
    const sources = this.#sources;
    const nowMs = sources.nowMs();
    await this.#orders.catchUp(nowMs);
    const book = this.#orders.book;
    const markets = book.markets();
    const priced = await this.#pricesOf(markets, nowMs);
    const known = this.#daemonKnows(nowMs);
    return {
      ...known,
      instances: await Promise.all(sources.instances.map((instance) => this.#instance(instance, nowMs, known.health.status === 'starting'))),
      accounts: await Promise.all(
        (sources.accounts ?? []).map(async (account) => {
          const killedSince = sources.controls.accountKillSwitchSinceMs(account.name);
          return {
            name: account.name,
            instances: account.instances,
            cap:
              account.budgetAsset === null
                ? null
                : await budgetStatus(sources.journal, { instance: accountBudgetScope(account.name), asset: account.budgetAsset, timeZone: account.budgetTimeZone }, account.budgets, nowMs),
            capTimeZone: account.budgetAsset === null ? null : account.budgetTimeZone,
            killSwitch: { on: killedSince !== null, since: killedSince === null ? null : iso(killedSince) },
            exchangeDown: exchangeDownOf(sources.reachability?.of(account.name) ?? null),
          };
        }),
      ),
      markets: this.#positions(book, priced.prices),
      pricesNote: priced.note,
      notRunning: this.#notRunning,
    };
  }

  /**
   * The answer for a document that failed on the journal (a StoreError: its database down, not
   * answering, the journal lost): what the daemon knows without it, and why; null for any other
   * failure, which is a fault of stacker's own.
   */
  unavailable(error: unknown): JournalUnreadableStatus | null {
    if (!(error instanceof StoreError)) return null;
    this.#sources.onUnreadable?.(error.message);
    return {
      error: 'journal-unreadable',
      message: `the journal cannot be read, so instances, budgets, orders and positions are left out until it can: ${error.message}`,
      // Read after the failure: the journal's failed read is one of health's problems by now.
      ...this.#daemonKnows(this.#sources.nowMs()),
    };
  }

  /** What the document says that the journal does not hold: health, the kill switch (kept in memory), the controls. */
  #daemonKnows(nowMs: number): Pick<StatusDocument, 'generatedAt' | 'mode' | 'version' | 'startedAt' | 'health' | 'killSwitch' | 'controls'> {
    const sources = this.#sources;
    const health = sources.health();
    const operatorReason = sources.controls.killSwitch.active();
    const configuredReason = sources.configuredKillSwitch();
    const reasons = [operatorReason, configuredReason].filter((reason): reason is string => reason !== null);
    const operatorSince = sources.controls.killSwitchSinceMs;
    return {
      generatedAt: iso(nowMs),
      mode: sources.mode,
      version: sources.version,
      startedAt: iso(sources.startedAtMs),
      health: { status: health.stopping ? 'stopping' : health.starting === true ? 'starting' : health.problems.length === 0 ? 'ok' : 'unhealthy', problems: health.problems },
      killSwitch: { on: reasons.length > 0, reasons, operatorSince: operatorSince === null ? null : iso(operatorSince) },
      controls: { enabled: sources.controlsEnabled },
    };
  }

  /** `starting`: nothing is scheduled yet, so no next slot is named. */
  async #instance(config: InstanceConfig, nowMs: number, starting: boolean): Promise<InstanceStatus> {
    const { journal, controls } = this.#sources;
    const engine = this.#sources.engine();
    const name = config.instance;
    const enabled = config.enabled && (engine?.isEnabled(name) ?? true);
    const pausedSince = controls.pausedSinceMs(name);
    const slots = await journal.listSlots({ instance: name, limit: RECENT_SLOTS });
    const orders = this.#orders.recentOf(name);
    return {
      name,
      strategy: config.strategy.name,
      account: config.account,
      enabled,
      paused: pausedSince === null ? null : { since: iso(pausedSince) },
      running: engine?.isRunning(name) ?? false,
      retrying: retryStatus(engine?.retryingSlot(name) ?? null),
      schedule: config.schedule.expression,
      timezone: config.timezone,
      // Nothing is scheduled while the daemon starts: no time would be honest.
      nextSlot: enabled && !starting ? iso(config.schedule.next(nowMs)) : null,
      lastSlot: slots[0] === undefined ? null : await slotStatus(journal, slots[0]),
      budget: await this.#budget(config, nowMs),
      recentSlots: await Promise.all(slots.map((slot) => slotStatus(journal, slot))),
      recentOrders: await Promise.all(orders.map((order) => this.#order(order))),
    };
  }

  async #budget(config: InstanceConfig, nowMs: number): Promise<BudgetStatus | null> {
    const asset = config.strategy.budgetAsset?.(config.params) ?? null;
    if (asset === null) return null;
    return budgetStatus(this.#sources.journal, { instance: config.instance, asset, timeZone: config.timezone }, config.budgets, nowMs);
  }

  async #order(order: StoredOrder): Promise<OrderStatus> {
    const transitions = await this.#sources.journal.orderTransitions(order.orderId);
    return {
      orderId: order.orderId,
      clientOrderId: order.clientOrderId,
      market: order.market,
      side: order.side,
      status: order.status,
      amount: formatDecimal(order.amount),
      filledBase: formatDecimal(order.filledBase),
      filledQuote: formatDecimal(order.filledQuote),
      fee: formatDecimal(order.fee),
      feeAsset: order.feeAsset,
      createdAt: iso(Math.round(order.createdAtSec * 1000)),
      transitions: transitions.map((t) => ({
        at: iso(t.atMs),
        from: t.fromStatus,
        to: t.toStatus,
        filledBase: formatDecimal(t.filledBase),
        filledQuote: formatDecimal(t.filledQuote),
        fee: formatDecimal(t.fee),
      })),
    };
  }

  /** The markets' prices, reused for priceTtlMs (a failure too, so a down exchange is not asked at every refresh). */
  /** Positions at these prices, worked out again only when an order or the prices changed. */
  #positions(book: PositionBook, prices: ReadonlyMap<string, Decimal> | null): MarketPosition[] {
    const version = this.#orders.version;
    const last = this.#lastPositions;
    if (last !== null && last.version === version && last.prices === prices) return last.positions;
    const summed = book.positions(prices);
    this.#lastPositions = { version, prices, positions: summed };
    return summed;
  }

  async #pricesOf(markets: readonly string[], nowMs: number): Promise<{ prices: ReadonlyMap<string, Decimal> | null; note: string | null }> {
    if (markets.length === 0) return { prices: null, note: null };
    const key = markets.join(',');
    const cached = this.#prices;
    if (cached !== null && cached.markets === key && nowMs - cached.atMs < (this.#sources.priceTtlMs ?? 30_000)) return cached;
    let fresh: { prices: ReadonlyMap<string, Decimal> | null; note: string | null };
    try {
      fresh = { prices: await this.#sources.exchange.prices(markets), note: null };
    } catch (error) {
      fresh = { prices: null, note: `prices could not be read (${error instanceof Error ? error.message : String(error)}): values and P&L are left out` };
    }
    this.#prices = { atMs: nowMs, markets: key, ...fresh };
    return fresh;
  }
}

async function slotStatus(journal: Journal, slot: SlotRecord): Promise<SlotStatus> {
  const settled = slot.status === 'failed' ? await settledSince(journal, slot.instance, slot.slotTimeMs) : null;
  return { slotTime: iso(slot.slotTimeMs), status: slot.status, reason: slot.reason, settled };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** Used and left of each period a budget limits, as the journal counts it; null when it limits none. */
async function budgetStatus(journal: Journal, scope: BudgetScope, budgets: Readonly<Record<BudgetPeriod, Decimal | null>>, nowMs: number): Promise<BudgetStatus | null> {
  const limits = BUDGET_PERIODS.flatMap((period) => {
    const limit = budgets[period];
    return limit === null ? [] : [{ period, limit }];
  });
  if (limits.length === 0) return null;
  const spent = await journal.budgetSpent(scope, nowMs);
  // Reservations not settled yet: buys in flight or whose answer was lost, counted at their estimate until found.
  const held = (await journal.heldBudgetReservations(scope.instance)).filter((r) => r.asset === scope.asset && r.timeZone === scope.timeZone);
  const heldIn = (period: BudgetPeriod): Decimal => held.filter((r) => r.periodStarts[period] === spent.periodStarts[period]).reduce((sum, r) => sum.add(r.amountQuote), ZERO);
  return {
    asset: scope.asset,
    periods: limits.map(({ period, limit }) => ({ period, periodStart: iso(spent.periodStarts[period]), ...spentOf(limit, spent[period]), held: formatDecimal(heldIn(period)) })),
  };
}

/**
 * A period's limit, spent, left and over, as text. A buy is reserved at its estimate and counts
 * at its fill, so a market order filling above its estimate can take a period past its limit by
 * that slippage: said as `over`, never hidden in a `left` of 0.
 */
export function spentOf(limit: Decimal, spent: Decimal): { readonly limit: string; readonly spent: string; readonly left: string; readonly over: string } {
  const left = limit.sub(spent);
  return { limit: formatDecimal(limit), spent: formatDecimal(spent), left: formatDecimal(left.isNegative() ? ZERO : left), over: formatDecimal(left.isNegative() ? left.neg() : ZERO) };
}

function retryStatus(state: SlotRetryState | null): RetryStatus | null {
  if (state === null) return null;
  return { slotTime: iso(state.slotTimeMs), attempts: state.attempts, nextTry: iso(state.nextTryMs), code: state.code, error: state.error };
}

function exchangeDownOf(down: ExchangeDown | null): AccountStatus['exchangeDown'] {
  return down === null ? null : { since: iso(down.sinceMs), lastError: down.lastError };
}
