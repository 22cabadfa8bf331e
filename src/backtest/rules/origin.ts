import type { MarketRules } from '../../domain/market.ts';
import type { RuleField } from '../../domain/market-rule-inputs.ts';

/**
 * Where a backtest's market rules came from. The report says it, so a result computed on the
 * made-up demo rules, a week-old cache or hand-typed flags is never mistaken for one on the
 * exchange's rules of today.
 */
export type RulesSource = 'exchange' | 'cache' | 'file' | 'flags' | 'demo';

/** The MarketRules fields a backtest's rule flags can set. */
export type { RuleField } from '../../domain/market-rule-inputs.ts';

export interface RulesOrigin {
  readonly source: RulesSource;
  /** 'file': the --rules file as given. */
  readonly file?: string;
  /** 'exchange' and 'cache': the exchange the markets list was fetched from. */
  readonly baseUrl?: string;
  /** 'exchange' and 'cache': when that list was fetched, Unix ms. */
  readonly fetchedAtMs?: number;
  /** Fields set by the rule flags over the source's values, in RuleField order. */
  readonly overrides?: readonly RuleField[];
}

/** The rules a backtest trades on, with where they came from. */
export interface ResolvedRules {
  readonly rules: MarketRules;
  readonly origin: RulesOrigin;
}
