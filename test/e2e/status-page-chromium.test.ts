import { type IncomingMessage, type Server, type ServerResponse, createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { chromiumOrWarn, launchChromium } from '../support/chromium.ts';
import { type RunningDaemon, sandboxPerTest, startDaemon } from './daemon-process.ts';
import { CONTROL_TOKEN, eventually, instanceOf, readStatus, statusUrl } from './status-daemon.ts';

// The status page of a live daemon on the sandbox, opened in a real headless Chromium.
const executablePath = chromiumOrWarn('the status page');
const t = sandboxPerTest();
const RARE = '0 9 1 1 *';

let browser: Browser | null = null;
beforeAll(async () => {
  if (executablePath !== null) browser = await launchChromium(executablePath);
});
afterAll(async () => {
  await browser?.close();
});

let running: RunningDaemon[] = [];
afterEach(async () => {
  for (const daemon of running) {
    if (daemon.child.exitCode === null && daemon.child.signalCode === null) daemon.child.kill('SIGTERM');
    await daemon.exited;
  }
  running = [];
});

function start(env: Record<string, string>): RunningDaemon {
  t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: RARE, MARKET: 'BTC_USDT', AMOUNT: '0.001', BUDGET_QUOTE_PER_DAY: '100' });
  t.dir.writeStrategy('report', { STRATEGY: 'balance-report', SCHEDULE: RARE });
  const daemon = startDaemon(['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data], { ...t.live(), STACKER_METRICS_PORT: '0', ...env });
  running.push(daemon);
  return daemon;
}

async function openPage(url: string, viewport = { width: 1100, height: 900 }) {
  if (browser === null) throw new Error('no browser');
  // A browser in another zone than the daemon's UTC: the page names the zone of the times it shows.
  const context = await browser.newContext({ viewport, timezoneId: 'Europe/Berlin', locale: 'en-US' });
  const page = await context.newPage();
  const elsewhere: string[] = [];
  const pageErrors: string[] = [];
  page.on('request', (request) => {
    if (!request.url().startsWith(url)) elsewhere.push(request.url());
  });
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') pageErrors.push(message.text());
  });
  await page.goto(`${url}/`, { waitUntil: 'load' });
  return { page, context, elsewhere, pageErrors };
}

/**
 * A reverse proxy as people set one up: `location /stacker { proxy_pass http://127.0.0.1:PORT/; }`
 * (the prefix cut off, so /stacker and /stacker/ are both the page; the upstream's own Host
 * sent), with another application answering
 * everything else at the site's root, which records what reached it.
 */
