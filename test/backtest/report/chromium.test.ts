import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildReport } from '../../../src/backtest/report/build.ts';
import { renderHtml } from '../../../src/backtest/report/html.ts';
import { Decimal } from '../../../src/domain/money.ts';
import { chromiumOrWarn, launchChromium } from '../../support/chromium.ts';
import { HOUR, T0, syntheticRun } from './fixture.ts';

/**
 * The HTML report opened in a real headless Chromium (Debian's `chromium`, driven by
 * playwright-core; .ci/run installs it). Without a browser on the machine the tests are
 * skipped and say so: nothing here downloads one.
 */

const executablePath = chromiumOrWarn('the HTML report');

/** The few browser APIs the page-side code uses (tsconfig's lib has no DOM, on purpose). */
interface SvgPath {
  getTotalLength(): number;
}
interface BrowserGlobals {
  Image: new () => { src: string; decode(): Promise<void>; naturalWidth: number; naturalHeight: number };
  document: {
    createElement(tag: 'canvas'): {
      width: number;
      height: number;
      getContext(kind: '2d'): {
        drawImage(image: unknown, x: number, y: number): void;
        getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray };
      } | null;
    };
  };
}

// Colours of the report's style sheet (html.ts): price line and buy markers.
const PRICE_BLUE = [0x1c, 0x7e, 0xd6] as const;
const MARKER_ORANGE = [0xf7, 0x67, 0x07] as const;

