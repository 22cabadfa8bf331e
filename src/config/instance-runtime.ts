import type { InstanceConfig } from './daemon-config.ts';
import { type InputProblem } from '../domain/errors.ts';
import type { MarketRules } from '../domain/market.ts';
import { type StartupContext, readsOf } from '../engine/contract.ts';
import { closestName } from '../engine/params.ts';
import type { ScheduledRuntime } from '../engine/engine.ts';
import type { LedgerInstance } from '../engine/exchange-ledger.ts';
import { ORDER_SETTLE_WINDOW } from '../engine/runtime.ts';
import type { BudgetLimits } from '../store/journal.ts';

/** The engine's view of a validated instance config. */
export function toRuntime(config: InstanceConfig, defaultSettleWindowMs: number = ORDER_SETTLE_WINDOW.defaultMs): ScheduledRuntime {
  const budgets: BudgetLimits = {
    ...(config.budgets.day === null ? {} : { day: config.budgets.day }),
    ...(config.budgets.week === null ? {} : { week: config.budgets.week }),
    ...(config.budgets.month === null ? {} : { month: config.budgets.month }),
  };
  const strategy = config.strategy;
  return {
    instance: config.instance,
    timezone: config.timezone,
    budgets,
    maxOrderQuote: config.maxOrderQuote,
    clientOrderIdPrefix: null,
    orderSettleWindowMs: config.orderSettleWindowMs ?? defaultSettleWindowMs,
    strategy,
    params: config.params,
    reads: readsOf(strategy, config.params),
    candleWindows: strategy.candleWindows?.(config.params) ?? [],
    budgetAsset: strategy.budgetAsset?.(config.params) ?? null,
    schedule: config.schedule,
    catchUp: config.catchUp,
  };
}

/** What the exchange-history check needs of an instance (enabled or not: its orders are ours either way). */
export function toLedgerInstance(config: InstanceConfig, defaultSettleWindowMs: number): LedgerInstance {
  return {
    instance: config.instance,
    timezone: config.timezone,
    budgetAsset: config.strategy.budgetAsset?.(config.params) ?? null,
    orderSettleWindowMs: config.orderSettleWindowMs ?? defaultSettleWindowMs,
  };
}

/**
 * Start-time checks that need the exchange's markets: each strategy's own checkParams, and a
 * budget on a strategy that places nothing a budget could count. Every problem, all at once.
 */
export function startupProblems(instances: readonly InstanceConfig[], markets: readonly MarketRules[], options: { readonly unlisted?: (name: string) => string } = {}): InputProblem[] {
  const byName = new Map(markets.map((rules) => [rules.name, rules]));
  const names = markets.map((rules) => rules.name);
  const unlisted = options.unlisted ?? ((name: string) => notListed(name, names));
  const context: StartupContext = { market: (name) => byName.get(name), marketNames: () => names, unlisted };
  const problems: InputProblem[] = [];
  for (const instance of instances) {
    problems.push(...(instance.strategy.checkParams?.(instance.params, context, instance.file) ?? []));
    const hasBudget = instance.budgets.day !== null || instance.budgets.week !== null || instance.budgets.month !== null;
    if (hasBudget && instance.strategy.budgetAsset === undefined) {
      problems.push({ source: instance.file, field: 'BUDGET_QUOTE_PER_*', rule: `strategy ${instance.strategy.name} declares no budgetAsset (it places no orders, or its author left budgetAsset out), so a budget has nothing to count in; remove the budget keys` });
    }
  }
  return problems;
}

/** The exchange does not list a market: with the nearest name it does, a typo's likely fix. */
export function notListed(name: string, names: readonly string[]): string {
  const guess = closestName(name, names);
  return `the exchange does not list ${name}${guess === undefined ? '' : `; did you mean ${guess}?`}`;
}
