import { ENGINE_REFUSED, tell } from './observer.ts';
import { maskCodesIn } from '../domain/account.ts';
import type { CandleWindow } from './candle-book.ts';
import { type Intent, isMoneyIntent } from '../domain/intent.ts';
import type { NewIntent } from '../store/journal.ts';
import { type BudgetView, type SlotView, type SnapshotPart, type Strategy, checkDecision } from './contract.ts';
import { FatalEngineError, classifyError, errorCode, errorMessage } from './error-policy.ts';
import { type MoneyOutcome, executeMoneyIntent, releaseReservation, reserveFundedBuys } from './executor.ts';
import { tellRefused } from './intent-events.ts';
import { groupOf, planMoney } from './money-plan.ts';
import { DECIDE_TIME_LIMIT_MS, DEFAULT_ACCOUNT, type EngineDeps, type InstanceLimits, type SpendLeft, accountOfInstance, accountPrefix, onInstanceAccount, spendLeft } from './runtime.ts';
import { STOPPED_WAITING, withinTimeLimitUnlessStopped } from './time-limit.ts';
import { readOnlyParams, strategyErrorMessage } from './read-only.ts';
import { type HeldBuy, type SnapshotBooks, takeSnapshot } from './snapshot.ts';

/** A strategy instance ready to run: its module, parsed params and limits. */
export interface InstanceRuntime extends InstanceLimits {
  readonly strategy: Strategy<unknown>;
  readonly params: unknown;
  readonly reads: readonly SnapshotPart[];
  /** The candles it reads (candleWindows); empty when it reads none. */
  readonly candleWindows?: readonly CandleWindow[];
  /** The asset budgets are counted in (the quote of the market it buys); null when it has no budget. */
  readonly budgetAsset: string | null;
}

/**
 * How a slot ended. `already`: the journal had it (a restart, an overlap, a catch-up racing the
 * schedule): nothing ran. `disabled`: the strategy misbehaved (threw, or returned an intent the
 * contract forbids); its instance must not run again until fixed.
 */
export type SlotOutcome = 'done' | 'failed' | 'skipped' | 'already' | 'disabled';

/** How the reason of a slot skipped because its reads failed begins: `snapshot failed (CODE): …`. */
export const SNAPSHOT_FAILED = 'snapshot failed';

/** The error code of a slot skipped because its reads failed, from its journalled reason; null for any other reason. */
export function snapshotFailureCode(reason: string): string | null {
  return new RegExp(`^${SNAPSHOT_FAILED} \\((E_[A-Z_]+)\\)`).exec(reason)?.[1] ?? null;
}

/**
 * One slot: snapshot → decide → guards → journal → execute. The slot is claimed in the journal
 * together with its intents in one transaction, before anything is sent, so a crash anywhere
 * leaves either nothing (the slot runs when due again, if catch-up allows) or a claimed slot
 * whose intents reconciliation resolves; it never leaves a request the journal does not know.
 */
export function runSlot(run: EngineDeps, books: SnapshotBooks, instance: InstanceRuntime, slotTimeMs: number, runId: string | null): Promise<SlotOutcome> {
  // Without a retry the attempt never answers 'retry'.
  return attemptSlot(run, books, instance, slotTimeMs, runId, null) as Promise<SlotOutcome>;
}

/**
 * How one attempt at a slot ended: a SlotOutcome, `retry` (its snapshot failed for now and it is
 * tried again later) or `stopped` (the daemon stopped while its strategy had not answered); in
 * both of the last, nothing is journalled for the slot.
 */
export type AttemptOutcome = SlotOutcome | 'retry' | 'stopped';

/**
 * A scheduled slot's attempt that may be put off: asked on a transient snapshot failure, `again`
 * says whether the slot will be tried later (then nothing is journalled now: it ends 'retry').
 */
export interface SnapshotRetry {
  /** Attempts of this slot that failed before this one. */
  readonly failedBefore: number;
  again(error: unknown): boolean;
}

