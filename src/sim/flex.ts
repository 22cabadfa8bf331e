import type { FlexInvestment, FlexPlan } from '../domain/account.ts';
import { type Decimal, ZERO, roundDown } from '../domain/money.ts';
import type { SimIds } from './ids.ts';
import type { Books } from './ledger.ts';
import { SimRejection } from './rejection.ts';

/** docs/exchange-api.md §5: flex business refusals are 422 code 2; validation is code 0. */
export const FLEX_CODES = { validation: 0, business: 2 } as const;

/**
 * Interest a plan pays: `aprPct` percent a year. Plans without one earn nothing (the sandbox's
 * demo plans: a served account whose balances drift on their own would confuse its users).
 */
export interface FlexInterest {
  readonly aprPct: Decimal;
}

/**
 * Daily interest is rounded DOWN to 8 decimals: the exchange's amounts (transfers, flex) carry
 * at most 8, and the sim has no per-asset precision table. Down, so a simulated account never
 * earns more than the exchange would pay.
 */
export const FLEX_INTEREST_PLACES = 8;
export const DAY_MS = 86_400_000;
/** 100 (percent) × 365 (days): the daily rate is APR / 36 500. */
const PERCENT_DAYS = 36_500;

export interface FlexInvestmentFilter {
  readonly ticker?: string;
  readonly planId?: string;
  readonly active?: boolean;
}

interface PlanState {
  readonly plan: FlexPlan;
  readonly interest: FlexInterest | null;
}

interface InvestmentState {
  readonly investmentId: string;
  readonly planId: string;
  readonly ticker: string;
  invested: Decimal;
  readonly autoReinvest: boolean;
  active: boolean;
  readonly createdAtSec: number;
  updatedAtSec: number;
  /** The UTC day (ms since epoch / DAY_MS) it was opened: interest starts at the next 00:00. */
  readonly openedDay: number;
}

/**
 * Flex (lending) plans and the account's investments in them. The money invested sits on the
 * `flex` ledger account; a withdrawal moves it back to `main`, as the exchange does.
 */
export class Flex {
  readonly #books: Books;
  readonly #ids: SimIds;
  readonly #plans: PlanState[] = [];
  readonly #investments: InvestmentState[] = [];
  /** Every UTC day boundary up to and including this day has been paid; null: nothing accrues yet. */
  #paidThroughDay: number | null = null;
  readonly #interestPaid = new Map<string, Decimal>();

  constructor(books: Books, ids: SimIds) {
    this.#books = books;
    this.#ids = ids;
  }

