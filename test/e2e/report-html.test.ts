import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../cli/run-cli.ts';
import { findChromium, launchChromium, warnNoChromium } from '../support/chromium.ts';
import { sandboxPerTest, startDaemon } from './daemon-process.ts';

// `stacker report --html FILE`: the live journal of a daemon that traded on the sandbox, drawn
// as a self-contained page and opened in a real headless Chromium.
const t = sandboxPerTest();
const executablePath = findChromium();
if (executablePath === null) warnNoChromium('the headless Chromium test of `stacker report --html`');

interface SvgPath {
  getTotalLength(): number;
}

let browser: Browser | null = null;
let out = '';
afterEach(async () => {
  await browser?.close();
  browser = null;
  if (out !== '') rmSync(out, { recursive: true, force: true });
});

describe('stacker report --html', () => {
  it.skipIf(executablePath === null)('draws every filled buy and the cost basis per market, asks for nothing outside the file, and keeps the table', async () => {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '* * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001' });
    t.dir.writeStrategy('dca-eth', { STRATEGY: 'dca', SCHEDULE: '*/2 * * * * *', MARKET: 'ETH_USDT', AMOUNT: '0.01' });
    const daemon = startDaemon(['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data], t.live());
    await daemon.waitFor('"event":"scheduled"');
    await new Promise((resolve) => setTimeout(resolve, 3500));
    daemon.child.kill('SIGTERM');
    expect(await daemon.exited).toBe(0);
    const filled = t.sandbox.exchange.orderHistory({}).filter((order) => order.filledBase.gt(0));
    const count = (market: string) => filled.filter((order) => order.market === market).length;
    expect(count('BTC_USDT')).toBeGreaterThanOrEqual(2);
    expect(count('ETH_USDT')).toBeGreaterThanOrEqual(1);

    out = mkdtempSync(join(tmpdir(), 'stacker-live-report-'));
    const file = join(out, 'report.html');
    const result = await runCli(['report', '--mode', 'live', '--data-dir', t.dir.data, '--html', file], t.live());
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`report: ${file}`);
    expect(readFileSync(file, 'utf8')).not.toMatch(/<script|https?:\/\//i);

    browser = await launchChromium(executablePath as string);
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    const outside: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith('file:') && !request.url().startsWith('data:')) outside.push(request.url());
    });
    await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });

    expect(await page.locator('h2').allTextContents()).toEqual(['Markets', 'BTC_USDT', 'ETH_USDT']);
    expect(await page.locator('section:has(h2:text("Markets")) tbody tr').count()).toBe(2);
    for (const market of ['BTC_USDT', 'ETH_USDT']) {
      const buys = page.locator(`[id="chart-buys-${market}"] circle.buy-marker`);
      expect(await buys.count()).toBe(count(market));
      const frame = await page.locator(`[id="chart-buys-${market}"] rect.frame`).boundingBox();
      for (let i = 0; i < count(market); i++) {
        expect(await buys.nth(i).isVisible()).toBe(true);
        const box = await buys.nth(i).boundingBox();
        expect(box!.y + box!.height / 2).toBeGreaterThanOrEqual(frame!.y);
        expect(box!.y + box!.height / 2).toBeLessThanOrEqual(frame!.y + frame!.height);
      }
      const chartBox = await page.locator(`[id="chart-invested-${market}"]`).boundingBox();
      expect(chartBox!.width).toBeGreaterThan(400);
      expect(chartBox!.height).toBeGreaterThan(100);
    }
    // The cost basis and the invested line are drawn (the price-now line too, when a market bought more than once).
    const lengths = await page.$$eval('svg.chart path.series', (paths) => paths.map((p) => (p as unknown as SvgPath).getTotalLength()));
    expect(lengths.length).toBeGreaterThanOrEqual(4);
    expect(outside).toEqual([]);
  }, 60_000);
});
