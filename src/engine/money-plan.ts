import type { FlexInvestment } from '../domain/account.ts';
import { type Intent, type MoneyIntent, isMoneyIntent } from '../domain/intent.ts';
import { takerFee } from '../domain/market.ts';
import { type Decimal, ZERO, formatDecimal } from '../domain/money.ts';
import type { IntentError } from '../store/journal.ts';
import type { SlotView } from './contract.ts';
import { type StaticLimits, quoteAt, staticGuard } from './guards.ts';
import type { SpendLeft } from './runtime.ts';

/** The refusal of a buy above the smallest budget limit itself: no period lets it through until a setting changes (/healthz names it). */
export const BUDGET_TOO_SMALL = 'budget-too-small';

/**
 * All or nothing, before anything is sent: every guard runs on every money intent of the slot
 * (kill switch, market rules, MAX_ORDER_QUOTE, the budget left, and the balances as the intents
 * before it leave them), and a refused intent refuses every other money intent of its group.
 * A transfer that was to fund a refused buy is therefore never sent.
 *
 * Groups: a money intent's `group`, else the slot's one default group, so intents are
 * all-or-nothing unless the strategy says they are independent (a sweep of several flex plans
 * gives each withdrawal its own group).
 *
 * What the view cannot tell (balances or flex a strategy did not read, a price it did not read)
 * is left to the exchange; these checks only ever refuse earlier, never allow more.
 */
export interface SlotPlanLimits extends StaticLimits {
  /** The kill switch's reason when it is on. */
  readonly killed: string | null;
  /** Which limit the view's budget left is, and the smallest limit configured (SpendLeft), for the refusal to name; null when not known. */
  readonly budgetLimit?: Pick<SpendLeft, 'limitedBy' | 'ceiling' | 'ceilingSetting'> | null;
}

/** One entry per intent, in order: the refusal of a money intent, or null (sent, or not money). */
export function planMoney(intents: readonly Intent[], view: SlotView, limits: SlotPlanLimits): Array<IntentError | null> {
  const own = ownRefusals(intents, view, limits);
  const refusedGroups = new Map<string, { index: number; error: IntentError }>();
  intents.forEach((intent, index) => {
    const error = own[index];
    if (error === null || error === undefined || !isMoneyIntent(intent)) return;
    const group = groupOf(intent);
    if (!refusedGroups.has(group)) refusedGroups.set(group, { index, error });
  });
  return intents.map((intent, index) => {
    if (!isMoneyIntent(intent)) return null;
    const mine = own[index] ?? null;
    if (mine !== null) return mine;
    const cause = refusedGroups.get(groupOf(intent));
    if (cause === undefined) return null;
    const kind = (intents[cause.index] as Intent).kind;
    return { code: 'group-refused', message: `not sent: intent #${cause.index} (${kind}) of the same group was refused (${cause.error.code}: ${cause.error.message})` };
  });
}

export function groupOf(intent: MoneyIntent): string {
  return intent.group ?? '';
}

