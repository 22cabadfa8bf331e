import { type BacktestReport, accountCapText } from './build.ts';
import { headlineRows } from './headline.ts';
import { comparisonSettingsRows, rulesSourceText, rulesValuesText } from './rules.ts';
import { failureNote, orDash, terminalSafe, utcMinute } from './text.ts';

/**
 * The terminal summary: headline figures in one aligned table (numbers lined up on the decimal
 * point), then a per-instance table when there is more than one instance. Colour is applied
 * after padding so escape codes never shift a column.
 */

export interface SummaryOptions {
  color: boolean;
}

const ANSI = { bold: '\u001b[1m', dim: '\u001b[2m', green: '\u001b[32m', red: '\u001b[31m', reset: '\u001b[0m' };

export function renderSummary(report: BacktestReport, options: SummaryOptions): string {
  const paint = (code: string, text: string): string => (options.color && text !== '' ? `${code}${text}${ANSI.reset}` : text);
  const rows = headlineRows(report);

  const title = `Backtest ${report.market}  ${utcMinute(report.period.fromMs)} → ${utcMinute(report.period.toMs)}  (${report.data.file})`;
  // Every string that reaches the terminal passes terminalSafe (names come from files).
  const lines = [paint(ANSI.bold, terminalSafe(title)), ''];
  const labelWidth = Math.max(...rows.map((r) => r.label.length));
  const values = alignDecimals(rows.map((r) => r.value));
  rows.forEach((row, i) => {
    const value = values[i] ?? '';
    const tone = row.tone === 'good' ? ANSI.green : row.tone === 'bad' ? ANSI.red : null;
    // Paint the figure, not its padding.
    const painted = tone === null ? value : value.replace(/\S+/, (figure) => paint(tone, figure));
    lines.push(`  ${row.label.padEnd(labelWidth)}  ${painted}  ${paint(ANSI.dim, terminalSafe(row.note))}`.trimEnd());
  });
  lines.push('', `  Market rules: ${terminalSafe(rulesSourceText(report.rules))}`, `  ${paint(ANSI.dim, terminalSafe(rulesValuesText(report.rules, report.base, report.quote)))}`);
  if (report.settings.accountCaps.length > 0) lines.push('', `  Account caps, all of an account's instances together: ${terminalSafe(report.settings.accountCaps.map(accountCapText).join('; '))}`);
  if (report.byInstance.length > 1) lines.push('', ...instanceTable(report, (text) => paint(ANSI.bold, text)));
  // By year; a run within one year by month (its year row alone would only repeat the headline).
  if (report.periods.yearly.length > 1) lines.push('', ...periodTable(report, 'year', (text) => paint(ANSI.bold, text)));
  else if (report.periods.monthly.length > 1) lines.push('', ...periodTable(report, 'month', (text) => paint(ANSI.bold, text)));
  return `${lines.join('\n')}\n`;
}

/** Several backtests side by side: one row per run (several --strategy files, or a --sweep). */
export function renderComparison(runs: ReadonlyArray<{ readonly label: string; readonly report: BacktestReport }>, options: SummaryOptions): string {
  const first = runs[0]?.report;
  if (first === undefined) return '';
  const bold = (text: string): string => (options.color ? `${ANSI.bold}${text}${ANSI.reset}` : text);
  const title = `Backtests compared: ${first.market}  ${utcMinute(first.period.fromMs)} → ${utcMinute(first.period.toMs)}  (${first.data.file}), each run on its own copy of the wallet`;
  const header = ['Run', 'Orders', 'Refusals', `Invested (${first.quote})`, 'Avg cost', 'Return %', 'Lump sum %', 'Max DD %', 'Ran out', 'Strategy failed'];
  const body = runs.map(({ label, report }) => [
    terminalSafe(label),
    String(report.orders.filled),
    String(report.refusals.total),
    report.benchmarks.strategy.invested,
    orDash(report.totals.averagePriceWithFees),
    orDash(report.benchmarks.strategy.returnPct),
    orDash(report.benchmarks.lumpSum?.returnPct ?? null),
    orDash(report.drawdown.maxPct?.pct ?? null),
    report.refusals.ranOut === null ? '' : utcMinute(report.refusals.ranOut.atMs).slice(0, 10),
    report.strategyFailures[0] === undefined ? '' : utcMinute(report.strategyFailures[0].atMs).slice(0, 10),
  ]);
  // A run whose strategy failed stopped trading part way: its figures are not the strategy's, and say so under the table.
  const failures = runs.flatMap(({ label, report }) => report.strategyFailures.map((f) => `${terminalSafe(label)}: strategy failed: ${terminalSafe(failureNote(f))}`));
  const notes = failures.length === 0 ? [] : ['', ...failures];
  const caps = [...new Set(runs.flatMap(({ report }) => report.settings.accountCaps.map(accountCapText)))];
  if (caps.length > 0) notes.push('', `  Account caps, each run counting its own: ${terminalSafe(caps.join('; '))}`);
  // The figures are only as real as the rules and the slippage they were measured under (made-up demo rules, say).
  notes.push('', ...comparisonSettingsRows(runs).map(([label, text]) => `  ${terminalSafe(label)}: ${terminalSafe(text)}`));
  return `${[bold(terminalSafe(title)), '', ...columnsOf(header, body, bold), ...notes].join('\n')}\n`;
}