/**
 * The slots of one account, one at a time from their plan to their last send, and whether any
 * sent money since a slot read the account. A strategy sizes a transfer from the trade balance it
 * read: two instances firing together each moved their own shortfall from the same balance and
 * the exchange refused the second buy for funds. Reading and deciding stay outside the turn (a
 * strategy that hangs holds up no other instance); a slot whose reads went stale while it
 * waited reads and decides again, in its turn.
 */
export interface AccountTurn {
  /** How many times the account's slots have sent money (only compared: changed or not). */
  moves(): number;
  /** Told before each send. */
  moved(): void;
  take(work: () => Promise<AttemptOutcome>): Promise<AttemptOutcome>;
}

/** One slot with nothing to wait for: a caller with no engine around it, or a backtest, which runs its slots one after another. */
export const ALONE: AccountTurn = { moves: () => 0, moved: () => undefined, take: (work) => work() };

/** What a slot read and its strategy answered. */
interface Decided {
  readonly view: SlotView;
  readonly budgetLimit: SpendLeft | null;
  readonly intents: readonly Intent[];
}

/** One slot, as the steps of attemptSlot share it. */
interface SlotContext {
  /** The engine's deps on the instance's account: everything the slot reads and sends goes there. */
  readonly deps: EngineDeps;
  readonly books: SnapshotBooks;
  readonly instance: InstanceRuntime;
  readonly key: { readonly instance: string; readonly slotTimeMs: number };
  readonly runId: string | null;
  readonly retry: SnapshotRetry | null;
  /** The daemon stopping: a decide that has not answered is not waited for (nothing is sent for the slot yet). */
  readonly stop: AbortSignal | undefined;
  readonly startedMs: number;
  /** The slot's fields (its time as text), made only when a line is written: a backtest's slots write none. */
  readonly log: () => SlotLogFields;
}

/** runSlot, with a transient snapshot failure left unjournalled when `retry` says it is tried again. */
export async function attemptSlot(
  run: EngineDeps,
  books: SnapshotBooks,
  instance: InstanceRuntime,
  slotTimeMs: number,
  runId: string | null,
  retry: SnapshotRetry | null,
  turn: AccountTurn = ALONE,
  stop?: AbortSignal,
): Promise<AttemptOutcome> {
  // Everything this slot reads and sends goes to its instance's account; `books` are that account's too.
  const deps = onInstanceAccount(run, instance.instance);
  const slot: SlotContext = { deps, books, instance, key: { instance: instance.instance, slotTimeMs }, runId, retry, stop, startedMs: deps.clock.nowMs(), log: () => slotLogFields(instance.instance, slotTimeMs) };
  if ((await deps.journal.getSlot(slot.key)) !== null) {
    deps.logger.debug(slot.log(), 'slot already journalled; not running it again');
    return 'already';
  }
  const readAt = turn.moves();
  const first = await readAndDecide(slot);
  if (typeof first === 'string') return first;
  // A slot that sends nothing (notes, a report, the strategy declining) has no balance to go stale.
  if (!first.intents.some(isMoneyIntent)) return planAndSend(slot, first, turn);
  return turn.take(async () => {
    // Another slot of this account sent money since this one read: what it read is stale (a
    // transfer sized from the trade balance a buy has since spent). Read and decide again, in turn.
    const decided = turn.moves() === readAt ? first : await readAndDecide(slot);
    if (typeof decided === 'string') return decided;
    return planAndSend(slot, decided, turn);
  });
}

/**
 * The slot's reads and its strategy's answer; an outcome when the slot ends there (journalled as
 * skipped or failed), or `stopped`: the daemon stopped while the strategy had not answered, and
 * the slot is left unjournalled.
 */
