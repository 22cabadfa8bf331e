import type { BacktestReport, DrawdownEpisode } from './build.ts';
import { counted, countsText, failureNote, offGridText, orDash, ranOutNote, signed, utcMinute } from './text.ts';

/**
 * The headline figures as label / value / note rows: one list shared by the terminal summary
 * and the HTML page, so the two always show the same figures under the same names. Values are
 * the report's own strings; nothing is recomputed or rounded here.
 */
export interface HeadlineRow {
  label: string;
  value: string;
  /** Unit and context, plain text. */
  note: string;
  tone?: 'good' | 'bad';
}

export function headlineRows(report: BacktestReport): HeadlineRow[] {
  const { base, quote } = report;
  const pnlTone = report.value.pnl.startsWith('-') ? 'bad' : report.value.pnl === '0' ? undefined : 'good';
  const gaps = report.data.gaps;
  const rows: HeadlineRow[] = [
    { label: 'Candles processed', value: String(report.data.candles), note: `${intervalText(report.data.intervalSec)}, ${counted(gaps.count, 'gap')}, ${gaps.missingCandles} missing${offGridText(report.data.offGrid)}` },
    { label: 'Slots', value: String(report.slots), note: slotsNote(report) },
    { label: 'Orders', value: String(report.orders.total), note: countsText(report.orders.byStatus) },
    { label: 'Refusals', value: String(report.refusals.total), note: countsText(report.refusals.byReason) },
    { label: 'Base acquired', value: report.totals.baseAcquired, note: base },
    { label: 'Quote spent', value: report.totals.quoteSpent, note: `${quote} (fees not included)` },
    ...feeRows(report.totals.fees, report.quote),
    { label: 'Average price', value: orDash(report.totals.averagePrice), note: `${quote} per ${base}` },
    { label: 'Average cost', value: orDash(report.totals.averagePriceWithFees), note: `${quote} per ${base}, fees in` },
    withTone(
      { label: 'Return on invested', value: report.benchmarks.strategy.returnPct === null ? '—' : signed(report.benchmarks.strategy.returnPct), note: `% : the ${base} bought, at the last close, against ${report.benchmarks.strategy.invested} ${quote} spent (fees in)` },
      toneOf(report.benchmarks.strategy.returnPct),
    ),
    ...lumpSumRow(report),
    { label: 'Initial value', value: report.value.initial, note: `${quote} at first open ${report.value.initialPrice}` },
    { label: 'Final value', value: report.value.final, note: `${quote} at last close ${report.value.finalPrice}` },
    withTone({ label: 'PnL', value: signed(report.value.pnl), note: `${quote} (${report.value.pnlPct === null ? '—' : `${signed(report.value.pnlPct)} %`})` }, pnlTone),
    ...drawdownRows(report),
  ];
  if (report.flex.total > 0 || report.flex.interest !== null) rows.push(flexRow(report));
  const ranOut = report.refusals.ranOut;
  if (ranOut !== null) {
    // Nothing ever filled: the wallet never held one buy's money, which "ran out" does not say.
    if (report.orders.filled === 0) {
      const span = ranOut.refusedFromThen > 1 ? `from ${utcMinute(ranOut.atMs)} to ${utcMinute(ranOut.lastAtMs)}` : `on ${utcMinute(ranOut.atMs)}`;
      rows.push({ label: 'No money to buy', value: '', note: `the wallet never held enough for one buy: those of ${counted(ranOut.refusedFromThen, 'slot')} refused for insufficient funds, ${span}` });
    }
    else rows.push({ label: 'Ran out of money', value: '', note: ranOutNote(ranOut) });
  }
  for (const failure of report.strategyFailures) {
    rows.push({ label: 'Strategy failed', value: '', note: failureNote(failure), tone: 'bad' });
  }
  if (report.value.unvaluedAssets.length > 0) {
    rows.push({ label: 'Not valued', value: '', note: report.value.unvaluedAssets.join(', ') });
  }
  return rows;
}

