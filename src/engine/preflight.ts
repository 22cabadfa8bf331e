import { ExchangeError, NetworkError, TimeoutError } from '../domain/errors.ts';
import { isMoneyIntent, type Intent } from '../domain/intent.ts';
import { formatDecimal } from '../domain/money.ts';
import type { Exchange } from '../exchange/port.ts';
import type { Decimal } from '../domain/money.ts';
import { type RunMode, type SlotView, type Strategy, checkDecision, readsOf } from './contract.ts';
import { quoteAt } from './guards.ts';
import { groupOf, planMoney } from './money-plan.ts';
import { readOnlyParams, strategyErrorMessage } from './read-only.ts';
import { DECIDE_TIME_LIMIT_MS, type SpendLeft, withinTimeLimit } from './runtime.ts';
import { type SnapshotBooks, snapshotBooks, takeSnapshot } from './snapshot.ts';

export interface PreflightIntent {
  readonly kind: string;
  readonly summary: string;
  /**
   * `waits`: refused now only because this period's budget is used up, and within the smallest
   * limit, so it goes once the period resets: the state of the budget, not a fault of the configuration.
   * `held`: it would pass, but an operator's switch (a kill switch, the instance paused) keeps
   * anything from being sent now: the state of the switches, not a fault either.
   */
  readonly verdict: 'would-send' | 'refused' | 'waits' | 'held';
  readonly reason?: string;
}

export interface PreflightResult {
  readonly instance: string;
  /** The slot would send everything it decides, and nothing failed on the way. */
  readonly ok: boolean;
  readonly intents: readonly PreflightIntent[];
  readonly problems: readonly string[];
  /** What the instance may still spend now (its own budget, or its account's cap when that leaves less); absent without a budget. */
  readonly budgetLeft?: { readonly amount: string; readonly asset: string; readonly limitedBy: string };
}

/** What pre-flight reads of the configuration (a DaemonConfig fits: the engine does not import config). */
export interface PreflightConfig {
  readonly mode: RunMode;
  /**
   * The budget an instance has left now (its own and its account's cap, the smaller), as the
   * journal counts it: what a slot now would be judged against. Absent: judged as if unlimited.
   */
  readonly budgetLeft?: (instance: string) => Promise<SpendLeft | null>;
  /** The state the instance's strategy saved, as its next slot reads it. Absent: none saved. */
  readonly stateOf?: (instance: string) => Promise<ReadonlyMap<string, string>>;
  /** Why nothing of the instance would be sent now (a kill switch, a pause), as a slot would find it; null or absent: nothing holds it. */
  readonly heldBy?: (instance: string) => string | null;
  readonly instances: ReadonlyArray<{
    readonly instance: string;
    readonly timezone: string;
    readonly enabled: boolean;
    readonly strategy: Strategy<unknown>;
    readonly params: unknown;
    readonly maxOrderQuote: Decimal | null;
  }>;
}

/**
 * "Would this order pass?": each enabled instance decides a slot at `nowMs` on a real snapshot,
 * and the engine's guards judge the answer, exactly as a slot would, against the budget left now
 * (`budgetLeft`) and on the state the strategy saved (`stateOf`), except that nothing is journalled or sent and nothing is counted against it.
 */
export async function preflight(config: PreflightConfig, exchange: Exchange, nowMs: number): Promise<PreflightResult[]> {
  const books = snapshotBooks(exchange, { ttlMs: Number.POSITIVE_INFINITY, nowMs: () => nowMs });
  // Side by side: a strategy that hangs is waited out for its time limit once, not once per instance.
  return Promise.all(config.instances.filter((i) => i.enabled).map((instance) => preflightOne(config, exchange, books, instance, nowMs)));
}

