import type { FlexWithdrawIntent, Intent, TransferIntent } from '../domain/intent.ts';
import { type BuyStockMarketIntent, type MoneyIntent } from '../domain/intent.ts';
import { type Decimal, ZERO, formatDecimal } from '../domain/money.ts';
import { type Order, isTerminalStatus } from '../domain/order.ts';
import { ExchangeError, outcomeUnknown } from '../domain/errors.ts';
import { Turns } from '../domain/turns.ts';
import type { IntentError, IntentRecord } from '../store/journal.ts';
import type { SlotView } from './contract.ts';
import { FatalEngineError, classifyError, errorCode, errorMessage } from './error-policy.ts';
import { finishConfirmed } from './confirmed-moves.ts';
import { estimatedQuote } from './guards.ts';
import { tellRefused, tellUnknown } from './intent-events.ts';
import { ENGINE_REFUSED, EXCHANGE_REFUSED } from './observer.ts';
import { recordOrder } from './order-log.ts';
import {
  DEFAULT_ACCOUNT,
  type EngineDeps,
  type InstanceLimits,
  accountBudgetScope,
  accountPrefix,
  accountReservationId,
  countsEveryBuy,
  mayReserveOnAccount,
  hasBudget,
} from './runtime.ts';

/** How one money intent ended in this slot. Anything but `done` stops the money intents after it. */
export type MoneyOutcome =
  | { readonly status: 'done' }
  | { readonly status: 'refused' | 'failed' | 'unknown'; readonly error: IntentError };

/**
 * Send one journalled money intent, keeping the money rule (docs/exactly-once.md): the intent is
 * already in the journal as `pending`; the journal is checked to still be the file a restart
 * would read, the intent is marked `sent`, and only then does the request leave. It is sent
 * once: the exchange does not deduplicate market orders by clientOrderId, and an empty lookup
 * seconds after a lost answer is no proof that the order was not taken (its history lags). A
 * lost answer is looked up a few times in the slot, then over the instance's settle window by
 * reconciliation. Throws FatalEngineError (auth, nonce, a lost journal) after journalling the
 * outcome; every other failure is an outcome.
 */
export async function executeMoneyIntent(deps: EngineDeps, limits: InstanceLimits, view: SlotView, record: IntentRecord): Promise<MoneyOutcome> {
  const intent = record.intent as MoneyIntent;
  // The gauge is the switch of every account; an account's own shows on its refusals and in /healthz.
  deps.metrics.killSwitch(deps.killSwitch.active() !== null);
  const killed = deps.killSwitch.active(record.account ?? DEFAULT_ACCOUNT);
  if (killed !== null) {
    return refuse(deps, record, { code: 'kill-switch', message: `not sent: ${killed}` });
  }
  switch (intent.kind) {
    case 'buy-stock-market':
      return executeBuy(deps, limits, view, record, intent);
    case 'transfer':
      return executeTransfer(deps, record, intent);
    case 'flex-withdraw':
      return executeFlexWithdraw(deps, record, intent);
  }
}

/**
 * The budgets of the buys a transfer or withdrawal funds, reserved before it is sent: a buy that
 * its budget or its account's cap refuses is refused now, and the money is not moved for it.
 * Several instances of one account in the same second each passed the plan against the same cap
 * left, moved money, and then had their buys refused by the cap. The reservations are the buys'
 * own (reserving again when the buy is sent finds them). The first refusal, with its buy, or null.
 */
export async function reserveFundedBuys(deps: EngineDeps, limits: InstanceLimits, view: SlotView, buys: readonly IntentRecord[]): Promise<{ readonly record: IntentRecord; readonly error: IntentError } | null> {
  for (const buy of buys) {
    if (buy.intent.kind !== 'buy-stock-market') continue;
    const refused = await reserveBudget(deps, limits, view, buy, buy.intent);
    if (refused === null) continue;
    await refuse(deps, buy, refused);
    return { record: buy, error: refused };
  }
  return null;
}

