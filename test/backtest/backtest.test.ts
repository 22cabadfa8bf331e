import { watchRun } from './observed.ts';
import { execFile } from 'node:child_process';
import { type AddressInfo } from 'node:net';
import { createServer } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { loadCandles, parseCandles } from '../../src/candles/index.ts';
import { type RunObserver, runBacktest } from '../../src/backtest/driver.ts';
import { buildReport } from '../../src/backtest/report/build.ts';
import { renderSummary } from '../../src/backtest/report/summary.ts';
import { priceChart } from '../../src/backtest/report/charts.ts';
import { loadStrategyFiles } from '../../src/config/daemon-config.ts';
import { Decimal, formatDecimal, roundUp } from '../../src/domain/money.ts';
import { defineStrategy, param } from '../../strategies/sdk.ts';

const run = promisify(execFile);
const CLI = resolve(import.meta.dirname, '../../src/cli.ts');
const FIXTURE = resolve(import.meta.dirname, '../fixtures/candles/btc-1h-2021-03-01_14.csv');
const dir = mkdtempSync(join(tmpdir(), 'stacker-backtest-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function strategyFile(name: string, lines: string): string {
  const path = join(dir, `${name}.env`);
  writeFileSync(path, lines);
  return path;
}

/** The expected buys computed from the CSV text alone, by the documented rule — not by our code. */
function expectedBuys(csv: string, slotHourUtc: number, amount: string): { count: number; quote: Decimal; fees: Decimal } {
  const rows = csv.trim().split('\n').slice(1).map((line) => line.split(','));
  let count = 0;
  let quote = new Decimal(0);
  let fees = new Decimal(0);
  const firstDay = Math.floor(Number(rows[0]?.[0]) / 86_400) * 86_400;
  const lastTime = Number(rows.at(-1)?.[0]);
  for (let day = firstDay; day + slotHourUtc * 3600 <= lastTime; day += 86_400) {
    const slot = day + slotHourUtc * 3600;
    if (slot <= Number(rows[0]?.[0]) - 1) continue;
    const row = rows.find((r) => Number(r[0]) >= slot);
    if (row === undefined) continue;
    const total = new Decimal(amount).mul(new Decimal(row[1] as string));
    count += 1;
    quote = quote.add(total);
    fees = fees.add(roundUp(total.mul('0.001'), 8)); // BTC_USDT demo rules: taker 0.1 %, fee to 8 decimals
  }
  return { count, quote, fees };
}

/** The instances backtested over the fixture from 10000 USDT, without slippage. */
function backtestFixture(instances: Awaited<ReturnType<typeof loadStrategyFiles>>, observer?: RunObserver) {
  return runBacktest({
    candles: loadCandles(FIXTURE, { market: 'BTC_USDT' }),
    market: 'BTC_USDT',
    dataFile: FIXTURE,
    instances,
    wallet: new Map([['USDT', new Decimal('10000')]]),
    slippagePct: new Decimal(0),
    flex: null,
    ...(observer === undefined ? {} : { observer }),
  });
}

describe('a backtest over real candles', () => {
  it('buys at the fill rule on every slot; totals match a hand computation from the CSV', async () => {
    const instances = await loadStrategyFiles([strategyFile('dca', 'STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nAMOUNT=0.001\n')]);
    const backtestRun = await backtestFixture(instances);
    const report = buildReport(backtestRun) as unknown as {
      orders: { total: number; byStatus: Record<string, number> };
      totals: { baseAcquired: string; quoteSpent: string; fees: Record<string, string> };
      data: { candles: number; gaps: { count: number; missingCandles: number } };
      wallet: { final: Record<string, string> };
    };
    const expected = expectedBuys(readFileSync(FIXTURE, 'utf8'), 9, '0.001');
    expect(expected.count).toBe(14);
    expect(report.orders.total).toBe(expected.count);
    expect(report.orders.byStatus).toEqual({ FILLED: expected.count });
    expect(report.totals.baseAcquired).toBe(formatDecimal(new Decimal('0.001').mul(expected.count)));
    expect(report.totals.quoteSpent).toBe(formatDecimal(expected.quote));
    expect(report.totals.fees).toEqual({ USDT: formatDecimal(expected.fees) });
    expect(report.wallet.final['USDT']).toBe(formatDecimal(new Decimal('10000').sub(expected.quote).sub(expected.fees)));
    expect(report.data).toMatchObject({ candles: 335, gaps: { count: 1, missingCandles: 1 } });
  });

  it('samples the account in time order when a slot falls inside a candle: a close is sampled once the slots before it have run', async () => {
    const instances = await loadStrategyFiles([strategyFile('half', 'STRATEGY=dca\nSCHEDULE="30 9 * * *"\nMARKET=BTC_USDT\nAMOUNT=0.001\n')]);
    const run = await backtestFixture(instances);
    const points = run.facts.equity.points();
    expect(points.map((p) => p.timeMs)).toEqual([...points.map((p) => p.timeMs)].sort((a, b) => a - b));
    // The 09:00 candle closes at 10:00, after the 09:30 buy: its sample holds the bought base.
    const slot = Date.UTC(2021, 2, 2, 9, 30);
    const atClose = points.find((p) => p.timeMs === slot + 30 * 60_000);
    const atSlot = points.find((p) => p.timeMs === slot);
    // Bought by then: 0.001 on 1 March and 0.001 on 2 March; only the price moved between the two samples.
    expect(atClose!.value.sub(atSlot!.value).eq(new Decimal('0.002').mul(atClose!.price.sub(atSlot!.price)))).toBe(true);
    expect(run.facts.drawdown.samples).toBe(1 + run.slots + run.candles.count);
  });

  it('says which slots did not fill at their own time: those in a gap of the data, and those after its last open (not run)', async () => {
    const rows = readFileSync(FIXTURE, 'utf8').trim().split('\n');
    // Without 2021-03-05 and 03-06 (rows 4*24+1 … 6*24): two daily slots fall in the gap.
    const gapped = [...rows.slice(0, 4 * 24 + 1), ...rows.slice(6 * 24 + 1)].join('\n');
    const instances = await loadStrategyFiles([strategyFile('late', 'STRATEGY=dca\nSCHEDULE="30 23 * * *"\nMARKET=BTC_USDT\nAMOUNT=0.001\n')]);
    const report = buildReport(
      await runBacktest({ candles: parseCandles(gapped, { market: 'BTC_USDT' }), market: 'BTC_USDT', dataFile: 'gapped.csv', instances, wallet: new Map([['USDT', new Decimal('10000')]]), slippagePct: new Decimal(0), flex: null }),
    );
    const day = (n: number): number => Date.UTC(2021, 2, n, 23, 30);
    // The data ends with the 03-14 23:00 candle: the 23:30 slot of that day is in the period, with no open after it.
    expect(report.period.toMs).toBe(Date.UTC(2021, 2, 15));
    expect(report.slotsAfterData).toEqual({ count: 1, firstMs: day(14) });
    // 03-04 23:30 waits for 03-07 00:00 as well, and 03-05 and 03-06 are in the gap.
    expect(report.slotsInGaps).toEqual({ count: 3, firstMs: day(4) });
    expect(report.slots).toBe(13);
    const text = renderSummary(report, { color: false });
    expect(text).toContain("3 in gaps of the data, filled at the first open after (first 2021-03-04 23:30Z); 1 more slot after the last candle's open, not run: no open left to fill at (2021-03-14 23:30Z)");
  });

  it('says which slots never ran because their wall time did not exist, the clocks going forward, as live', async () => {
    // New York went from 02:00 to 03:00 on 2021-03-14: a daily 02:30 there has no slot that day.
    const instances = await loadStrategyFiles([strategyFile('ny', 'STRATEGY=dca\nSCHEDULE="30 2 * * *"\nTIMEZONE=America/New_York\nMARKET=BTC_USDT\nAMOUNT=0.001\n')]);
    const report = buildReport(
      await runBacktest({ candles: loadCandles(FIXTURE, { market: 'BTC_USDT' }), market: 'BTC_USDT', dataFile: 'btc.csv', instances, wallet: new Map([['USDT', new Decimal('10000')]]), slippagePct: new Decimal(0), flex: null }),
    );
    expect(report.slots).toBe(13);
    expect(report.slotsSkippedByClockChange).toEqual({ count: 1, first: '2021-03-14 02:30 America/New_York' });
    expect(renderSummary(report, { color: false })).toContain('1 slot never run: its wall time did not exist, the clocks going forward (first 2021-03-14 02:30 America/New_York)');
  });

  it('values no slot inside a gap of the data: its buys fill at the first open after it, and only the closes after it value them', async () => {
    // Three days at 100, a gap of three days, three days at 50: the buys of the gap's slots fill at 50.
    const hour = 3600;
    const start = Date.UTC(2021, 2, 1) / 1000;
    const rows = ['time,open,high,low,close,volume'];
    for (let t = start; t < start + 9 * 24 * hour; t += hour) {
      const day = Math.floor((t - start) / (24 * hour));
      if (day >= 3 && day < 6) continue;
      const price = day < 3 ? '100' : '50';
      rows.push(`${t},${price},${price},${price},${price},1`);
    }
    const instances = await loadStrategyFiles([strategyFile('gap-dca', 'STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nAMOUNT_QUOTE=100\n')]);
    const run = await runBacktest({ candles: parseCandles(rows.join('\n'), { market: 'BTC_USDT' }), market: 'BTC_USDT', dataFile: 'gap.csv', instances, wallet: new Map([['USDT', new Decimal('1000')]]), slippagePct: new Decimal(0), flex: null });
    const gapFromMs = (start + 3 * 24 * hour) * 1000;
    const gapToMs = (start + 6 * 24 * hour) * 1000;
    expect(run.facts.equity.points().filter((p) => p.timeMs > gapFromMs && p.timeMs < gapToMs)).toEqual([]);
    const report = buildReport(run);
    expect(report.slotsInGaps).toEqual({ count: 3, firstMs: gapFromMs + 9 * hour * 1000 });
    // Valued at 100 through the gap, the gap's buys (at 50) made the account look richer and put the peak in the gap.
    expect(report.drawdown.max?.peakTimeMs).toBeLessThan(gapFromMs);
    expect(Number(report.drawdown.max?.peakValue)).toBeLessThanOrEqual(1000);
    // The price line breaks over the gap rather than draw prices nobody saw; without a gap it is one line.
    const segments = (svg: string): number => (/class="series price-line" d="([^"]*)"/.exec(svg)?.[1] ?? '').split('M').length - 1;
    expect(segments(priceChart(run, []))).toBe(2);
    expect(segments(priceChart(await backtestFixture(instances), []))).toBe(1);
  });

  it('respects a weekly budget across the run, refusing with over-budget', async () => {
    const instances = await loadStrategyFiles([strategyFile('capped', 'STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nAMOUNT=0.001\nBUDGET_QUOTE_PER_WEEK=150\n')]);
    const watched = watchRun();
    await backtestFixture(instances, watched.observer);
    // ~50 USDT a buy: three buys fit in 150 a week, the rest of each ISO week is refused.
    const byWeek = new Map<number, number>();
    for (const order of watched.orders()) {
      const monday = Math.floor((order.slotTimeMs / 86_400_000 + 3) / 7);
      byWeek.set(monday, (byWeek.get(monday) ?? 0) + 1);
    }
    for (const count of byWeek.values()) expect(count).toBeLessThanOrEqual(3);
    expect(watched.refusals().some((r) => r.reason === 'over-budget')).toBe(true);
    const weekly = new Map<number, Decimal>();
    for (const order of watched.orders()) {
      const week = Math.floor((order.slotTimeMs / 86_400_000 + 3) / 7);
      weekly.set(week, (weekly.get(week) ?? new Decimal(0)).add(order.filledQuote));
    }
    for (const spent of weekly.values()) expect(spent.lte(150)).toBe(true);
  });

  it('reports a strategy that failed, when and why, and the slots it then did not run, instead of a quiet run', async () => {
    let calls = 0;
    const flaky = defineStrategy({
      name: 'flaky',
      describe: 'Fails on its third slot.',
      params: {},
      reads: () => [],
      async decide() {
        calls += 1;
        if (calls === 3) throw new TypeError('the third call broke');
        return [];
      },
    });
    const [dcaInstance] = await loadStrategyFiles([strategyFile('steady', 'STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nAMOUNT=0.001\n')]);
    const [flakyInstance] = await loadStrategyFiles([strategyFile('flaky', 'STRATEGY=flaky\nSCHEDULE="0 9 * * *"\n')], { strategies: new Map([[flaky.name, flaky as never]]) });
    const run = await backtestFixture([dcaInstance!, flakyInstance!]);
    const report = buildReport(run);
    // The fixture's 14 days: the third slot fails, the 11 after it do not run; the other instance buys on.
    expect(report.strategyFailures).toEqual([{ instance: 'flaky', atMs: Date.UTC(2021, 2, 3, 9), at: '2021-03-03T09:00:00.000Z', reason: 'strategy flaky failed: the third call broke', slotsNotRun: 11 }]);
    expect(report.orders.filled).toBe(14);
  });

  it('fails a strategy that reads the candles of a market it declared no window for, saying so, rather than handing it no candles', async () => {
    const stray = defineStrategy({
      name: 'stray-candles',
      describe: 'Reads a window it never declared.',
      params: {},
      reads: () => ['candles'],
      candleWindows: () => [{ market: 'BTC_USDT', lookbackSec: 86_400 }],
      async decide(view) {
        view.candles('ETH_USDT');
        return [];
      },
    });
    const [instance] = await loadStrategyFiles([strategyFile('stray', 'STRATEGY=stray-candles\nSCHEDULE="0 9 * * *"\n')], { strategies: new Map([[stray.name, stray as never]]) });
    const report = buildReport(await backtestFixture([instance!]));
    expect(report.strategyFailures[0]?.reason).toBe(
      "strategy stray-candles failed: strategy of stray read the candles of ETH_USDT without a window for it; add { market: 'ETH_USDT', lookbackSec } to its candleWindows",
    );
  });

  it("shows a strategy's candle window the hours before --from: a window reaching back past the period's start is whole", async () => {
    const seen: number[] = [];
    const probe = defineStrategy({
      name: 'window-probe',
      describe: 'Counts the candles of its window.',
      params: { MARKET: param.market({ description: 'Where.', example: 'BTC_USDT' }) },
      reads: () => ['candles'],
      candleWindows: (params) => [{ market: params.MARKET, lookbackSec: 3 * 86_400 }],
      async decide(view, params) {
        seen.push(view.candles(params.MARKET).length);
        return [];
      },
    });
    const instances = await loadStrategyFiles([strategyFile('window-probe', 'STRATEGY=window-probe\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\n')], { strategies: new Map([[probe.name, probe as never]]) });
    const fromMs = Date.UTC(2021, 2, 10);
    const over = (history: boolean) =>
      runBacktest({
        candles: loadCandles(FIXTURE, { market: 'BTC_USDT', fromMs }),
        ...(history ? { history: loadCandles(FIXTURE, { market: 'BTC_USDT', fromMs: fromMs - 3 * 86_400_000 - 3_600_000 }) } : {}),
        market: 'BTC_USDT',
        dataFile: FIXTURE,
        instances,
        wallet: new Map([['USDT', new Decimal('1000')]]),
        slippagePct: new Decimal(0),
        flex: null,
      });
    const whole = await over(true);
    // Five slots, 2021-03-10 to 14 at 09:00, each with the 72 hours before it.
    expect(seen).toEqual([72, 72, 72, 72, 72]);
    expect(whole.fromMs).toBe(fromMs);
    seen.length = 0;
    await over(false);
    expect(seen[0]).toBe(9);

    // The CLI reads the file from before --from for them: dca's dip window on the first slot.
    const dip = strategyFile('dip-window', 'STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nAMOUNT_QUOTE=10\nDIP_PCT=1\nDIP_MULTIPLIER=2\nDIP_LOOKBACK=3d\n');
    const journal = join(dir, 'dip-window.db');
    await run(process.execPath, [CLI, 'backtest', '--data', FIXTURE, '--market', 'BTC_USDT', '--strategy', dip, '--from', '2021-03-05', '--journal', journal, '--json']);
    const read = JSON.parse((await run(process.execPath, [CLI, 'journal', '--journal', journal, '--json'])).stdout) as { entries: Array<{ kind: string; slotTime: string; intent: { data?: Record<string, string> } }> };
    const notes = read.entries.filter((e) => e.kind === 'note').map((e) => [e.slotTime, e.intent.data?.['candles']]);
    expect(notes).toContainEqual(['2021-03-05T09:00:00.000Z', '72']);
  });

  it('pays flex interest for every day of the period, not only up to the last slot that read the clock', async () => {
    // One slot on the first day; 1000 USDT in flex at 36.5 % a year earns 1 USDT at each 00:00 UTC
    // after the day it was seeded: 2 March to 15 March, where the last candle (14 March, 23:00)
    // closes and the period ends, is 14 payments: 14 whole days held, 14 days paid.
    const instances = await loadStrategyFiles([strategyFile('once', 'STRATEGY=dca\nSCHEDULE="0 9 1 3 *"\nMARKET=BTC_USDT\nAMOUNT=0.001\n')]);
    const input = { candles: loadCandles(FIXTURE, { market: 'BTC_USDT' }), market: 'BTC_USDT', dataFile: FIXTURE, instances, wallet: new Map([['USDT', new Decimal('100')]]), slippagePct: new Decimal(0) };
    const without = await runBacktest({ ...input, flex: null });
    const withFlex = await runBacktest({ ...input, flex: { planId: 'usdt-flex', ticker: 'USDT', amount: new Decimal('1000'), aprPct: new Decimal('36.5') } });
    expect(formatDecimal((withFlex.finalBalances.USDT as Decimal).sub(without.finalBalances.USDT as Decimal))).toBe('1014');
    const report = buildReport(withFlex);
    expect(report.value.final).toBe(formatDecimal((without.finalBalances.USDT as Decimal).add(1014).add((without.finalBalances.BTC as Decimal).mul(withFlex.candles.lastClose))));
    // Said in the report: the terminal used to show only a PnL the buys did not explain.
    expect(report.flex.interest).toEqual({ ticker: 'USDT', amount: '14' });
    expect(renderSummary(report, { color: false })).toMatch(/Flex interest +14 +USDT earned at 36\.5 % a year; 0 flex operations\n/);
    expect(buildReport(without).flex.interest).toBeNull();
  });

  it('gives a byte-identical JSON report for the same input (CLI, twice)', async () => {
    const file = strategyFile('same', 'STRATEGY=dca\nSCHEDULE="0 */6 * * *"\nMARKET=BTC_USDT\nAMOUNT=0.0005\n');
    const args = [CLI, 'backtest', '--json', '--data', FIXTURE, '--market', 'BTC_USDT', '--strategy', file, '--wallet', 'USDT=500', '--slippage-pct', '0.1'];
    const [first, second] = await Promise.all([run(process.execPath, args), run(process.execPath, args)]);
    expect(first.stdout.length).toBeGreaterThan(500);
    expect(first.stdout).toBe(second.stdout);
    expect(JSON.parse(first.stdout)).toMatchObject({ schema: 'stacker.backtest-report/1', market: 'BTC_USDT' });
  });

  it("prints, for the README's backtest example, the very output the README shows", async () => {
    // The README's command as written (its `\` line breaks joined), without --report; run from
    // the repository, so its relative paths are the README's own.
    const readme = readFileSync(resolve(import.meta.dirname, '../../README.md'), 'utf8');
    const command = /\*\*Backtest:\*\*\n\n```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    const shown = /```text\n(Backtest [\s\S]*?)```/.exec(readme)?.[1] ?? '';
    const words = command.replace(/#.*$/gm, '').replace(/\\\n/g, ' ').trim().split(/\s+/);
    expect(words.slice(0, 4)).toEqual(['npm', 'start', '--', 'backtest']);
    const flags = words.slice(4);
    const report = flags.indexOf('--report');
    if (report !== -1) flags.splice(report, 2);
    const { stdout } = await run(process.execPath, [CLI, 'backtest', ...flags], { cwd: resolve(import.meta.dirname, '../..') });
    expect(shown.length).toBeGreaterThan(500);
    expect(stdout.trimEnd()).toBe(shown.trimEnd());
  });

  it('names the flag and the rule for bad input, and exits 2', async () => {
    const result = await run(process.execPath, [CLI, 'backtest', '--data', FIXTURE, '--market', 'BTC_USDT', '--strategy', 'nope.env', '--wallet', 'usdt=abc', '--from', 'yesterday']).catch((error: { code: number; stderr: string }) => error);
    expect('code' in result ? result.code : 0).toBe(2);
    const text = 'stderr' in result ? result.stderr : '';
    expect(text).toMatch(/--wallet/);
    expect(text).toMatch(/--from/);
  });

  it('refuses an instance file with ENABLED=false, alone or side by side: it would run no slot, and the run said nothing', async () => {
    const off = strategyFile('off', 'STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nAMOUNT=0.001\nENABLED=false\n');
    const on = strategyFile('on', 'STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nAMOUNT=0.001\n');
    const fail = (error: { code: number; stderr: string }) => error;
    for (const files of [[off], [on, off]]) {
      const result = await run(process.execPath, [CLI, 'backtest', '--data', FIXTURE, '--market', 'BTC_USDT', ...files.flatMap((file) => ['--strategy', file])]).catch(fail);
      expect('code' in result ? result.code : 0).toBe(2);
      expect(result.stderr).toContain(`${off}: ENABLED: is false: the daemon would not run this instance`);
    }
    // Together on one wallet, as the daemon runs them: the disabled one sits out, as it would live.
    const together = await run(process.execPath, [CLI, 'backtest', '--json', '--data', FIXTURE, '--market', 'BTC_USDT', '--strategy', on, '--strategy', off, '--together']);
    expect((JSON.parse(together.stdout) as { slots: number }).slots).toBeGreaterThan(0);
  });

  it('counts an account cap from the env over all of the account\'s instances, as the daemon does, and says it did', async () => {
    const a = strategyFile('capped-a', 'STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nAMOUNT_QUOTE=10\nACCOUNT=main\n');
    const b = strategyFile('capped-b', 'STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nAMOUNT_QUOTE=10\nACCOUNT=main\n');
    const envFile = strategyFile('caps', 'STACKER_ACCOUNT_main_BUDGET_QUOTE_PER_DAY=15\n');
    type Report = { orders: { filled: number }; slots: number; refusals: { byReason: Record<string, number> }; settings: { accountCaps: unknown[] } };
    const backtestOf = async (...extra: string[]): Promise<Report> =>
      JSON.parse((await run(process.execPath, [CLI, 'backtest', '--json', '--data', FIXTURE, '--market', 'BTC_USDT', '--strategy', a, '--strategy', b, '--together', ...extra])).stdout) as Report;

    const free = await backtestOf();
    expect(free.orders.filled).toBe(free.slots);
    expect(free.settings.accountCaps).toEqual([]);
    // 10 + 10 USDT a day against 15: one of the two buys of each day is refused.
    const capped = await backtestOf('--env-file', envFile);
    expect(capped.orders.filled).toBe(free.slots / 2);
    expect(capped.refusals.byReason).toEqual({ 'over-budget': free.slots / 2 });
    expect(capped.settings.accountCaps).toEqual([{ account: 'main', perDay: '15', perWeek: null, perMonth: null, asset: 'USDT', timeZone: 'UTC' }]);
    const text = (await run(process.execPath, [CLI, 'backtest', '--data', FIXTURE, '--market', 'BTC_USDT', '--strategy', a, '--strategy', b, '--together', '--env-file', envFile])).stdout;
    expect(text).toContain("Account caps, all of an account's instances together: main: 15 USDT a day (UTC)");

    // A sweep's runs (worker threads) count it too, each on its own wallet: 20 a day never fits under 15, and is said so.
    const sweep = JSON.parse((await run(process.execPath, [CLI, 'backtest', '--json', '--data', FIXTURE, '--market', 'BTC_USDT', '--strategy', a, '--sweep', 'AMOUNT_QUOTE=10,20', '--env-file', envFile])).stdout) as { runs: Array<{ report: Report }> };
    expect(sweep.runs.map((r) => r.report.orders.filled)).toEqual([free.slots / 2, 0]);
    expect(sweep.runs[1]?.report.refusals.byReason).toEqual({ 'budget-too-small': free.slots / 2 });

    const bad = await run(process.execPath, [CLI, 'backtest', '--data', FIXTURE, '--market', 'BTC_USDT', '--strategy', a], { env: { ...process.env, STACKER_ACCOUNT_main_BUDGET_QUOTE_PER_DAY: '-1' } }).catch((error: { code: number; stderr: string }) => error);
    expect('code' in bad ? bad.code : 0).toBe(2);
    expect(bad.stderr).toContain('STACKER_ACCOUNT_main_BUDGET_QUOTE_PER_DAY: must be a plain decimal > 0');
  });

  it('says what is wrong with a --flex pair, and refuses --flex-apr without --flex instead of ignoring it', async () => {
    const strategy = strategyFile('flexed', 'STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nAMOUNT=0.001\n');
    const fail = (error: { code: number; stderr: string }) => error;
    const negative = await run(process.execPath, [CLI, 'backtest', '--data', FIXTURE, '--market', 'BTC_USDT', '--strategy', strategy, '--flex', 'USDT=-1']).catch(fail);
    expect('code' in negative ? negative.code : 0).toBe(2);
    expect(negative.stderr).toContain('--flex: pair "USDT=-1": the amount must be a plain decimal ≥ 0');
    const alone = await run(process.execPath, [CLI, 'backtest', '--data', FIXTURE, '--market', 'BTC_USDT', '--strategy', strategy, '--flex-apr', '7']).catch(fail);
    expect('code' in alone ? alone.code : 0).toBe(2);
    expect(alone.stderr).toContain('--flex-apr: is the interest of a --flex investment, and no --flex is given');
    const seeded = JSON.parse((await run(process.execPath, [CLI, 'backtest', '--json', '--data', FIXTURE, '--market', 'BTC_USDT', '--strategy', strategy, '--flex', 'USDT=100'])).stdout) as { settings: { flexAprPct: string } };
    expect(seeded.settings.flexAprPct).toBe('5');
  });
});

describe('a backtest that keeps its journal (--journal FILE)', () => {
  const fail = (error: { code: number; stderr: string }) => error;
  const dca = () => strategyFile('kept', 'STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nAMOUNT=0.0005\n');

  it('writes a new file that `stacker orders` and `stacker journal --journal FILE` read, with the same orders as the report', async () => {
    const journal = join(dir, 'kept.db');
    const { stdout } = await run(process.execPath, [CLI, 'backtest', '--json', '--data', FIXTURE, '--market', 'BTC_USDT', '--strategy', dca(), '--journal', journal]);
    const report = JSON.parse(stdout) as { orders: { total: number } };
    expect(report.orders.total).toBeGreaterThan(5);
    const orders = JSON.parse((await run(process.execPath, [CLI, 'orders', '--json', '--journal', journal])).stdout) as { mode: string; orders: Array<{ status: string }> };
    expect(orders.mode).toBe('backtest');
    expect(orders.orders).toHaveLength(report.orders.total);
    expect(orders.orders.every((order) => order.status === 'FILLED')).toBe(true);
    const intents = JSON.parse((await run(process.execPath, [CLI, 'journal', '--json', '--journal', journal])).stdout) as { entries: unknown[] };
    expect(intents.entries).toHaveLength(report.orders.total);
  });

  it("reports a backtest journal's positions without today's prices, and asks no exchange for them", async () => {
    const journal = join(dir, 'priced.db');
    await run(process.execPath, [CLI, 'backtest', '--data', FIXTURE, '--market', 'BTC_USDT', '--strategy', dca(), '--journal', journal]);
    const asked: string[] = [];
    const exchange = createServer((request, response) => {
      asked.push(request.url ?? '');
      response.writeHead(500).end();
    });
    await new Promise<void>((ready) => exchange.listen(0, '127.0.0.1', ready));
    try {
      const url = `http://127.0.0.1:${(exchange.address() as AddressInfo).port}`;
      const { stdout } = await run(process.execPath, [CLI, 'report', '--json', '--journal', journal], { env: { ...process.env, STACKER_BASE_URL: url } });
      const report = JSON.parse(stdout) as { mode: string; markets: Array<{ market: string; value: string | null; price: string | null }>; note?: string };
      expect(report.mode).toBe('backtest');
      expect(report.markets.map((m) => [m.market, m.price, m.value])).toEqual([['BTC_USDT', null, null]]);
      expect(report.note).toContain("a backtest's journal is not valued at today's prices");
      // The page says so too, rather than speak of a price now beside empty Price and Value cells.
      const html = join(dir, 'priced.html');
      await run(process.execPath, [CLI, 'report', '--journal', journal, '--html', html], { env: { ...process.env, STACKER_BASE_URL: url } });
      const page = readFileSync(html, 'utf8');
      expect(page).not.toContain('price now');
      expect(page).toContain("no price was read (a backtest&#39;s journal is not valued at today&#39;s prices");
      expect(asked).toEqual([]);
    } finally {
      await new Promise((closed) => exchange.close(closed));
    }
  });

  it('refuses a file that already exists, before running anything: its slots would not run again and the report would mix two runs', async () => {
    const journal = join(dir, 'twice.db');
    const args = [CLI, 'backtest', '--data', FIXTURE, '--market', 'BTC_USDT', '--strategy', dca(), '--journal', journal];
    await run(process.execPath, args);
    const before = readFileSync(journal);
    const second = await run(process.execPath, args).catch(fail);
    expect('code' in second ? second.code : 0).toBe(2);
    expect(second.stderr).toMatch(/--journal: .*twice\.db already exists: a backtest journal starts empty/);
    expect(readFileSync(journal).equals(before)).toBe(true);
  });

  it('refuses, at once and with exit 2, a --report or --journal in a folder that does not exist, and a folder given as the file', async () => {
    const missing = join(dir, 'no-such-folder');
    const result = await run(process.execPath, [CLI, 'backtest', '--data', FIXTURE, '--market', 'BTC_USDT', '--strategy', dca(), '--report', join(missing, 'r.html'), '--journal', dir]).catch(fail);
    expect('code' in result ? result.code : 0).toBe(2);
    expect(result.stderr).toMatch(/--report: folder not found: .*no-such-folder/);
    expect(result.stderr).toMatch(/--journal: is a folder: give the path of a file to write/);
    expect(result.stderr).not.toMatch(/unexpected/);
  });

  it('refuses one path for --report and --journal before any work: the page would be written over the journal just kept', async () => {
    const same = join(dir, 'same.db');
    // Given as two spellings of one file.
    const result = await run(process.execPath, [CLI, 'backtest', '--data', FIXTURE, '--market', 'BTC_USDT', '--strategy', dca(), '--journal', same, '--report', join(dir, '.', 'same.db')]).catch(fail);
    expect('code' in result ? result.code : 0).toBe(2);
    expect(result.stderr).toContain('is also the --journal path: the page would be written over the journal; name two files');
    expect(existsSync(same)).toBe(false);
  });

  it('writes --report over a report of its own only: a candle file or a strategy file named by a slip is refused (exit 2) and left as it was', async () => {
    const candles = join(dir, 'victim.csv');
    writeFileSync(candles, readFileSync(FIXTURE));
    const strategy = dca();
    const strategyText = readFileSync(strategy, 'utf8');
    for (const target of [candles, strategy]) {
      const result = await run(process.execPath, [CLI, 'backtest', '--data', candles, '--market', 'BTC_USDT', '--strategy', strategy, '--report', target]).catch(fail);
      expect('code' in result ? result.code : 0).toBe(2);
      expect(result.stderr).toContain(`--report: ${target} already exists and is not a report stacker wrote`);
    }
    expect(readFileSync(candles).equals(readFileSync(FIXTURE))).toBe(true);
    expect(readFileSync(strategy, 'utf8')).toBe(strategyText);
    // A report written before is the command's own: run again, it is replaced.
    const page = join(dir, 'again.html');
    for (let i = 0; i < 2; i += 1) await run(process.execPath, [CLI, 'backtest', '--data', candles, '--market', 'BTC_USDT', '--strategy', strategy, '--report', page]);
    expect(readFileSync(page, 'utf8')).toContain('<meta name="generator" content="stacker">');
  });

  it('reading: --journal names an existing journal file, not with --data-dir or --mode; anything else is exit 2 naming the flag', async () => {
    const notJournal = join(dir, 'not-a-journal.db');
    writeFileSync(notJournal, 'just text\n');
    for (const [args, message] of [
      [['orders', '--journal', join(dir, 'absent.db')], /--journal: file not found/],
      [['orders', '--journal', notJournal], /--journal: .*not-a-journal\.db is not a stacker journal/],
      [['journal', '--journal', notJournal, '--mode', 'live'], /--journal: names the journal file itself .*not with --mode/],
      [['report', '--journal', notJournal, '--data-dir', dir], /--journal: names the journal file itself: not with --data-dir/],
    ] as const) {
      const result = await run(process.execPath, [CLI, ...args]).catch(fail);
      expect('code' in result ? result.code : 0).toBe(2);
      expect(result.stderr).toMatch(message);
    }
  });
});

