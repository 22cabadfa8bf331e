import { InputError } from '../../domain/errors.ts';
import type { CommandContext } from '../context.ts';
import { json, table } from '../output.ts';

/** `stacker strategies`: every strategy this stacker ships, with its keys as it declares them. */
export async function strategies(ctx: CommandContext): Promise<void> {
  const [{ STRATEGIES }, { STRATEGY_API_VERSION }] = await Promise.all([import('../../../strategies/index.ts'), import('../../engine/contract.ts')]);
  const list = [...STRATEGIES.values()];
  if (ctx.json) {
    ctx.io.out(json({ apiVersion: STRATEGY_API_VERSION, strategies: list.map((s) => ({ name: s.name, describe: s.describe, params: s.params })) }));
    return;
  }
  for (const strategy of list) {
    ctx.io.out(`${strategy.name}: ${strategy.describe}\n`);
    const rows = strategy.params.map((spec) => [spec.key, spec.required ? 'required' : spec.default !== undefined ? `default ${spec.default}` : 'optional', spec.rule]);
    ctx.io.out(`${table([{ header: 'KEY' }, { header: 'SET' }, { header: 'RULE' }], rows)}\n`);
  }
  ctx.io.out('Engine keys (STRATEGY, SCHEDULE, budgets, ...) apply to every strategy. `stacker strategies describe NAME` prints a commented example file.\n');
}

/** `stacker strategies describe NAME`: the strategy's commented example instance file, ready to save under config/strategies/. */
export async function describeStrategy(ctx: CommandContext, _flags: unknown, name: string): Promise<void> {
  const [{ STRATEGIES }, { exampleEnvFile }] = await Promise.all([import('../../../strategies/index.ts'), import('../../config/example-env.ts')]);
  const strategy = STRATEGIES.get(name);
  if (strategy === undefined) throw InputError.one('NAME', `${JSON.stringify(name)} is not a strategy; the strategies are ${[...STRATEGIES.keys()].join(', ')}`);
  if (ctx.json) ctx.io.out(json({ name: strategy.name, file: exampleEnvFile(strategy) }));
  else ctx.io.out(exampleEnvFile(strategy));
}