/** The last step before a request leaves: the journal must still reach its file, and says `sent`. */
async function markSent(deps: EngineDeps, record: IntentRecord): Promise<void> {
  await deps.journal.assertIntact();
  await deps.journal.updateIntent(record.intentId, { status: 'sent' });
}

// ---- buy ----------------------------------------------------------------------------------

async function executeBuy(deps: EngineDeps, limits: InstanceLimits, view: SlotView, record: IntentRecord, intent: BuyStockMarketIntent): Promise<MoneyOutcome> {
  const clientOrderId = record.clientOrderId;
  if (clientOrderId === null) throw new Error(`intent ${record.intentId} is a buy without a clientOrderId`);
  const refused = await reserveBudget(deps, limits, view, record, intent);
  if (refused !== null) return refuse(deps, record, refused);
  const request = { market: intent.market, baseAmount: intent.amount, clientOrderId, stp: intent.stp ?? 'no' } as const;
  await markSent(deps, record);
  if (deps.logger.isLevelEnabled('info')) {
    deps.logger.info(
      { event: 'order-send', instance: record.instance, clientOrderId, market: intent.market, amount: formatDecimal(intent.amount), stp: request.stp },
      `buying ${formatDecimal(intent.amount)} ${intent.market} at market (${clientOrderId})`,
    );
  }
  let order: Order;
  try {
    order = await deps.exchange.buyStockMarket(request);
  } catch (error) {
    if (!outcomeUnknown(error)) return failSend(deps, record, error);
    deps.logger.warn(
      { event: 'order-answer-lost', instance: record.instance, clientOrderId, code: errorCode(error), error: errorMessage(error) },
      `the answer to ${clientOrderId} was lost; looking the order up (it is never sent again)`,
    );
    const found = await lookUpOrder(deps, intent.market, clientOrderId);
    if (found.kind !== 'found') {
      const window = Math.round(limits.orderSettleWindowMs / 1000);
      const why = found.kind === 'none' ? 'not in the order history yet' : `lookup failed: ${found.message}`;
      const lost: IntentError = {
        code: errorCode(error),
        // A stop (run --once, a signal) before the window ends leaves the lookups to the next start: said, not promised as done.
        message: `answer lost (${errorMessage(error)}); ${why}; to be looked up again for ${window} s from the send (by the next start if stacker stops first), never sent again; its budget stays counted meanwhile`,
      };
      await deps.journal.updateIntent(record.intentId, { status: 'unknown', error: lost });
      tellUnknown(deps, record, lost);
      return { status: 'unknown', error: lost };
    }
    order = found.order;
  }
  deps.metrics.orderPlaced(record.instance, order.createdAtSec * 1000);
  try {
    await recordOrder(deps, record.instance, order, record.intentId);
    await deps.journal.updateIntent(record.intentId, { status: 'done', result: orderResult(order) });
  } catch (error) {
    // The order exists; only the journal's record of it is missing. Said here, with the order,
    // since what fails next (the slot's own bookkeeping on the same journal) names neither.
    deps.logger.error(
      { event: 'order-record-failed', instance: record.instance, clientOrderId, orderId: order.orderId, status: order.status, code: errorCode(error), error: errorMessage(error) },
      `order ${order.orderId} (${clientOrderId}) was placed at the exchange (${order.status}), but journalling it failed: ${errorMessage(error)}; ` +
        'its intent stays sent, so reconciliation records the order from the exchange (it is never sent again) and its budget stays counted meanwhile',
    );
    throw error;
  }
  if (!isTerminalStatus(order.status)) {
    deps.logger.debug({ instance: record.instance, orderId: order.orderId }, `order ${clientOrderId} is ${order.status}; the tracker follows it`);
  }
  return { status: 'done' };
}

