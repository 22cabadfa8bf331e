import type { FlexInvestment, FlexPlan } from '../domain/account.ts';
import { type Decimal, ZERO, roundDown } from '../domain/money.ts';
import type { SimIds } from './ids.ts';
import type { Books } from './ledger.ts';
import { SimRejection } from './rejection.ts';

/** SPEC "Errors": flex business refusals are 422 code 2; validation is code 0. */
export const FLEX_CODES = { validation: 0, business: 2 } as const;

export interface FlexInvestmentFilter {
  readonly ticker?: string;
  readonly planId?: string;
  readonly active?: boolean;
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
}

/**
 * Flex (lending) plans and the account's investments in them. The money invested sits on the
 * `flex` ledger account; a withdrawal moves it back to `main`, as SPEC says.
 */
export class Flex {
  readonly #books: Books;
  readonly #ids: SimIds;
  readonly #plans: FlexPlan[] = [];
  readonly #investments: InvestmentState[] = [];

  constructor(books: Books, ids: SimIds) {
    this.#books = books;
    this.#ids = ids;
  }

  addPlan(plan: FlexPlan): void {
    if (this.#plans.some((p) => p.planId === plan.planId)) throw new Error(`flex plan ${plan.planId} exists already`);
    this.#plans.push(plan);
  }

  /** Put an active investment in place (seeding); the money appears on the flex account. */
  seedInvestment(planId: string, amount: Decimal, nowMs: number, autoReinvest = false): FlexInvestment {
    const plan = this.#plans.find((p) => p.planId === planId);
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
    };
    this.#books.post(nowMs, investmentId, [{ account: 'flex', asset: plan.ticker, delta: amount, reason: 'seed' }]);
    this.#investments.push(state);
    return { ...state };
  }

  /**
   * One day of interest on every active investment: invested × APR / 100 / 365, rounded down to
   * `places` decimals (simple daily interest, credited to the investment, as flexible lending
   * pays). A ledger entry like any other movement, so the books stay exact.
   */
  accrueDay(aprPct: Decimal, places: number, nowMs: number): void {
    for (const investment of this.#investments) {
      if (!investment.active) continue;
      const interest = roundDown(investment.invested.mul(aprPct).div(36_500), places);
      if (interest.lte(0)) continue;
      this.#books.post(nowMs, investment.investmentId, [{ account: 'flex', asset: investment.ticker, delta: interest, reason: 'flex-interest' }]);
      investment.invested = investment.invested.add(interest);
      investment.updatedAtSec = Math.floor(nowMs / 1000);
    }
  }

  plans(ticker?: string): FlexPlan[] {
    return this.#plans.filter((p) => ticker === undefined || p.ticker === ticker);
  }

  investments(filter: FlexInvestmentFilter = {}): FlexInvestment[] {
    return this.#investments
      .filter((i) => filter.ticker === undefined || i.ticker === filter.ticker)
      .filter((i) => filter.planId === undefined || i.planId === filter.planId)
      .filter((i) => filter.active === undefined || i.active === filter.active)
      .map((i) => ({ ...i }));
  }

  /**
   * Withdraw from the active investment in a plan back to main. Refusals (WHITEBIT.md wording):
   * unknown plan → validation under `plan`; no active investment → business under `plan`;
   * more than invested, or nothing → business under `amount`; a remainder below the plan's
   * minimum → business under `minAmountLeft` (withdraw all of it instead).
   */
  withdraw(planId: string, amount: Decimal, nowMs: number): { transactionId: string } {
    const plan = this.#plans.find((p) => p.planId === planId);
    if (!plan) throw SimRejection.validation(FLEX_CODES.validation, 'plan', 'The selected plan is invalid.');
    const investment = this.#activeIn(planId);
    if (!investment) throw SimRejection.business(FLEX_CODES.business, 'plan', 'Investment does not exist');
    if (amount.lte(0)) throw SimRejection.business(FLEX_CODES.business, 'amount', 'Withdraw amount is too small');
    if (amount.gt(investment.invested)) {
      throw SimRejection.business(FLEX_CODES.business, 'amount', 'Withdraw amount exceeds total invested');
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
}
