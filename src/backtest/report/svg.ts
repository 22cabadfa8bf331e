import { Decimal, formatDecimal } from '../../domain/money.ts';
import { escapeHtml, utcDate, utcMinute } from './text.ts';

/**
 * Chart primitives for inline SVG. Money stays Decimal up to here: tick values are chosen and
 * labelled in Decimal; `toNumber()` happens only when a value becomes a pixel coordinate.
 */

export interface Plot {
  /** Outer size in CSS pixels (also the viewBox). */
  width: number;
  height: number;
  /** Inner drawing area. */
  left: number;
  right: number;
  top: number;
  bottom: number;
}

export function plotArea(width: number, height: number, margin: { left: number; right: number; top: number; bottom: number }): Plot {
  return { width, height, left: margin.left, right: width - margin.right, top: margin.top, bottom: height - margin.bottom };
}

export type Scale = (value: number) => number;

/** Maps [d0, d1] onto [r0, r1]; a zero-width domain maps to the middle of the range. */
export function linearScale(d0: number, d1: number, r0: number, r1: number): Scale {
  if (d1 === d0) return () => (r0 + r1) / 2;
  const k = (r1 - r0) / (d1 - d0);
  return (value) => r0 + (value - d0) * k;
}

/** Pixel coordinate text: one decimal is finer than any screen and keeps the page small. */
export function px(value: number): string {
  const rounded = Math.round(value * 10) / 10;
  return Object.is(rounded, -0) ? '0' : String(rounded);
}

export interface ValueAxis {
  min: Decimal;
  max: Decimal;
  ticks: Decimal[];
}

/**
 * "Nice" value ticks (1, 2 or 5 × 10^k apart) covering [min, max], about `target` of them.
 * The axis is widened to whole ticks so the lines never touch the frame.
 */
export function valueAxis(min: Decimal, max: Decimal, target = 5): ValueAxis {
  let lo = min;
  let hi = max;
  if (hi.lt(lo)) [lo, hi] = [hi, lo];
  if (hi.eq(lo)) {
    const pad = lo.isZero() ? new Decimal(1) : new Decimal(10).pow(lo.abs().e);
    lo = lo.sub(pad);
    hi = hi.add(pad);
  } else {
    // A little room above and below: a value at the very top or bottom was drawn on the frame
    // (every buy of a journal bought at one price sat on the chart's bottom edge).
    const margin = hi.sub(lo).mul('0.04');
    lo = lo.sub(margin);
    hi = hi.add(margin);
  }
  const rough = hi.sub(lo).div(target);
  const magnitude = new Decimal(10).pow(rough.e);
  const normalized = rough.div(magnitude);
  const factor = normalized.lte(1) ? 1 : normalized.lte(2) ? 2 : normalized.lte(5) ? 5 : 10;
  const step = magnitude.mul(factor);
  const first = lo.div(step).floor().mul(step);
  const last = hi.div(step).ceil().mul(step);
  const ticks: Decimal[] = [];
  for (let tick = first; tick.lte(last); tick = tick.add(step)) ticks.push(tick);
  return { min: first, max: last, ticks };
}

