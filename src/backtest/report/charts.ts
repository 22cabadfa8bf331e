import { Decimal, formatDecimal } from '../../domain/money.ts';
import { VALUE_PLACES, ROUNDING } from './build.ts';
import type { Buy } from './facts.ts';
import type { BacktestRun } from './run.ts';
import { escapeHtml, utcMinute } from './text.ts';
import { axes, legend, linearScale, pathData, plotArea, px, thin, timeAxis, valueAxis } from './svg.ts';
import type { LegendItem } from './svg.ts';

/**
 * The charts of the HTML report, each one inline <svg>: price with buy markers, cost basis
 * against price, account value and drawdown. The run keeps each long series as a sketch
 * (facts.ts: the run cut into 432 time buckets, each keeping its first, lowest, highest and last
 * point), so years of hourly slots draw what a pixel can show; a run with fewer points than
 * buckets draws every one.
 */

const WIDTH = 960;
const HEIGHT = 300;
const MARGIN = { left: 78, right: 16, top: 30, bottom: 44 };
/** Points per line after thinning: about two per horizontal pixel. */
const MAX_LINE_POINTS = 2 * (WIDTH - MARGIN.left - MARGIN.right);

export interface Series {
  cssClass: string;
  label: string;
  points: ReadonlyArray<{ timeMs: number; value: Decimal }>;
  step?: boolean;
  /** Two points further apart than this are not joined: the line breaks over a gap of the data rather than draw prices nobody saw. */
  breakOverMs?: number;
}

export interface Marker {
  timeMs: number;
  price: Decimal;
  title: string;
}

export interface ChartSpec {
  id: string;
  title: string;
  yLabel: string;
  series: Series[];
  markers?: Marker[];
  markerLabel?: string;
  /** false: no legend in the picture (a comparison's runs, too many for one row, get an HTML list under it). */
  legend?: boolean;
}

/** The buys the price chart marks: per time bucket the first, cheapest, dearest and last (every buy when they are fewer than the buckets). */
export function buysOf(run: BacktestRun): Buy[] {
  return run.facts.buys();
}

function priceSeries(run: BacktestRun): Series {
  const points = run.chartCandles.map((c) => ({ timeMs: c.timeSec * 1000, value: c.close }));
  return { cssClass: 'price-line', label: `${run.market} close`, points, breakOverMs: 2 * usualStepMs(points) };
}

/** The usual time between two chart points (the most common; the last point may be nearer, a gap is wider); Infinity with fewer than two. */
function usualStepMs(points: ReadonlyArray<{ timeMs: number }>): number {
  const counts = new Map<number, number>();
  for (let i = 1; i < points.length; i++) {
    const delta = (points[i] as { timeMs: number }).timeMs - (points[i - 1] as { timeMs: number }).timeMs;
    counts.set(delta, (counts.get(delta) ?? 0) + 1);
  }
  let step = Number.POSITIVE_INFINITY;
  let seen = 0;
  for (const [delta, count] of counts) if (count > seen || (count === seen && delta < step)) [step, seen] = [delta, count];
  return step;
}

/** The points in runs without a gap wider than `breakOverMs` inside one. */
function unbroken<T extends { timeMs: number }>(points: readonly T[], breakOverMs: number | undefined): T[][] {
  if (breakOverMs === undefined || !Number.isFinite(breakOverMs)) return [[...points]];
  const runs: T[][] = [];
  let run: T[] = [];
  for (const point of points) {
    const last = run.at(-1);
    if (last !== undefined && point.timeMs - last.timeMs > breakOverMs) {
      runs.push(run);
      run = [];
    }
    run.push(point);
  }
  if (run.length > 0) runs.push(run);
  return runs;
}

export function priceChart(run: BacktestRun, buys: readonly Buy[]): string {
  return chart({
    id: 'chart-price',
    title: `Price and buys`,
    yLabel: run.quote,
    series: [priceSeries(run)],
    markers: buys.map((b) => ({
      timeMs: b.timeMs,
      price: b.price,
      title: `${utcMinute(b.timeMs)} ${b.instance}: ${formatDecimal(b.base)} ${run.base} at ${formatDecimal(
        b.price.toDecimalPlaces(VALUE_PLACES, ROUNDING),
      )} ${run.quote}`,
    })),
    markerLabel: 'buy',
  });
}

/** Running average cost (quote paid so far, fees in / base kept so far), held until the next buy (or time bucket). */
export function costBasisChart(run: BacktestRun): string {
  const basis = run.facts.basis.points();
  const lastTimeMs = run.chartCandles.at(-1)?.timeSec;
  const last = basis.at(-1);
  if (last !== undefined && lastTimeMs !== undefined && lastTimeMs * 1000 > last.timeMs) {
    basis.push({ timeMs: lastTimeMs * 1000, value: last.value });
  }
  return chart({
    id: 'chart-cost-basis',
    title: 'Cost basis against price',
    yLabel: run.quote,
    series: [priceSeries(run), { cssClass: 'basis-line', label: 'average cost', points: basis, step: true }],
  });
}

export function equityChart(run: BacktestRun, initialValue: Decimal): string {
  const points = run.facts.equity.points().map((e) => ({ timeMs: e.timeMs, value: e.value }));
  const first = points[0];
  const last = points.at(-1);
  const reference =
    first === undefined || last === undefined
      ? []
      : [
          { timeMs: first.timeMs, value: initialValue },
          { timeMs: last.timeMs, value: initialValue },
        ];
  return chart({
    id: 'chart-equity',
    title: `Account value (${run.quote})`,
    yLabel: run.quote,
    series: [
      { cssClass: 'initial-line', label: 'initial value', points: reference },
      { cssClass: 'equity-line', label: 'value', points },
    ],
  });
}

