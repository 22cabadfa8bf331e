import { Decimal, formatDecimal } from '../../domain/money.ts';
import { accountCapText, averagePrice } from './build.ts';
import type { BacktestReport } from './build.ts';
import { buysOf, comparisonChart, costBasisChart, drawdownChart, equityChart, priceChart } from './charts.ts';
import { headlineRows } from './headline.ts';
import { comparisonSettingsRows, rulesSourceText, rulesValuesText } from './rules.ts';
import type { BacktestRun, ReportOrder } from './run.ts';
import { PAGE_MARK } from './page-mark.ts';
import { counted, escapeHtml, failureNote, offGridText, orDash, ranOutNote, utcMinute } from './text.ts';

/**
 * The HTML report: one self-contained page (inline CSS and SVG, no script, no external
 * reference of any kind) that a person can open from disk, mail, or archive. Every piece of
 * text goes through escapeHtml; figures are the report's strings, never recomputed floats.
 */


/**
 * Several backtests over the same candles side by side (several --strategy files, or a --sweep):
 * one account-value chart with a line per run, and one row per run of the figures a comparison
 * turns on.
 */
export function renderComparisonHtml(runs: ReadonlyArray<{ readonly label: string; readonly report: BacktestReport; readonly equity: ReadonlyArray<readonly [number, string]> }>): string {
  const first = runs[0]?.report;
  if (first === undefined) throw new RangeError('a comparison needs at least one run');
  const title = `Backtests compared: ${first.market} ${utcMinute(first.period.fromMs)} → ${utcMinute(first.period.toMs)}`;
  const chart = comparisonChart(
    runs.map((r) => ({ label: r.label, points: r.equity.map(([timeMs, value]) => ({ timeMs, value: new Decimal(value) })) })),
    first.quote,
  );
  const body = [
    `<header><h1>${escapeHtml(title)}</h1>`,
    `<p class="sub">Data <code>${escapeHtml(first.data.file)}</code> · ${runs.length} runs, each on its own copy of the wallet · times in UTC</p></header>`,
    section('Runs', comparisonTable(runs.map((r) => ({ label: r.label, report: r.report })))),
    section('Settings', table([txt('Setting'), txt('Value')], comparisonSettingsRows(runs).map(([k, v]) => [txt(k), txt(v)]))),
    section('Account value', figure(chart, 'Each run\'s account value (quote + base × price) over the same candles.')),
    `<footer>Each run's full report is in the comparison's JSON (<code>--json</code>).</footer>`,
  ];
  return page(title, body);
}

function comparisonTable(runs: ReadonlyArray<{ readonly label: string; readonly report: BacktestReport }>): string {
  const q = runs[0]?.report.quote ?? '';
  return table(
    [txt('Run'), num('Orders'), num('Refusals'), num(`Invested (${q})`), num('Average cost'), num('Return %'), num('Lump sum %'), num('Max drawdown %'), txt('Ran out'), txt('Strategy failed')],
    runs.map(({ label, report }) => [
      txt(label),
      num(String(report.orders.filled)),
      num(String(report.refusals.total)),
      num(report.benchmarks.strategy.invested),
      num(orDash(report.totals.averagePriceWithFees)),
      num(orDash(report.benchmarks.strategy.returnPct)),
      num(orDash(report.benchmarks.lumpSum?.returnPct ?? null)),
      num(orDash(report.drawdown.maxPct?.pct ?? null)),
      txt(report.refusals.ranOut === null ? '' : utcMinute(report.refusals.ranOut.atMs)),
      txt(report.strategyFailures.map(failureNote).join('; ')),
    ]),
  );
}