async function readAndDecide(slot: SlotContext): Promise<Decided | AttemptOutcome> {
  const { deps, books, instance, key, runId, retry, log } = slot;
  const started = slot.startedMs;
  const { slotTimeMs } = key;
  let view: SlotView;
  let budgetLimit: SpendLeft | null;
  try {
    const state = await deps.journal.getState(instance.instance);
    const budget = await budgetView(deps, instance, slotTimeMs);
    budgetLimit = budget.left;
    // A backtest's exchange answers every order: nothing is ever in doubt there.
    const heldBuys = deps.mode !== 'backtest' && instance.reads.includes('balances') ? await buysInDoubt(deps, instance.instance) : [];
    view = await takeSnapshot(deps.exchange, books, { instance: instance.instance, slotTimeMs, timezone: instance.timezone, mode: deps.mode, reads: instance.reads, state, budget: budget.view, candles: instance.candleWindows ?? [], heldBuys });
  } catch (error) {
    const kind = classifyError(error);
    if (kind === 'fatal') throw new FatalEngineError(`${accountPrefix(deps)}reading the account: ${errorMessage(error)}`, error);
    if (kind === 'transient' && retry !== null && retry.again(error)) return 'retry';
    const attempts = retry === null ? '' : ` (${retry.failedBefore + 1} attempt${retry.failedBefore === 0 ? '' : 's'})`;
    const reason = `${SNAPSHOT_FAILED} (${errorCode(error)}): ${errorMessage(error)}${attempts}`;
    if (await deps.journal.skipSlot({ ...key, runId, status: 'skipped', reason })) {
      deps.metrics.slotFinished(instance.instance, 'skipped', deps.clock.nowMs() - started, slotTimeMs);
    }
    deps.logger.warn({ ...log(), event: 'slot-skipped', code: errorCode(error), error: errorMessage(error), ...(retry === null ? {} : { attempts: retry.failedBefore + 1 }) }, `skipping this slot: ${reason}`);
    return 'skipped';
  }

  let intents: readonly Intent[];
  try {
    const decided = instance.strategy.decide(view, readOnlyParams(instance.params, instance.instance));
    const answer = await withinTimeLimitUnlessStopped(Promise.resolve(decided), deps.timing.decideTimeLimitMs ?? DECIDE_TIME_LIMIT_MS, 'decide', slot.stop);
    if (answer === STOPPED_WAITING) {
      // Nothing is claimed or sent before the answer: the slot is left as one whose snapshot
      // waited to be tried again when the stop came, for the next start to decide by CATCH_UP.
      deps.logger.info({ ...log(), event: 'slot-stopped' }, 'stopping: the strategy had not answered; nothing was sent for this slot, which is left unjournalled for the next start to catch up (CATCH_UP) or journal as missed');
      return 'stopped';
    }
    intents = checkDecision(answer, instance.reads);
    // A refusal or a note that quotes a code (a parse of it refused, as the SDK asks, rather than thrown) goes to the log, the journal and the notifications too.
    if (instance.reads.includes('codes')) intents = withCodesMasked(intents, codesOf(view));
  } catch (error) {
    // A code the strategy read may be quoted in its error (a parse of it failing): masked wherever the error goes.
    const codes = instance.reads.includes('codes') ? codesOf(view) : [];
    const message = maskCodesIn(strategyErrorMessage(error), codes);
    const stack = error instanceof Error && error.stack !== undefined ? { stack: maskCodesIn(error.stack, codes) } : {};
    const reason = `strategy ${instance.strategy.name} failed: ${message}`;
    if (await deps.journal.claimSlot({ ...key, runId })) await deps.journal.finishSlot({ ...key, status: 'failed', reason });
    deps.metrics.slotFinished(instance.instance, 'failed', deps.clock.nowMs() - started, slotTimeMs);
    deps.metrics.strategyDisabled(instance.instance);
    // The stack (the strategy's file and line) is for whoever reads the log; the journal and /healthz keep the reason.
    deps.logger.error({ ...log(), event: 'strategy-disabled', error: message, ...stack }, `${reason}; instance disabled until it is fixed (the others keep running)`);
    tell(deps, () => ({ kind: 'strategy-disabled', atMs: deps.clock.nowMs(), mode: deps.mode, instance: instance.instance, strategy: instance.strategy.name, slotTimeMs, error: message }));
    return 'disabled';
  }
  return { view, budgetLimit, intents };
}