type Lookup = { readonly kind: 'found'; readonly order: Order } | { readonly kind: 'none' } | { readonly kind: 'error'; readonly message: string };

/** "None" only when every lookup, spaced out, answered none: an exchange may index a new order late. */
export async function lookUpOrder(deps: EngineDeps, market: string, clientOrderId: string): Promise<Lookup> {
  for (const delayMs of deps.timing.lookupDelaysMs) {
    if (delayMs > 0) await deps.sleep(delayMs);
    try {
      const order = await deps.exchange.findOrder({ market, clientOrderId });
      if (order !== null) return { kind: 'found', order };
    } catch (error) {
      if (classifyError(error) === 'fatal') throw new FatalEngineError(`${accountPrefix(deps)}looking up ${clientOrderId}: ${errorMessage(error)}`, error);
      return { kind: 'error', message: errorMessage(error) };
    }
  }
  return { kind: 'none' };
}

export function orderResult(order: Order): Record<string, string> {
  return { orderId: order.orderId, status: order.status };
}

/**
 * Reserve what the buy may spend, before it is sent: against the instance's budgets, then
 * against its account's cap (which counts every instance of the account). Either refusing
 * refuses the buy and gives the other back.
 */
async function reserveBudget(deps: EngineDeps, limits: InstanceLimits, view: SlotView, record: IntentRecord, intent: BuyStockMarketIntent): Promise<IntentError | null> {
  const account = record.account ?? DEFAULT_ACCOUNT;
  const cap = deps.accounts?.capOf(account) ?? null;
  const limited = hasBudget(limits) || cap !== null;
  // A backtest counts only under a limit (countsEveryBuy): an account reservation under no cap
  // would never be settled there, and would keep its slot from being retired.
  const countAll = countsEveryBuy(deps);
  const hold = deps.budgetHold?.() ?? null;
  if (hold !== null && hold.everyBuy) {
    return {
      code: ENGINE_REFUSED.journalBehind,
      message: `not sent: ${hold.reason} (${new Date(hold.sinceMs).toISOString()}); this slot may be bought already: buys resume at ${new Date(hold.untilMs).toISOString()}, once the history has had its settle window to show every order of the last moments (and another stacker's would stop this one)`,
    };
  }
  if (!limited && !countAll) return null;
  if (hold !== null && limited) {
    return {
      code: ENGINE_REFUSED.journalBehind,
      message:
        `not sent: ${hold.reason} (${new Date(hold.sinceMs).toISOString()}); an order of its last moments may not show in the exchange's history yet, ` +
        `and counted without it this budget would be spent again: buys counted against a budget resume at ${new Date(hold.untilMs).toISOString()}, once the history has had its settle window`,
    };
  }
  const estimate = estimatedQuote(intent, view);
  if (estimate === null) return limited ? { code: 'no-price', message: `no price for ${intent.market}: the budget cannot be counted` } : null;
  if (hasBudget(limits) || countAll) {
    const refused = await reserveInstanceBudget(deps, limits, view, record, intent, estimate);
    if (refused !== null) return refused;
  }
  if (cap === null && !countAll) return null;
  const decision = await deps.journal.reserveBudget({
    reservationId: accountReservationId(record.intentId),
    instance: accountBudgetScope(account),
    asset: cap?.asset ?? quoteOf(intent, view),
    timeZone: cap?.timeZone ?? limits.timezone,
    atMs: record.slotTimeMs,
    amountQuote: estimate,
    limits: cap?.limits ?? {},
  });
  if (decision.ok || cap === null) return null;
  await releaseReservation(deps, record);
  const excess = decision.exceeded.map(
    (e) => `${e.period} (${cap.timeZone}): ${formatDecimal(e.spentQuote)} spent by its instances + ${formatDecimal(e.requestedQuote)} > ${formatDecimal(e.limitQuote)} ${cap.asset}`,
  );
  return { code: 'over-budget', message: `estimated value ${formatDecimal(estimate)} ${cap.asset} is over the cap of account ${account} (${excess.join('; ')})` };
}

