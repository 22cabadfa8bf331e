import { describe, expect, it } from 'vitest';
import { Decimal } from '../../../src/domain/money.ts';
import { buildReport, roundValue } from '../../../src/backtest/report/build.ts';
import { ORDERS_SHOWN_EACH_END } from '../../../src/backtest/report/facts.ts';
import { renderHtml } from '../../../src/backtest/report/html.ts';
import { chart } from '../../../src/backtest/report/charts.ts';
import type { BacktestRun, ReportOrder } from '../../../src/backtest/report/run.ts';
import { DAY, HOUR, T0, syntheticParts, syntheticRun } from './fixture.ts';

const HOSTILE = `<script>alert("x")</script><img src=x onerror=alert(1)> http://evil.example/?a=1&b='2'`;

function html(run: BacktestRun): string {
  return renderHtml(buildReport(run), run);
}

/** Everything that is markup rather than text: tags with their attributes, and the style sheet. */
function markup(page: string): string {
  const tags = page.match(/<[^>]*>/g) ?? [];
  const styles = [...page.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1] ?? '');
  return [...tags, ...styles].join('\n');
}

function hostileRun(): BacktestRun {
  const parts = syntheticParts();
  const run = syntheticRun({
    dataFile: `${HOSTILE}.csv`,
    orders: parts.orders.map((o) => ({ ...o, instance: HOSTILE, clientOrderId: HOSTILE })),
    refusals: parts.refusals.map((r) => ({ ...r, instance: HOSTILE, reason: HOSTILE, message: HOSTILE })),
  });
  run.instances[0] = { ...run.instances[0]!, instance: HOSTILE, schedule: HOSTILE };
  return run;
}

describe('backtest HTML report', () => {
  it('is one self-contained page: no script, no external reference anywhere in the markup', () => {
    const page = html(hostileRun());
    expect(page.startsWith('<!doctype html>\n')).toBe(true);
    const tagsAndStyle = markup(page);
    expect(tagsAndStyle).not.toMatch(/http/i);
    expect(tagsAndStyle).not.toMatch(/\/\//);
    expect(tagsAndStyle).not.toMatch(/url\(|@import/i);
    expect(tagsAndStyle).not.toMatch(/<(script|link|img|iframe|object|embed|image|use)\b/i);
    expect(tagsAndStyle).not.toMatch(/\s(src|href|xlink:href|on\w+)=/i);
  });

  it('escapes instance names, reasons, messages and the data file name wherever they appear', () => {
    const page = html(hostileRun());
    expect(page).not.toContain('<script');
    expect(page).not.toContain('<img');
    expect(page).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt; http://evil.example/?a=1&amp;b=&#39;2&#39;');
  });

  it('escapes a chart\'s id, an attribute that carries a market name (report --html names its charts after a journal\'s markets)', () => {
    const svg = chart({ id: `chart-buys-${HOSTILE}`, title: HOSTILE, yLabel: 'USDT', series: [] });
    expect(markup(svg)).not.toMatch(/<script|<img/);
    expect(svg).toContain('id="chart-buys-&lt;script&gt;');
  });

  it('draws four charts (price, cost basis, value, drawdown) and one buy marker per filled order at its fill time', () => {
    const page = html(syntheticRun());
    expect(page.match(/<svg class="chart"/g)).toHaveLength(4);
    for (const id of ['chart-price', 'chart-cost-basis', 'chart-equity']) expect(page).toContain(`id="${id}"`);
    const markers = [...page.matchAll(/<circle class="buy-marker" data-time="(\d+)" data-price="([\d.]+)"/g)];
    // 3 filled orders; the canceled one filled nothing and has no marker.
    expect(markers.map((m) => [Number(m[1]), m[2]])).toEqual([
      [T0 + HOUR, '100'],
      [T0 + DAY + HOUR, '80'],
      [T0 + 2 * DAY + HOUR, '125'],
    ]);
  });

  it('draws the cost basis fees in: its last point is the headline\'s average cost, not the average price', () => {
    const run = syntheticRun();
    const report = buildReport(run);
    expect(report.totals.averagePriceWithFees).not.toBe(report.totals.averagePrice);
    const last = run.facts.basis.points().at(-1)?.value;
    expect(last === undefined ? null : roundValue(last)).toBe(report.totals.averagePriceWithFees);
  });

  it('labels the axes with prices and UTC dates and has a legend', () => {
    const page = html(syntheticRun());
    expect(page).toContain('>130</text>');
    expect(page).toContain('>2024-01-02 00:00Z</text>');
    expect(page).toContain('>time (UTC)</text>');
    expect(page).toContain('>BTC_USDT close</text>');
    expect(page).toContain('>average cost</text>');
    expect(page).toContain('>initial value</text>');
  });

  it('shows the headline figures as the JSON report writes them', () => {
    const page = html(syntheticRun());
    for (const figure of ['98.36065574', '1065.7', '+65.7', '9.8756', '3.05']) expect(page).toContain(`>${figure}</td>`);
    expect(page).toContain('% (106.75 USDT), 2024-01-03 01:00Z → 2024-01-03 05:00Z');
    expect(page).toContain('<td>E_BUDGET</td><td class="num">2</td>');
  });

  it('lists the first and last orders of a long run and says how many it left out', () => {
    const template = syntheticParts().orders[0]!;
    const orders: ReportOrder[] = Array.from({ length: 60 }, (_, i) => ({
      ...template,
      clientOrderId: `order-${String(i).padStart(2, '0')}`,
      slotTimeMs: T0 + i * HOUR,
      fillTimeMs: T0 + i * HOUR,
      filledBase: new Decimal('0.5'),
      filledQuote: new Decimal('50'),
    }));
    const page = html(syntheticRun({ orders }));
    const shown = [...page.matchAll(/<td>(order-\d\d)<\/td>/g)].map((m) => m[1]);
    expect(shown).toHaveLength(2 * ORDERS_SHOWN_EACH_END);
    expect(shown[0]).toBe('order-00');
    expect(shown.at(-1)).toBe('order-59');
    expect(shown).not.toContain('order-30');
    expect(page).toContain('… 10 more orders');
    // the chart still has every buy
    expect(page.match(/class="buy-marker"/g)).toHaveLength(60);
  });

  it('renders a run with no candles, no orders and no samples without failing', () => {
    const run = syntheticRun({ chartCandles: [], orders: [], equity: [], refusals: [] });
    const page = html(run);
    expect(page.match(/no data in this period/g)).toHaveLength(4);
    expect(page).toContain('<p>No orders.</p>');
    expect(page).toContain('<p>No refusals.</p>');
  });

  it('gives the same bytes for the same run', () => {
    expect(html(syntheticRun())).toBe(html(syntheticRun()));
  });
});