/** Refusals and notes with every code of `codes` masked in their message and data. */
function withCodesMasked(intents: readonly Intent[], codes: readonly string[]): readonly Intent[] {
  if (codes.length === 0) return intents;
  return intents.map((intent) => {
    if (intent.kind !== 'refusal' && intent.kind !== 'note') return intent;
    const data = intent.data === undefined ? {} : { data: Object.fromEntries(Object.entries(intent.data).map(([key, value]) => [key, maskCodesIn(value, codes)])) };
    return { ...intent, message: maskCodesIn(intent.message, codes), ...data };
  });
}

/** The codes the view holds (none when it cannot say). */
function codesOf(view: SlotView): string[] {
  try {
    return view.codes().map((record) => record.code);
  } catch {
    return [];
  }
}

/** Guards, journal, then each money intent in order: the slot's part that runs in its account's turn. */
async function planAndSend(slot: SlotContext, decided: Decided, turn: AccountTurn): Promise<SlotOutcome> {
  const { deps, instance, key, runId, log } = slot;
  const started = slot.startedMs;
  const { slotTimeMs } = key;
  const { view, budgetLimit, intents } = decided;
  const account = accountOfInstance(deps, instance.instance);
  const planned = plan(intents, view, instance, { killed: deps.killSwitch.active(account), budgetLimit }, deps.accounts === undefined ? null : account);
  if (!(await deps.journal.claimSlot({ ...key, runId, intents: planned }))) {
    deps.logger.debug(log(), 'slot claimed elsewhere meanwhile; not running it');
    return 'already';
  }

  const records = await deps.journal.listIntents({ instance: instance.instance, slotTimeMs });
  records.sort((a, b) => a.index - b.index);
  // A refused or failed money intent stops the rest of its group (planMoney groups them).
  const stoppedBy = new Map<string, string>();
  /** Intents already ended ahead of their turn (a funded buy refused before its transfer was sent). */
  const ended = new Set<string>();
  let failed = false;
  try {
    for (const record of records) {
      if (ended.has(record.intentId)) continue;
      const intent = record.intent;
      if (intent.kind === 'note') {
        const fields = { ...log(), event: 'note', ...(intent.data ?? {}) };
        if (intent.level === 'warn') deps.logger.warn(fields, intent.message);
        else deps.logger.info(fields, intent.message);
        continue;
      }
      if (intent.kind === 'refusal') {
        // A strategy that refuses for its market (not listed, not trading) reads it again at the next slot too.
        if (MARKET_CLOSED.has(intent.reason)) slot.books.markets.forget();
        deps.metrics.refusal(instance.instance, intent.reason);
        deps.logger.info({ ...log(), event: 'refusal', reason: intent.reason, ...(intent.data ?? {}) }, `refused by the strategy: ${intent.message}`);
        continue;
      }
      if (!isMoneyIntent(intent)) continue;
      const group = groupOf(intent);
      if (record.status === 'refused') {
        const reason = record.error?.code ?? 'refused';
        // A market the rules say is gone or closed may be back at the next slot: read them again then, not ten minutes on.
        if (intent.kind === 'buy-stock-market' && MARKET_CLOSED.has(reason)) slot.books.markets.forget();
        deps.metrics.refusal(instance.instance, reason);
        deps.logger.warn({ ...log(), event: 'refusal', reason, intent: intent.kind, index: record.index }, `refused: ${record.error?.message ?? reason}`);
        // The intent that refused its group is told, and named as what stopped it (the slot's
        // reason); the others of the group only follow it, refused with it when it was planned.
        if (reason !== 'group-refused') {
          tellRefused(deps, record, record.error ?? { code: reason, message: reason });
          if (!stoppedBy.has(group)) stoppedBy.set(group, `intent #${record.index} (${intent.kind}) was refused (${reason})`);
        }
        continue;
      }
      const stopped = stoppedBy.get(group);
      if (stopped !== undefined) {
        await deps.journal.updateIntent(record.intentId, { status: 'refused', error: { code: ENGINE_REFUSED.earlierIntentStopped, message: `not sent: ${stopped}` } });
        // A buy whose budget was reserved ahead of its transfer spent nothing.
        await releaseReservation(deps, record);
        continue;
      }
      if (intent.kind === 'transfer' || intent.kind === 'flex-withdraw') {
        const funded = records.filter((other) => other.index > record.index && other.status === 'pending' && isMoneyIntent(other.intent) && groupOf(other.intent) === group);
        const refused = await reserveFundedBuys(deps, instance, view, funded);
        if (refused !== null) {
          ended.add(refused.record.intentId);
          const why = `intent #${refused.record.index} (buy-stock-market) it funds was refused (${refused.error.code}: ${refused.error.message})`;
          await deps.journal.updateIntent(record.intentId, { status: 'refused', error: { code: 'group-refused', message: `not sent: ${why}` } });
          stoppedBy.set(group, `intent #${refused.record.index} (buy-stock-market) was refused`);
          continue;
        }
      }
      // Reads taken before this by the account's other slots no longer show its balances.
      turn.moved();
      const outcome: MoneyOutcome = await executeMoneyIntent(deps, instance, view, record);
      // Nor do reads taken while it was in flight: they saw the exchange's balance already spent
      // and, its answer not yet journalled, held its cost back again (a transfer sized so moved
      // twice the shortfall). Such a slot reads again in its turn.
      turn.moved();
      if (outcome.status !== 'done') {
        stoppedBy.set(group, `intent #${record.index} (${intent.kind}) ended ${outcome.status}: ${outcome.error.message}`);
        if (outcome.status !== 'refused') failed = true;
        if (intent.kind === 'buy-stock-market' && refusedByExchangeRules(outcome.error.code)) slot.books.markets.forget();
      }
    }
  } catch (error) {
    // Trading stopped mid-slot (auth, nonce), a journal write failed, or a bug: what was not sent
    // yet never will be. A journal that failed the slot may fail this too: the slot's own error is
    // the one thrown either way (it says what happened; the cleanup's says only that the journal
    // is still down), and reconciliation closes what is left at the next slot or start.
    try {
      for (const record of await deps.journal.listIntents({ instance: instance.instance, slotTimeMs })) {
        if (record.status === 'pending') {
          await deps.journal.updateIntent(record.intentId, { status: 'failed', error: { code: 'E_STOPPED', message: `not sent: ${errorMessage(error)}` } });
          // A buy stopped between its reservation and its send spent nothing: its budget is given back.
          await releaseReservation(deps, record);
        }
      }
      await deps.journal.finishSlot({ ...key, status: 'failed', reason: errorMessage(error) });
    } catch (cleanup) {
      deps.logger.warn({ ...log(), event: 'slot-close-failed', code: errorCode(cleanup), error: errorMessage(cleanup) }, `could not journal the slot as failed (${errorMessage(cleanup)}); reconciliation closes it later`);
    }
    deps.metrics.slotFinished(instance.instance, 'failed', deps.clock.nowMs() - started, slotTimeMs);
    throw error;
  }

  const status = failed ? 'failed' : 'done';
  const reason = [...stoppedBy.values()].join('; ');
  await deps.journal.finishSlot({ ...key, status, ...(reason === '' ? {} : { reason }) });
  deps.metrics.slotFinished(instance.instance, status, deps.clock.nowMs() - started, slotTimeMs);
  if (deps.logger.isLevelEnabled('info')) deps.logger.info({ ...log(), event: 'slot-finished', status, intents: records.length }, `slot ${status}`);
  return status;
}