export function renderHtml(report: BacktestReport, run: BacktestRun): string {
  const buys = buysOf(run);
  const title = `Backtest ${report.market} ${utcMinute(report.period.fromMs)} → ${utcMinute(report.period.toMs)}`;
  const body = [
    `<header><h1>${escapeHtml(title)}</h1>`,
    `<p class="sub">Data <code>${escapeHtml(report.data.file)}</code> · ${report.data.candles} candles · ${report.slots} slots · ${report.instances.length} instance(s) · times in UTC</p></header>`,
    section('Headline', headlineTable(report)),
    section('Charts', [
      figure(priceChart(run, buys), `Close price with buy markers at their fill time and average fill price: ${buysCaption(buys.length, report.orders.filled)}.`),
      figure(costBasisChart(run), 'Average cost so far (quote paid, fees in, ÷ base kept, as the headline\'s average cost) against the close price.'),
      figure(equityChart(run, new Decimal(report.value.initial)), `Account value (quote + base × price) at each sample, against the initial value.`),
      figure(drawdownChart(run), `How far the account value stood below its highest value so far, in %. Deepest: ${report.drawdown.maxPct?.pct ?? '0'} %.`),
    ].join('\n')),
    section('Against one lump sum', benchmarksTable(report)),
    section('Years', periodsTable(report, report.periods.yearly)),
    section('Months', periodsTable(report, report.periods.monthly)),
    section('Instances', instancesTable(report)),
    section(`Orders (${report.orders.total})`, ordersTable(run)),
    section(`Refusals (${report.refusals.total})`, refusalsSection(report, run)),
    section('Run', runTable(report)),
    `<footer>Report schema <code>${escapeHtml(report.schema)}</code>. Figures are decimal strings from the JSON report; charts are drawn from the same run.</footer>`,
  ];
  return page(title, body);
}