/** The quote asset a buy spends: its market's, as the rules name it. */
function quoteOf(intent: BuyStockMarketIntent, view: SlotView): string {
  return view.market(intent.market)?.quote ?? intent.market.split('_')[1] ?? intent.market;
}

async function reserveInstanceBudget(deps: EngineDeps, limits: InstanceLimits, view: SlotView, record: IntentRecord, intent: BuyStockMarketIntent, estimate: Decimal): Promise<IntentError | null> {
  const asset = quoteOf(intent, view);
  const decision = await deps.journal.reserveBudget({
    reservationId: record.intentId,
    instance: record.instance,
    asset,
    timeZone: limits.timezone,
    atMs: record.slotTimeMs,
    amountQuote: estimate,
    limits: limits.budgets,
  });
  if (decision.ok) return null;
  const excess = decision.exceeded.map(
    (e) => `${e.period}: ${formatDecimal(e.spentQuote)} spent + ${formatDecimal(e.requestedQuote)} > ${formatDecimal(e.limitQuote)} ${asset}`,
  );
  return { code: 'over-budget', message: `estimated value ${formatDecimal(estimate)} ${asset} is over budget (${excess.join('; ')})` };
}

// ---- transfer -----------------------------------------------------------------------------

/**
 * Transfers carry no id the exchange could be asked about, so a transfer is never sent twice:
 * a lost answer is resolved by watching the trade balance for the amount, and stays `unknown`
 * (and stops the buy it was funding) when the balance does not show it. Moving too little
 * costs one slot; moving twice would put money where the user did not ask.
 */
function executeTransfer(deps: EngineDeps, record: IntentRecord, intent: TransferIntent): Promise<MoneyOutcome> {
  return guardedMove(
    deps,
    record,
    {
      key: `transfer ${intent.ticker}`,
      same: (other) => other.kind === 'transfer' && other.ticker === intent.ticker,
      code: ENGINE_REFUSED.transferUnresolved,
      what: `the transfer of ${intent.ticker}`,
      risk: 'A second transfer now could move the money twice',
    },
    () => transferNow(deps, record, intent),
  );
}

async function transferNow(deps: EngineDeps, record: IntentRecord, intent: TransferIntent): Promise<MoneyOutcome> {
  const before = await tradeAvailable(deps, intent.ticker);
  const mainBefore = await mainAvailable(deps, intent.ticker);
  // Its own record first, then the intent's `sent` mark, the last write before the request: a
  // record that fails after the mark left a transfer never sent journalled sent, then unknown
  // ("may or may not have happened") until a person resolved it.
  await deps.journal.recordTransfer({ intentId: record.intentId, ticker: intent.ticker, amount: intent.amount, from: 'main', to: 'spot', status: 'sent' });
  await markSent(deps, record);
  deps.logger.info(
    { event: 'transfer-send', instance: record.instance, ticker: intent.ticker, amount: formatDecimal(intent.amount) },
    `moving ${formatDecimal(intent.amount)} ${intent.ticker} from main to spot`,
  );
  try {
    await deps.exchange.transferToSpot({ ticker: intent.ticker, amount: intent.amount });
  } catch (error) {
    if (!outcomeUnknown(error)) {
      await deps.journal.recordTransfer({ intentId: record.intentId, ticker: intent.ticker, amount: intent.amount, from: 'main', to: 'spot', status: 'failed' });
      return failSend(deps, record, error);
    }
    // Only this transfer's own mark counts: the main balance (which trading does not touch) down
    // by exactly the amount, and the trade balance up by at least it. A move of other money in
    // the same seconds (a transfer by hand, a deposit, another client) was taken for this one
    // when the trade balance rising was enough, and a buy spent money moved for something else.
    const arrived =
      before !== null &&
      mainBefore !== null &&
      (await settlesWithin(
        deps,
        async () => {
          const [trade, main] = [await tradeAvailable(deps, intent.ticker), await mainAvailable(deps, intent.ticker)];
          return trade === null || main === null ? null : { trade, main };
        },
        (now) => now.trade.gte(before.add(intent.amount)) && mainBefore.sub(now.main).eq(intent.amount),
      ));
    if (!arrived) {
      const lost: IntentError = {
        code: errorCode(error),
        message: `answer lost (${errorMessage(error)}); the balances do not show exactly this transfer (main down by ${formatDecimal(intent.amount)} ${intent.ticker}, spot up by it); not resent`,
      };
      await deps.journal.recordTransfer({ intentId: record.intentId, ticker: intent.ticker, amount: intent.amount, from: 'main', to: 'spot', status: 'unknown' });
      await deps.journal.updateIntent(record.intentId, { status: 'unknown', error: lost });
      tellUnknown(deps, record, lost);
      return { status: 'unknown', error: lost };
    }
    deps.logger.warn({ event: 'transfer-resolved', instance: record.instance, ticker: intent.ticker }, 'the transfer answer was lost, but the balances show it: main down by exactly its amount, spot up by it');
    await finishTransfer(deps, record, intent, 'balance');
    return { status: 'done' };
  }
  // The exchange books a transfer within seconds; the buy after it must not race it.
  if (before !== null) await waitForTradeBalance(deps, intent.ticker, before.add(intent.amount));
  await finishTransfer(deps, record, intent, 'answer');
  return { status: 'done' };
}

