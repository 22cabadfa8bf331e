import { Decimal, formatDecimal } from '../../domain/money.ts';
import { type BacktestReport, buildReport } from '../report/build.ts';
import type { SharedCandleColumns } from '../../candles/index.ts';
import type { RulesOrigin } from '../rules/origin.ts';
import type { RunSpec } from './plan.ts';
import { type AccountCapJson, capsFromJson } from '../account-caps.ts';

/** What every run of a comparison shares: the candles, the period, the wallet and the fill settings (plain data, so a worker thread can take it). */
export interface CommonInput {
  readonly data: string;
  /** The candles of `data` over the period, parsed once by the caller; each run reads the file again when absent. */
  readonly candles?: SharedCandleColumns;
  /** The file from before the period, for the strategies' candle windows (BacktestInput.history). */
  readonly history?: SharedCandleColumns;
  readonly market: string;
  readonly fromMs?: number;
  readonly toMs?: number;
  /** Asset → decimal text. */
  readonly wallet: Readonly<Record<string, string>>;
  readonly slippagePct: string;
  readonly flex: { readonly planId: string; readonly ticker: string; readonly amount: string; readonly aprPct: string } | null;
  /** The market's rules as `stacker markets --json` writes one (plain data for a worker), and where they came from; demo rules when absent. */
  readonly rules?: { readonly json: Record<string, unknown>; readonly origin: RulesOrigin };
  /** The caps of the runs' accounts (each run counts them on its own wallet); none when absent. */
  readonly accountCaps?: Readonly<Record<string, AccountCapJson>>;
}

/** One run's outcome: its report and its account value over time (for the comparison's chart). */
export interface RunResult {
  readonly label: string;
  readonly overrides: Readonly<Record<string, string>>;
  readonly report: BacktestReport;
  /** [time ms, account value as decimal text], time-ascending: the run's sketch of its value (at most 1728 points). */
  readonly equity: ReadonlyArray<readonly [number, string]>;
}

/** The modules a run needs, loaded once (a worker thread loads them as it starts). */
export function loadJobModules() {
  return Promise.all([import('../../candles/index.ts'), import('../driver.ts'), import('../../config/daemon-config.ts'), import('../rules/rules-file.ts')]);
}

/** One backtest of a comparison, from plain inputs: what a worker thread runs, and the main thread when it runs alone. */
export async function runJob(common: CommonInput, spec: RunSpec): Promise<RunResult> {
  const [{ loadCandles, sharedCandles }, { runBacktest }, { loadStrategyFiles }, { parseRulesList }] = await loadJobModules();
  const rules = common.rules === undefined ? undefined : parseRulesList([common.rules.json], 'the comparison\'s rules')[0];
  const candles =
    common.candles !== undefined
      ? sharedCandles(common.candles)
      : loadCandles(common.data, {
          market: common.market,
          ...(common.fromMs === undefined ? {} : { fromMs: common.fromMs }),
          ...(common.toMs === undefined ? {} : { toMs: common.toMs }),
        });
  const instances = await loadStrategyFiles(spec.files, { overrides: spec.overrides });
  const run = await runBacktest({
    candles,
    ...(common.history === undefined ? {} : { history: sharedCandles(common.history) }),
    market: common.market,
    dataFile: common.data,
    instances,
    wallet: new Map(Object.entries(common.wallet).map(([asset, amount]) => [asset, new Decimal(amount)])),
    slippagePct: new Decimal(common.slippagePct),
    flex: common.flex === null ? null : { ...common.flex, amount: new Decimal(common.flex.amount), aprPct: new Decimal(common.flex.aprPct) },
    ...(rules === undefined || common.rules === undefined ? {} : { rules, rulesOrigin: common.rules.origin }),
    ...(common.accountCaps === undefined ? {} : { accountCaps: capsFromJson(common.accountCaps) }),
  });
  const equity = run.facts.equity.points().map((p) => [p.timeMs, formatDecimal(p.value)] as const);
  return { label: spec.label, overrides: spec.overrides, report: buildReport(run), equity };
}