/** The slots that did not fill at their own time: in a gap of the data, or after its last open (not run). */
function slotsNote(report: BacktestReport): string {
  const notes: string[] = [];
  const inGaps = report.slotsInGaps;
  if (inGaps !== null) notes.push(`${inGaps.count} in gaps of the data, filled at the first open after (first ${utcMinute(inGaps.firstMs)})`);
  const after = report.slotsAfterData;
  if (after !== null) notes.push(`${counted(after.count, 'more slot')} after the last candle's open, not run: no open left to fill at (${utcMinute(after.firstMs)}${after.count === 1 ? '' : ' on'})`);
  const skipped = report.slotsSkippedByClockChange;
  if (skipped !== null) notes.push(`${counted(skipped.count, 'slot')} never run: ${skipped.count === 1 ? 'its wall time' : 'their wall times'} did not exist, the clocks going forward (first ${skipped.first})`);
  return notes.join('; ');
}

/** The flex money's part: what it earned, and the operations the strategies made on it. */
function flexRow(report: BacktestReport): HeadlineRow {
  const interest = report.flex.interest;
  const operations = `${counted(report.flex.total, 'flex operation')}${report.flex.total === 0 ? '' : ` (${countsText(report.flex.byStatus)})`}`;
  if (interest === null) return { label: 'Flex', value: '', note: operations };
  return { label: 'Flex interest', value: interest.amount, note: `${interest.ticker} earned at ${report.settings.flexAprPct ?? '0'} % a year; ${operations}` };
}

function lumpSumRow(report: BacktestReport): HeadlineRow[] {
  const lump = report.benchmarks.lumpSum;
  if (lump === null) return [];
  // Coloured as the strategy's own return beside it is.
  return [withTone({ label: 'Lump sum instead', value: lump.returnPct === null ? '—' : signed(lump.returnPct), note: `% : the same ${lump.invested} ${report.quote} spent at once at ${lump.price} on ${utcMinute(lump.timeMs)}` }, toneOf(lump.returnPct))];
}

function toneOf(pct: string | null): HeadlineRow['tone'] {
  if (pct === null || pct === '0') return undefined;
  return pct.startsWith('-') ? 'bad' : 'good';
}

/**
 * The drawdown in % first, with its dates: the figure every view (this, the comparison's table,
 * the page's drawdown chart) calls the max drawdown. The largest fall in quote is another episode
 * only when the account grew in between (a 20 % fall of a larger account can be more money than
 * a 60 % fall of a small one), and then it follows, with its own dates.
 */
function drawdownRows(report: BacktestReport): HeadlineRow[] {
  const quote = report.quote;
  const { max, maxPct } = report.drawdown;
  if (max === null || maxPct === null) return [{ label: 'Max drawdown', value: '—', note: 'no equity samples' }];
  if (max.amount === '0') return [{ label: 'Max drawdown', value: '0', note: `%: the account's value never fell below an earlier high` }];
  const span = (episode: DrawdownEpisode): string => `${utcMinute(episode.peakTimeMs)} → ${utcMinute(episode.troughTimeMs)}`;
  // A peak not above zero has no percentage: the fall in quote is all there is to say.
  if (maxPct.pct === null) return [{ label: 'Max drawdown', value: max.amount, note: `${quote}, ${span(max)}` }];
  const rows: HeadlineRow[] = [{ label: 'Max drawdown', value: maxPct.pct, note: `% (${maxPct.amount} ${quote}), ${span(maxPct)}` }];
  if (!sameEpisode(maxPct, max)) rows.push({ label: 'Largest fall in quote', value: max.amount, note: `${quote} (${orDash(max.pct)} %), ${span(max)}` });
  return rows;
}

function sameEpisode(a: DrawdownEpisode, b: DrawdownEpisode | null): boolean {
  return b !== null && a.peakTimeMs === b.peakTimeMs && a.troughTimeMs === b.troughTimeMs;
}

function withTone(row: HeadlineRow, tone: HeadlineRow['tone']): HeadlineRow {
  return tone === undefined ? row : { ...row, tone };
}

function feeRows(fees: Record<string, string>, quote: string): HeadlineRow[] {
  const entries = Object.entries(fees);
  if (entries.length === 0) return [{ label: 'Fees', value: '0', note: quote }];
  return entries.map(([asset, amount], i) => ({ label: i === 0 ? 'Fees' : '', value: amount, note: asset }));
}

function intervalText(sec: number): string {
  // A file of one candle has no step between rows to read an interval from.
  if (sec <= 0) return 'interval unknown (one candle)';
  if (sec % 86_400 === 0) return `${sec / 86_400}d candles`;
  if (sec % 3600 === 0) return `${sec / 3600}h candles`;
  if (sec % 60 === 0) return `${sec / 60}m candles`;
  return `${sec}s candles`;
}