/** Drawdown at each sample, in % below the running peak of the account value (0 at a new peak). */
export function drawdownChart(run: BacktestRun): string {
  const points = run.facts.drawdownCurve.points().map((p) => ({ timeMs: p.timeMs, value: new Decimal(p.pct) }));
  return chart({
    id: 'chart-drawdown',
    title: 'Drawdown (% below the highest account value so far)',
    yLabel: '%',
    series: [{ cssClass: 'drawdown-line', label: 'drawdown', points }],
  });
}

/** Several backtests' account values on one chart, a line each (a comparison or a sweep). */
export function comparisonChart(runs: ReadonlyArray<{ readonly label: string; readonly points: ReadonlyArray<{ timeMs: number; value: Decimal }> }>, quote: string): string {
  const svg = chart({
    id: 'chart-comparison',
    title: `Account value (${quote}), one line per run`,
    yLabel: quote,
    series: runs.map((run, i) => ({ cssClass: `run-line run-${i % RUN_COLOURS}`, label: run.label, points: run.points })),
    legend: false,
  });
  // Up to 64 runs: one row of swatches in the picture ran off its left edge; a list wraps.
  const items = runs.map((run, i) => `<li class="run-${i % RUN_COLOURS}">${escapeHtml(run.label)}</li>`);
  return `${svg}\n<ul class="run-legend" aria-label="runs">${items.join('')}</ul>`;
}

/** Distinct line colours of a comparison before they repeat (html.ts's style sheet). */
export const RUN_COLOURS = 8;

/** One chart as inline <svg>: lines over a shared time axis, markers on top (the live report draws its own with it). */
export function chart(spec: ChartSpec): string {
  const plot = plotArea(WIDTH, HEIGHT, MARGIN);
  const markers = spec.markers ?? [];
  const times = [...spec.series.flatMap((s) => s.points.map((p) => p.timeMs)), ...markers.map((m) => m.timeMs)];
  const values = [...spec.series.flatMap((s) => s.points.map((p) => p.value)), ...markers.map((m) => m.price)];
  const open = `<svg class="chart" id="${escapeHtml(spec.id)}" role="img" aria-label="${escapeHtml(spec.title)}" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}">`;
  const title = `<title>${escapeHtml(spec.title)}</title>`;
  if (times.length === 0) {
    return [open, title, `<text class="empty" x="${WIDTH / 2}" y="${HEIGHT / 2}" text-anchor="middle">no data in this period</text>`, '</svg>'].join('\n');
  }
  // Loops, not Math.min(...xs): a years-long run has more points than a call has arguments.
  let fromMs = times[0]!;
  let toMs = fromMs;
  for (const t of times) {
    if (t < fromMs) fromMs = t;
    if (t > toMs) toMs = t;
  }
  let low = values[0]!;
  let high = low;
  for (const v of values) {
    if (v.lt(low)) low = v;
    if (v.gt(high)) high = v;
  }
  const value = valueAxis(low, high);
  const x = linearScale(fromMs, toMs, plot.left, plot.right);
  const y = linearScale(value.min.toNumber(), value.max.toNumber(), plot.bottom, plot.top);
  const out = [open, title, axes(plot, timeAxis(fromMs, toMs), x, value, y, { x: 'time (UTC)', y: spec.yLabel })];
  for (const series of spec.series) {
    if (series.points.length === 0) continue;
    const d = unbroken(series.points, series.breakOverMs).map((run) => {
      const pixels = run.map((p) => [x(p.timeMs), y(p.value.toNumber())] as const);
      return pathData(series.step === true ? pixels : thin(pixels, MAX_LINE_POINTS), series.step === true);
    });
    out.push(`<path class="series ${series.cssClass}" d="${d.join('')}"/>`);
  }
  out.push(markerGroup(markers, x, y));
  if (spec.legend !== false) out.push(legend(plot, legendItems(spec)));
  out.push('</svg>');
  return out.join('\n');
}

function markerGroup(markers: readonly Marker[], x: (v: number) => number, y: (v: number) => number): string {
  if (markers.length === 0) return '';
  // Years of daily buys would paint the price line over: markers shrink as they multiply.
  const r = markers.length <= 100 ? 4 : markers.length <= 1000 ? 3 : 2;
  const circles = markers.map(
    (m) =>
      `<circle class="buy-marker" data-time="${m.timeMs}" data-price="${escapeHtml(formatDecimal(m.price.toDecimalPlaces(VALUE_PLACES, ROUNDING)))}" cx="${px(x(m.timeMs))}" cy="${px(y(m.price.toNumber()))}" r="${r}"><title>${escapeHtml(m.title)}</title></circle>`,
  );
  return [`<g class="buys${markers.length > 100 ? ' dense' : ''}">`, ...circles, '</g>'].join('\n');
}

function legendItems(spec: ChartSpec): LegendItem[] {
  const items: LegendItem[] = spec.series.map((s) => ({ label: s.label, cssClass: s.cssClass, kind: 'line' }));
  if (spec.markers !== undefined && spec.markerLabel !== undefined) items.push({ label: spec.markerLabel, cssClass: 'buy-swatch', kind: 'marker' });
  return items;
}
