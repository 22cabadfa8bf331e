import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type HealthServer, type StatusSource, startHealthServer } from '../../src/observability/health-server.ts';
import { MAX_CONTROL_BODY_BYTES, type ControlAction } from '../../src/observability/control-api.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { type StatusDocument, spentOf } from '../../src/daemon/status.ts';
import { Decimal } from '../../src/domain/money.ts';
import { chromiumOrWarn, launchChromium } from '../support/chromium.ts';

// The router and the page on their own: a real server on 127.0.0.1, a status document with
// hostile text in every string a strategy, the journal or the exchange could have written.
const HOSTILE = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>&amp;"\'';
const TOKEN = 'router-test-token-0123456789';

const document = {
  generatedAt: '2026-01-01T00:00:00.000Z',
  mode: 'dry-run',
  version: HOSTILE,
  startedAt: '2026-01-01T00:00:00.000Z',
  health: { status: 'unhealthy', problems: [HOSTILE] },
  killSwitch: { on: true, reasons: [HOSTILE], operatorSince: null },
  controls: { enabled: true },
  instances: [
    {
      name: 'dca-btc',
      strategy: HOSTILE,
      account: HOSTILE,
      enabled: true,
      paused: null,
      running: true,
      retrying: { slotTime: '2026-01-02T09:00:00.000Z', attempts: 2, nextTry: '2026-01-02T09:01:30.000Z', code: HOSTILE, error: HOSTILE },
      schedule: HOSTILE,
      timezone: 'UTC',
      nextSlot: '2026-01-02T09:00:00.000Z',
      lastSlot: { slotTime: '2026-01-01T09:00:00.000Z', status: 'failed', reason: HOSTILE },
      // A fill above its estimate took the day past its limit.
      budget: { asset: 'USDT', periods: [{ period: 'day', periodStart: '2026-01-01T00:00:00.000Z', limit: '100', spent: '100.00800668', left: '0', over: '0.00800668' }] },
      recentSlots: [{ slotTime: '2026-01-01T09:00:00.000Z', status: 'failed', reason: HOSTILE }],
      recentOrders: [],
    },
  ],
  accounts: [
    { name: HOSTILE, instances: [HOSTILE], cap: { asset: HOSTILE, periods: [{ period: 'day', periodStart: '2026-01-01T00:00:00.000Z', limit: HOSTILE, spent: HOSTILE, left: HOSTILE, over: '0' }] }, capTimeZone: HOSTILE, killSwitch: { on: true, since: '2026-01-01T00:00:00.000Z' }, exchangeDown: null },
    { name: 'side', instances: ['dca-eth'], cap: null, capTimeZone: null, killSwitch: { on: false, since: null }, exchangeDown: { since: '2026-01-01T00:00:00.000Z', lastError: HOSTILE } },
  ],
  markets: [{ market: HOSTILE, orders: 1, baseBought: '1', quoteSpent: '2', fees: {}, averageCost: '2', price: null, value: null, pnl: null, pnlPct: null }],
  pricesNote: HOSTILE,
  // A file renamed: the old name spent today, and the start said so.
  notRunning: [{ name: 'dca-old', state: 'no-file', file: HOSTILE, spent: [{ period: 'day', from: '2026-01-01', amount: '65', asset: 'USDT', timeZone: 'UTC' }], unresolved: 1, message: HOSTILE }],
};

const acted: ControlAction[] = [];
let server: HealthServer | null = null;
afterEach(async () => {
  await server?.stop();
  server = null;
  acted.length = 0;
});