/** The page around a report's sections: inline style, nothing from outside the file (the live report uses it too). */
export function page(title: string, body: readonly string[]): string {
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    PAGE_MARK,
    `<title>${escapeHtml(title)}</title>`,
    `<style>${STYLE}</style>`,
    '</head>',
    '<body>',
    '<main>',
    ...body,
    '</main>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

export function section(heading: string, content: string): string {
  return `<section><h2>${escapeHtml(heading)}</h2>\n${content}\n</section>`;
}

export function figure(svg: string, caption: string): string {
  return `<figure>\n${svg}\n<figcaption>${escapeHtml(caption)}</figcaption>\n</figure>`;
}

export interface Cell {
  text: string;
  numeric?: boolean;
  cssClass?: string;
  colspan?: number;
}

export function table(headers: readonly Cell[], rows: readonly (readonly Cell[])[], cssClass = ''): string {
  const cell = (tag: 'th' | 'td', c: Cell): string => {
    const classes = [c.numeric === true ? 'num' : '', c.cssClass ?? ''].filter((x) => x !== '').join(' ');
    const span = c.colspan === undefined ? '' : ` colspan="${c.colspan}"`;
    return `<${tag}${classes === '' ? '' : ` class="${classes}"`}${span}>${escapeHtml(c.text)}</${tag}>`;
  };
  // In a box of its own that scrolls sideways: on a phone a wide table scrolled the whole page.
  return [
    '<div class="table-scroll">',
    `<table${cssClass === '' ? '' : ` class="${cssClass}"`}>`,
    `<thead><tr>${headers.map((h) => cell('th', h)).join('')}</tr></thead>`,
    '<tbody>',
    ...rows.map((row) => `<tr>${row.map((c) => cell('td', c)).join('')}</tr>`),
    '</tbody>',
    '</table>',
    '</div>',
  ].join('\n');
}

export const num = (text: string): Cell => ({ text, numeric: true });
export const txt = (text: string): Cell => ({ text });

function headlineTable(report: BacktestReport): string {
  const rows = headlineRows(report).map((row) => [
    txt(row.label),
    { text: row.value, numeric: true, ...(row.tone === undefined ? {} : { cssClass: row.tone }) },
    txt(row.note),
  ]);
  return table([txt('Figure'), num('Value'), txt('')], rows, 'headline');
}

function instancesTable(report: BacktestReport): string {
  const settings = new Map(report.instances.map((i) => [i.instance, i]));
  const rows = report.byInstance.map((i) => {
    const s = settings.get(i.instance);
    return [
      txt(i.instance),
      txt(s?.strategy ?? ''),
      txt(s?.schedule ?? ''),
      txt(s?.timezone ?? ''),
      num(String(i.orders)),
      num(String(i.filled)),
      num(String(i.refusals)),
      num(i.baseAcquired),
      num(i.quoteSpent),
      num(orDash(i.averagePrice)),
    ];
  });
  const headers = ['Instance', 'Strategy', 'Schedule', 'Zone'].map(txt);
  headers.push(...['Orders', 'Filled', 'Refusals', `Base (${report.base})`, `Quote (${report.quote})`, 'Avg price'].map(num));
  return table(headers, rows);
}

/** Every filled order has a marker when they fit; otherwise say which ones are drawn. */
function buysCaption(drawn: number, filled: number): string {
  return drawn === filled ? `one per filled order (${filled})` : `${drawn} of ${filled} filled orders, the first, cheapest, dearest and last of each stretch of time`;
}

function ordersTable(run: BacktestRun): string {
  if (run.facts.orders.orders === 0) return '<p>No orders.</p>';
  const { head, tail, hidden } = run.facts.tableOrders();
  const row = (o: ReportOrder): Cell[] => [
    txt(utcMinute(o.slotTimeMs)),
    txt(o.instance),
    txt(o.clientOrderId),
    txt(o.status),
    num(formatDecimal(o.amount)),
    num(formatDecimal(o.filledBase)),
    num(formatDecimal(o.filledQuote)),
    num(o.fee.isZero() ? '0' : `${formatDecimal(o.fee)} ${o.feeAsset ?? ''}`.trim()),
    num(orDash(averagePrice(o.filledQuote, o.filledBase))),
  ];
  const headers = [...['Slot', 'Instance', 'Client order id', 'Status'].map(txt), ...['Asked', 'Filled base', 'Quote', 'Fee', 'Avg price'].map(num)];
  if (hidden === 0) return table(headers, [...head, ...tail].map(row));
  const gap: Cell[] = [{ text: `… ${hidden} more orders (all of them are in the JSON report's counts) …`, cssClass: 'elided', colspan: headers.length }];
  return table(headers, [...head.map(row), gap, ...tail.map(row)]);
}

function refusalsSection(report: BacktestReport, run: BacktestRun): string {
  if (report.refusals.total === 0) return '<p>No refusals.</p>';
  const ranOut = report.refusals.ranOut;
  const warning = ranOut === null ? '' : `<p class="ran-out"><strong>The money ran out</strong> ${escapeHtml(ranOutNote(ranOut))}.</p>`;
  const years = [...new Set(report.refusals.summary.flatMap((s) => Object.keys(s.byYear)))].sort();
  const summary = table(
    [txt('Reason'), num('Count'), txt('First'), txt('Last'), ...years.map((y) => num(y))],
    report.refusals.summary.map((s) => [txt(s.reason), num(String(s.count)), txt(utcMinute(s.firstTimeMs)), txt(utcMinute(s.lastTimeMs)), ...years.map((y) => num(String(s.byYear[y] ?? 0)))]),
  );
  // One example message per reason: the counts above say how often.
  const examples = table(
    [txt('Reason'), txt('First message')],
    report.refusals.summary.map((s) => [txt(s.reason), txt(run.facts.byReason.get(s.reason)?.firstMessage ?? '')]),
  );
  return `${warning}\n${summary}\n${examples}`;
}

function benchmarksTable(report: BacktestReport): string {
  const { strategy, lumpSum, holdWallet } = report.benchmarks;
  const q = report.quote;
  const rows: Cell[][] = [[txt('This strategy'), num(strategy.invested), num(strategy.base), num(strategy.valueAtEnd), num(orDash(strategy.returnPct))]];
  if (lumpSum !== null) rows.push([txt(`All at once on ${utcMinute(lumpSum.timeMs)} at ${lumpSum.price}`), num(lumpSum.invested), num(lumpSum.base), num(lumpSum.valueAtEnd), num(orDash(lumpSum.returnPct))]);
  const hold =
    holdWallet === null
      ? ''
      : `<p>The whole starting wallet in ${escapeHtml(report.base)} at once on ${escapeHtml(utcMinute(holdWallet.timeMs))} at ${escapeHtml(holdWallet.price)} (taker fee paid) and held: ${escapeHtml(holdWallet.base)} ${escapeHtml(report.base)}, worth ${escapeHtml(holdWallet.initialValue)} → ${escapeHtml(holdWallet.finalValue)} ${escapeHtml(q)} (${escapeHtml(orDash(holdWallet.returnPct))} %).</p>`;
  return `${table([txt('Spending'), num(`Invested (${q}, fees in)`), num(`Bought (${report.base})`), num(`Value at the end (${q})`), num('Return %')], rows)}\n${hold}`;
}

function periodsTable(report: BacktestReport, rows: BacktestReport['periods']['yearly']): string {
  if (rows.length === 0) return '<p>No period.</p>';
  return `${table(
    [txt('Period'), num(`Invested (${report.quote}, fees out)`), num(`Bought (${report.base})`), num(`Fees (${report.quote})`), num('Average cost (fees in)'), num(`Value at the end (${report.quote})`), num('Return %')],
    rows.map((r) => [txt(r.period), num(r.invested), num(r.baseBought), num(r.fees), num(orDash(r.averageCost)), num(r.valueAtEnd), num(orDash(r.returnPct))]),
  )}\n<p>Average cost counts the fees: (quote paid + fees) ÷ base bought. Periods are UTC. Value at the end is all the ${escapeHtml(report.base)} bought so far at the close of the period's last candle; the return is against everything invested so far, fees in.</p>`;
}

function runTable(report: BacktestReport): string {
  const gaps = report.data.gaps;
  const largest = gaps.largest === null ? '' : ` (largest: ${gaps.largest.missing} after ${utcMinute(gaps.largest.afterTimeSec * 1000)})`;
  const wallet = (w: Record<string, string>): string => Object.entries(w).map(([asset, amount]) => `${amount} ${asset}`).join(', ') || 'empty';
  const rows: Array<[string, string]> = [
    ['Market', `${report.market} (${report.base} / ${report.quote})`],
    ['Period', `${utcMinute(report.period.fromMs)} → ${utcMinute(report.period.toMs)}`],
    ['Candles', `${report.data.candles} candles of ${report.data.intervalSec} s, ${utcMinute(report.data.firstTimeSec * 1000)} → ${utcMinute(report.data.lastTimeSec * 1000)}`],
    ['Gaps', `${counted(gaps.count, 'gap')}, ${counted(gaps.missingCandles, 'candle')} missing${largest}${offGridText(report.data.offGrid)}`],
    ['Slippage', `${report.settings.slippagePct} %`],
    ['Flex APR', report.settings.flexAprPct === null ? 'off' : `${report.settings.flexAprPct} %`],
    ['Account caps', report.settings.accountCaps.length === 0 ? 'none' : report.settings.accountCaps.map(accountCapText).join('; ')],
    ['Market rules', `${rulesSourceText(report.rules)}: ${rulesValuesText(report.rules, report.base, report.quote)}`],
    ['Initial wallet', wallet(report.wallet.initial)],
    ['Final balances', wallet(report.wallet.final)],
    ['Flex operations', `${report.flex.total}${Object.keys(report.flex.byStatus).length === 0 ? '' : ` (${Object.entries(report.flex.byStatus).map(([s, n]) => `${s} ${n}`).join(', ')})`}`],
  ];
  return table([txt('Setting'), txt('Value')], rows.map(([k, v]) => [txt(k), txt(v)]));
}

const STYLE = `
:root { color-scheme: light; --fg: #212529; --muted: #6c757d; --line: #dee2e6; }
* { box-sizing: border-box; }
body { margin: 0; background: #f8f9fa; color: var(--fg); font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
main { max-width: 1280px; margin: 0 auto; padding: 24px 20px 48px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 10px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
.sub, footer, figcaption { color: var(--muted); font-size: 13px; }
footer { margin-top: 32px; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; }
table { border-collapse: collapse; background: #fff; margin: 0; font-size: 13px; }
.table-scroll { overflow-x: auto; max-width: 100%; margin: 0 0 12px; }
/* A row's name (a run, a period, a time) on one line: "dca-/btc-/quote-" broke at every hyphen. */
td:first-child, th:first-child { white-space: nowrap; }
th, td { padding: 4px 6px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
th { background: #f1f3f5; font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
/* A heading may take two lines ("Max drawdown %"): its column is then as wide as its figures, and a table of ten columns fits a laptop's screen without scrolling its last ones (when the money ran out) out of sight. */
th.num { white-space: normal; }
td.good { color: #2b8a3e; font-weight: 600; }
td.bad { color: #c92a2a; font-weight: 600; }
td.elided { text-align: center; color: var(--muted); }
figure { margin: 0 0 20px; background: #fff; border: 1px solid var(--line); padding: 8px; overflow-x: auto; }
/* Not narrower than its text can be read at: on a phone the chart scrolls inside its frame. */
svg.chart { display: block; width: 100%; min-width: 600px; height: auto; font-size: 11px; }
@media (max-width: 600px) { main { padding: 16px 10px 32px; } }
svg .grid { stroke: #edf0f2; stroke-width: 1; }
svg .frame { fill: none; stroke: #adb5bd; stroke-width: 1; }
svg .tick, svg .legend-label { fill: #495057; }
svg .axis-label { fill: var(--muted); font-size: 11px; }
svg .empty { fill: var(--muted); font-size: 14px; }
svg .series { fill: none; stroke-width: 1.5; stroke-linejoin: round; }
svg .price-line { stroke: #1c7ed6; }
svg .basis-line { stroke: #2f9e44; stroke-width: 2; }
svg .equity-line { stroke: #7048e8; }
svg .drawdown-line { stroke: #e03131; }
svg .initial-line { stroke: #868e96; stroke-dasharray: 5 4; }
svg line.legend-swatch { stroke-width: 2.5; }
svg .buy-marker, svg .buy-swatch { fill: #f76707; stroke: #fff; stroke-width: 1; }
svg .dense .buy-marker { stroke-width: 0.4; fill-opacity: 0.8; }
svg .run-0 { stroke: #1c7ed6; } svg .run-1 { stroke: #f76707; } svg .run-2 { stroke: #2f9e44; } svg .run-3 { stroke: #7048e8; }
svg .run-4 { stroke: #e03131; } svg .run-5 { stroke: #0c8599; } svg .run-6 { stroke: #a61e4d; } svg .run-7 { stroke: #5c940d; }
.run-legend { display: flex; flex-wrap: wrap; gap: 4px 18px; list-style: none; padding: 0; margin: 6px 0 0; font-size: 13px; }
.run-legend li::before { content: ""; display: inline-block; width: 20px; height: 3px; margin-right: 6px; vertical-align: middle; background: #868e96; }
.run-legend .run-0::before { background: #1c7ed6; } .run-legend .run-1::before { background: #f76707; } .run-legend .run-2::before { background: #2f9e44; } .run-legend .run-3::before { background: #7048e8; }
.run-legend .run-4::before { background: #e03131; } .run-legend .run-5::before { background: #0c8599; } .run-legend .run-6::before { background: #a61e4d; } .run-legend .run-7::before { background: #5c940d; }
`;
