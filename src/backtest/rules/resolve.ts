import { ConfigError, InputError, StackerError } from '../../domain/errors.ts';
import type { MarketRules } from '../../domain/market.ts';
import { formatDecimal } from '../../domain/money.ts';
import { DEMO_MARKETS } from '../../sim/seed.ts';
import { counted } from '../report/text.ts';
import { readMarketsCache, writeMarketsCache } from './markets-cache.ts';
import type { ResolvedRules, RulesOrigin } from './origin.ts';
import { RULE_FLAGS, type RuleOverrides, applyOverrides, missingRuleFlags, overriddenFields, rulesFromFlags } from './rule-flags.ts';
import { findMarket, readRulesFile } from './rules-file.ts';

/**
 * Which rules a backtest trades on. Nothing is fetched unless asked: a backtest is
 * reproducible from its files and flags, and runs offline.
 *
 * 1. `--rules FILE`: the market's entry in the file.
 *    `--rules exchange`: the exchange's public markets list (the base URL of `stacker markets`),
 *    cached in the data dir; when the exchange cannot be reached, the cached list, with its age.
 * 2. Without --rules: the rule flags, when they define the market alone;
 *    else the sim's demo rules, which exist for BTC_USDT and ETH_USDT only;
 *    else an InputError naming every way to give them.
 * The rule flags then override single fields of whichever source was used.
 */

/** `--rules exchange`: the word, not a file name (a file called so is given as ./exchange). */
export const FROM_EXCHANGE = 'exchange';

export interface RulesRequest {
  readonly market: string;
  /** The --rules value: FROM_EXCHANGE or a file. */
  readonly rules?: string;
  readonly overrides: RuleOverrides;
}

/** The exchange as --rules exchange reaches it. */
export interface ExchangeMarkets {
  readonly baseUrl: string;
  /** Where the cache lives. */
  readonly dataDir: string;
  markets(): Promise<readonly MarketRules[]>;
}

export interface RulesDeps {
  /** Built only for --rules exchange: no settings are read and nothing is sent otherwise. */
  readonly exchange: () => Promise<ExchangeMarkets>;
  readonly nowMs: () => number;
  /** One line for the user (stderr): a cache used in place of the exchange, a cache not written. */
  readonly warn: (text: string) => void;
}

const HOW_TO_GIVE = `--rules exchange (fetch the exchange's markets; cached in the data dir), --rules FILE (the output of \`stacker markets --json\`), or the rule flags`;

export async function resolveRules(request: RulesRequest, deps: RulesDeps): Promise<ResolvedRules> {
  const base = await baseRules(request, deps);
  const overrides = overriddenFields(request.overrides);
  if (base === null) {
    const rules = rulesFromFlags(request.market, request.overrides);
    if (rules === null) throw noRules(request);
    return refuseContradiction({ rules, origin: { source: 'flags' } }, request);
  }
  return refuseContradiction({ rules: applyOverrides(base.rules, request.overrides), origin: overrides.length === 0 ? base.origin : { ...base.origin, overrides } }, request);
}

/**
 * A market whose largest order total is below its smallest admits no order at all: every slot
 * would be refused and the run end with exit 0, looking like a strategy that never bought.
 */
function refuseContradiction(resolved: ResolvedRules, request: RulesRequest): ResolvedRules {
  const { minQuoteTotal, maxQuoteTotal, quote } = resolved.rules;
  if (maxQuoteTotal === null || maxQuoteTotal.gte(minQuoteTotal)) return resolved;
  const field = request.overrides.maxQuoteTotal !== undefined ? '--max-total' : request.overrides.minQuoteTotal !== undefined ? '--min-total' : '--rules';
  throw InputError.one(field, `the market's largest order total (${formatDecimal(maxQuoteTotal)} ${quote}) is below its smallest (${formatDecimal(minQuoteTotal)} ${quote}): no order could be placed; give a maximum of at least the minimum, or none`);
}