async function subPathProxy(upstream: string): Promise<{ url: string; atRoot: string[]; stop(): Promise<void> }> {
  const target = new URL(upstream);
  const atRoot: string[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '/';
    if (path !== '/stacker' && !path.startsWith('/stacker/')) {
      atRoot.push(`${req.method} ${path}`);
      req.resume();
      res.writeHead(path.startsWith('/api/') ? 200 : 404, { 'content-type': 'application/json' }).end('{"killSwitch":{"on":true}}');
      return;
    }
    const forwarded = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: path.slice('/stacker'.length) || '/', headers: { ...req.headers, host: target.host } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forwarded.on('error', () => res.writeHead(502).end());
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    atRoot,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('the status page in headless Chromium', () => {
  it.skipIf(executablePath === null)("behind a reverse proxy under a sub-path, reads and controls its own daemon, never the application at the site's root (opened with or without the closing slash)", async () => {
    const daemon = start({ STACKER_CONTROL_TOKEN: CONTROL_TOKEN });
    const url = await statusUrl(daemon);
    const proxy = await subPathProxy(url);
    try {
      // openPage adds the closing slash; the page opened without it moves to it by itself.
      const { page, context, pageErrors } = await openPage(`${proxy.url}/stacker`);
      await page.goto(`${proxy.url}/stacker`, { waitUntil: 'load' });
      try {
        await page.locator('[data-instance="dca-btc"]').waitFor();
        expect(new URL(page.url()).pathname).toBe('/stacker/');
        await page.fill('#token', CONTROL_TOKEN);
        await page.click('#token-form button[type="submit"]');
        page.once('dialog', (dialog) => void dialog.accept());
        await page.click('button[data-action="kill-switch-on"]');
        await page.locator('#message:has-text("/api/kill-switch: done")').waitFor();
        await eventually(async () => expect((await readStatus(url)).killSwitch.operatorSince).not.toBeNull());
        expect(proxy.atRoot).toEqual([]);
        expect(pageErrors).toEqual([]);
      } finally {
        await context.close();
      }
    } finally {
      await proxy.stop();
    }
  }, 30_000);


  it.skipIf(executablePath === null)('renders every instance from /api/status, asks nothing of any other origin, and a pause clicked with the token pauses the instance', async () => {
    const daemon = start({ STACKER_CONTROL_TOKEN: CONTROL_TOKEN });
    const url = await statusUrl(daemon);
    const { page, context, elsewhere, pageErrors } = await openPage(url);
    try {
      await page.locator('[data-instance="dca-btc"]').waitFor();
      expect(await page.locator('article[data-instance] h2').allTextContents()).toEqual(['dca-btc dca', 'report balance-report']);
      expect(await page.locator('#health .badge').textContent()).toBe('ok');
      expect(await page.locator('[data-instance="dca-btc"]').textContent()).toContain('Budget (USDT)');
      // No token typed yet: no control is offered.
      expect(await page.locator('button[data-action]').count()).toBe(0);

      await page.fill('#token', CONTROL_TOKEN);
      await page.click('#token-form button[type="submit"]');

      // Run a slot now (after confirming): the order, its transition and the cost basis appear.
      page.once('dialog', (dialog) => void dialog.accept());
      await page.click('[data-instance="dca-btc"] button[data-action="run"]');
      await page.locator('#message:has-text("/api/instances/dca-btc/run: done (done)")').waitFor();
      // The answer is said at once; the instance's card follows with the page's next read of /api/status.
      await page.locator('[data-instance="dca-btc"]:has-text("Recent orders")').waitFor();
      const dca = await page.locator('[data-instance="dca-btc"]').textContent();
      expect(dca).toContain('Recent orders');
      expect(dca).toContain('new → FILLED');
      expect(dca).toMatch(/\d{2}:\d{2}:\d{2} [AP]M GMT\+[12]/);
      expect(await page.locator('#markets tbody tr td').first().textContent()).toBe('BTC_USDT');
      expect(t.sandbox.exchange.orderHistory({})).toHaveLength(1);

      await page.click('[data-instance="dca-btc"] button[data-action="pause"]');
      await eventually(async () => expect((await instanceOf(url, 'dca-btc')).paused).not.toBeNull());
      expect((await instanceOf(url, 'report')).paused).toBeNull();
      // The page shows it after its own refresh, and offers resume instead.
      await page.locator('[data-instance="dca-btc"] button[data-action="resume"]').waitFor();
      expect(await page.locator('[data-instance="dca-btc"] .badge').first().textContent()).toBe('paused');
      expect(await page.locator('#message').textContent()).toContain('/api/instances/dca-btc/pause: done');

      expect(elsewhere).toEqual([]);
      expect(pageErrors).toEqual([]);
      // The token never reaches a cookie.
      expect(await context.cookies()).toEqual([]);
    } finally {
      await context.close();
    }
  }, 30_000);

  it.skipIf(executablePath === null)('forgets a token the daemon refused (401) and asks for it again, so the right one works without a reload', async () => {
    const daemon = start({ STACKER_CONTROL_TOKEN: CONTROL_TOKEN });
    const url = await statusUrl(daemon);
    const { page, context, pageErrors } = await openPage(url);
    try {
      await page.locator('[data-instance="dca-btc"]').waitFor();
      await page.fill('#token', 'a-mistyped-control-token-0123');
      await page.click('#token-form button[type="submit"]');
      await page.click('[data-instance="dca-btc"] button[data-action="pause"]');
      await page.locator('#message:has-text("401")').waitFor();
      expect(await page.locator('#message').textContent()).toBe('/api/instances/dca-btc/pause: 401 wrong token: the token was forgotten; type it again');
      expect((await instanceOf(url, 'dca-btc')).paused).toBeNull();
      // Forgotten in memory and in the tab's storage: no control is offered until a token is typed again.
      expect(await page.evaluate("sessionStorage.getItem('stacker-control-token')")).toBeNull();
      await page.locator('button[data-action]').first().waitFor({ state: 'detached' });
      expect(await page.locator('button[data-action]').count()).toBe(0);
      expect(await page.locator('#token-form').isVisible()).toBe(true);
      expect(await page.evaluate('document.activeElement && document.activeElement.id')).toBe('token');

      await page.fill('#token', CONTROL_TOKEN);
      await page.click('#token-form button[type="submit"]');
      await page.click('[data-instance="dca-btc"] button[data-action="pause"]');
      await eventually(async () => expect((await instanceOf(url, 'dca-btc')).paused).not.toBeNull());
      expect(await page.evaluate("sessionStorage.getItem('stacker-control-token')")).toBe(CONTROL_TOKEN);
      expect(pageErrors.filter((error) => !error.includes('401'))).toEqual([]);
    } finally {
      await context.close();
    }
  }, 30_000);

  it.skipIf(executablePath === null)('fits a phone screen, and says the controls are off without STACKER_CONTROL_TOKEN', async () => {
    const daemon = start({});
    const url = await statusUrl(daemon);
    const { page, context, pageErrors } = await openPage(url, { width: 375, height: 740 });
    try {
      await page.locator('[data-instance="report"]').waitFor();
      expect(await page.locator('#controls-off').isVisible()).toBe(true);
      expect(await page.locator('#token-form').isVisible()).toBe(false);
      expect(await page.locator('button[data-action]').count()).toBe(0);
      // Wide tables scroll inside their box; the page itself does not scroll sideways.
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
      expect(pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 30_000);
});