/**
 * Right-aligns numbers on their decimal point: integer parts padded left, fractions padded
 * right with spaces (never zeros: the digits shown are the report's digits).
 */
export function alignDecimals(cells: readonly string[]): string[] {
  const split = cells.map((cell) => {
    const dot = /^[+-]?\d+(\.\d+)?$/.test(cell) ? cell.indexOf('.') : -1;
    return dot === -1 ? { int: cell, frac: '' } : { int: cell.slice(0, dot), frac: cell.slice(dot) };
  });
  const intWidth = Math.max(0, ...split.map((s) => s.int.length));
  const fracWidth = Math.max(0, ...split.map((s) => s.frac.length));
  return split.map((s) => s.int.padStart(intWidth) + s.frac.padEnd(fracWidth));
}

function periodTable(report: BacktestReport, unit: 'year' | 'month', bold: (text: string) => string): string[] {
  const header = [unit === 'year' ? 'Year' : 'Month', `Invested (${report.quote})`, `Bought (${report.base})`, 'Avg cost', 'Value at end', 'Return %'];
  const rows = unit === 'year' ? report.periods.yearly : report.periods.monthly;
  const body = rows.map((y) => [y.period, y.invested, y.baseBought, orDash(y.averageCost), y.valueAtEnd, orDash(y.returnPct)]);
  // The first columns are the period's own buys, the last two everything so far: said, or a period
  // whose value is above what it invested but whose return is negative reads as a contradiction.
  return [
    ...columnsOf(header, body, bold),
    `  Invested (fees out), bought, avg cost (fees in): that ${unit}'s buys. Value at end, return: all ${report.base} bought so far`,
    `  at the ${unit}'s last close, against all paid so far, fees in.`,
  ];
}

function columnsOf(header: readonly string[], body: readonly (readonly string[])[], bold: (text: string) => string): string[] {
  const columns = header.map((_, c) => (c === 0 ? body.map((r) => r[c] ?? '') : alignDecimals(body.map((r) => r[c] ?? ''))));
  const widths = header.map((h, c) => Math.max(h.length, ...(columns[c] ?? []).map((cell) => cell.length)));
  const line = (cells: readonly string[]): string =>
    `  ${cells.map((cell, c) => (c === 0 ? cell.padEnd(widths[c] ?? 0) : cell.padStart(widths[c] ?? 0))).join('  ')}`.trimEnd();
  return [bold(line(header)), ...body.map((_, r) => line(columns.map((col) => col[r] ?? '')))];
}

function instanceTable(report: BacktestReport, bold: (text: string) => string): string[] {
  const header = ['Instance', 'Orders', 'Filled', 'Refusals', `Base (${report.base})`, `Quote (${report.quote})`, 'Avg price'];
  const body = report.byInstance.map((i) => [terminalSafe(i.instance), String(i.orders), String(i.filled), String(i.refusals), i.baseAcquired, i.quoteSpent, orDash(i.averagePrice)]);
  return columnsOf(header, body, bold);
}