/** A move (transfer, flex withdrawal) as guardedMove queues and judges it. */
interface MoveGuard {
  /** What moves the same money: one at a time per account. */
  readonly key: string;
  readonly same: (intent: Intent) => boolean;
  readonly code: string;
  /** The refusal's words: what the earlier move was, what a second risks. */
  readonly what: string;
  readonly risk: string;
}

/** `send`, once the moves of the same money before it have their verdict, unless one of them is `unknown` (then refused). */
function guardedMove(deps: EngineDeps, record: IntentRecord, move: MoveGuard, send: () => Promise<MoneyOutcome>): Promise<MoneyOutcome> {
  return oneMoveAtATime(deps, move.key, async () => {
    const earlier = await unknownMove(deps, record, move.same);
    if (earlier === null) return send();
    const since = new Date(earlier.sentAtMs ?? earlier.createdAtMs).toISOString();
    return refuse(deps, record, {
      code: move.code,
      message: `not sent: ${move.what} journalled as ${earlier.intentId} (${earlier.instance}, sent ${since}) is unknown (${earlier.error?.message ?? 'its answer was lost'}). ${move.risk}; once you know what became of it, \`stacker journal resolve --intent ${earlier.intentId} --as done\` (or failed)`,
    });
  });
}

/**
 * Moves of the same money on one exchange account, one at a time. A transfer or withdrawal is
 * confirmed by its balance moving (there is no lookup by id), so two at once (two instances'
 * slots in the same second) could each take the other's arrival for its own: one sent into a
 * 503 was marked done because the other's money arrived. The second waits for the first's
 * verdict, and is refused if that verdict is `unknown`.
 */
const moving = new WeakMap<object, Turns>();

function oneMoveAtATime<T>(deps: EngineDeps, what: string, move: () => Promise<T>): Promise<T> {
  let turns = moving.get(deps.exchange);
  if (turns === undefined) {
    turns = new Turns();
    moving.set(deps.exchange, turns);
  }
  return turns.take(what, move);
}

/**
 * Another move of the same money on the same account whose fate is not known (`unknown`: its
 * answer lost, the balance not showing it): a transfer or a flex withdrawal, matched by `same`.
 * Neither has a lookup by id, and a balance that moves later cannot say which of two it was.
 * While one is unknown, no other is sent.
 */