async function preflightOne(config: PreflightConfig, exchange: Exchange, books: SnapshotBooks, instance: PreflightConfig['instances'][number], nowMs: number): Promise<PreflightResult> {
  const problems: string[] = [];
  const judged: PreflightIntent[] = [];
  let shown: PreflightResult['budgetLeft'];
  try {
    const spend = (await config.budgetLeft?.(instance.instance)) ?? null;
    if (spend !== null) shown = { amount: formatDecimal(spend.amount), asset: spend.asset, limitedBy: spend.limitedBy };
    const left = spend?.amount ?? null;
    const view = await takeSnapshot(exchange, books, {
      instance: instance.instance,
      slotTimeMs: nowMs,
      timezone: instance.timezone,
      mode: config.mode,
      reads: readsOf(instance.strategy, instance.params),
      candles: instance.strategy.candleWindows?.(instance.params) ?? [],
      state: (await config.stateOf?.(instance.instance)) ?? new Map(),
      budget: { remainingQuote: () => left, maxOrderQuote: () => instance.maxOrderQuote },
    });
    // Judged as a live slot judges it: one bad intent and the slot sends nothing.
    const valid = checkDecision(
      await withinTimeLimit(Promise.resolve(instance.strategy.decide(view, readOnlyParams(instance.params, instance.instance))), DECIDE_TIME_LIMIT_MS, 'decide'),
      readsOf(instance.strategy, instance.params),
    );
    const refusals = planMoney(valid, view, {
      maxOrderQuote: instance.maxOrderQuote,
      markets: instance.strategy.markets?.(instance.params) ?? null,
      budgetAsset: instance.strategy.budgetAsset?.(instance.params) ?? null,
      killed: null,
      budgetLimit: spend,
    });
    const waitsAlone = valid.map((intent, index) => refusals[index]?.code === 'over-budget' && spend !== null && intent.kind === 'buy-stock-market' && fitsCeiling(intent.amount, intent.market, view, spend.ceiling));
    // An intent refused with its group (the transfer funding a buy) waits when what refused the group only waits.
    const causeWaits = (group: string): boolean =>
      valid.some((other, index) => isMoneyIntent(other) && groupOf(other) === group && refusals[index] !== null && refusals[index]?.code !== 'group-refused' && waitsAlone[index] === true);
    for (const [index, intent] of valid.entries()) {
      if (intent.kind === 'refusal') judged.push({ kind: intent.kind, summary: intent.message, verdict: 'refused', reason: intent.reason });
      if (!isMoneyIntent(intent)) continue;
      const refusal = refusals[index] ?? null;
      const waits = waitsAlone[index] === true || (refusal?.code === 'group-refused' && causeWaits(groupOf(intent)));
      const waitsWhy =
        !waits || spend === null ? '' : intent.kind === 'buy-stock-market' && waitsAlone[index] === true ? `; it fits the smallest limit, ${formatDecimal(spend.ceiling)} ${quoteOf(intent.market, view)}, so it waits for the period to reset` : '; it waits with the buy it funds, for the period to reset';
      const reason = refusal === null ? '' : `${refusal.code}: ${refusal.message}${waitsWhy}`;
      const held = refusal === null ? (config.heldBy?.(instance.instance) ?? null) : null;
      if (held !== null) judged.push({ kind: intent.kind, summary: describe(intent), verdict: 'held', reason: held });
      else judged.push({ kind: intent.kind, summary: describe(intent), ...(refusal === null ? { verdict: 'would-send' as const } : { verdict: waits ? ('waits' as const) : ('refused' as const), reason }) });
    }
  } catch (error) {
    // The exchange refusing the key, or not answering, is not this instance's fault: it is the
    // check's failure, with its own code and exit (E_AUTH 3, E_UNAVAILABLE 4), not a problem of the file.
    if (error instanceof ExchangeError || error instanceof NetworkError || error instanceof TimeoutError) throw error;
    problems.push(strategyErrorMessage(error));
  }
  return { instance: instance.instance, ok: problems.length === 0 && judged.every((i) => i.verdict !== 'refused'), intents: judged, problems, ...(shown === undefined ? {} : { budgetLeft: shown }) };
}

/** A buy of `amount` at the price the slot reads is within `ceiling` (false when the price was not read). */
function fitsCeiling(amount: Decimal, market: string, view: SlotView, ceiling: Decimal): boolean {
  try {
    const price = view.price(market);
    return price !== undefined && !quoteAt(amount, price).gt(ceiling);
  } catch {
    return false;
  }
}

/** The market's quote asset, as the view's rules name it ('' when not read). */
function quoteOf(market: string, view: SlotView): string {
  try {
    return view.market(market)?.quote ?? '';
  } catch {
    return '';
  }
}

function describe(intent: Intent): string {
  switch (intent.kind) {
    case 'buy-stock-market':
      return `buy ${formatDecimal(intent.amount)} ${intent.market} at market${intent.stp === undefined ? '' : ` (stp ${intent.stp})`}`;
    case 'transfer':
      return `transfer ${formatDecimal(intent.amount)} ${intent.ticker} main -> spot`;
    case 'flex-withdraw':
      return `withdraw ${formatDecimal(intent.amount)} from flex plan ${intent.plan}`;
    default:
      return intent.kind;
  }
}