  addPlan(plan: FlexPlan, interest: FlexInterest | null = null): void {
    if (this.#plans.some((p) => p.plan.planId === plan.planId)) throw new Error(`flex plan ${plan.planId} exists already`);
    if (interest !== null && interest.aprPct.isNegative()) throw new RangeError(`flex plan ${plan.planId}: aprPct must not be negative`);
    this.#plans.push({ plan, interest });
  }

  /** Put an active investment in place (seeding); the money appears on the flex account. */
  seedInvestment(planId: string, amount: Decimal, nowMs: number, autoReinvest = false): FlexInvestment {
    const plan = this.#plan(planId);
    if (!plan) throw new Error(`unknown flex plan ${planId}`);
    if (this.#activeIn(planId)) throw new Error(`flex plan ${planId} already has an active investment`);
    const investmentId = this.#ids.next('investment');
    const state: InvestmentState = {
      investmentId,
      planId,
      ticker: plan.ticker,
      invested: amount,
      autoReinvest,
      active: true,
      createdAtSec: Math.floor(nowMs / 1000),
      updatedAtSec: Math.floor(nowMs / 1000),
      openedDay: Math.floor(nowMs / DAY_MS),
    };
    this.#books.post(nowMs, investmentId, [{ account: 'flex', asset: plan.ticker, delta: amount, reason: 'seed' }]);
    this.#investments.push(state);
    // Days before the first earning investment have nothing to pay; start counting from today.
    if (this.#paidThroughDay === null && this.#interestOf(planId) !== null) this.#paidThroughDay = state.openedDay;
    return publicView(state);
  }

  /**
   * Pay the interest of every UTC day boundary passed by `nowMs` (time only moves forward; the
   * sim calls this whenever it reads its clock). At each 00:00 UTC, every active investment in
   * a plan with an APR earns `invested × aprPct / 100 / 365`, rounded down to 8 decimals, on the
   * amount invested at that moment (simple daily interest; a part of a day counts from the
   * next 00:00, nothing is pro-rated). Where it goes follows the exchange's two kinds of daily
   * earning: with auto-reinvest it is added to the investment (so it compounds), without it is
   * paid to the main balance (so it does not). Each payment is a ledger entry (`flex-interest`)
   * stamped with the boundary's time, so the books stay exact and the ledger stays in time order.
   */
  accrueTo(nowMs: number): void {
    if (this.#paidThroughDay === null) return;
    const today = Math.floor(nowMs / DAY_MS);
    for (let day = this.#paidThroughDay + 1; day <= today; day += 1) {
      this.#payDay(day * DAY_MS, day);
      this.#paidThroughDay = day;
    }
  }

  #payDay(boundaryMs: number, day: number): void {
    for (const investment of this.#investments) {
      if (!investment.active || investment.openedDay >= day) continue;
      const interest = this.#interestOf(investment.planId);
      if (interest === null) continue;
      const earned = roundDown(investment.invested.mul(interest.aprPct).div(PERCENT_DAYS), FLEX_INTEREST_PLACES);
      if (earned.lte(0)) continue;
      const account = investment.autoReinvest ? 'flex' : 'main';
      this.#books.post(boundaryMs, investment.investmentId, [{ account, asset: investment.ticker, delta: earned, reason: 'flex-interest' }]);
      this.#interestPaid.set(investment.ticker, (this.#interestPaid.get(investment.ticker) ?? ZERO).add(earned));
      if (investment.autoReinvest) {
        investment.invested = investment.invested.add(earned);
        investment.updatedAtSec = boundaryMs / 1000;
      }
    }
  }

  /** The next 00:00 UTC whose interest is still to pay; null while nothing earns. */
  nextPaymentMs(): number | null {
    return this.#paidThroughDay === null ? null : (this.#paidThroughDay + 1) * DAY_MS;
  }

  /** The interest paid so far, per ticker (what a backtest's report says its flex money earned). */
  interestPaid(): ReadonlyMap<string, Decimal> {
    return this.#interestPaid;
  }

  plans(ticker?: string): FlexPlan[] {
    return this.#plans.map((p) => p.plan).filter((p) => ticker === undefined || p.ticker === ticker);
  }

  investments(filter: FlexInvestmentFilter = {}): FlexInvestment[] {
    return this.#investments
      .filter((i) => filter.ticker === undefined || i.ticker === filter.ticker)
      .filter((i) => filter.planId === undefined || i.planId === filter.planId)
      .filter((i) => filter.active === undefined || i.active === filter.active)
      .map(publicView);
  }

  /**
   * Withdraw from the active investment in a plan back to main. Refusals (docs/exchange-api.md wording):
   * unknown plan → validation under `plan`; no active investment → business under `plan`;
   * more than invested, or nothing → business under `amount`; a remainder below the plan's
   * minimum → business under `minAmountLeft` (withdraw all of it instead).
   */
  withdraw(planId: string, amount: Decimal, nowMs: number): { transactionId: string } {
    const plan = this.#plan(planId);
    if (!plan) throw SimRejection.validation(FLEX_CODES.validation, 'plan', 'The selected plan is invalid.');
    const investment = this.#activeIn(planId);
    if (!investment) throw SimRejection.refused('no-active-investment', FLEX_CODES.business, 'plan', 'Investment does not exist');
    if (amount.lte(0)) throw SimRejection.business(FLEX_CODES.business, 'amount', 'Withdraw amount is too small');
    if (amount.gt(investment.invested)) {
      throw SimRejection.refused('amount-exceeds-investment', FLEX_CODES.business, 'amount', 'Withdraw amount exceeds total invested');
    }
    const left = investment.invested.sub(amount);
    if (!left.isZero() && left.lt(plan.minInvestment)) {
      throw SimRejection.business(FLEX_CODES.business, 'minAmountLeft', 'Amount left < min investment');
    }
    const transactionId = this.#ids.next('transaction');
    this.#books.post(nowMs, transactionId, [
      { account: 'flex', asset: plan.ticker, delta: amount.neg(), reason: 'flex-withdraw' },
      { account: 'main', asset: plan.ticker, delta: amount, reason: 'flex-withdraw' },
    ]);
    investment.invested = left;
    investment.active = !left.isZero();
    investment.updatedAtSec = Math.floor(nowMs / 1000);
    return { transactionId };
  }

  /** Sum of what is invested per asset (what the `flex` ledger account must hold). */
  investedByAsset(): Map<string, Decimal> {
    const sums = new Map<string, Decimal>();
    for (const i of this.#investments) sums.set(i.ticker, (sums.get(i.ticker) ?? ZERO).add(i.invested));
    return sums;
  }

  #activeIn(planId: string): InvestmentState | undefined {
    return this.#investments.find((i) => i.planId === planId && i.active);
  }

  #plan(planId: string): FlexPlan | undefined {
    return this.#plans.find((p) => p.plan.planId === planId)?.plan;
  }

  #interestOf(planId: string): FlexInterest | null {
    return this.#plans.find((p) => p.plan.planId === planId)?.interest ?? null;
  }
}

function publicView(state: InvestmentState): FlexInvestment {
  return {
    investmentId: state.investmentId,
    planId: state.planId,
    ticker: state.ticker,
    invested: state.invested,
    autoReinvest: state.autoReinvest,
    active: state.active,
    createdAtSec: state.createdAtSec,
    updatedAtSec: state.updatedAtSec,
  };
}