async function unknownMove(deps: EngineDeps, record: IntentRecord, same: (intent: Intent) => boolean): Promise<IntentRecord | null> {
  const account = record.account ?? DEFAULT_ACCOUNT;
  const open = await deps.journal.unresolvedIntents();
  return (
    open.find(
      (other) =>
        other.intentId !== record.intentId &&
        same(other.intent) &&
        // `sent` is another slot's move in flight (its answer not in yet), or one a restart turns `unknown`.
        other.status === 'unknown' &&
        (other.account ?? DEFAULT_ACCOUNT) === account,
    ) ?? null
  );
}

/** A transfer the exchange confirmed (its answer, or its mark on the balances), journalled done: kept for the reconciler when the journal refuses (confirmed-moves.ts). */
function finishTransfer(deps: EngineDeps, record: IntentRecord, intent: TransferIntent, confirmedBy: string): Promise<void> {
  return finishConfirmed(deps, record.intentId, `the transfer of ${formatDecimal(intent.amount)} ${intent.ticker} from main to spot`, async () => {
    await deps.journal.recordTransfer({ intentId: record.intentId, ticker: intent.ticker, amount: intent.amount, from: 'main', to: 'spot', status: 'done' });
    await deps.journal.updateIntent(record.intentId, { status: 'done', result: { ticker: intent.ticker, amount: formatDecimal(intent.amount), confirmedBy } });
  });
}

/** A flex withdrawal the exchange confirmed, journalled done: kept for the reconciler when the journal refuses (confirmed-moves.ts). */
function finishWithdrawal(deps: EngineDeps, record: IntentRecord, intent: FlexWithdrawIntent, transactionId: string | null, result: Record<string, string>): Promise<void> {
  return finishConfirmed(deps, record.intentId, `the withdrawal of ${formatDecimal(intent.amount)} from flex plan ${intent.plan}`, async () => {
    await deps.journal.recordFlexOperation({ intentId: record.intentId, plan: intent.plan, amount: intent.amount, transactionId, status: 'done' });
    await deps.journal.updateIntent(record.intentId, { status: 'done', result });
  });
}

/** The main balance of `ticker`; null when it cannot be read. */
async function mainAvailable(deps: EngineDeps, ticker: string): Promise<Decimal | null> {
  try {
    return (await deps.exchange.mainBalances()).get(ticker) ?? ZERO;
  } catch {
    return null;
  }
}

async function tradeAvailable(deps: EngineDeps, ticker: string): Promise<Decimal | null> {
  try {
    return (await deps.exchange.tradeBalances()).get(ticker)?.available ?? ZERO;
  } catch {
    return null;
  }
}

function waitForTradeBalance(deps: EngineDeps, ticker: string, atLeast: Decimal): Promise<boolean> {
  return settlesWithin(deps, () => tradeAvailable(deps, ticker), (available) => available.gte(atLeast));
}

/**
 * Whether an amount the exchange books a moment after it answers (a transfer, a withdrawal:
 * the backend may take one after its gateway gave up) reaches what `holds` wants within the
 * settle time. A read that fails counts as not yet.
 */
async function settlesWithin<T>(deps: EngineDeps, read: () => Promise<T | null>, holds: (value: T) => boolean): Promise<boolean> {
  // Counted in polls, not read off the clock: a virtual clock does not move while we wait.
  const polls = deps.timing.pollMs <= 0 ? 0 : Math.ceil(deps.timing.transferSettleMs / deps.timing.pollMs);
  for (let poll = 0; ; poll += 1) {
    const now = await read();
    if (now !== null && holds(now)) return true;
    if (poll >= polls) return false;
    await deps.sleep(deps.timing.pollMs);
  }
}

// ---- flex withdraw ------------------------------------------------------------------------

