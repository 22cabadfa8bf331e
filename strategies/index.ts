import type { Strategy } from '../src/engine/contract.ts';
import { balanceReport } from './balance-report.ts';
import { dca } from './dca.ts';
import { flexSweep } from './flex-sweep.ts';
import { topUp } from './top-up.ts';
import { valueAvg } from './value-avg.ts';

/**
 * The strategy registry: STRATEGY= in an instance env file names one of these. Adding a
 * strategy is one file in this folder plus one line in SHIPPED (see the README).
 */
const SHIPPED: readonly Strategy<unknown>[] = [dca, flexSweep, balanceReport, topUp, valueAvg];

export const STRATEGIES: ReadonlyMap<string, Strategy<unknown>> = registry(SHIPPED);

export function findStrategy(name: string): Strategy<unknown> | undefined {
  return STRATEGIES.get(name);
}

export function strategyNames(): string[] {
  return [...STRATEGIES.keys()];
}

function registry(strategies: readonly Strategy<unknown>[]): Map<string, Strategy<unknown>> {
  const byName = new Map<string, Strategy<unknown>>();
  for (const strategy of strategies) {
    // A programming error in this folder, caught by the registry test before it ships.
    if (byName.has(strategy.name)) throw new Error(`two strategies are named ${strategy.name}`);
    byName.set(strategy.name, strategy);
  }
  return byName;
}