/**
 * The buys of the instance's account sent and not known to have happened or not (their answers
 * lost, their orders not found yet): the snapshot holds their cost back from the trade balance
 * until reconciliation finds them or their settle window ends, as the budget holds their estimate.
 */
async function buysInDoubt(deps: EngineDeps, instance: string): Promise<HeldBuy[]> {
  const account = accountOfInstance(deps, instance);
  const held: HeldBuy[] = [];
  for (const record of await deps.journal.unresolvedIntents()) {
    const intent = record.intent;
    if (intent.kind !== 'buy-stock-market' || record.status === 'pending' || (record.account ?? DEFAULT_ACCOUNT) !== account) continue;
    held.push({ market: intent.market, amount: intent.amount });
  }
  return held;
}

/**
 * Journal form of the strategy's answer: the guards' refusals are decided now for every money
 * intent, before anything is sent, so the journal shows each refusal beside the intents and
 * which refusal stopped which (planMoney: all or nothing per group).
 */
function plan(intents: readonly Intent[], view: SlotView, instance: InstanceRuntime, slot: { readonly killed: string | null; readonly budgetLimit: SpendLeft | null }, account: string | null): NewIntent[] {
  const refusals = planMoney(intents, view, { maxOrderQuote: instance.maxOrderQuote, markets: declaredMarkets(instance), budgetAsset: instance.budgetAsset, ...slot });
  return intents.map((intent, index) => {
    const base = {
      index,
      intent,
      ...(instance.clientOrderIdPrefix === null ? {} : { clientOrderIdPrefix: instance.clientOrderIdPrefix }),
      ...(account === null ? {} : { account }),
    };
    const refusal = refusals[index] ?? null;
    return refusal === null ? base : { ...base, refusal };
  });
}