/** Like a transfer, a withdraw has no lookup by id: a lost answer is resolved by the investment shrinking within the settle time. */
function executeFlexWithdraw(deps: EngineDeps, record: IntentRecord, intent: FlexWithdrawIntent): Promise<MoneyOutcome> {
  const plan = intent.plan.toLowerCase();
  return guardedMove(
    deps,
    record,
    {
      key: `flex-withdraw ${plan}`,
      same: (other) => other.kind === 'flex-withdraw' && other.plan.toLowerCase() === plan,
      code: ENGINE_REFUSED.withdrawUnresolved,
      what: `the withdrawal from flex plan ${intent.plan}`,
      risk: 'A second one now could withdraw twice',
    },
    () => withdrawNow(deps, record, intent),
  );
}

async function withdrawNow(deps: EngineDeps, record: IntentRecord, intent: FlexWithdrawIntent): Promise<MoneyOutcome> {
  const before = await invested(deps, intent.plan);
  // As a transfer's: its record, then the `sent` mark, the last write before the request.
  await deps.journal.recordFlexOperation({ intentId: record.intentId, plan: intent.plan, amount: intent.amount, transactionId: null, status: 'sent' });
  await markSent(deps, record);
  deps.logger.info(
    { event: 'flex-withdraw-send', instance: record.instance, plan: intent.plan, amount: formatDecimal(intent.amount) },
    `withdrawing ${formatDecimal(intent.amount)} from flex plan ${intent.plan}`,
  );
  let transactionId: string;
  try {
    ({ transactionId } = await deps.exchange.flexWithdraw({ plan: intent.plan, amount: intent.amount }));
  } catch (error) {
    if (!outcomeUnknown(error)) {
      await deps.journal.recordFlexOperation({ intentId: record.intentId, plan: intent.plan, amount: intent.amount, transactionId: null, status: 'failed' });
      const race = flexRaceRefusal(error);
      return race === null ? failSend(deps, record, error) : refuse(deps, record, race);
    }
    // Only this withdrawal's own mark counts: the investment down by exactly its amount. Down by
    // at least it took a withdrawal by hand in the same seconds for this one.
    const shrank = before !== null && (await settlesWithin(deps, () => invested(deps, intent.plan), (after) => before.sub(after).eq(intent.amount)));
    if (!shrank) {
      const lost: IntentError = { code: errorCode(error), message: `answer lost (${errorMessage(error)}); the investment does not show exactly this withdrawal (down by ${formatDecimal(intent.amount)}); not resent` };
      await deps.journal.recordFlexOperation({ intentId: record.intentId, plan: intent.plan, amount: intent.amount, transactionId: null, status: 'unknown' });
      await deps.journal.updateIntent(record.intentId, { status: 'unknown', error: lost });
      tellUnknown(deps, record, lost);
      return { status: 'unknown', error: lost };
    }
    deps.logger.warn({ event: 'withdraw-resolved', instance: record.instance, plan: intent.plan }, 'the flex withdrawal answer was lost, but the investment shows it: down by exactly its amount');
    await finishWithdrawal(deps, record, intent, null, { plan: intent.plan, amount: formatDecimal(intent.amount), confirmedBy: 'investment' });
    return { status: 'done' };
  }
  // Outside the try: a journal that refuses this record is not the exchange refusing the withdrawal,
  // which it confirmed (journalled failed so, a withdrawal that happened read as one that did not).
  await finishWithdrawal(deps, record, intent, transactionId, { transactionId, plan: intent.plan, amount: formatDecimal(intent.amount) });
  return { status: 'done' };
}

/** Invested amount of the plan's active investment; zero when none is active; null when it cannot be read. */
async function invested(deps: EngineDeps, plan: string): Promise<Decimal | null> {
  try {
    const all = await deps.exchange.flexInvestments();
    return all.filter((investment) => investment.planId === plan && investment.active).reduce((sum, investment) => sum.add(investment.invested), ZERO);
  } catch {
    return null;
  }
}

