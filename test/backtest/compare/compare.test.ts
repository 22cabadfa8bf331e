import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { comparisonToJson } from '../../../src/backtest/compare/json.ts';
import { MAX_RUNS, sideBySideRuns, sweepRuns } from '../../../src/backtest/compare/plan.ts';
import { runAll, startRuns } from '../../../src/backtest/compare/run-all.ts';
import { loadCandles, shareCandles } from '../../../src/candles/index.ts';
import { renderComparisonHtml } from '../../../src/backtest/report/html.ts';
import { renderComparison } from '../../../src/backtest/report/summary.ts';
import { InputError } from '../../../src/domain/errors.ts';
import { runCli } from '../../cli/run-cli.ts';

const FIXTURE = new URL('../../fixtures/candles/btc-1h-2021-03-01_14.csv', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'stacker-compare-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string): string => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const DCA = file('dca-quote.env', 'STRATEGY=dca\nSCHEDULE="0 */6 * * *"\nMARKET=BTC_USDT\nAMOUNT_QUOTE=20\n');
const COMMON = { data: FIXTURE, market: 'BTC_USDT', wallet: { USDT: '5000' }, slippagePct: '0', flex: null };

describe('sweeps', () => {
  it('run the cross product of the values, the first key varying slowest', () => {
    expect(sweepRuns(DCA, ['AMOUNT_QUOTE=10,20', 'DIP_PCT=5,10,15']).map((r) => r.label)).toEqual([
      'AMOUNT_QUOTE=10 DIP_PCT=5',
      'AMOUNT_QUOTE=10 DIP_PCT=10',
      'AMOUNT_QUOTE=10 DIP_PCT=15',
      'AMOUNT_QUOTE=20 DIP_PCT=5',
      'AMOUNT_QUOTE=20 DIP_PCT=10',
      'AMOUNT_QUOTE=20 DIP_PCT=15',
    ]);
  });

  it.each([
    ['amount_quote=10', /KEY=value1,value2/],
    ['AMOUNT_QUOTE=10,,20', /empty value/],
    ['AMOUNT_QUOTE=10,10', /lists a value twice/],
  ])('refuses %s before anything runs', (sweep, rule) => {
    expect(() => sweepRuns(DCA, [sweep])).toThrow(InputError);
    expect(() => sweepRuns(DCA, [sweep])).toThrow(rule);
  });

  it('keep a comma written \\, inside a value (a cron list), and refuse a schedule cut at its own comma saying so', () => {
    expect(sweepRuns(DCA, ['SCHEDULE=0 9 * * 1\\,4,0 9 * * *']).map((r) => r.overrides)).toEqual([{ SCHEDULE: '0 9 * * 1,4' }, { SCHEDULE: '0 9 * * *' }]);
    expect(() => sweepRuns(DCA, ['SCHEDULE=0 9 * * 1,3'])).toThrow(/SCHEDULE value "3" is no schedule: commas separate the sweep's values; write a comma inside a schedule as \\,/);
  });

  it(`refuses a key swept twice, and more than ${MAX_RUNS} runs, saying how many`, () => {
    expect(() => sweepRuns(DCA, ['DIP_PCT=1', 'DIP_PCT=2'])).toThrow(/swept twice/);
    const values = (n: number) => Array.from({ length: n }, (_, i) => String(i + 1)).join(',');
    expect(() => sweepRuns(DCA, [`AMOUNT_QUOTE=${values(9)}`, `DIP_PCT=${values(8)}`])).toThrow(`9 × 8 = 72 runs; at most ${MAX_RUNS}`);
  });
});

describe('side-by-side runs', () => {
  it('print, with --json, the comparison document SCHEMA.md describes, field for field', async () => {
    const json = JSON.parse(comparisonToJson(await runAll(COMMON, sweepRuns(DCA, ['AMOUNT_QUOTE=10,20']), 1))) as Record<string, unknown> & { runs: Array<Record<string, unknown>> };
    const schema = readFileSync(new URL('../../../src/backtest/report/SCHEMA.md', import.meta.url), 'utf8');
    const section = schema.slice(schema.indexOf('## Comparisons'), schema.indexOf('## Worked example'));
    const documented = [...section.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]);
    const found = [...Object.keys(json), ...Object.keys(json.runs[0] ?? {}).map((key) => `runs[].${key}`)];
    expect(found.sort()).toEqual([...documented].sort());
    expect(json.schema).toBe('stacker.backtest-comparison/1');
    expect(json.runs.map((run) => [run.label, run.overrides])).toEqual([
      ['AMOUNT_QUOTE=10', { AMOUNT_QUOTE: '10' }],
      ['AMOUNT_QUOTE=20', { AMOUNT_QUOTE: '20' }],
    ]);
  });

  it('are one per file, labelled by the instance, or by the path when two files name one instance; a file given twice is refused', () => {
    const label = (file: string): string => (file.split('/').pop() ?? file).replace(/\.env$/, '');
    expect(sideBySideRuns(['a/dca.env', 'b/weekly.env'], label).map((run) => run.label)).toEqual(['dca', 'weekly']);
    expect(sideBySideRuns(['a/dca.env', 'b/dca.env'], label).map((run) => run.label)).toEqual(['a/dca.env', 'b/dca.env']);
    expect(() => sideBySideRuns(['a/dca.env', 'a/dca.env'], label)).toThrow('--strategy: a/dca.env is given twice: each file is one run of the comparison');
  });
});

describe('several backtests compared', () => {
  it('give the same bytes in worker threads as one after another, in the order asked', async () => {
    const specs = sweepRuns(DCA, ['AMOUNT_QUOTE=10,20,40']);
    const alone = comparisonToJson(await runAll(COMMON, specs, 1));
    const threaded = comparisonToJson(await runAll(COMMON, specs, 3));
    expect(threaded).toBe(alone);
    const runs = (JSON.parse(alone) as { runs: Array<{ label: string; report: { benchmarks: { strategy: { invested: string } } } }> }).runs;
    expect(runs.map((r) => r.label)).toEqual(['AMOUNT_QUOTE=10', 'AMOUNT_QUOTE=20', 'AMOUNT_QUOTE=40']);
    // Twice the quote per slot spends about twice as much.
    const invested = runs.map((r) => Number(r.report.benchmarks.strategy.invested));
    expect(invested[1]! / invested[0]!).toBeCloseTo(2, 1);
  });

  it('read the candles parsed once by the caller as they would read the file, in worker threads and alone', async () => {
    const specs = sweepRuns(DCA, ['AMOUNT_QUOTE=10,20,40']);
    const period = { fromMs: Date.UTC(2021, 2, 3), toMs: Date.UTC(2021, 2, 11, 5) };
    const fromFile = comparisonToJson(await runAll({ ...COMMON, ...period }, specs, 1));
    const candles = shareCandles(loadCandles(FIXTURE, { market: 'BTC_USDT', ...period, shared: true }));
    // The file named is not read again: a path that does not exist proves it.
    const given = { ...COMMON, ...period, data: join(dir, 'not-read.csv'), candles };
    expect(comparisonToJson(await runAll(given, specs, 3)).replaceAll('not-read.csv', FIXTURE.split('/').pop() as string)).toBe(fromFile);
    expect(comparisonToJson(await runAll(given, specs, 1)).replaceAll('not-read.csv', FIXTURE.split('/').pop() as string)).toBe(fromFile);
  });

  it('start their threads before the runs are given, and end them when none is', async () => {
    const runs = startRuns(3, 2);
    await runs.close();
    const again = startRuns(3, 2);
    try {
      const results = await again.run(COMMON, sweepRuns(DCA, ['AMOUNT_QUOTE=10,20,40']));
      expect(results.map((r) => r.label)).toEqual(['AMOUNT_QUOTE=10', 'AMOUNT_QUOTE=20', 'AMOUNT_QUOTE=40']);
    } finally {
      await again.close();
    }
  });

  it('draw one account-value line per run on one chart', async () => {
    const weekly = file('dca-weekly.env', 'STRATEGY=dca\nSCHEDULE="0 9 * * 1"\nMARKET=BTC_USDT\nAMOUNT=0.001\n');
    const results = await runAll(COMMON, sideBySideRuns([DCA, weekly], (f) => f.split('/').pop() ?? f), 1);
    const page = renderComparisonHtml(results);
    expect(page.match(/<svg class="chart"/g)).toHaveLength(1);
    expect(page.match(/class="series run-line run-\d"/g)).toHaveLength(2);
    expect(page).toContain('dca-weekly.env');
  });
});

describe("a comparison's settings", () => {
  it('says, in the terminal and on the page, the market rules the runs traded on, where they came from, and the slippage', async () => {
    const results = await runAll({ ...COMMON, slippagePct: '0.5' }, sweepRuns(DCA, ['AMOUNT_QUOTE=10,20']), 1);
    const text = renderComparison(results, { color: false });
    expect(text).toContain('  Market rules: demo rules built into stacker (made up; --rules exchange for the real ones): taker fee 0.1 % (maker 0.1 %), min amount 0.00001 BTC, min total 5 USDT, max total none, decimals: amount 6, price 2, fee 8\n');
    expect(text).toContain('  Slippage: 0.5 %\n');
    const page = renderComparisonHtml(results);
    expect(page).toContain('<tr><td>Market rules</td><td>demo rules built into stacker (made up; --rules exchange for the real ones): taker fee 0.1 %');
    expect(page).toContain('<tr><td>Slippage</td><td>0.5 %</td></tr>');
  });

  it('are said run by run where the runs differ', async () => {
    const [a, b] = await runAll(COMMON, sweepRuns(DCA, ['AMOUNT_QUOTE=10,20']), 1);
    if (a === undefined || b === undefined) throw new Error('two runs expected');
    const slipped = { ...b, report: { ...b.report, settings: { ...b.report.settings, slippagePct: '1' } } };
    const text = renderComparison([a, slipped], { color: false });
    expect(text).toContain('  Slippage (AMOUNT_QUOTE=10): 0 %\n  Slippage (AMOUNT_QUOTE=20): 1 %\n');
    expect(text.match(/Market rules/g)).toHaveLength(1);
  });
});

describe('a comparison with a run whose strategy failed part way', () => {
  it('marks that run in the table, in the terminal and on the page, and says under the table when, why and how many slots it missed', async () => {
    const weekly = file('dca-weekly3.env', 'STRATEGY=dca\nSCHEDULE="0 9 * * 1"\nMARKET=BTC_USDT\nAMOUNT=0.001\n');
    const [fine, other] = await runAll(COMMON, sideBySideRuns([DCA, weekly], (f) => f.split('/').pop() ?? f), 1);
    if (fine === undefined || other === undefined) throw new Error('two runs expected');
    const failure = { instance: 'dca-weekly3', atMs: Date.UTC(2021, 2, 8, 9), at: '2021-03-08T09:00:00.000Z', reason: 'strategy threw: TypeError: boom', slotsNotRun: 1 };
    const failed = { ...other, report: { ...other.report, strategyFailures: [failure] } };
    const text = renderComparison([fine, failed], { color: false });
    const rows = text.split('\n').map((row) => row.trimStart());
    expect(rows.find((row) => row.startsWith('dca-weekly3.env'))).toMatch(/2021-03-08\s*$/);
    expect(rows.find((row) => row.startsWith('dca-quote.env'))).not.toMatch(/2021-03-08/);
    expect(text).toContain('dca-weekly3.env: strategy failed: dca-weekly3 on 2021-03-08 09:00Z, disabled (1 later slots not run): strategy threw: TypeError: boom\n');
    const page = renderComparisonHtml([fine, failed]);
    expect(page).toContain('<th>Strategy failed</th>');
    expect(page).toContain('dca-weekly3 on 2021-03-08 09:00Z, disabled (1 later slots not run): strategy threw: TypeError: boom');
  });
});

describe('stacker backtest with several strategies or --sweep', () => {
  const base = ['backtest', '--data', FIXTURE, '--market', 'BTC_USDT', '--wallet', 'USDT=5000'];

  it('prints one comparison row per strategy file, each on its own wallet; --together runs them on one', async () => {
    const weekly = file('dca-weekly2.env', 'STRATEGY=dca\nSCHEDULE="0 9 * * 1"\nMARKET=BTC_USDT\nAMOUNT=0.001\n');
    const side = await runCli([...base, '--strategy', DCA, '--strategy', weekly, '--json']);
    expect(side.code).toBe(0);
    expect((JSON.parse(side.stdout) as { runs: unknown[] }).runs).toHaveLength(2);
    const together = await runCli([...base, '--strategy', DCA, '--strategy', weekly, '--together', '--json']);
    expect(together.code).toBe(0);
    expect((JSON.parse(together.stdout) as { schema: string; instances: unknown[] }).instances).toHaveLength(2);
  });

  it('refuses a swept key the strategy does not have, or a value it does not take, naming it; nothing runs (exit 2)', async () => {
    const unknown = await runCli([...base, '--strategy', DCA, '--sweep', 'AMOUNT_QUOTA=10,20']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('AMOUNT_QUOTA: is not a key of strategy dca or of the engine; did you mean AMOUNT_QUOTE?');
    const bad = await runCli([...base, '--strategy', DCA, '--sweep', 'AMOUNT_QUOTE=10,lots']);
    expect(bad.code).toBe(2);
    // The value is the sweep's, not the file's: the message says so.
    expect(bad.stderr).toMatch(/\(AMOUNT_QUOTE from --sweep\): AMOUNT_QUOTE: .*"lots"/);
    expect(bad.stdout).toBe('');
    // A swept strategy reads the file's keys as its own: the file's keys are not the file's fault.
    const other = await runCli([...base, '--strategy', DCA, '--sweep', 'STRATEGY=dca,value-avg']);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('dca-quote.env (STRATEGY=value-avg from --sweep): AMOUNT_QUOTE: is not a key of strategy value-avg');
    expect(other.stdout).toBe('');
  });

  it('refuses a swept value only a run can judge (another market than the candles) as bad input, exit 2, naming the run', async () => {
    const result = await runCli([...base, '--strategy', DCA, '--sweep', 'MARKET=ETH_USDT,BTC_USDT']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/MARKET: is ETH_USDT, but this backtest trades BTC_USDT only/);
    expect(result.stderr).toContain('(run MARKET=ETH_USDT)');
    expect(result.stderr).not.toMatch(/unexpected/);
    expect(result.stdout).toBe('');
  });

  it('names every bad value of a sweep at once, each once, and the run of a value only the market refuses (also a sweep of one value)', async () => {
    const bad = await runCli([...base, '--strategy', DCA, '--sweep', 'AMOUNT_QUOTE=-1,10,abc', '--sweep', 'CATCH_UP=skip,last']);
    expect(bad.code).toBe(2);
    const lines = bad.stderr.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/\(AMOUNT_QUOTE from --sweep\): AMOUNT_QUOTE: .*\(got -1\)$/);
    expect(lines[1]).toMatch(/\(AMOUNT_QUOTE from --sweep\): AMOUNT_QUOTE: .*\(got "abc"\)$/);
    const small = await runCli([...base, '--strategy', DCA, '--sweep', 'AMOUNT_QUOTE=3,10,4']);
    expect(small.code).toBe(2);
    expect(small.stderr).toMatch(/\(run AMOUNT_QUOTE=3\): AMOUNT_QUOTE: 3 USDT is below BTC_USDT's minimum order total 5\n.*\(run AMOUNT_QUOTE=4\): AMOUNT_QUOTE: 4 USDT is below/);
    const one = await runCli([...base, '--strategy', DCA, '--sweep', 'AMOUNT_QUOTE=3']);
    expect(one.stderr).toContain('(run AMOUNT_QUOTE=3): AMOUNT_QUOTE: 3 USDT is below');
    expect(one.stdout).toBe('');
  });

  it('refuses --sweep with two strategy files', async () => {
    const result = await runCli([...base, '--strategy', DCA, '--strategy', DCA, '--sweep', 'AMOUNT_QUOTE=10,20']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--sweep: sweeps one strategy file');
  });
});