/** The source's rules before any flag; null when the flags are to define the market. */
async function baseRules(request: RulesRequest, deps: RulesDeps): Promise<ResolvedRules | null> {
  if (request.rules === FROM_EXCHANGE) return fromExchange(request.market, deps);
  if (request.rules !== undefined) {
    const markets = readRulesFile(request.rules);
    return { rules: findMarket(markets, request.market, { source: request.rules, field: '--market', what: 'this rules file' }), origin: { source: 'file', file: request.rules } };
  }
  if (rulesFromFlags(request.market, request.overrides) !== null) return null;
  const demo = DEMO_MARKETS.find((m) => m.name === request.market);
  if (demo !== undefined) return { rules: demo, origin: { source: 'demo' } };
  throw noRules(request);
}

async function fromExchange(market: string, deps: RulesDeps): Promise<ResolvedRules> {
  const exchange = await deps.exchange();
  let markets: readonly MarketRules[];
  try {
    markets = await exchange.markets();
  } catch (error) {
    // Bad flags or settings are the user's to fix; anything the exchange did (or did not) answer may be served from the cache.
    if (!(error instanceof StackerError) || error instanceof InputError || error instanceof ConfigError) throw error;
    return fromCache(market, exchange, deps, `${error.code}: ${error.message}`);
  }
  const fetchedAtMs = deps.nowMs();
  try {
    writeMarketsCache(exchange.dataDir, exchange.baseUrl, fetchedAtMs, markets);
  } catch (error) {
    deps.warn(`the markets list of ${exchange.baseUrl} was not cached in ${exchange.dataDir} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); the backtest goes on`);
  }
  const origin: RulesOrigin = { source: 'exchange', baseUrl: exchange.baseUrl, fetchedAtMs };
  return { rules: findMarket(markets, market, { field: '--market', what: `the markets of ${exchange.baseUrl}` }), origin };
}

function fromCache(market: string, exchange: ExchangeMarkets, deps: RulesDeps, why: string): ResolvedRules {
  const cached = readMarketsCache(exchange.dataDir, exchange.baseUrl);
  if (cached === null) {
    throw InputError.one(
      '--rules',
      `exchange: the markets of ${exchange.baseUrl} could not be fetched (${why}) and the data dir ${exchange.dataDir} holds no cached list of them; give the rules another way: --rules FILE (the output of \`stacker markets --json\` where the exchange is reachable) or the rule flags (${RULE_FLAGS.filter((s) => s.required).map((s) => s.flag).join(', ')})`,
    );
  }
  const fetched = new Date(cached.fetchedAtMs).toISOString();
  deps.warn(`the markets of ${exchange.baseUrl} could not be fetched (${why}); using the list cached in ${cached.path}, fetched ${fetched} (${age(deps.nowMs() - cached.fetchedAtMs)} ago)`);
  const rules = findMarket(cached.markets, market, { source: cached.path, field: '--market', what: `the cached markets of ${exchange.baseUrl} (fetched ${fetched})` });
  return { rules, origin: { source: 'cache', baseUrl: exchange.baseUrl, fetchedAtMs: cached.fetchedAtMs } };
}

function noRules(request: RulesRequest): InputError {
  const missing = missingRuleFlags(request.overrides);
  const given = overriddenFields(request.overrides).length > 0;
  const flags = given ? `the rule flags lack ${missing.join(', ')}` : `the rule flags define a market with ${missing.join(', ')}`;
  return InputError.one('--rules', `no market rules for ${request.market} (demo rules exist for ${DEMO_MARKETS.map((m) => m.name).join(' and ')} only): give ${HOW_TO_GIVE}; ${flags}`);
}

/** "3 days", "5 hours", "12 minutes", "less than a minute". */
export function age(ms: number): string {
  const minutes = Math.floor(Math.max(0, ms) / 60_000);
  if (minutes >= 2 * 24 * 60) return counted(Math.floor(minutes / (24 * 60)), 'day');
  if (minutes >= 2 * 60) return counted(Math.floor(minutes / 60), 'hour');
  if (minutes >= 1) return counted(minutes, 'minute');
  return 'less than a minute';
}