/** Each money intent's own refusal, the balances carried from one intent to the next. */
function ownRefusals(intents: readonly Intent[], view: SlotView, limits: SlotPlanLimits): Array<IntentError | null> {
  const wallet = new Wallet(view);
  let budgetLeft = read(() => view.budget.remainingQuote()) ?? null;
  return intents.map((intent) => {
    if (!isMoneyIntent(intent)) return null;
    if (limits.killed !== null) return { code: 'kill-switch', message: `not sent: ${limits.killed}` };
    switch (intent.kind) {
      case 'buy-stock-market': {
        const refused = staticGuard(intent, view, limits);
        if (refused !== null) return refused;
        const rules = read(() => view.market(intent.market));
        const price = read(() => view.price(intent.market));
        if (rules === undefined || price === undefined) return null;
        const estimate = quoteAt(intent.amount, price);
        if (budgetLeft !== null) {
          if (estimate.gt(budgetLeft)) {
            const limit = limits.budgetLimit ?? null;
            const by = limit === null ? '' : ` (what ${limit.limitedBy} leaves)`;
            // Not a budget used up for now but one that never lets the buy through: say what to change.
            const never = limit !== null && estimate.gt(limit.ceiling) ? `; that is above ${formatDecimal(limit.ceiling)} ${rules.quote}, the smallest limit configured (${limit.ceilingSetting}), so no period lets it through: raise it or buy less` : '';
            // A budget used up for now waits for its next period; one below a single buy is a setting to change, and reported as one.
            return { code: never === '' ? 'over-budget' : BUDGET_TOO_SMALL, message: `estimated value ${formatDecimal(estimate)} ${rules.quote} is above the budget left for this slot, ${formatDecimal(budgetLeft)} ${rules.quote}${by}${never}` };
          }
          budgetLeft = budgetLeft.sub(estimate);
        }
        const cost = estimate.add(takerFee(rules, estimate));
        return wallet.spend('spot', rules.quote, cost, () => `the buy needs about ${formatDecimal(cost)} ${rules.quote} (total + taker fee)`);
      }
      case 'transfer': {
        const refused = wallet.spend('main', intent.ticker, intent.amount, () => `the transfer moves ${formatDecimal(intent.amount)} ${intent.ticker}`);
        if (refused === null) wallet.add('spot', intent.ticker, intent.amount);
        return refused;
      }
      case 'flex-withdraw': {
        const investments = read(() => view.flexInvestments());
        if (investments === undefined) return null;
        const held = invested(investments, intent.plan);
        if (held === null) return { code: 'no-active-investment', message: `no active flex investment in plan ${intent.plan}` };
        if (intent.amount.gt(held.amount)) {
          return { code: 'amount-exceeds-investment', message: `withdrawing ${formatDecimal(intent.amount)} ${held.ticker} from plan ${intent.plan}, which holds ${formatDecimal(held.amount)}` };
        }
        const left = held.amount.sub(intent.amount);
        const minimum = view.flexPlan(intent.plan)?.minInvestment;
        if (minimum !== undefined && left.gt(0) && left.lt(minimum)) {
          return {
            code: 'min-investment-left',
            message: `withdrawing ${formatDecimal(intent.amount)} ${held.ticker} from plan ${intent.plan} leaves ${formatDecimal(left)}, less than its minimum investment ${formatDecimal(minimum)}: the exchange refuses that; withdraw all of it or leave at least the minimum`,
          };
        }
        wallet.add('main', held.ticker, intent.amount);
        return null;
      }
    }
  });
}

/** The balances the view shows, as the slot's intents change them; unknown when not read. */
class Wallet {
  readonly #view: SlotView;
  readonly #changes = new Map<string, Decimal>();
  constructor(view: SlotView) {
    this.#view = view;
  }

  add(account: 'main' | 'spot', ticker: string, amount: Decimal): void {
    const key = `${account} ${ticker}`;
    this.#changes.set(key, (this.#changes.get(key) ?? ZERO).add(amount));
  }

  /** Refuses when the balance is known and short; otherwise takes the amount. */
  /** `what` says what needed the money; written only into a refusal. */
  spend(account: 'main' | 'spot', ticker: string, amount: Decimal, what: () => string): IntentError | null {
    const shown = read(() => (account === 'main' ? this.#view.mainBalance(ticker) : this.#view.tradeBalance(ticker).available));
    if (shown === undefined) return null;
    const available = shown.add(this.#changes.get(`${account} ${ticker}`) ?? ZERO);
    if (available.lt(amount)) {
      const where = account === 'main' ? 'main' : 'trade';
      return { code: 'insufficient-funds', message: `${what()}; the ${where} balance has ${formatDecimal(available)} ${ticker}${this.#changes.has(`${account} ${ticker}`) ? ' after the intents before it' : ''}` };
    }
    this.add(account, ticker, amount.neg());
    return null;
  }
}

function invested(investments: readonly FlexInvestment[], plan: string): { amount: Decimal; ticker: string } | null {
  const active = investments.filter((i) => i.active && i.planId.toLowerCase() === plan.toLowerCase());
  const first = active[0];
  if (first === undefined) return null;
  return { amount: active.reduce((sum, i) => sum.add(i.invested), ZERO), ticker: first.ticker };
}

/** A part the strategy did not read throws in the view: here that means "not known". */
function read<T>(get: () => T): T | undefined {
  try {
    return get();
  } catch {
    return undefined;
  }
}
