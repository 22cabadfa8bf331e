import { basename } from 'node:path';
import type { MarketRules } from '../../domain/market.ts';
import { formatDecimal } from '../../domain/money.ts';
import type { RuleField, RulesOrigin, RulesSource } from '../rules/origin.ts';
import { utcMinute } from './text.ts';

/**
 * The report's `rules` section: the market rules the run traded on and where they came from
 * (SCHEMA.md, `rules.*`), and the one line that says it to a person, shared by the terminal
 * summary and the HTML page.
 */

export interface ReportRules {
  source: RulesSource;
  /** Base name of the --rules file; null for other sources. */
  file: string | null;
  baseUrl: string | null;
  /** ISO 8601; null unless the rules came from the exchange or its cache. */
  fetchedAt: string | null;
  overrides: RuleField[];
  basePrecision: number;
  quotePrecision: number;
  feePrecision: number;
  minBaseAmount: string;
  minQuoteTotal: string;
  maxQuoteTotal: string | null;
  makerFeePct: string;
  takerFeePct: string;
  tradesEnabled: boolean;
}

export function reportRules(run: { values: MarketRules; origin: RulesOrigin }): ReportRules {
  const { values: r, origin } = run;
  return {
    source: origin.source,
    file: origin.file === undefined ? null : basename(origin.file),
    baseUrl: origin.baseUrl ?? null,
    fetchedAt: origin.fetchedAtMs === undefined ? null : new Date(origin.fetchedAtMs).toISOString(),
    overrides: [...(origin.overrides ?? [])],
    basePrecision: r.basePrecision,
    quotePrecision: r.quotePrecision,
    feePrecision: r.feePrecision,
    minBaseAmount: formatDecimal(r.minBaseAmount),
    minQuoteTotal: formatDecimal(r.minQuoteTotal),
    maxQuoteTotal: r.maxQuoteTotal === null ? null : formatDecimal(r.maxQuoteTotal),
    makerFeePct: formatDecimal(r.makerFeePct),
    takerFeePct: formatDecimal(r.takerFeePct),
    tradesEnabled: r.tradesEnabled,
  };
}

/** Where the rules came from, in words: "exchange https://… (fetched 2025-01-31 09:00Z)". */
export function rulesSourceText(rules: ReportRules): string {
  const fetched = rules.fetchedAt === null ? '' : ` (fetched ${utcMinute(Date.parse(rules.fetchedAt))})`;
  const text: Record<RulesSource, string> = {
    exchange: `exchange ${rules.baseUrl ?? ''}${fetched}`,
    cache: `cached list of ${rules.baseUrl ?? ''}${fetched}: the exchange was not reachable`,
    file: `file ${rules.file ?? ''}`,
    flags: 'given by flags',
    demo: 'demo rules built into stacker (made up; --rules exchange for the real ones)',
  };
  const overrides = rules.overrides.length === 0 ? '' : `; set by flags: ${rules.overrides.join(', ')}`;
  return `${text[rules.source]}${overrides}`;
}

/** The values that decide a fill, in the report's units. */
export function rulesValuesText(rules: ReportRules, base: string, quote: string): string {
  const max = rules.maxQuoteTotal === null ? 'none' : `${rules.maxQuoteTotal} ${quote}`;
  return [
    `taker fee ${rules.takerFeePct} % (maker ${rules.makerFeePct} %)`,
    `min amount ${rules.minBaseAmount} ${base}`,
    `min total ${rules.minQuoteTotal} ${quote}`,
    `max total ${max}`,
    `decimals: amount ${rules.basePrecision}, price ${rules.quotePrecision}, fee ${rules.feePrecision}`,
    ...(rules.tradesEnabled ? [] : ['trading disabled']),
  ].join(', ');
}

/** What a run's report says of the settings a comparison shows (BacktestReport fits). */
interface SettingsOfRun {
  readonly rules: ReportRules;
  readonly base: string;
  readonly quote: string;
  readonly settings: { readonly slippagePct: string };
}

/**
 * What the runs of a comparison were measured under that a single run's summary shows: the
 * market rules (where they came from, and their values) and the slippage, as [label, text] rows.
 * One row each when every run shares them (a comparison's runs take one command's flags); run
 * by run otherwise.
 */
export function comparisonSettingsRows(runs: ReadonlyArray<{ readonly label: string; readonly report: SettingsOfRun }>): Array<[string, string]> {
  const rulesOf = (report: SettingsOfRun): string => `${rulesSourceText(report.rules)}: ${rulesValuesText(report.rules, report.base, report.quote)}`;
  const slippageOf = (report: SettingsOfRun): string => `${report.settings.slippagePct} %`;
  const rows: Array<[string, string]> = [];
  for (const [label, textOf] of [['Market rules', rulesOf], ['Slippage', slippageOf]] as const) {
    const texts = runs.map(({ report }) => textOf(report));
    if (new Set(texts).size <= 1) rows.push([label, texts[0] ?? '']);
    else runs.forEach((run, i) => rows.push([`${label} (${run.label})`, texts[i] as string]));
  }
  return rows;
}
