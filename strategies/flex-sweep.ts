import { type Decimal, type FlexInvestment, type Intent, TRANSFER_DECIMALS, ZERO, defineStrategy, formatDecimal, intent, param, roundUp } from './sdk.ts';

/**
 * Withdraw flexible (Smart Flex) investments back to the main balance: either everything
 * invested in the chosen plan(s), or just enough to bring the main balance of the asset up to
 * a reserve — typically the money the next dca buys will spend. It never asks for more than is
 * invested, so the exchange's "amount exceeds investment" refusal only happens when the
 * investment shrank between the snapshot and the request; the engine turns that into a
 * refusal too.
 */

export const SWEEP_MODES = ['all', 'reserve'] as const;
export type SweepMode = (typeof SWEEP_MODES)[number];

export type SweepTarget = { readonly kind: 'plan'; readonly plan: string } | { readonly kind: 'ticker'; readonly ticker: string };

export const flexSweep = defineStrategy({
  name: 'flex-sweep',
  describe: 'Withdraw flex investments back to the main balance: all of a plan, or enough to keep a main-balance reserve.',
  params: {
    PLAN: param.optionalUuid({ note: 'give PLAN or TICKER, not both', description: 'The flex plan to withdraw from.', example: '0b7b4a47-9a4f-4c4e-8d0e-2f1b6a7c9d11' }),
    TICKER: param.optionalTicker({ note: 'give PLAN or TICKER, not both', exampleCommented: true, description: 'Withdraw from every active investment in this asset (largest first).', example: 'USDT' }),
    MODE: param.oneOf(SWEEP_MODES, { description: 'all: withdraw the whole investment. reserve: withdraw only what brings the main balance up to RESERVE.', example: 'reserve' }),
    RESERVE: param.decimal({ positive: true, optional: true, note: 'required with MODE=reserve, refused otherwise', description: 'Main balance to keep in the asset, e.g. what the next buys spend.', example: '150' }),
  },

  check(params, problem, given) {
    if (given('PLAN') && given('TICKER')) problem('PLAN', 'give PLAN or TICKER, not both');
    if (!given('PLAN') && !given('TICKER')) problem('PLAN', 'is required unless TICKER is given (the plan UUID, or TICKER=USDT for every USDT investment)');
    if (given('MODE') && params.MODE === 'reserve' && !given('RESERVE')) problem('RESERVE', 'is required with MODE=reserve');
    if (given('MODE') && params.MODE === 'all' && given('RESERVE')) problem('RESERVE', 'is only used with MODE=reserve; with MODE=all everything is withdrawn');
  },

  reads() {
    return ['balances', 'flex'];
  },

  async decide(view, params) {
    const target: SweepTarget = params.PLAN !== null ? { kind: 'plan', plan: params.PLAN } : { kind: 'ticker', ticker: params.TICKER ?? '' };
    const holdings = holdingsOf(view.flexInvestments(), target);
    const where = target.kind === 'plan' ? `plan ${target.plan}` : `${target.ticker} plans`;
    const nothing: Intent = { kind: 'refusal', reason: 'no-active-investment', message: `no active flex investment in ${where}`, data: targetData(target) };

    if (params.MODE === 'all' || params.RESERVE === null) {
      if (holdings.length === 0) return [nothing];
      // Each plan's withdrawal stands alone: one the exchange refuses does not hold back the others.
      return holdings.map((h) => intent.flexWithdraw(h.plan, h.invested, { group: h.plan }));
    }

    const ticker = target.kind === 'ticker' ? target.ticker : holdings[0]?.ticker;
    if (ticker === undefined) return [nothing];
    const reserve = params.RESERVE;
    const main = view.mainBalance(ticker);
    if (main.gte(reserve)) {
      return [
        {
          kind: 'note',
          level: 'info',
          message: `main balance ${formatDecimal(main)} ${ticker} is at or above RESERVE ${formatDecimal(reserve)}: nothing to withdraw`,
          data: { ticker, main: formatDecimal(main), reserve: formatDecimal(reserve) },
        },
      ];
    }
    if (holdings.length === 0) return [nothing];

    const intents: Intent[] = [];
    let missing = reserve.sub(main);
    for (const holding of holdings) {
      if (missing.lte(0)) break;
      // In whole units of the exchange's money moves (8 decimals, as transfers), rounded up so the
      // reserve is reached: a RESERVE or balance with more decimals asked for 0.000000000001.
      const needed = roundUp(missing, TRANSFER_DECIMALS);
      let amount = needed.lt(holding.invested) ? needed : holding.invested;
      // The exchange refuses a withdrawal that leaves less than the plan's minimum (and more than
      // nothing): the reserve comes first, so the whole investment comes back.
      const minimum = view.flexPlan(holding.plan)?.minInvestment;
      const left = holding.invested.sub(amount);
      if (minimum !== undefined && left.gt(0) && left.lt(minimum)) {
        intents.push(
          intent.note(`withdrawing all ${formatDecimal(holding.invested)} ${holding.ticker} of plan ${holding.plan}: the ${formatDecimal(amount)} RESERVE needs would leave ${formatDecimal(left)}, less than its minimum investment ${formatDecimal(minimum)}`, {
            plan: holding.plan,
            needed: formatDecimal(amount),
            minInvestment: formatDecimal(minimum),
          }),
        );
        amount = holding.invested;
      }
      intents.push(intent.flexWithdraw(holding.plan, amount, { group: holding.plan }));
      missing = missing.sub(amount);
    }
    if (missing.gt(0)) {
      intents.push({
        kind: 'note',
        level: 'warn',
        message: `withdrawing every active investment in ${where} leaves the main balance ${formatDecimal(missing)} ${ticker} short of RESERVE ${formatDecimal(reserve)}`,
        data: { ticker, main: formatDecimal(main), reserve: formatDecimal(reserve), short: formatDecimal(missing) },
      });
    }
    return intents;
  },
});

interface Holding {
  readonly plan: string;
  readonly ticker: string;
  readonly invested: Decimal;
}

/** Active investments of the target, summed per plan (a withdraw names a plan), largest first, then by plan id for a stable order. */
function holdingsOf(investments: readonly FlexInvestment[], target: SweepTarget): Holding[] {
  const byPlan = new Map<string, Holding>();
  for (const investment of investments) {
    if (!investment.active || investment.invested.lte(0)) continue;
    if (target.kind === 'plan' ? investment.planId.toLowerCase() !== target.plan : investment.ticker !== target.ticker) continue;
    const seen = byPlan.get(investment.planId);
    byPlan.set(investment.planId, {
      plan: investment.planId,
      ticker: investment.ticker,
      invested: (seen?.invested ?? ZERO).add(investment.invested),
    });
  }
  return [...byPlan.values()].sort((a, b) => b.invested.cmp(a.invested) || (a.plan < b.plan ? -1 : a.plan > b.plan ? 1 : 0));
}

function targetData(target: SweepTarget): Readonly<Record<string, string>> {
  return target.kind === 'plan' ? { plan: target.plan } : { ticker: target.ticker };
}