describe('a backtest given bad candle input', () => {
  const strategy = (): string => strategyFile('input', 'STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nAMOUNT=0.0005\n');
  const header = 'time,open,high,low,close,volume';
  const backtest = async (data: string, ...more: string[]) =>
    run(process.execPath, ['--', CLI, 'backtest', '--data', data, '--market', 'BTC_USDT', '--strategy', strategy(), ...more]).then(
      (ok) => ({ code: 0, stdout: ok.stdout, stderr: ok.stderr }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );

  it('refuses a file larger than a candle file can be (2 GiB) as bad input, never backtesting part of it', async () => {
    const huge = join(dir, 'huge.csv');
    writeFileSync(huge, `${header}\n1614556800,1,1,1,1,1\n`);
    // Sparse: no disk taken. Read as its size modulo 2^32 (84 MB), it was backtested in part, exit 0.
    truncateSync(huge, 2 ** 32 + 87_107_560);
    const result = await backtest(huge);
    expect([result.code, result.stderr]).toEqual([2, 'error: --data: is 4.08 GiB, more than a candle file can be (2 GiB): split it by period (a year or two a file), or keep only the columns time,open,high,low,close,volume\n']);
  });

  it('is bad input (exit 2, E_INPUT) naming the file and each line: a bad row, rows out of order or repeated, an empty file, a folder', async () => {
    const files: Array<[string, string, RegExp]> = [
      ['bad-row.csv', `${header}\n1614556800,1,1,1,1,1\nbad,row\n`, /bad-row\.csv: line 3: expected 6 fields, got 2/],
      ['unsorted.csv', `${header}\n1614560400,1,1,1,1,1\n1614556800,1,1,1,1,1\n`, /unsorted\.csv: line 3: time 1614556800 is before 1614560400, the time of line 2: rows must be in time order/],
      ['repeated.csv', `${header}\n1614556800,1,1,1,1,1\n1614556800,1,1,1,1,1\n`, /repeated\.csv: line 3: time 1614556800 is line 2's time again/],
      ['empty.csv', '', /empty\.csv: line 1: header must be/],
    ];
    for (const [name, text, message] of files) {
      const path = join(dir, name);
      writeFileSync(path, text);
      const result = await backtest(path);
      expect([name, result.code]).toEqual([name, 2]);
      expect(result.stderr).toMatch(message);
      const json = await backtest(path, '--json');
      expect(JSON.parse(json.stderr)).toMatchObject({ error: { code: 'E_INPUT', problems: [expect.objectContaining({ field: expect.stringMatching(/^line \d+$/) })] } });
    }
    const folder = await backtest(dir);
    expect([folder.code, folder.stderr]).toEqual([2, 'error: --data: is a folder: give a candle file (time,open,high,low,close,volume)\n']);
  });

  it('says when it stopped at 20 problems, and that times of 13 digits look like milliseconds', async () => {
    const rows = Array.from({ length: 30 }, (_, i) => `${1614556800000 + i * 3_600_000},1,1,1,1,1`);
    const path = join(dir, 'millis.csv');
    writeFileSync(path, `${header}\n${rows.join('\n')}\n`);
    const result = await backtest(path);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('line 2: time "1614556800000" is not Unix seconds (13 digits: milliseconds? divide by 1000)');
    expect(result.stderr).toContain('more: reading stopped after 20 problems: there may be more');
  });

  it('reads --to given as a date as the whole of that day (UTC), and a time as that moment', async () => {
    const whole = JSON.parse((await backtest(FIXTURE, '--json', '--from', '2021-03-01', '--to', '2021-03-01')).stdout) as { data: { candles: number } };
    expect(whole.data.candles).toBe(24);
    const morning = JSON.parse((await backtest(FIXTURE, '--json', '--from', '2021-03-01', '--to', '2021-03-01T09:00:00Z')).stdout) as { data: { candles: number } };
    expect(morning.data.candles).toBe(10);
  });

  it('refuses a --from or --to that names a day its month does not have, instead of moving it into the next month', async () => {
    for (const [flag, bad] of [['--from', '2021-02-30'], ['--to', '2021-04-31'], ['--from', '2021-02-29T09:00:00Z'], ['--to', '2021-13-01']] as const) {
      const result = await backtest(FIXTURE, flag, bad);
      expect([result.code, result.stderr]).toEqual([2, `error: ${flag}: must be a date (2024-01-31), a UTC time (2024-01-31T09:00:00Z) or Unix seconds (got "${bad}")\n`]);
    }
    // A leap day is a day.
    const leap = await backtest(FIXTURE, '--json', '--from', '2020-02-29', '--to', '2021-03-01');
    expect(leap.code).toBe(0);
  });

  it("refuses a file whose name says it holds another asset's candles, naming both; the same base on another quote is a fair stand-in", async () => {
    const eth = join(dir, 'ETHUSDT_1h_somewhere.csv');
    writeFileSync(eth, readFileSync(FIXTURE));
    const wrong = await backtest(eth);
    expect([wrong.code, wrong.stderr]).toEqual([2, "error: --data: the file's name says it holds ETHUSDT candles, but --market is BTC_USDT: give --market ETH_USDT, or the BTC_USDT file (rename a file whose name is wrong)\n"]);
    const usd = join(dir, 'BTCUSD_1h.csv');
    writeFileSync(usd, readFileSync(FIXTURE));
    expect((await backtest(usd, '--json')).code).toBe(0);
  });

  it('reads --data from a pipe once (`--data <(xzcat …)`): the window before --from, a sweep and the empty-period message all come from that one read', async () => {
    const dip = strategyFile('dip-pipe', 'STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nAMOUNT_QUOTE=10\nDIP_PCT=1\nDIP_MULTIPLIER=2\nDIP_LOOKBACK=3d\n');
    // A shell's process substitution: the file is a pipe, which gives its bytes once.
    const piped = async (...more: string[]) =>
      run('bash', ['-c', 'node -- "$1" backtest --data <(cat "$2") --market BTC_USDT --strategy "$3" --wallet USDT=1000 "${@:4}"', 'bash', CLI, FIXTURE, dip, ...more], { env: { ...process.env, PATH: `${resolve(process.execPath, '..')}:${process.env.PATH ?? ''}` } }).then(
        (ok) => ({ code: 0, stdout: ok.stdout, stderr: ok.stderr }),
        (error: { code: number; stdout: string; stderr: string }) => error,
      );
    const fromFile = await run(process.execPath, ['--', CLI, 'backtest', '--data', FIXTURE, '--market', 'BTC_USDT', '--strategy', dip, '--wallet', 'USDT=1000', '--from', '2021-03-05', '--json']);
    const fromPipe = await piped('--from', '2021-03-05', '--json');
    expect(fromPipe.stderr).toBe('');
    const report = (out: string) => JSON.parse(out) as { data: unknown; orders: unknown; totals: unknown };
    const { data: _fileData, ...fileReport } = report(fromFile.stdout);
    const { data: _pipeData, ...pipeReport } = report(fromPipe.stdout);
    expect(pipeReport).toEqual(fileReport);
    const sweep = await piped('--from', '2021-03-05', '--sweep', 'AMOUNT_QUOTE=10,20', '--json');
    expect([sweep.code, sweep.stderr]).toEqual([0, '']);
    const empty = await piped('--to', '2010-01-01');
    expect([empty.code, empty.stderr]).toEqual([2, expect.stringMatching(/^error: --to: no candle of \/dev\/fd\/\d+ falls in the period asked for: the file holds 2021-03-01T00:00Z to 2021-03-14T23:00Z\n$/)]);
  });

  it('says what the file holds when the period asked for has no candle, naming the flags given', async () => {
    const before = await backtest(FIXTURE, '--to', '2010-01-01');
    expect([before.code, before.stderr]).toEqual([2, `error: --to: no candle of ${FIXTURE} falls in the period asked for: the file holds 2021-03-01T00:00Z to 2021-03-14T23:00Z\n`]);
    const both = await backtest(FIXTURE, '--from', '2022-01-01', '--to', '2022-02-01');
    expect(both.stderr).toMatch(/^error: --from\/--to: no candle/);
    // Inside the file, within one hour's candle: not outside the file, and not said to be.
    const within = await backtest(FIXTURE, '--from', '2021-03-05T09:30:00Z', '--to', '2021-03-05T09:45:00Z');
    expect([within.code, within.stderr]).toEqual([
      2,
      `error: --from/--to: no candle of ${FIXTURE} opens in the period asked for (2021-03-05T09:30Z to 2021-03-05T09:45Z), though the file holds 2021-03-01T00:00Z to 2021-03-14T23:00Z: a period needs at least one candle's open (this one is shorter than a candle, or in a gap)\n`,
    ]);
  });

  it('warns when the period asked for starts before the first candle or ends after the last: the run is shorter than asked', async () => {
    const wider = await backtest(FIXTURE, '--from', '2021-02-20', '--to', '2021-03-20');
    expect(wider.code).toBe(0);
    expect(wider.stderr).toBe(
      'warning: --from 2021-02-20: the first candle of the period opens at 2021-03-01T00:00Z; the backtest starts there\n' +
        'warning: --to 2021-03-20: the last candle of the period closes at 2021-03-15T00:00Z; the backtest ends there\n',
    );
    // Inside the data (a date as --to is its whole day): nothing to say.
    expect((await backtest(FIXTURE, '--from', '2021-03-01', '--to', '2021-03-14')).stderr).toBe('');
  });

  it('refuses a date typed without dashes, which would read as Unix seconds in 1970 and start at the first candle, and says what 13 digits are', async () => {
    const result = await backtest(FIXTURE, '--from', '20210305');
    expect([result.code, result.stderr]).toEqual([2, 'error: --from: 20210305 reads as Unix seconds in 1970: write the date with dashes, 2021-03-05\n']);
    // Milliseconds (13 digits) are named as such, with the seconds they would be.
    const millis = await backtest(FIXTURE, '--from', '1614934800000');
    expect([millis.code, millis.stderr]).toEqual([2, 'error: --from: 1614934800000 has 13 digits: Unix milliseconds? give Unix seconds (1614934800), a date or a UTC time\n']);
    // Unix seconds are still Unix seconds.
    const seconds = await backtest(FIXTURE, '--json', '--from', '1614934800');
    expect(seconds.code).toBe(0);
  });
});