/**
 * The two answers a sweep races into (docs/exchange-api.md §5): the investment closed or shrank since the
 * snapshot. They are refusals with the strategy contract's reasons, not crashes.
 */
function flexRaceRefusal(error: unknown): IntentError | null {
  if (!(error instanceof ExchangeError)) return null;
  if (error.refusal === 'no-active-investment' || error.refusal === 'amount-exceeds-investment') return { code: error.refusal, message: error.message };
  return null;
}

// ---- outcomes -----------------------------------------------------------------------------

async function refuse(deps: EngineDeps, record: IntentRecord, error: IntentError): Promise<MoneyOutcome> {
  await deps.journal.updateIntent(record.intentId, { status: 'refused', error });
  await releaseReservation(deps, record);
  deps.metrics.refusal(record.instance, error.code);
  deps.logger.warn({ event: 'refusal', instance: record.instance, intent: record.intent.kind, reason: error.code, index: record.index }, `refused: ${error.message}`);
  tellRefused(deps, record, error);
  return { status: 'refused', error };
}

/**
 * The reason an exchange's refusal is journalled under. Its "Not enough balance." is the guard's
 * `insufficient-funds` by another hand (a fill dearer than the price the slot decided at, or a
 * balance spent elsewhere since the read): one cause, one reason, wherever refusals are counted
 * (the backtest's "ran out of money", `stacker report`, notifications). Its message still says
 * the exchange answered. Other refusals keep the exchange's class.
 */
function refusalCode(error: unknown): string {
  return error instanceof ExchangeError && error.refusal === 'insufficient-funds' ? 'insufficient-funds' : errorCode(error);
}

/**
 * The request provably did not take effect (the exchange refused it, or it never left): journal
 * why, give the budget back, and apply the error policy.
 */
async function failSend(deps: EngineDeps, record: IntentRecord, error: unknown): Promise<MoneyOutcome> {
  const kind = classifyError(error);
  const journalled: IntentError = { code: kind === 'refused' ? refusalCode(error) : errorCode(error), message: errorMessage(error) };
  if (kind === 'refused') {
    await deps.journal.updateIntent(record.intentId, { status: 'refused', error: journalled });
    await releaseReservation(deps, record);
    deps.metrics.refusal(record.instance, EXCHANGE_REFUSED);
    deps.logger.warn({ event: 'exchange-refused', instance: record.instance, intent: record.intent.kind, code: journalled.code, error: journalled.message }, `the exchange refused: ${journalled.message}`);
    tellRefused(deps, record, journalled);
    return { status: 'refused', error: journalled };
  }
  await deps.journal.updateIntent(record.intentId, { status: 'failed', error: journalled });
  await releaseReservation(deps, record);
  if (kind === 'fatal') throw new FatalEngineError(`${accountPrefix(deps)}the exchange refused the request: ${journalled.message}`, error);
  if (kind === 'bug') throw error;
  deps.logger.warn({ event: 'send-failed', instance: record.instance, intent: record.intent.kind, code: journalled.code, error: journalled.message }, `not sent, skipping this tick: ${journalled.message}`);
  return { status: 'failed', error: journalled };
}

/** Give back what a buy that was never placed reserved: its instance's budget and its account's cap. */
export async function releaseReservation(deps: EngineDeps, record: IntentRecord): Promise<void> {
  if (record.intent.kind !== 'buy-stock-market') return;
  const held = await deps.journal.heldBudgetReservations(record.instance);
  if (held.some((reservation) => reservation.reservationId === record.intentId)) await deps.journal.releaseBudget(record.intentId);
  if (!mayReserveOnAccount(deps)) return;
  const accountHeld = await deps.journal.heldBudgetReservations(accountBudgetScope(record.account ?? DEFAULT_ACCOUNT));
  const id = accountReservationId(record.intentId);
  if (accountHeld.some((reservation) => reservation.reservationId === id)) await deps.journal.releaseBudget(id);
}