export interface TimeAxis {
  ticks: number[];
  label: (ms: number) => string;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const FIXED_STEPS = [MINUTE, 5 * MINUTE, 15 * MINUTE, 30 * MINUTE, HOUR, 2 * HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, 2 * DAY, 7 * DAY, 14 * DAY];
const MONTH_STEPS = [1, 2, 3, 6, 12, 24, 60, 120];

/** UTC time ticks at round instants (whole hours, midnights, first days of months). */
export function timeAxis(fromMs: number, toMs: number, target = 6): TimeAxis {
  const span = Math.max(toMs - fromMs, 1);
  for (const step of FIXED_STEPS) {
    if (span / step > target) continue;
    const ticks: number[] = [];
    for (let t = Math.ceil(fromMs / step) * step; t <= toMs; t += step) ticks.push(t);
    return { ticks, label: step < DAY ? (span <= DAY ? timeOfDay : utcMinute) : utcDate };
  }
  const fromMonth = monthIndex(fromMs);
  const months = monthIndex(toMs) - fromMonth;
  const stepMonths = MONTH_STEPS.find((m) => months / m <= target) ?? Math.ceil(months / target);
  const ticks: number[] = [];
  for (let m = Math.ceil(fromMonth / stepMonths) * stepMonths; ; m += stepMonths) {
    const t = Date.UTC(Math.floor(m / 12), m % 12, 1);
    if (t > toMs) break;
    if (t >= fromMs) ticks.push(t);
  }
  return { ticks, label: stepMonths % 12 === 0 ? (ms) => utcDate(ms).slice(0, 4) : (ms) => utcDate(ms).slice(0, 7) };
}

function monthIndex(ms: number): number {
  const date = new Date(ms);
  return date.getUTCFullYear() * 12 + date.getUTCMonth();
}

function timeOfDay(ms: number): string {
  return new Date(ms).toISOString().slice(11, 16);
}

/**
 * Keeps the shape of a long series in at most `maxPoints` points: per bucket of consecutive
 * points, the first, the lowest, the highest and the last (so spikes survive thinning).
 */
export function thin(points: ReadonlyArray<readonly [number, number]>, maxPoints: number): Array<readonly [number, number]> {
  if (points.length <= maxPoints) return [...points];
  const buckets = Math.max(1, Math.floor(maxPoints / 4));
  const size = points.length / buckets;
  const kept: Array<readonly [number, number]> = [];
  for (let b = 0; b < buckets; b++) {
    const start = Math.floor(b * size);
    const end = Math.min(points.length, Math.floor((b + 1) * size));
    if (end <= start) continue;
    let lowIndex = start;
    let highIndex = start;
    for (let i = start; i < end; i++) {
      const y = points[i]![1];
      if (y < points[lowIndex]![1]) lowIndex = i;
      if (y > points[highIndex]![1]) highIndex = i;
    }
    for (const i of [...new Set([start, lowIndex, highIndex, end - 1])].sort((a, c) => a - c)) kept.push(points[i]!);
  }
  return kept;
}

/** `M x y L x y …` through the points; `step` holds each value until the next point's x. */
export function pathData(points: ReadonlyArray<readonly [number, number]>, step = false): string {
  const parts: string[] = [];
  let previousY: number | null = null;
  for (const [x, y] of points) {
    if (previousY === null) parts.push(`M${px(x)} ${px(y)}`);
    else if (step) parts.push(`H${px(x)}V${px(y)}`);
    else parts.push(`L${px(x)} ${px(y)}`);
    previousY = y;
  }
  return parts.join('');
}

/** Rough width of one character of 11 px text: layout only needs to be about right. */
const CHAR_WIDTH = 6.5;

/**
 * A label's width in 11 px text, erring wide: capitals, digits and `_=%` are wider than the
 * average letter, and a legend laid out with the average drew the next swatch over a label of
 * capitals (`DIP_PCT=10`).
 */
export function textWidth(label: string): number {
  let width = 0;
  for (const c of label) width += /[A-Z_=%@#MW]/.test(c) ? 7.8 : /[0-9]/.test(c) ? 6.8 : c === ' ' ? 3.4 : /[.,:;'|!il]/.test(c) ? 3.6 : 6.4;
  return width;
}

export interface AxisLabels {
  /** Under the x axis. */
  x: string;
  /** Beside the y axis (units). */
  y: string;
}

/** Frame, grid lines and tick labels for a time × value chart. */
export function axes(plot: Plot, time: TimeAxis, xScale: Scale, value: ValueAxis, yScale: Scale, labels: AxisLabels): string {
  const out: string[] = [];
  for (const tick of value.ticks) {
    const y = px(yScale(tick.toNumber()));
    out.push(`<line class="grid" x1="${px(plot.left)}" x2="${px(plot.right)}" y1="${y}" y2="${y}"/>`);
    out.push(`<text class="tick y-tick" x="${px(plot.left - 6)}" y="${y}" text-anchor="end" dominant-baseline="middle">${escapeHtml(formatDecimal(tick))}</text>`);
  }
  let labelsEndAt = -Infinity;
  for (const tick of time.ticks) {
    const x = xScale(tick);
    out.push(`<line class="grid" x1="${px(x)}" x2="${px(x)}" y1="${px(plot.top)}" y2="${px(plot.bottom)}"/>`);
    const label = time.label(tick);
    const width = label.length * CHAR_WIDTH;
    // A label centred on a tick near the right edge would be cut off: end it at the tick instead;
    // a label that would run into the previous one is left out (its grid line stays).
    const anchor = x + width / 2 > plot.width ? 'end' : 'middle';
    const start = anchor === 'end' ? x - width : x - width / 2;
    if (start < labelsEndAt + 8) continue;
    labelsEndAt = start + width;
    out.push(`<text class="tick x-tick" x="${px(x)}" y="${px(plot.bottom + 16)}" text-anchor="${anchor}">${escapeHtml(label)}</text>`);
  }
  out.push(`<rect class="frame" x="${px(plot.left)}" y="${px(plot.top)}" width="${px(plot.right - plot.left)}" height="${px(plot.bottom - plot.top)}"/>`);
  out.push(`<text class="axis-label" x="${px((plot.left + plot.right) / 2)}" y="${px(plot.height - 6)}" text-anchor="middle">${escapeHtml(labels.x)}</text>`);
  out.push(`<text class="axis-label" x="${px(plot.left)}" y="${px(plot.top - 8)}" text-anchor="middle">${escapeHtml(labels.y)}</text>`);
  return out.join('\n');
}

export interface LegendItem {
  label: string;
  /** CSS class of the swatch: the same class as the series it names. */
  cssClass: string;
  kind: 'line' | 'marker';
}

/** One row of swatches above the plot, right-aligned. */
export function legend(plot: Plot, items: readonly LegendItem[]): string {
  const out: string[] = ['<g class="legend">'];
  let x = plot.right - items.reduce((total, item) => total + 34 + textWidth(item.label), 0);
  const y = plot.top - 10;
  for (const item of items) {
    if (item.kind === 'marker') out.push(`<circle class="${item.cssClass} legend-swatch" cx="${px(x + 10)}" cy="${px(y)}" r="4"/>`);
    else out.push(`<line class="${item.cssClass} legend-swatch" x1="${px(x)}" x2="${px(x + 20)}" y1="${px(y)}" y2="${px(y)}"/>`);
    out.push(`<text class="legend-label" x="${px(x + 26)}" y="${px(y)}" dominant-baseline="middle">${escapeHtml(item.label)}</text>`);
    x += 34 + textWidth(item.label);
  }
  out.push('</g>');
  return out.join('\n');
}
