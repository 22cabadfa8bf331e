import type { ResolvedRules } from '../../backtest/rules/origin.ts';
import type { RuleOverrides } from '../../backtest/rules/rule-flags.ts';
import type { ExchangeMarkets } from '../../backtest/rules/resolve.ts';
import { ConfigError, type InputProblem } from '../../domain/errors.ts';
import type { CommandContext } from '../context.ts';

/**
 * The backtest's market rules on the command line: --rules, the rule flags, and for
 * `--rules exchange` the exchange of `stacker markets` (--base-url, STACKER_BASE_URL, region)
 * and the data dir of `stacker run` (--data-dir, STACKER_DATA_DIR, ./data) for the cache.
 * The precedence lives in src/backtest/rules/resolve.ts.
 */
export async function backtestRules(
  ctx: CommandContext,
  request: { readonly market: string; readonly rules?: string | undefined; readonly overrides: RuleOverrides; readonly dataDir?: string | undefined },
): Promise<ResolvedRules> {
  const { resolveRules } = await import('../../backtest/rules/resolve.ts');
  return resolveRules(
    { market: request.market, overrides: request.overrides, ...(request.rules === undefined ? {} : { rules: request.rules }) },
    {
      exchange: () => exchangeMarkets(ctx, request.dataDir),
      nowMs: () => Date.now(),
      warn: (text) => ctx.io.err(`warning: ${text}\n`),
    },
  );
}

async function exchangeMarkets(ctx: CommandContext, dataDirFlag: string | undefined): Promise<ExchangeMarkets> {
  const [{ readEnvLayers }, { DAEMON_DEFAULTS, DAEMON_ENV_KEYS, checkDirectory, locate }, { resolveBaseUrl }] = await Promise.all([
    import('../../config/settings.ts'),
    import('../../config/daemon-env.ts'),
    import('../../api/base-url.ts'),
  ]);
  const layers = await readEnvLayers(ctx.globalFlags.envFile);
  const dataDir = locate(layers, DAEMON_ENV_KEYS.dataDir, { name: '--data-dir', value: dataDirFlag }, DAEMON_DEFAULTS.dataDir);
  const problems: InputProblem[] = [];
  checkDirectory(dataDir, problems, false);
  if (problems.length > 0) throw new ConfigError(problems);
  const settings = await ctx.settings();
  const client = await ctx.publicClient();
  return { baseUrl: resolveBaseUrl(settings.endpoint), dataDir: dataDir.value, markets: () => client.markets() };
}