describe('backtest HTML report in headless Chromium', () => {
  const run = syntheticRun({ firstSlot: { timeMs: T0 + HOUR, price: new Decimal('100') } });
  const filledOrders = run.facts.orders.filled;
  let dir = '';
  let browser: Browser | null = null;
  let page: Page;
  const outsideRequests: string[] = [];

  beforeAll(async () => {
    if (executablePath === null) return;
    dir = mkdtempSync(join(tmpdir(), 'stacker-report-'));
    const file = join(dir, 'report.html');
    writeFileSync(file, renderHtml(buildReport(run), run));
    browser = await launchChromium(executablePath);
    page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    page.on('request', (request) => {
      if (!request.url().startsWith('file:') && !request.url().startsWith('data:')) outsideRequests.push(request.url());
    });
    await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
  });

  afterAll(async () => {
    await browser?.close();
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  it.skipIf(executablePath === null)('lays out all four charts (price, cost basis, value, drawdown) with a non-empty size and asks for nothing outside the file', async () => {
    const charts = page.locator('svg.chart');
    expect(await charts.count()).toBe(4);
    for (let i = 0; i < 4; i++) {
      const box = await charts.nth(i).boundingBox();
      expect(box).not.toBeNull();
      expect(box!.width).toBeGreaterThan(400);
      expect(box!.height).toBeGreaterThan(100);
    }
    // Every chart drew a line inside its frame.
    const pathLengths = await page.$$eval('svg.chart path.series', (paths) => paths.map((p) => (p as unknown as SvgPath).getTotalLength()));
    expect(pathLengths.length).toBeGreaterThanOrEqual(5);
    for (const length of pathLengths) expect(length).toBeGreaterThan(10);
    // And every line is painted: a series without a stroke colour is drawn, and invisible.
    const strokes = await page.$$eval('svg.chart path.series', (paths) => {
      const style = (element: unknown): { stroke: string; strokeWidth: string } => (globalThis as unknown as { getComputedStyle(element: unknown): { stroke: string; strokeWidth: string } }).getComputedStyle(element);
      return paths.map((p) => [p.getAttribute('class'), style(p).stroke, style(p).strokeWidth]);
    });
    for (const [cssClass, stroke, width] of strokes) {
      expect(stroke, `${cssClass}`).not.toBe('none');
      expect(Number.parseFloat(width ?? '0'), `${cssClass}`).toBeGreaterThan(0);
    }
    expect(outsideRequests).toEqual([]);
  });

  it.skipIf(executablePath === null)('draws the drawdown curve at or below zero, and shows the lump-sum and yearly tables', async () => {
    const curve = page.locator('#chart-drawdown path.series');
    expect(await curve.count()).toBe(1);
    const headings = await page.locator('h2').allTextContents();
    expect(headings).toEqual(expect.arrayContaining(['Against one lump sum', 'Years', 'Months']));
    const lumpRows = await page.locator('section:has(h2:text("Against one lump sum")) tbody tr').count();
    expect(lumpRows).toBe(2);
  });

  it.skipIf(executablePath === null)('shows one visible buy marker per filled order, inside the price chart frame', async () => {
    const markers = page.locator('#chart-price circle.buy-marker');
    expect(await markers.count()).toBe(filledOrders);
    const frame = await page.locator('#chart-price rect.frame').boundingBox();
    expect(frame).not.toBeNull();
    for (let i = 0; i < filledOrders; i++) {
      const marker = markers.nth(i);
      expect(await marker.isVisible()).toBe(true);
      const box = await marker.boundingBox();
      expect(box).not.toBeNull();
      const cx = box!.x + box!.width / 2;
      const cy = box!.y + box!.height / 2;
      expect(cx).toBeGreaterThanOrEqual(frame!.x);
      expect(cx).toBeLessThanOrEqual(frame!.x + frame!.width);
      expect(cy).toBeGreaterThanOrEqual(frame!.y);
      expect(cy).toBeLessThanOrEqual(frame!.y + frame!.height);
    }
  });

  it.skipIf(executablePath === null)('paints the price chart: its screenshot has the line blue, the marker orange and more colours than a blank one', async () => {
    const png = await page.locator('#chart-price').screenshot();
    expect(png.byteLength).toBeGreaterThan(5_000);
    // Decode the PNG in the browser itself (no image library needed): draw it on a canvas and count colours.
    const stats = await page.evaluate(
      async ({ dataUrl, blue, orange }) => {
        // Runs in the page: the browser globals, typed here because the project's lib has no DOM.
        const win = globalThis as unknown as BrowserGlobals;
        const image = new win.Image();
        image.src = dataUrl;
        await image.decode();
        const canvas = win.document.createElement('canvas');
        canvas.width = image.naturalWidth;
        canvas.height = image.naturalHeight;
        const context = canvas.getContext('2d')!;
        context.drawImage(image, 0, 0);
        const { data } = context.getImageData(0, 0, canvas.width, canvas.height);
        const near = (i: number, rgb: readonly number[]): boolean =>
          Math.abs(data[i]! - rgb[0]!) <= 24 && Math.abs(data[i + 1]! - rgb[1]!) <= 24 && Math.abs(data[i + 2]! - rgb[2]!) <= 24;
        const colours = new Set<number>();
        let bluePixels = 0;
        let orangePixels = 0;
        for (let i = 0; i < data.length; i += 4) {
          colours.add((data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!);
          if (near(i, blue)) bluePixels++;
          if (near(i, orange)) orangePixels++;
        }
        return { width: canvas.width, height: canvas.height, colours: colours.size, bluePixels, orangePixels };
      },
      { dataUrl: `data:image/png;base64,${png.toString('base64')}`, blue: [...PRICE_BLUE], orange: [...MARKER_ORANGE] },
    );
    expect(stats.width).toBeGreaterThan(400);
    expect(stats.height).toBeGreaterThan(100);
    expect(stats.colours).toBeGreaterThanOrEqual(3);
    // A line 1.5 px wide across the chart: hundreds of pixels. Three markers of radius 4: dozens.
    expect(stats.bluePixels).toBeGreaterThan(300);
    expect(stats.orangePixels).toBeGreaterThan(3 * 20);
  });
});

describe('the legends of the report pages in headless Chromium', () => {
  let dir = '';
  let browser: Browser | null = null;

  beforeAll(async () => {
    if (executablePath === null) return;
    dir = mkdtempSync(join(tmpdir(), 'stacker-legend-'));
    browser = await launchChromium(executablePath);
  });
  afterAll(async () => {
    await browser?.close();
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  /** Each swatch and label of every legend drawn in a chart, left to right: [left, right] in page pixels. */
  async function legendBoxes(page: Page): Promise<Array<Array<[number, number]>>> {
    const groups = page.locator('svg.chart g.legend');
    const out: Array<Array<[number, number]>> = [];
    for (let g = 0; g < (await groups.count()); g++) {
      const parts = groups.nth(g).locator('line, circle, text');
      const boxes: Array<[number, number]> = [];
      for (let i = 0; i < (await parts.count()); i++) {
        const box = await parts.nth(i).boundingBox();
        if (box !== null) boxes.push([box.x, box.x + box.width]);
      }
      out.push(boxes);
    }
    return out;
  }

  it.skipIf(executablePath === null)("draws no legend swatch over the label before it, and lists a comparison's runs under its chart, one per run, wrapped", async () => {
    const run = syntheticRun({ firstSlot: { timeMs: T0 + HOUR, price: new Decimal('100') } });
    const report = buildReport(run);
    // Labels of capitals and digits, as a sweep's are: wider than an average letter.
    const labels = ['DIP_PCT=10 AMOUNT_QUOTE=20', 'DIP_PCT=10 AMOUNT_QUOTE=50', 'DIP_PCT=25 AMOUNT_QUOTE=20', 'DIP_PCT=25 AMOUNT_QUOTE=50', 'WWW_MMM=100', 'dca-btc-quote-daily'];
    const runs = labels.map((label, i) => ({ label, report, equity: [[T0, '100'], [T0 + HOUR, String(100 + i)]] as Array<readonly [number, string]> }));
    const { renderComparisonHtml } = await import('../../../src/backtest/report/html.ts');
    const files = { report: join(dir, 'report.html'), comparison: join(dir, 'comparison.html') };
    // The report's own charts, and one whose legend names series in capitals, as a market or a sweep's keys are.
    const { chart } = await import('../../../src/backtest/report/charts.ts');
    const points = [{ timeMs: T0, value: new Decimal(1) }, { timeMs: T0 + HOUR, value: new Decimal(2) }];
    const capitals = chart({ id: 'chart-capitals', title: 'capitals', yLabel: 'USDT', series: labels.slice(0, 3).map((label, i) => ({ cssClass: `run-line run-${i}`, label, points })) });
    writeFileSync(files.report, renderHtml(report, run).replace('</main>', `<figure>${capitals}</figure></main>`));
    writeFileSync(files.comparison, renderComparisonHtml(runs));
    const page = await browser!.newPage({ viewport: { width: 1100, height: 900 } });
    await page.goto(pathToFileURL(files.report).href, { waitUntil: 'load' });
    const legends = await legendBoxes(page);
    expect(legends.length).toBeGreaterThan(0);
    for (const boxes of legends) for (let i = 1; i < boxes.length; i++) expect(boxes[i]![0], `legend part ${i}`).toBeGreaterThanOrEqual(boxes[i - 1]![1] - 0.5);
    // On a phone the page does not scroll sideways: wide tables and charts scroll in their own boxes.
    const pageWidth = (): Promise<number> => page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth);
    await page.setViewportSize({ width: 390, height: 800 });
    expect(await pageWidth()).toBeLessThanOrEqual(390);
    await page.setViewportSize({ width: 1100, height: 900 });

    await page.goto(pathToFileURL(files.comparison).href, { waitUntil: 'load' });
    expect(await page.locator('#chart-comparison g.legend').count()).toBe(0);
    expect(await page.locator('ul.run-legend li').allTextContents()).toEqual(labels);
    // On a phone the list wraps inside the page rather than run off it.
    await page.setViewportSize({ width: 390, height: 800 });
    const list = await page.locator('ul.run-legend').boundingBox();
    const items = page.locator('ul.run-legend li');
    for (let i = 0; i < labels.length; i++) {
      const box = await items.nth(i).boundingBox();
      expect(box!.x + box!.width).toBeLessThanOrEqual(list!.x + list!.width + 1);
    }
    await page.close();
  });
});
