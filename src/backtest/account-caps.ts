import type { InstanceConfig } from '../config/instance-config.ts';
import type { EnvLayers } from '../config/settings.ts';
import { Decimal, formatDecimal } from '../domain/money.ts';
import type { AccountCap } from '../engine/runtime.ts';

/** An account cap as plain data (decimals as text), for a comparison's worker threads. */
export interface AccountCapJson {
  readonly limits: { readonly day?: string; readonly week?: string; readonly month?: string };
  readonly asset: string;
  readonly timeZone: string;
}

/**
 * The caps a backtest of these instances counts: those the environment and the `--env-file`
 * set for their accounts (STACKER_ACCOUNT_<NAME>_BUDGET_QUOTE_PER_*), read by the daemon's
 * rules, so a backtest of a capped setup buys what the daemon would. A ConfigError names a bad one.
 */
export async function backtestAccountCaps(layers: EnvLayers, instances: readonly InstanceConfig[]): Promise<ReadonlyMap<string, AccountCap>> {
  const [{ readAccountCaps }, { accountCapOf }, { accountUserOf }] = await Promise.all([import('../config/accounts.ts'), import('../config/account-cap.ts'), import('../config/instance-config.ts')]);
  const caps = new Map<string, AccountCap>();
  for (const [name, account] of readAccountCaps(layers, instances.map(accountUserOf))) {
    const cap = accountCapOf(account);
    if (cap !== null) caps.set(name, cap);
  }
  return caps;
}

export function capsToJson(caps: ReadonlyMap<string, AccountCap>): Record<string, AccountCapJson> {
  const json: Record<string, AccountCapJson> = {};
  for (const [name, cap] of caps) {
    const limits: Record<string, string> = {};
    for (const [period, limit] of Object.entries(cap.limits)) if (limit !== undefined) limits[period] = formatDecimal(limit);
    json[name] = { limits, asset: cap.asset, timeZone: cap.timeZone };
  }
  return json;
}

export function capsFromJson(json: Readonly<Record<string, AccountCapJson>>): ReadonlyMap<string, AccountCap> {
  return new Map(
    Object.entries(json).map(([name, cap]) => {
      const limits = Object.fromEntries(Object.entries(cap.limits).map(([period, limit]) => [period, new Decimal(limit)]));
      return [name, { limits, asset: cap.asset, timeZone: cap.timeZone }] as const;
    }),
  );
}