const declared = new WeakMap<InstanceRuntime, Readonly<Record<string, string>> | null>();

/** The markets the instance declares (Strategy.markets), asked of its strategy once. */
function declaredMarkets(instance: InstanceRuntime): Readonly<Record<string, string>> | null {
  let markets = declared.get(instance);
  if (markets === undefined) {
    markets = instance.strategy.markets?.(instance.params) ?? null;
    declared.set(instance, markets);
  }
  return markets;
}

type SlotLogFields = { readonly instance: string; readonly slot: string };

/** `{ instance, slot }` for a slot's log lines. */
function slotLogFields(instance: string, slotTimeMs: number): SlotLogFields {
  return { instance, slot: new Date(slotTimeMs).toISOString() };
}

/**
 * Remaining budget as the journal counts it, at the slot's time, for the strategy's early check:
 * the instance's own, or its account's cap when that leaves less.
 */
async function budgetView(deps: EngineDeps, instance: InstanceRuntime, slotTimeMs: number): Promise<{ view: BudgetView; left: SpendLeft | null }> {
  const account = accountOfInstance(deps, instance.instance);
  const left = await spendLeft(deps.journal, instance, account, deps.accounts?.capOf(account) ?? null, slotTimeMs);
  const remaining = left?.amount ?? null;
  const max = instance.maxOrderQuote;
  return { view: { remainingQuote: () => remaining, maxOrderQuote: () => max }, left };
}

/**
 * Whether an intent's refusal is the exchange refusing what the rules stacker read allowed (its
 * validation, or a business rule other than the balance): the rules may have changed under it.
 */
export function refusedByExchangeRules(code: string): boolean {
  return code === 'E_EXCHANGE_VALIDATION' || code === 'E_EXCHANGE_REFUSED';
}

/** Refusals of a buy because the rules read say its market is not listed, or not trading. */
const MARKET_CLOSED: ReadonlySet<string> = new Set(['unknown-market', 'trading-disabled']);

/**
 * Whether a buy's refusal is its market's, not its wallet's or budget's: the exchange refusing it
 * against the rules read, the market gone or closed, or the amount below the market's minimum.
 * Slot after slot, the instance buys nothing while its slots end done, until the market or a
 * setting changes (DaemonHealth).
 */
export function refusedForItsMarket(code: string): boolean {
  return refusedByExchangeRules(code) || MARKET_CLOSED.has(code) || code === 'below-min-total' || code === 'below-min-amount';
}
