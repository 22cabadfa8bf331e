import { momentFlag } from '../moment-flag.ts';
import { resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { type RuleFlags, parseRuleFlags } from '../../backtest/rules/rule-flags.ts';
import { Decimal } from '../../domain/money.ts';
import { ConfigError, EXIT, InputError, type InputProblem } from '../../domain/errors.ts';
import { marketInFileName } from '../../candles/file-market.ts';
import { checkAll, marketName, optional } from '../args.ts';
import { PAGE_MARK } from '../../backtest/report/page-mark.ts';
import { newFile, reportFile, writeOutputFile } from '../file-flags.ts';
import type { CommandContext } from '../context.ts';

export interface BacktestFlags extends RuleFlags {
  readonly data: string;
  readonly market: string;
  readonly from?: string;
  readonly to?: string;
  readonly strategy: readonly string[];
  readonly wallet: string;
  readonly slippagePct: string;
  readonly flex?: string;
  /** Absent: 5, and only with --flex. */
  readonly flexApr?: string;
  readonly report?: string;
  readonly journal?: string;
  readonly together?: boolean;
  readonly sweep?: readonly string[];
  /** `exchange` or a file: where the market rules come from (src/backtest/rules/resolve.ts). */
  readonly rules?: string;
  readonly dataDir?: string;
}

/**
 * The instances of one run, when one of them runs at all: with every one ENABLED=false the
 * daemon would run none, and the backtest showed a quiet run of 0 slots without saying why.
 */
function runnable<T extends { readonly enabled: boolean; readonly file: string }>(instances: readonly T[]): readonly T[] {
  if (instances.some((instance) => instance.enabled)) return instances;
  throw new ConfigError(
    instances.map((instance) => ({ source: instance.file, field: 'ENABLED', rule: 'is false: the daemon would not run this instance, so a backtest of it has no slot; set ENABLED=true (or remove the line) to backtest it' })),
  );
}

/**
 * A file whose name says it holds another asset's candles is the wrong file for --market (an
 * ETHUSDT file priced BTC at 2000 USDT, exit 0). Only the base is compared: a BTCUSD file is a
 * fair stand-in for BTC_USDT. A name that names no market is not judged.
 */
function checkFileMarket(data: string, market: string): void {
  const named = marketInFileName(data);
  const base = market.slice(0, market.indexOf('_'));
  if (named === null || named.base === base) return;
  throw InputError.one('--data', `the file's name says it holds ${named.base}${named.quote} candles, but --market is ${market}: give --market ${named.base}_${named.quote}, or the ${market} file (rename a file whose name is wrong)`);
}

/** What a --flex investment earns a year (percent) unless --flex-apr says otherwise. */
const DEFAULT_FLEX_APR_PCT = '5';

/** The plan id a backtest's seeded flex investment gets (flex-sweep finds it by TICKER). */
export const BACKTEST_FLEX_PLAN = '00000000-0000-4000-8000-00000000f1e0';
const PLAIN = /^(?:0|[1-9]\d*)(?:\.\d+)?$/;

/**
 * `stacker backtest`: the strategies' own schedules replayed over real candles in virtual time,
 * through the same engine and journal code as live, on a simulated account; a terminal summary
 * (or the JSON report with --json) and, with --report, a self-contained HTML page.
 */
export async function backtest(ctx: CommandContext, flags: BacktestFlags): Promise<void> {
  const { parseWallet } = await import('../../config/wallet.ts');
  const args = checkAll({
    data: () => {
      if (!existsSync(flags.data)) throw InputError.one('--data', `file not found: ${flags.data}`);
      return flags.data;
    },
    market: () => marketName(flags.market),
    fromMs: () => optional(flags.from, (text) => momentFlag(text, '--from')),
    toMs: () => optional(flags.to, (text) => momentFlag(text, '--to', 'end')),
    wallet: () => {
      const parsed = parseWallet(flags.wallet);
      if (!parsed.ok) throw InputError.one('--wallet', parsed.rules.join('; '));
      return parsed.wallet;
    },
    slippagePct: () => percent(flags.slippagePct, '--slippage-pct', 50),
    flex: () =>
      optional(flags.flex, (text) => {
        const parsed = parseWallet(text);
        if (!parsed.ok) throw InputError.one('--flex', parsed.rules.join('; '));
        if (parsed.wallet.size !== 1) throw InputError.one('--flex', 'must be one TICKER=amount pair, e.g. USDT=1000');
        const [ticker, amount] = [...parsed.wallet][0] as [string, Decimal];
        if (amount.lte(0)) throw InputError.one('--flex', 'the amount must be greater than 0');
        return { ticker, amount };
      }),
    flexApr: () => {
      if (flags.flexApr !== undefined && flags.flex === undefined) throw InputError.one('--flex-apr', 'is the interest of a --flex investment, and no --flex is given');
      return percent(flags.flexApr ?? DEFAULT_FLEX_APR_PCT, '--flex-apr', 1000);
    },
    rules: () => optional(flags.rules, rulesArgument),
    ruleOverrides: () => parseRuleFlags(flags),
    report: () => optional(flags.report, (text) => reportFile(text, '--report', PAGE_MARK)),
    journal: () => optional(flags.journal, (text) => newFile(text, '--journal', 'a backtest journal starts empty (the slots already in one would not run again, and the report would mix two runs)')),
    strategies: () => {
      if (flags.strategy.length === 0) throw InputError.one('--strategy', 'give at least one strategy instance file, e.g. --strategy config/backtest/dca-btc-daily.env');
      return flags.strategy;
    },
  });
  if (args.fromMs !== undefined && args.toMs !== undefined && args.fromMs > args.toMs) throw InputError.one('--from', 'must not be after --to');
  // Neither exists yet, so each passed its own check: the page would be written over the journal just kept.
  if (args.report !== undefined && args.journal !== undefined && resolve(args.report) === resolve(args.journal)) {
    throw InputError.one('--report', `${args.report} is also the --journal path: the page would be written over the journal; name two files`);
  }
  const sweeps = flags.sweep ?? [];
  checkFileMarket(args.data, args.market);
  const comparing = sweeps.length > 0 || (args.strategies.length > 1 && flags.together !== true);
  // Begun now: a large file is read, and its second half scanned in a thread, while the modules and strategies load.
  const { startLoadingCandles } = await import('../../candles/split-load.ts');
  const load = startLoadingCandles(args.data, {
    market: args.market,
    shared: comparing,
    ...(args.fromMs === undefined ? {} : { fromMs: args.fromMs }),
    ...(args.toMs === undefined ? {} : { toMs: args.toMs }),
  });
  try {
    if (comparing) await compare(ctx, flags, args, sweeps, load);
    else await single(ctx, flags, args, load);
  } finally {
    // A run that stopped before reading its candles (a bad strategy file) reads no further.
    load.close();
  }
}

/** The arguments of one backtest or comparison, checked. */
type RunArgs = {
  data: string;
  market: string;
  fromMs?: number | undefined;
  toMs?: number | undefined;
  wallet: ReadonlyMap<string, Decimal>;
  slippagePct: Decimal;
  flex?: { ticker: string; amount: Decimal } | undefined;
  flexApr: Decimal;
  strategies: readonly string[];
  rules: Parameters<typeof import('./backtest-rules.ts').backtestRules>[1]['rules'];
  ruleOverrides: Parameters<typeof import('./backtest-rules.ts').backtestRules>[1]['overrides'];
};

/** One backtest of the strategy files on one wallet (one file, or several with --together), its report printed. */
async function single(ctx: CommandContext, flags: BacktestFlags, args: RunArgs, load: import('../../candles/split-load.ts').CandleLoad): Promise<void> {
  const [{ loadStrategyFiles }, { runBacktest }, { buildReport, reportToJson }, { renderSummary }] = await Promise.all([
    import('../../config/daemon-config.ts'),
    import('../../backtest/driver.ts'),
    import('../../backtest/report/build.ts'),
    import('../../backtest/report/summary.ts'),
  ]);
  const instances = runnable(await loadStrategyFiles(args.strategies));
  const { backtestAccountCaps } = await import('../../backtest/account-caps.ts');
  const accountCaps = await backtestAccountCaps(await ctx.envLayers(), instances);
  const candles = await periodCandles({ ...args, fromText: flags.from, toText: flags.to }, flags.data, load, (text) => ctx.io.err(`warning: ${text}\n`));
  const history = await windowHistory(args, flags.data, longestWindowMs(instances), load);

  const { backtestRules } = await import('./backtest-rules.ts');
  const rules = await backtestRules(ctx, { market: args.market, rules: args.rules, overrides: args.ruleOverrides, dataDir: flags.dataDir });

  const progress = process.stderr.isTTY && !ctx.json ? progressBar() : undefined;
  const run = await runBacktest({
    candles,
    market: args.market,
    dataFile: args.data,
    instances,
    wallet: args.wallet,
    slippagePct: args.slippagePct,
    rules: rules.rules,
    rulesOrigin: rules.origin,
    flex: args.flex === undefined ? null : { planId: BACKTEST_FLEX_PLAN, ticker: args.flex.ticker, amount: args.flex.amount, aprPct: args.flexApr },
    accountCaps,
    ...(flags.journal === undefined ? {} : { journalPath: flags.journal }),
    ...(progress === undefined ? {} : { onProgress: progress.update }),
    ...(history === null ? {} : { history }),
  });
  progress?.done();
  const report = buildReport(run);
  if (flags.report !== undefined) {
    const { renderHtml } = await import('../../backtest/report/html.ts');
    writeOutputFile(flags.report, renderHtml(report, run), '--report');
  }
  if (ctx.json) ctx.io.out(reportToJson(report));
  else {
    ctx.io.out(renderSummary(report, { color: process.stdout.isTTY === true }));
    if (flags.report !== undefined) ctx.io.out(`\nreport: ${flags.report}\n`);
    if (flags.journal !== undefined) ctx.io.out(`journal: ${flags.journal} (read it with: stacker journal --journal ${flags.journal}, stacker orders --journal ${flags.journal})\n`);
  }
  // The report is whole, but a strategy failed in it (it would have been disabled live): not a success.
  if (report.strategyFailures.length > 0) ctx.setExitCode(EXIT.failure);
}

/**
 * Several backtests over the same candles, one per strategy file or per sweep value set, each on
 * its own copy of the wallet; one comparison (terminal table, --json, --report page). Every run's
 * instance files are checked before any runs.
 */
async function compare(
  ctx: CommandContext,
  flags: BacktestFlags,
  args: RunArgs,
  sweeps: readonly string[],
  load: import('../../candles/split-load.ts').CandleLoad,
): Promise<void> {
  const [{ sweepRuns, sideBySideRuns }, { loadStrategyFiles }, { instanceNameOf }, { startRuns }, { comparisonToJson }, { renderComparison }] = await Promise.all([
    import('../../backtest/compare/plan.ts'),
    import('../../config/daemon-config.ts'),
    import('../../config/instance-config.ts'),
    import('../../backtest/compare/run-all.ts'),
    import('../../backtest/compare/json.ts'),
    import('../../backtest/report/summary.ts'),
  ]);
  if (flags.journal !== undefined) throw InputError.one('--journal', 'keeps the journal of one backtest; not with several --strategy files or --sweep');
  if (sweeps.length > 0 && args.strategies.length !== 1) throw InputError.one('--sweep', `sweeps one strategy file; give exactly one --strategy (got ${args.strategies.length})`);
  if (sweeps.length > 0 && flags.together === true) throw InputError.one('--together', 'is for several strategy files on one wallet; a --sweep runs one file');
  const specs = sweeps.length > 0 ? sweepRuns(args.strategies[0] as string, sweeps) : sideBySideRuns(args.strategies, instanceNameOf);
  let windowMs = 0;
  const { backtestAccountCaps, capsToJson } = await import('../../backtest/account-caps.ts');
  const accountCaps: Record<string, import('../../backtest/account-caps.ts').AccountCapJson> = {};
  // Every run's files are checked before any runs, and every run's problems reported at once (a
  // sweep's values each their own): the first bad value alone sent the user back once per value.
  const problems = new RunProblems(sweeps.length > 0);
  const specInstances: Array<Awaited<ReturnType<typeof loadStrategyFiles>>> = [];
  for (const [i, spec] of specs.entries()) {
    const instances = await problems.of(async () => runnable(await loadStrategyFiles(spec.files, { overrides: spec.overrides })));
    if (instances === null) continue;
    specInstances[i] = instances;
    windowMs = Math.max(windowMs, longestWindowMs(instances));
    Object.assign(accountCaps, capsToJson(await backtestAccountCaps(await ctx.envLayers(), instances)));
  }
  problems.throwAny();
  const runs = startRuns(specs.length);
  let results: Awaited<ReturnType<typeof runs.run>>;
  try {
    // Read here once, so a bad file is reported before any run starts; the runs (worker threads) share what it parsed.
    const { shareCandles } = await import('../../candles/index.ts');
    const candles = shareCandles(await periodCandles({ ...args, fromText: flags.from, toText: flags.to }, flags.data, load, (text) => ctx.io.err(`warning: ${text}\n`)));
    const history = await windowHistory(args, flags.data, windowMs, load);
    const [{ backtestRules }, { rulesToJson }] = await Promise.all([import('./backtest-rules.ts'), import('../../backtest/rules/rules-file.ts')]);
    const rules = await backtestRules(ctx, { market: args.market, rules: args.rules, overrides: args.ruleOverrides, dataDir: flags.dataDir });
    const { backtestStartupProblems } = await import('../../backtest/driver.ts');
    specs.forEach((spec, i) => problems.add(spec.label, backtestStartupProblems(specInstances[i] ?? [], args.market, [rules.rules])));
    problems.throwAny();
    results = await runs.run(
      {
        data: args.data,
        candles,
        ...(history === null ? {} : { history: shareCandles(history) }),
        market: args.market,
        ...(args.fromMs === undefined ? {} : { fromMs: args.fromMs }),
        ...(args.toMs === undefined ? {} : { toMs: args.toMs }),
        wallet: Object.fromEntries([...args.wallet].map(([asset, amount]) => [asset, amount.toFixed()])),
        slippagePct: args.slippagePct.toFixed(),
        flex: args.flex === undefined ? null : { planId: BACKTEST_FLEX_PLAN, ticker: args.flex.ticker, amount: args.flex.amount.toFixed(), aprPct: args.flexApr.toFixed() },
        rules: { json: rulesToJson(rules.rules), origin: rules.origin },
        accountCaps,
      },
      specs,
    );
  } finally {
    await runs.close();
  }
  if (flags.report !== undefined) {
    const { renderComparisonHtml } = await import('../../backtest/report/html.ts');
    writeOutputFile(flags.report, renderComparisonHtml(results), '--report');
  }
  if (ctx.json) ctx.io.out(comparisonToJson(results));
  else {
    ctx.io.out(renderComparison(results, { color: process.stdout.isTTY === true }));
    if (flags.report !== undefined) ctx.io.out(`\nreport: ${flags.report}\n`);
  }
  // A failed strategy is said under the table (renderComparison), as a single run's summary says it; the exit code tells a script.
  if (results.some((result) => result.report.strategyFailures.length > 0)) ctx.setExitCode(EXIT.failure);
}

/**
 * The problems of a comparison's runs, gathered to be reported together, one problem several
 * runs share said once. A file refused already names the swept key (`KEY from --sweep`) and its
 * value; a check against the market names the run, when the runs are a sweep's (one file, so the
 * file alone does not say which values).
 */
class RunProblems {
  readonly #labelled: boolean;
  readonly #problems = new Map<string, InputProblem>();

  constructor(labelled: boolean) {
    this.#labelled = labelled;
  }

  /** The value `work` gives, or null when its files were refused (their problems kept). */
  async of<T>(work: () => Promise<T>): Promise<T | null> {
    try {
      return await work();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      this.add(null, error.problems);
      return null;
    }
  }

  add(label: string | null, problems: readonly InputProblem[]): void {
    for (const problem of problems) {
      const named = this.#labelled && label !== null ? { ...problem, source: problem.source === undefined ? `run ${label}` : `${problem.source} (run ${label})` } : problem;
      // The same refusal of another run is said once: a bad value of one key fails every run of the cross product it is in.
      const key = JSON.stringify([named.source, named.field, named.rule]);
      if (!this.#problems.has(key)) this.#problems.set(key, named);
    }
  }

  throwAny(): void {
    if (this.#problems.size > 0) throw new ConfigError([...this.#problems.values()]);
  }
}

function rulesArgument(text: string): string {
  if (text.trim() === '') throw InputError.one('--rules', 'must be exchange or a rules file (the output of `stacker markets --json`)');
  return text;
}

function percent(text: string, flag: string, max: number): Decimal {
  if (!PLAIN.test(text) || new Decimal(text).gt(max)) throw InputError.one(flag, `must be a plain decimal from 0 to ${max} (got ${JSON.stringify(text)})`);
  return new Decimal(text);
}

/** One line on stderr, redrawn; only on a terminal (logs and pipes get nothing). */
function progressBar(): { update: (done: number, total: number) => void; done: () => void } {
  const width = 30;
  let last = -1;
  return {
    update(done, total) {
      const pct = Math.floor((done / total) * 100);
      if (pct === last) return;
      last = pct;
      const filled = Math.round((pct / 100) * width);
      process.stderr.write(`\rbacktest [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${pct}% (${done}/${total} candles)`);
    },
    done() {
      process.stderr.write('\r\x1b[K');
    },
  };
}

/** The longest candle window the instances' strategies read, in ms; 0 when none reads candles. */
function longestWindowMs(instances: readonly import('../../config/instance-config.ts').InstanceConfig[]): number {
  let longest = 0;
  for (const instance of instances) for (const window of instance.strategy.candleWindows?.(instance.params) ?? []) longest = Math.max(longest, window.lookbackSec * 1000);
  return longest;
}

/**
 * The file read from as far before --from as the longest window reaches (an hour more: the
 * window's first hour), for the strategies' candle windows: without it a 30-day window on the
 * period's first days saw only the hours since --from. null when there is no --from or no window.
 */
async function windowHistory(
  args: { data: string; market: string; fromMs?: number | undefined; toMs?: number | undefined },
  shown: string,
  windowMs: number,
  load: import('../../candles/split-load.ts').CandleLoad,
): Promise<import('../../candles/index.ts').CandleSeries | null> {
  if (args.fromMs === undefined || windowMs === 0) return null;
  const fromMs = args.fromMs - windowMs - 3_600_000;
  return periodCandles({ ...args, fromMs }, shown, load.again({ fromMs, toMs: args.toMs }));
}

/** The candles of the period asked, a bad file or an empty period being bad input. */
async function periodCandles(
  args: { data: string; market: string; fromMs?: number | undefined; toMs?: number | undefined; fromText?: string | undefined; toText?: string | undefined },
  shown: string,
  load: import('../../candles/split-load.ts').CandleLoad,
  warn?: (text: string) => void,
): Promise<import('../../candles/index.ts').CandleSeries> {
  const candles = await readCandleInput(() => load.finish());
  if (candles.length === 0) {
    // Parsed again whole (only on this error) to say what the file does hold.
    const all = await readCandleInput(() => load.again({}).finish());
    const flag = args.fromMs !== undefined && args.toMs !== undefined ? '--from/--to' : args.fromMs !== undefined ? '--from' : '--to';
    const firstMs = all.timeSec(0) * 1000;
    const lastMs = all.timeSec(all.length - 1) * 1000;
    const holds = `the file holds ${isoMinute(firstMs)} to ${isoMinute(lastMs)}`;
    // A period inside the file's span that no candle opens in (shorter than a candle, or in a gap) is not outside the file.
    const inside = (args.fromMs ?? firstMs) <= lastMs && (args.toMs ?? lastMs) >= firstMs;
    const asked = `${args.fromMs === undefined ? 'its start' : isoMinute(args.fromMs)} to ${args.toMs === undefined ? 'its end' : isoMinute(args.toMs)}`;
    throw InputError.one(
      flag,
      inside
        ? `no candle of ${shown} opens in the period asked for (${asked}), though ${holds}: a period needs at least one candle's open (this one is shorter than a candle, or in a gap)`
        : `no candle of ${shown} falls in the period asked for: ${holds}`,
    );
  }
  if (warn !== undefined) for (const text of clippedPeriod(args, candles)) warn(text);
  return candles;
}

/** `2023-01-01T00:00Z`: a time as the candle messages name it. */
function isoMinute(ms: number): string {
  return new Date(ms).toISOString().replace(':00.000Z', 'Z');
}

/**
 * What of the period asked for has no candle at its start or its end (the file begins later or
 * ends sooner): the run is shorter than asked, and the header's period alone did not say why.
 */
function clippedPeriod(args: { fromMs?: number | undefined; toMs?: number | undefined; fromText?: string | undefined; toText?: string | undefined }, candles: import('../../candles/index.ts').CandleSeries): string[] {
  const intervalMs = Math.max(1, candles.intervalSec) * 1000;
  const firstMs = candles.timeSec(0) * 1000;
  const endMs = candles.timeSec(candles.length - 1) * 1000 + intervalMs;
  const notes: string[] = [];
  if (args.fromMs !== undefined && firstMs - args.fromMs >= intervalMs) notes.push(`--from ${args.fromText ?? isoMinute(args.fromMs)}: the first candle of the period opens at ${isoMinute(firstMs)}; the backtest starts there`);
  // --to as a date is its day's last millisecond: compared with the period's end, one ms is no gap.
  if (args.toMs !== undefined && args.toMs + 1 - endMs >= intervalMs) notes.push(`--to ${args.toText ?? isoMinute(args.toMs)}: the last candle of the period closes at ${isoMinute(endMs)}; the backtest ends there`);
  return notes;
}

/**
 * A candle file is input: a bad row, rows out of order, an empty file or a folder are the
 * user's to fix, so they are InputErrors (exit 2, E_INPUT) naming the file and each line.
 */
async function readCandleInput<T>(load: () => T | Promise<T>): Promise<T> {
  const { CandleCsvError, CandleFileTooLargeError } = await import('../../candles/csv-errors.ts');
  try {
    return await load();
  } catch (error) {
    if (error instanceof CandleFileTooLargeError) throw InputError.one('--data', error.rule);
    if (error instanceof CandleCsvError) {
      const lines = error.problems.map((p) => ({ source: error.source, field: `line ${p.line}`, rule: p.reason }));
      throw new InputError(error.stoppedEarly ? [...lines, { source: error.source, field: 'more', rule: `reading stopped after ${lines.length} problems: there may be more` }] : lines);
    }
    const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
    if (code === 'EISDIR') throw InputError.one('--data', 'is a folder: give a candle file (time,open,high,low,close,volume)');
    if (code !== '') throw InputError.one('--data', `cannot be read (${code})`);
    throw error;
  }
}
