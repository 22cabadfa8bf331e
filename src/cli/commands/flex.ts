import { formatDecimal } from '../../domain/money.ts';
import { checkAll, optional, planId, positiveAmount, tickerName } from '../args.ts';
import type { CommandContext } from '../context.ts';
import { fields, json, table, utcTime, yesNo } from '../output.ts';
import { lookupCommand } from '../lookup-command.ts';

export async function flexPlans(ctx: CommandContext, flags: { ticker?: string }): Promise<void> {
  const args = checkAll({ ticker: () => optional(flags.ticker, (t) => tickerName(t)) });
  const client = await ctx.privateClient();
  const plans = await client.flexPlans(args.ticker === undefined ? {} : { ticker: args.ticker });
  if (ctx.json) {
    ctx.io.out(json(plans));
    return;
  }
  ctx.io.out(
    table(
      [{ header: 'PLAN' }, { header: 'TICKER' }, { header: 'MIN INVESTMENT', align: 'right' }, { header: 'MAX INVESTMENT', align: 'right' }, { header: 'MAX RATE %', align: 'right' }],
      plans.map((p) => [p.planId, p.ticker, formatDecimal(p.minInvestment), formatDecimal(p.maxInvestment), formatDecimal(p.maxRatePct)]),
    ),
  );
}

export async function flexInvestments(ctx: CommandContext, flags: { ticker?: string; plan?: string }): Promise<void> {
  const args = checkAll({
    ticker: () => optional(flags.ticker, (t) => tickerName(t)),
    plan: () => optional(flags.plan, (p) => planId(p)),
  });
  const client = await ctx.privateClient();
  const investments = await client.flexInvestments({
    ...(args.ticker === undefined ? {} : { ticker: args.ticker }),
    ...(args.plan === undefined ? {} : { plan: args.plan }),
  });
  if (ctx.json) {
    ctx.io.out(json(investments));
    return;
  }
  ctx.io.out(
    table(
      [{ header: 'INVESTMENT' }, { header: 'PLAN' }, { header: 'TICKER' }, { header: 'INVESTED', align: 'right' }, { header: 'ACTIVE' }, { header: 'AUTO-REINVEST' }, { header: 'UPDATED (UTC)' }],
      investments.map((i) => [i.investmentId, i.planId, i.ticker, formatDecimal(i.invested), yesNo(i.active), yesNo(i.autoReinvest), utcTime(i.updatedAtSec)]),
    ),
  );
}

/** A withdrawal is a write and is never retried: on a lost answer, `flex investments` shows whether it happened. */
export async function flexWithdraw(ctx: CommandContext, flags: { plan: string; amount: string }): Promise<void> {
  const args = checkAll({ plan: () => planId(flags.plan), amount: () => positiveAmount(flags.amount, '--amount') });
  const client = await ctx.privateClient();
  ctx.setLookupHint(lookupCommand(['flex', 'investments', '--plan', args.plan], ctx.globalFlags));
  const result = await client.flexWithdraw({ plan: args.plan, amount: args.amount });
  if (ctx.json) {
    ctx.io.out(json({ plan: args.plan, amount: args.amount, transactionId: result.transactionId }));
    return;
  }
  ctx.io.out(fields([['withdrawn', `${formatDecimal(args.amount)} from plan ${args.plan} to the main balance`], ['transaction id', result.transactionId]]));
}
