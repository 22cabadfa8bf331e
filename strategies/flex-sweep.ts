import type { FlexInvestment } from '../src/domain/account.ts';
import { type Decimal, ZERO, formatDecimal } from '../src/domain/money.ts';
import { type Intent, STRATEGY_API_VERSION, defineStrategy } from '../src/engine/contract.ts';
import { ParamReader } from '../src/engine/params.ts';

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

export interface FlexSweepParams {
  readonly target: SweepTarget;
  readonly mode: SweepMode;
  /** Main balance to keep, in the investment's asset; null with MODE=all. */
  readonly reserve: Decimal | null;
}

export const flexSweep = defineStrategy<FlexSweepParams>({
  name: 'flex-sweep',
  version: STRATEGY_API_VERSION,
  describe: 'Withdraw flex investments back to the main balance: all of a plan, or enough to keep a main-balance reserve.',
  params: [
    { key: 'PLAN', required: false, rule: 'a UUID; give PLAN or TICKER, not both', description: 'The flex plan to withdraw from.', example: '0b7b4a47-9a4f-4c4e-8d0e-2f1b6a7c9d11' },
    { key: 'TICKER', required: false, rule: 'an asset ticker in capitals; give PLAN or TICKER, not both', description: 'Withdraw from every active investment in this asset (largest first).', example: 'USDT' },
    { key: 'MODE', required: true, rule: `one of ${SWEEP_MODES.join(', ')}`, description: 'all: withdraw the whole investment. reserve: withdraw only what brings the main balance up to RESERVE.', example: 'reserve' },
    { key: 'RESERVE', required: false, rule: 'decimal > 0; required with MODE=reserve, refused otherwise', description: 'Main balance to keep in the asset, e.g. what the next buys spend.', example: '150' },
  ],

  parseParams(env, source) {
    const p = new ParamReader(env, source);
    const plan = p.optionalUuid('PLAN');
    const ticker = p.optionalTicker('TICKER');
    const mode = p.oneOf('MODE', SWEEP_MODES);
    const reserve = p.optionalDecimal('RESERVE', { positive: true }) ?? null;
    if (plan !== undefined && ticker !== undefined) p.problem('PLAN', 'give PLAN or TICKER, not both');
    if (!p.has('PLAN') && !p.has('TICKER')) {
      p.problem('PLAN', 'is required unless TICKER is given (the plan UUID, or TICKER=USDT for every USDT investment)');
    }
    if (p.has('MODE') && mode === 'reserve' && !p.has('RESERVE')) p.problem('RESERVE', 'is required with MODE=reserve');
    if (p.has('MODE') && mode === 'all' && p.has('RESERVE')) p.problem('RESERVE', 'is only used with MODE=reserve; with MODE=all everything is withdrawn');
    const target: SweepTarget = plan !== undefined ? { kind: 'plan', plan } : { kind: 'ticker', ticker: ticker ?? '' };
    return p.done({ target, mode, reserve });
  },

  reads() {
    return ['balances', 'flex'];
  },

  async decide(view, params) {
    const holdings = holdingsOf(view.flexInvestments(), params.target);
    const where = params.target.kind === 'plan' ? `plan ${params.target.plan}` : `${params.target.ticker} plans`;
    const nothing: Intent = { kind: 'refusal', reason: 'no-active-investment', message: `no active flex investment in ${where}`, data: targetData(params.target) };

    if (params.mode === 'all' || params.reserve === null) {
      if (holdings.length === 0) return [nothing];
      // Each plan's withdrawal stands alone: one the exchange refuses does not hold back the others.
      return holdings.map((h) => ({ kind: 'flex-withdraw', plan: h.plan, amount: h.invested, group: h.plan }));
    }

    const ticker = params.target.kind === 'ticker' ? params.target.ticker : holdings[0]?.ticker;
    if (ticker === undefined) return [nothing];
    const reserve = params.reserve;
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
      const amount = missing.lt(holding.invested) ? missing : holding.invested;
      intents.push({ kind: 'flex-withdraw', plan: holding.plan, amount, group: holding.plan });
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