async function start(options: { status?: boolean; token?: string | null; doc?: StatusDocument; source?: StatusSource; onError?: (error: unknown, path: string) => void } = {}): Promise<HealthServer> {
  server = await startHealthServer({
    host: '127.0.0.1',
    port: 0,
    metrics: new Metrics({ mode: 'dry-run' }),
    health: { status: () => ({ ok: true, mode: 'dry-run', startedAtMs: 0, lastSlot: {}, stopping: false, problems: [] }) },
    ...(options.status === false
      ? {}
      : {
          status: options.source ?? { document: async () => options.doc ?? document },
          ...(options.onError === undefined ? {} : { onError: options.onError }),
          controls: {
            token: options.token === null ? null : { matches: (presented: string) => presented === (options.token ?? TOKEN) },
            controls: {
              act: async (action) => {
                acted.push(action);
                if (action.kind === 'run') {
                  return { outcome: 'ok', body: { instance: action.instance, outcome: 'done', notDone: [{ index: 0, kind: 'buy-stock-market', status: 'refused', code: 'insufficient-funds', message: HOSTILE }] } };
                }
                return { outcome: 'ok', body: { done: true } };
              },
            },
          },
        }),
  });
  return server;
}

describe('the health server as a router', () => {
  it('serves neither the page, nor the JSON, nor the controls when the daemon gives none', async () => {
    const { url } = await start({ status: false });
    for (const path of ['/', '/api/status']) expect((await fetch(`${url}${path}`)).status).toBe(404);
    expect((await fetch(`${url}/api/kill-switch`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, body: '{"on":true}' })).status).toBe(404);
    expect(await (await fetch(`${url}/nope`)).text()).toBe('not found: try /healthz or /metrics\n');
  });

  it('answers GET /api/status with the document, uncached, and names every route in a 404', async () => {
    const { url } = await start();
    const response = await fetch(`${url}/api/status`);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await response.json()).toEqual(document);
    expect((await fetch(`${url}/api/status`, { method: 'POST' })).status).toBe(405);
    expect(await (await fetch(`${url}/nope`)).text()).toBe('not found: try / or /api/status or /healthz or /metrics\n');
  });

  it('reads a control body up to the cap only, and hands the daemon the action it names', async () => {
    const { url } = await start();
    const post = (path: string, body: string) => fetch(`${url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, body });
    expect((await post('/api/kill-switch', JSON.stringify({ on: true, pad: 'x'.repeat(MAX_CONTROL_BODY_BYTES) }))).status).toBe(413);
    expect((await post('/api/kill-switch', '{"on":false}')).status).toBe(200);
    expect((await post('/api/instances/dca%2Dbtc/pause', '')).status).toBe(200);
    expect((await post('/api/instances/%E0%A4%A/run', '')).status).toBe(404);
    expect((await post('/api/accounts/kids/kill-switch', '{"on":true}')).status).toBe(200);
    expect((await post('/api/accounts/kids/kill-switch', '{"on":"yes"}')).status).toBe(400);
    expect((await post('/api/accounts/%E0%A4%A/kill-switch', '{"on":true}')).status).toBe(404);
    expect(acted).toEqual([
      { kind: 'kill-switch', on: false },
      { kind: 'pause', instance: 'dca-btc' },
      { kind: 'kill-switch', on: true, account: 'kids' },
    ]);
  });

  it('answers 503 with what the daemon knows when its journal cannot be read, and 500 for any other failure, telling the daemon of it', async () => {
    const failed: string[] = [];
    let failure = 'database down';
    const known = { error: 'journal-unreadable', message: 'the journal cannot be read: connect ECONNREFUSED', health: { status: 'unhealthy', problems: ['the journal cannot be written since …'] } };
    const source: StatusSource = {
      document: async () => {
        throw new Error(failure);
      },
      unavailable: (error) => ((error as Error).message === 'database down' ? known : null),
    };
    const { url } = await start({ source, onError: (error, path) => void failed.push(`${path}: ${(error as Error).message}`) });
    const unreadable = await fetch(`${url}/api/status`);
    expect(unreadable.status).toBe(503);
    expect(unreadable.headers.get('content-type')).toBe('application/json; charset=utf-8');
    // The reason in words; where the database is stays in the daemon's log.
    expect(await unreadable.json()).toEqual({ ...known, message: 'the journal cannot be read: connection refused (ECONNREFUSED)' });
    expect(failed).toEqual([]);
    failure = 'a bug';
    const broken = await fetch(`${url}/api/status`);
    expect(broken.status).toBe(500);
    expect(await broken.text()).toBe('internal error\n');
    expect(failed).toEqual(['/api/status: a bug']);
  });

  it('answers 403 to every control when no token is configured, before looking at any token', async () => {
    const { url } = await start({ token: null });
    const response = await fetch(`${url}/api/instances/dca-btc/resume`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(response.status).toBe(403);
    expect(acted).toEqual([]);
  });
});

const executablePath = chromiumOrWarn('the status page');
let browser: Browser | null = null;
beforeAll(async () => {
  if (executablePath !== null) browser = await launchChromium(executablePath);
});
afterAll(async () => {
  await browser?.close();
});

describe('the status page escapes what it shows', () => {
  it.skipIf(executablePath === null)('shows hostile text as text: no element, no script run', async () => {
    const { url } = await start();
    const context = await browser!.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${url}/`, { waitUntil: 'load' });
      await page.locator('[data-instance="dca-btc"]').waitFor();
      expect(await page.locator('#status img, #status script').count()).toBe(0);
      expect(await page.evaluate('window.pwned === undefined')).toBe(true);
      expect(await page.locator('#health li').first().textContent()).toBe(HOSTILE);
      expect(await page.locator('[data-instance="dca-btc"] [data-field="last-slot"]').textContent()).toContain(HOSTILE);
      expect(await page.locator('#summary').textContent()).toContain(HOSTILE);
      expect(await page.locator('#accounts tbody tr').first().textContent()).toContain(HOSTILE);
      // An instance that does not run, whose spending the journal holds: named, with what it spent, as text.
      const notRunning = page.locator('#not-running');
      expect(await notRunning.locator('tbody tr').first().textContent()).toBe(`dca-oldno file${HOSTILE}day from 2026-01-01: 65 USDT1`);
      expect(await notRunning.locator('p').first().textContent()).toBe(HOSTILE);
      expect(await page.locator('[data-instance="dca-btc"]').textContent()).toContain('0 (0.00800668 over)');
      // A slot waiting to be tried again says so, with the failure as text.
      const retrying = await page.locator('[data-instance="dca-btc"] [data-field="retrying"]').textContent();
      expect(retrying).toContain('nothing sent yet; 2 attempts failed');
      expect(retrying).toContain(HOSTILE);
      expect(await page.locator('[data-instance="dca-btc"] .badge', { hasText: 'slot retrying' }).count()).toBe(1);
      expect(await page.locator('[data-instance="dca-btc"] .badge', { hasText: 'slot running' }).count()).toBe(0);
    } finally {
      await context.close();
    }
  }, 20_000);

  it.skipIf(executablePath === null)("offers each account's own kill switch once the token is typed, and sends the account it names", async () => {
    const { url } = await start();
    const context = await browser!.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${url}/`, { waitUntil: 'load' });
      await page.locator('#accounts').waitFor();
      expect(await page.locator('#accounts button').count()).toBe(0);
      await page.fill('#token', TOKEN);
      await page.click('#token-form button[type="submit"]');
      await page.locator('#accounts button[data-account="side"]').waitFor();
      expect(await page.locator('#accounts button[data-action="account-kill-switch-off"]').getAttribute('data-account')).toBe(HOSTILE);
      page.once('dialog', (dialog) => void dialog.accept());
      await page.click('#accounts button[data-action="account-kill-switch-on"][data-account="side"]');
      await page.locator('#message:has-text("/api/accounts/side/kill-switch: done")').waitFor();
      expect(acted).toEqual([{ kind: 'kill-switch', on: true, account: 'side' }]);
      await page.click(`#accounts button[data-action="account-kill-switch-off"]`);
      await page.locator('#message:has-text("/kill-switch: done")').first().waitFor();
      expect(acted[1]).toEqual({ kind: 'kill-switch', on: false, account: HOSTILE });
    } finally {
      await context.close();
    }
  }, 20_000);

  it.skipIf(executablePath === null)('says what a slot asked for did not do: a refused buy is not a plain "done"', async () => {
    const { url } = await start();
    const context = await browser!.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${url}/`, { waitUntil: 'load' });
      await page.fill('#token', TOKEN);
      await page.click('#token-form button[type="submit"]');
      page.once('dialog', (dialog) => void dialog.accept());
      await page.click('[data-instance="dca-btc"] button[data-action="run"]');
      const message = page.locator('#message');
      await page.locator('#message:has-text("/api/instances/dca-btc/run")').waitFor();
      expect(await message.textContent()).toBe(`/api/instances/dca-btc/run: done, but buy-stock-market refused (insufficient-funds: ${HOSTILE})`);
      expect(await message.getAttribute('class')).toBe('bad');
      expect(await page.evaluate('window.pwned === undefined')).toBe(true);
      expect(acted).toEqual([{ kind: 'run', instance: 'dca-btc' }]);
      // The answer shows where the reader is, scrolled down to the control or not.
      await page.setViewportSize({ width: 1100, height: 400 });
      await page.evaluate('window.scrollTo(0, document.body.scrollHeight)');
      const box = await message.boundingBox();
      expect(box!.y).toBeGreaterThanOrEqual(0);
      expect(box!.y + box!.height).toBeLessThanOrEqual(400);
      // A refresh rebuilds the page and keeps the button the reader was on.
      await page.focus('[data-instance="dca-btc"] button[data-action="pause"]');
      await page.evaluate('refresh()');
      await page.waitForTimeout(300);
      expect(await page.evaluate('document.activeElement && document.activeElement.getAttribute("data-action")')).toBe('pause');
    } finally {
      await context.close();
    }
  }, 20_000);
});

describe('the status page while the journal cannot be read', () => {
  const unreadable = {
    error: 'journal-unreadable',
    message: "the journal cannot be read, so instances, budgets, orders and positions are left out until it can: reading the orders: the journal's database cannot be read: connect ECONNREFUSED 127.0.0.1:5432",
    generatedAt: '2026-01-01T00:05:00.000Z',
    mode: 'live',
    version: '1.2.3',
    startedAt: '2026-01-01T00:00:00.000Z',
    health: { status: 'unhealthy', problems: ['the journal cannot be written since 2026-01-01T00:04:00.000Z (connect ECONNREFUSED 127.0.0.1:5432); nothing is sent until it can'] },
    killSwitch: { on: true, reasons: ['turned on from the status API'], operatorSince: '2026-01-01T00:01:00.000Z' },
    controls: { enabled: true },
  };
  /** What the page shows of it: the reason, not the database's address. */
  const shown = "the journal cannot be read, so instances, budgets, orders and positions are left out until it can: reading the orders: the journal's database cannot be read: connection refused (ECONNREFUSED)";

  it.skipIf(executablePath === null)('says the journal cannot be read, not that stacker does not answer, with health and the kill switch, on a page opened during the outage and on one open before it', async () => {
    let down = true;
    const { url } = await start({ source: { document: async () => (down ? Promise.reject(new Error('down')) : document), unavailable: () => unreadable } });
    const context = await browser!.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${url}/`, { waitUntil: 'load' });
      await page.locator('#health li').waitFor();
      const offline = page.locator('#offline');
      expect(await offline.isVisible()).toBe(true);
      expect(await offline.textContent()).toBe(shown);
      expect(await page.locator('#health li').textContent()).toContain('the journal cannot be written since');
      expect(await page.locator('#kill-switch').textContent()).toContain('turned on from the status API');
      expect(await page.locator('[data-instance], #markets').count()).toBe(0);
      expect(await page.locator('#summary').textContent()).toContain('live · stacker 1.2.3');

      // The journal is read again: the whole page is back; then lost again: the last state read stays, said so.
      down = false;
      await page.evaluate('refresh()');
      await page.locator('[data-instance="dca-btc"]').waitFor();
      expect(await offline.isVisible()).toBe(false);
      down = true;
      await page.evaluate('refresh()');
      await page.locator('#offline:not([hidden])').waitFor();
      expect(await offline.textContent()).toBe(`${shown}; the rest of the page is the last state read`);
      expect(await page.locator('[data-instance="dca-btc"]').count()).toBe(1);
      expect(await page.locator('#health li').textContent()).toContain('the journal cannot be written since');
    } finally {
      await context.close();
    }
  }, 20_000);
});

