import type { AccountCap } from '../engine/runtime.ts';
import type { AccountConfig } from './accounts.ts';

/** An account's cap as the engine counts it (the periods it limits, its asset, its time zone); null without one. */
export function accountCapOf(account: Pick<AccountConfig, 'budgets' | 'budgetAsset' | 'budgetTimeZone'>): AccountCap | null {
  if (account.budgetAsset === null) return null;
  const { day, week, month } = account.budgets;
  const limits = { ...(day === null ? {} : { day }), ...(week === null ? {} : { week }), ...(month === null ? {} : { month }) };
  return { limits, asset: account.budgetAsset, timeZone: account.budgetTimeZone };
}