describe("a budget period a fill took past its limit", () => {
  it.skipIf(executablePath === null)('marks how each slot ended (failed red, a refused buy amber), sets transitions under their order, newest order first', async () => {
    const order = (orderId: string, createdAt: string) => ({
      orderId, clientOrderId: `c-${orderId}`, market: 'BTC_USDT', side: 'buy', status: 'FILLED', amount: '0.001', filledBase: '0.001', filledQuote: '65', fee: '0.065', feeAsset: 'USDT', createdAt,
      transitions: [{ at: createdAt, from: null, to: 'FILLED', filledBase: '0.001', filledQuote: '65', fee: '0.065' }],
    });
    const base = document.instances[0]!;
    const doc = {
      ...document,
      instances: [{
        ...base,
        retrying: null,
        budget: { asset: 'USDT', periods: [{ period: 'day', periodStart: '2026-01-01T00:00:00.000Z', limit: '100', spent: '65', left: '35', over: '0', held: '65' }] },
        lastSlot: { slotTime: '2026-01-01T12:00:00.000Z', status: 'done', reason: 'intent #0 (buy-stock-market) was refused (kill-switch)' },
        recentSlots: [
          { slotTime: '2026-01-01T12:00:00.000Z', status: 'done', reason: 'intent #0 (buy-stock-market) was refused (kill-switch)' },
          { slotTime: '2026-01-01T11:00:00.000Z', status: 'failed', reason: 'not in the order history yet' },
          { slotTime: '2026-01-01T10:00:00.000Z', status: 'failed', reason: 'lost answer', settled: 'done' },
          { slotTime: '2026-01-01T09:00:00.000Z', status: 'done', reason: null },
        ],
        // Found late, listed first by the journal: the page orders by placing.
        recentOrders: [order('1', '2026-01-01T10:00:05.000Z'), order('2', '2026-01-01T09:00:05.000Z'), order('3', '2026-01-01T11:30:05.000Z')],
      }],
    } as unknown as StatusDocument;
    const { url } = await start({ doc });
    const context = await browser!.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${url}/`, { waitUntil: 'load' });
      const card = page.locator('[data-instance="dca-btc"]');
      await card.waitFor();
      expect(await card.locator('[data-field="last-slot"] .badge').getAttribute('data-tone')).toBe('warn');
      // A budget used by a buy not confirmed yet says so: its orders and the used figure differ meanwhile.
      expect(await card.locator('table').first().textContent()).toContain('65 (65 held for buys not confirmed yet)');
      const tones = await card.locator('table').nth(1).locator('tbody .badge').evaluateAll((badges) => badges.map((b) => b.getAttribute('data-tone')));
      expect(tones).toEqual(['warn', 'bad', 'ok', 'ok']);
      const orders = card.locator('table').last().locator('tbody tr');
      expect(await orders.evaluateAll((rows) => rows.map((r) => `${r.getAttribute('class') ?? 'order'}:${r.lastElementChild?.textContent ?? ''}`))).toEqual(['order:3', 'transition:-', 'order:1', 'transition:-', 'order:2', 'transition:-']);
    } finally {
      await context.close();
    }
  }, 20_000);

  it('says by how much in /api/status (over) and on the page, instead of a bare 0 left', () => {
    expect(spentOf(new Decimal('100'), new Decimal('100.00800668'))).toEqual({ limit: '100', spent: '100.00800668', left: '0', over: '0.00800668' });
    expect(spentOf(new Decimal('100'), new Decimal('65'))).toEqual({ limit: '100', spent: '65', left: '35', over: '0' });
  });
});
