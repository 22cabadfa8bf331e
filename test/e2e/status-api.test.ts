import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningDaemon, sandboxPerTest, startDaemon } from './daemon-process.ts';
import { CONTROL_TOKEN, eventually, instanceOf, postControl, readStatus, statusUrl, withLiveJournal } from './status-daemon.ts';

// The status page, /api/status and the controls of `stacker run`, over real HTTP, against the
// real CLI in a child process trading live on the sandbox exchange (both on 127.0.0.1).
const t = sandboxPerTest();
let running: RunningDaemon[] = [];
afterEach(async () => {
  for (const daemon of running) {
    if (daemon.child.exitCode === null && daemon.child.signalCode === null) daemon.child.kill('SIGKILL');
    await daemon.exited;
  }
  running = [];
});

function start(env: Record<string, string> = {}): RunningDaemon {
  const daemon = startDaemon(['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data], { ...t.live(), STACKER_METRICS_PORT: '0', ...env });
  running.push(daemon);
  return daemon;
}

/** SIGTERM, a clean exit, and the token never in the logs. */
async function stop(daemon: RunningDaemon): Promise<void> {
  daemon.child.kill('SIGTERM');
  expect(await daemon.exited).toBe(0);
  expect(daemon.output()).not.toContain(CONTROL_TOKEN);
}

const withToken = { STACKER_CONTROL_TOKEN: CONTROL_TOKEN };
const orders = (): number => t.sandbox.exchange.orderHistory({}).length;
/** A slot asked for from the API is the current second: wait for the next one so two runs are two slots. */
const nextSecond = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 1050 - (Date.now() % 1000)));
// New Year 09:00 UTC: never fires during a test.
const RARE = '0 9 1 1 *';

describe('the status page and GET /api/status', () => {
  it('serves one self-contained page and the state as JSON; without STACKER_CONTROL_TOKEN every control is 403 and changes nothing', async () => {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: RARE, MARKET: 'BTC_USDT', AMOUNT: '0.001', BUDGET_QUOTE_PER_DAY: '100' });
    t.dir.writeStrategy('report', { STRATEGY: 'balance-report', SCHEDULE: RARE, ENABLED: 'false' });
    const daemon = start();
    const url = await statusUrl(daemon);

    const page = await fetch(`${url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.headers.get('content-security-policy')).toContain("connect-src 'self'");
    const html = await page.text();
    expect(html).toContain('<title>stacker status</title>');
    // Self-contained: no script, style, font or image from anywhere.
    expect(html).not.toMatch(/\b(?:src|href)\s*=\s*["']?(?:https?:)?\/\//i);
    expect(html).not.toMatch(/@import|url\(/i);

    const status = await readStatus(url);
    expect(status).toMatchObject({
      mode: 'live',
      health: { status: 'ok', problems: [] },
      killSwitch: { on: false, reasons: [], operatorSince: null },
      controls: { enabled: false },
      markets: [],
      pricesNote: null,
    });
    const [dca, report] = status.instances;
    const nextNewYear = new Date(Date.UTC(new Date().getUTCFullYear() + 1, 0, 1, 9)).toISOString();
    expect(dca).toMatchObject({
      name: 'dca-btc',
      strategy: 'dca',
      enabled: true,
      paused: null,
      running: false,
      schedule: RARE,
      timezone: 'UTC',
      nextSlot: nextNewYear,
      lastSlot: null,
      recentSlots: [],
      recentOrders: [],
      budget: { asset: 'USDT', periods: [{ period: 'day', limit: '100', spent: '0', left: '100' }] },
    });
    expect(report).toMatchObject({ name: 'report', enabled: false, nextSlot: null, budget: null });

    for (const path of ['/api/instances/dca-btc/pause', '/api/instances/dca-btc/run', '/api/kill-switch']) {
      for (const token of [null, CONTROL_TOKEN]) {
        const answer = await postControl(url, path, token, { on: true });
        expect(answer.status).toBe(403);
        expect(String(answer.json['error'])).toContain('STACKER_CONTROL_TOKEN');
      }
    }
    expect(await instanceOf(url, 'dca-btc')).toMatchObject({ paused: null, lastSlot: null });
    expect((await readStatus(url)).killSwitch.on).toBe(false);
    expect(orders()).toBe(0);
    await stop(daemon);
  }, 30_000);
});

describe('an instance the journal holds that does not run', () => {
  it('is listed with what it spent and its file, as the start found it (a file renamed after it bought today)', async () => {
    t.dir.writeStrategy('dca-old', { STRATEGY: 'dca', SCHEDULE: '* * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001', BUDGET_QUOTE_PER_DAY: '1000' });
    const first = start();
    await first.waitFor('"to":"FILLED"', 20_000);
    await stop(first);
    rmSync(join(t.dir.strategies, 'dca-old.env'));
    t.dir.writeStrategy('dca-new', { STRATEGY: 'dca', SCHEDULE: RARE, MARKET: 'BTC_USDT', AMOUNT: '0.001', BUDGET_QUOTE_PER_DAY: '1000' });
    const second = start();
    const url = await statusUrl(second);
    const status = await readStatus(url);
    expect(status['notRunning']).toEqual([
      expect.objectContaining({ name: 'dca-old', state: 'no-file', file: join(t.dir.strategies, 'dca-old.env'), unresolved: 0, spent: expect.arrayContaining([expect.objectContaining({ period: 'day', asset: 'USDT' })]), message: expect.stringContaining('dca-old') }),
    ]);
    await stop(second);
  }, 60_000);
});

describe('where the status page listens', () => {
  /** The start-up log lines of an event, parsed. */
  const logged = (daemon: RunningDaemon, event: string): Array<Record<string, unknown>> =>
    daemon
      .output()
      .split('\n')
      .filter((line) => line.includes(`"event":"${event}"`))
      .map((line) => JSON.parse(line) as Record<string, unknown>);

  it('names the address it listens on as bound, and on every interface warns at start: plain HTTP, the controls on and their token in clear, any Host answered', async () => {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: RARE, MARKET: 'BTC_USDT', AMOUNT: '0.001' });
    const open = start({ ...withToken, STACKER_METRICS_HOST: '0.0.0.0' });
    await statusUrl(open);
    const [serving] = logged(open, 'metrics');
    const port = new URL(String(serving?.['url'])).port;
    expect(serving).toMatchObject({ listening: `0.0.0.0:${port}`, msg: expect.stringMatching(new RegExp(`; listening on 0\\.0\\.0\\.0:${port}$`)) });
    const [warning] = logged(open, 'status-page-exposed');
    expect(warning).toMatchObject({ level: 40, listening: `0.0.0.0:${port}`, controls: true });
    expect(String(warning?.['msg'])).toMatch(
      new RegExp(`^the status page listens on 0\\.0\\.0\\.0:${port}, off loopback, and speaks plain HTTP: .*the controls are on: their bearer token \\(STACKER_CONTROL_TOKEN\\) crosses the network in clear; allowed hosts: \\* \\(any Host is answered`),
    );
    await stop(open);

    const local = start(withToken);
    await statusUrl(local);
    expect(logged(local, 'metrics')[0]?.['listening']).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(logged(local, 'status-page-exposed')).toEqual([]);
    await stop(local);
  });
});

describe('the controls, with STACKER_CONTROL_TOKEN', () => {
  it('refuses a missing or wrong token with 401 and changes nothing; runs a slot now, journalled; pauses, resumes; the kill switch stops sending, survives a restart, and shows in /healthz', async () => {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: RARE, MARKET: 'BTC_USDT', AMOUNT: '0.001', BUDGET_QUOTE_PER_DAY: '1000' });
    let daemon = start(withToken);
    let url = await statusUrl(daemon);

    // Each way of getting it wrong, on each control in turn (fewer than ten: more within a minute are held back with 429, tested apart).
    const controls = [['/api/instances/dca-btc/pause', undefined], ['/api/instances/dca-btc/run', undefined], ['/api/kill-switch', { on: true }]] as const;
    for (const [i, token] of [null, 'wrong-token-0123456789', `${CONTROL_TOKEN}x`, CONTROL_TOKEN.slice(0, -1)].entries()) {
      for (const [path, body] of [controls[i % controls.length]!, controls[(i + 1) % controls.length]!]) {
        const answer = await postControl(url, path, token, body);
        expect(answer.status).toBe(401);
        expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer/);
        expect(JSON.stringify(answer.json)).not.toContain(CONTROL_TOKEN);
      }
    }
    const basic = await fetch(`${url}/api/instances/dca-btc/pause`, { method: 'POST', headers: { authorization: `Basic ${Buffer.from(`x:${CONTROL_TOKEN}`).toString('base64')}` } });
    expect(basic.status).toBe(401);
    // Someone trying tokens is logged, once a minute at most, never with the token tried.
    const refusals = daemon.output().split('\n').filter((line) => line.includes('"event":"control-refused"'));
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toMatch(/a control request was refused \(missing token\) from 127\.0\.0\.1/);
    expect(daemon.output()).not.toContain('wrong-token-0123456789');
    expect(await instanceOf(url, 'dca-btc')).toMatchObject({ paused: null, lastSlot: null });
    expect((await readStatus(url)).killSwitch.on).toBe(false);
    expect(orders()).toBe(0);

    expect((await postControl(url, '/api/instances/dca-eth/run', CONTROL_TOKEN)).status).toBe(404);
    expect((await fetch(`${url}/api/instances/dca-btc/run`, { headers: { authorization: `Bearer ${CONTROL_TOKEN}` } })).status).toBe(405);

    // Run: a slot now, through the engine like any slot: journalled, ordered once, followed.
    const ran = await postControl(url, '/api/instances/dca-btc/run', CONTROL_TOKEN);
    expect(ran.status).toBe(200);
    expect(ran.json).toMatchObject({ instance: 'dca-btc', outcome: 'done' });
    expect(orders()).toBe(1);
    const afterRun = await eventually(async () => {
      const instance = await instanceOf(url, 'dca-btc');
      expect(instance['recentOrders']).toMatchObject([{ market: 'BTC_USDT', side: 'buy', status: 'FILLED', filledBase: '0.001', transitions: [{ to: 'FILLED' }] }]);
      return instance;
    });
    expect(afterRun.lastSlot).toMatchObject({ slotTime: ran.json['slotTime'], status: 'done' });
    expect(afterRun['budget']).toMatchObject({ periods: [{ period: 'day', limit: '1000', spent: '65', left: '935' }] });
    expect((await readStatus(url))['markets']).toMatchObject([{ market: 'BTC_USDT', orders: 1, baseBought: '0.001', quoteSpent: '65', price: '65000' }]);

    // Pause: run is refused while paused; resume lifts it.
    const paused = await postControl(url, '/api/instances/dca-btc/pause', CONTROL_TOKEN);
    expect(paused.status).toBe(200);
    expect(paused.json).toMatchObject({ instance: 'dca-btc', paused: true });
    expect((await instanceOf(url, 'dca-btc')).paused).not.toBeNull();
    const refused = await postControl(url, '/api/instances/dca-btc/run', CONTROL_TOKEN);
    expect(refused.status).toBe(409);
    expect(String(refused.json['error'])).toContain('paused');
    expect((await postControl(url, '/api/instances/dca-btc/resume', CONTROL_TOKEN)).json).toMatchObject({ paused: false });
    expect((await instanceOf(url, 'dca-btc')).paused).toBeNull();
    expect(orders()).toBe(1);

    // The kill switch: bad bodies name the field and the rule; on stops sending and shows in /healthz.
    const notJson = await postControl(url, '/api/kill-switch', CONTROL_TOKEN, 'on');
    expect([notJson.status, notJson.json['error']]).toEqual([400, expect.stringMatching(/^body: must be JSON/)]);
    const notBoolean = await postControl(url, '/api/kill-switch', CONTROL_TOKEN, { on: 'yes' });
    expect([notBoolean.status, notBoolean.json['error']]).toEqual([400, expect.stringMatching(/^on: must be true .* or false/)]);
    const tooLarge = await postControl(url, '/api/kill-switch', CONTROL_TOKEN, { on: true, padding: 'x'.repeat(2000) });
    expect(tooLarge.status).toBe(413);
    expect((await readStatus(url)).killSwitch.on).toBe(false);
    expect((await postControl(url, '/api/kill-switch', CONTROL_TOKEN, { on: true })).json).toMatchObject({ killSwitch: { on: true } });
    const healthz = await fetch(`${url}/healthz`);
    expect(healthz.status).toBe(503);
    expect(JSON.stringify(await healthz.json())).toContain('the kill switch is on');
    await stop(daemon);

    // A restart keeps the kill switch on: a slot asked for now is journalled, its order refused, nothing sent.
    daemon = start(withToken);
    url = await statusUrl(daemon);
    const status = await readStatus(url);
    expect(status.killSwitch).toMatchObject({ on: true, operatorSince: expect.any(String) });
    expect(status.health.problems.join('\n')).toContain('the kill switch is on');
    await nextSecond();
    const killed = await postControl(url, '/api/instances/dca-btc/run', CONTROL_TOKEN);
    expect(killed.status).toBe(200);
    expect(orders()).toBe(1);
    await postControl(url, '/api/kill-switch', CONTROL_TOKEN, { on: false });
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    await nextSecond();
    expect((await postControl(url, '/api/instances/dca-btc/run', CONTROL_TOKEN)).json).toMatchObject({ outcome: 'done' });
    expect(orders()).toBe(2);
    await stop(daemon);

    await withLiveJournal(t.dir.data, async (journal) => {
      const slots = await journal.listSlots({ instance: 'dca-btc' });
      expect(slots.map((slot) => slot.slotTimeMs)).toContain(Date.parse(String(killed.json['slotTime'])));
      const intents = await journal.listIntents({ instance: 'dca-btc', slotTimeMs: Date.parse(String(killed.json['slotTime'])) });
      expect(intents.map((intent) => [intent.status, intent.error?.code])).toEqual([['refused', 'kill-switch']]);
      expect((await journal.operatorControls()).killSwitchSinceMs).toBeNull();
    });
  }, 45_000);

  it('logs requests held back after too many wrong tokens (429) apart from the wrong tokens, naming the client a trusted proxy forwarded', async () => {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: RARE, MARKET: 'BTC_USDT', AMOUNT: '0.001' });
    const daemon = start({ ...withToken, STACKER_METRICS_TRUSTED_PROXIES: '127.0.0.1' });
    const url = await statusUrl(daemon);
    const post = (token: string) => fetch(`${url}/api/kill-switch`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': '203.0.113.9' }, body: '{"on":true}' });
    for (let guess = 0; guess < 10; guess += 1) expect((await post(`wrong-token-${guess}-0123456789`)).status).toBe(401);
    expect((await post(CONTROL_TOKEN)).status).toBe(429);
    daemon.child.kill('SIGTERM');
    expect(await daemon.exited).toBe(0);
    const lines = daemon.output().split('\n');
    expect(lines.filter((line) => line.includes('"event":"control-refused"'))).toEqual([expect.stringContaining('refused (wrong token) from 203.0.113.9 (through 127.0.0.1)')]);
    expect(lines.filter((line) => line.includes('"event":"control-held-back"'))).toEqual([expect.stringContaining('control requests from 203.0.113.9 (through 127.0.0.1) are held back unread (429)')]);
  });

  it('keeps answering while it stops with a slot asked for from the API still running: /healthz says stopping, and a kill switch can still be turned on', async () => {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: RARE, MARKET: 'BTC_USDT', AMOUNT: '0.001' });
    // The exchange sits on the order for 4 s: the slot the API asked for is in flight.
    t.sandbox.faults.inject({ path: '/api/v4/order/stock_market', kind: 'latency', latencyMs: 4000, times: 1 });
    const daemon = start(withToken);
    const url = await statusUrl(daemon);
    const ran = postControl(url, '/api/instances/dca-btc/run', CONTROL_TOKEN);
    await daemon.waitFor('"event":"order-send"');
    daemon.child.kill('SIGTERM');
    await daemon.waitFor('"event":"stopping"');
    const health = await fetch(`${url}/healthz`);
    expect(health.status).toBe(503);
    expect(await health.json()).toMatchObject({ stopping: true });
    expect((await postControl(url, '/api/kill-switch', CONTROL_TOKEN, { on: true })).status).toBe(200);
    expect((await ran).json).toMatchObject({ instance: 'dca-btc', outcome: 'done' });
    expect(await daemon.exited).toBe(0);
    expect(orders()).toBe(1);
  });

  it('stacker_kill_switch is 1 while a kill switch (the API\'s or the file) is on, from the moment it is turned on, not from the next slot; 0 once off', async () => {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: RARE, MARKET: 'BTC_USDT', AMOUNT: '0.001' });
    const killFile = join(t.dir.root, 'stop-trading');
    const daemon = start({ ...withToken, STACKER_KILL_SWITCH_FILE: killFile });
    const url = await statusUrl(daemon);
    const gauge = async (): Promise<string | undefined> => (await (await fetch(`${url}/metrics`)).text()).split('\n').find((line) => line.startsWith('stacker_kill_switch '));

    expect(await gauge()).toBe('stacker_kill_switch 0');
    expect((await postControl(url, '/api/kill-switch', CONTROL_TOKEN, { on: true })).status).toBe(200);
    expect(await gauge()).toBe('stacker_kill_switch 1');
    expect((await postControl(url, '/api/kill-switch', CONTROL_TOKEN, { on: false })).status).toBe(200);
    expect(await gauge()).toBe('stacker_kill_switch 0');

    writeFileSync(killFile, '');
    expect(await gauge()).toBe('stacker_kill_switch 1');
    rmSync(killFile);
    expect(await gauge()).toBe('stacker_kill_switch 0');
    expect(orders()).toBe(0);
    await stop(daemon);
  }, 30_000);

  it('shows a slot that failed on a lost answer as settled once its order is found, in /api/status, /healthz and the last-successful-slot gauge', async () => {
    // A schedule that never fires during the test: the slot is asked for from the API.
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '0 0 1 1 *', MARKET: 'BTC_USDT', AMOUNT: '0.001', BUDGET_QUOTE_PER_DAY: '1000' });
    const daemon = start(withToken);
    const url = await statusUrl(daemon);
    // The exchange takes the order and the answer is lost; its history shows it 4 s late, after the slot's own lookups.
    t.sandbox.faults.inject({ path: '/api/v4/order/stock_market', kind: 'drop-after-commit' });
    t.sandbox.faults.historyLagMs = 4_000;
    const ran = await postControl(url, '/api/instances/dca-btc/run', CONTROL_TOKEN);
    expect(ran.json).toMatchObject({ outcome: 'failed' });
    const slotSec = Date.parse((ran.json as { slotTime: string }).slotTime) / 1000;
    const lastSuccessful = async (): Promise<string | undefined> =>
      (await (await fetch(`${url}/metrics`)).text()).split('\n').find((line) => line.startsWith('stacker_last_successful_slot_timestamp_seconds{strategy_instance="dca-btc"}'));
    expect((await instanceOf(url, 'dca-btc')).lastSlot).toMatchObject({ status: 'failed', settled: null });
    // Its budget stays reserved while the answer is lost, and the budget says it is held for a buy not confirmed yet.
    expect((await instanceOf(url, 'dca-btc')).budget).toMatchObject({ periods: [{ period: 'day', spent: '65', held: '65' }] });
    expect(await lastSuccessful()).toBeUndefined();
    await eventually(async () => {
      expect((await instanceOf(url, 'dca-btc')).lastSlot).toMatchObject({ status: 'failed', settled: 'done' });
      const health = (await (await fetch(`${url}/healthz`)).json()) as { lastSlot: Record<string, unknown> };
      expect(health.lastSlot['dca-btc']).toMatchObject({ outcome: 'failed', settled: 'done' });
    }, 25_000);
    expect(await lastSuccessful()).toBe(`stacker_last_successful_slot_timestamp_seconds{strategy_instance="dca-btc"} ${slotSec}`);
    await eventually(async () => expect((await instanceOf(url, 'dca-btc')).budget).toMatchObject({ periods: [{ period: 'day', held: '0' }] }), 10_000);
    expect(orders()).toBe(1);
    await stop(daemon);
  }, 45_000);

  it('turns /healthz 503 once an instance has failed 3 slots in a row (an exchange failing every order), naming it', async () => {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '* * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001', ORDER_SETTLE_WINDOW: '30s' });
    t.sandbox.faults.inject({ path: '/api/v4/order/stock_market', kind: 'status', status: 500, body: 'Internal Server Error', times: Number.POSITIVE_INFINITY });
    const daemon = start();
    const url = await statusUrl(daemon);
    await eventually(async () => {
      const health = await fetch(`${url}/healthz`);
      expect(health.status).toBe(503);
      const body = (await health.json()) as { problems: string[] };
      expect(body.problems.some((problem) => /^dca-btc: its last \d+ slots failed, the latest at .*`stacker journal --instance dca-btc` says why$/.test(problem))).toBe(true);
    }, 20_000);
    await stop(daemon);
  }, 40_000);

  it('shows a scheduled slot that waits to be tried again after a failed read: which slot, how many attempts, the next try, why', async () => {
    // A slot a few seconds ahead, once a day: the daemon tries it again 30 s after the failure.
    const at = new Date(Date.now() + 8_000);
    const schedule = `${at.getUTCSeconds()} ${at.getUTCMinutes()} ${at.getUTCHours()} * * *`;
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: schedule, MARKET: 'BTC_USDT', AMOUNT: '0.001' });
    t.sandbox.faults.inject({ path: '/api/v4/trade-account/balance', kind: 'status', status: 503, body: '<html>maintenance</html>', times: Number.POSITIVE_INFINITY });
    const daemon = start();
    const url = await statusUrl(daemon);
    expect((await instanceOf(url, 'dca-btc')).retrying).toBeNull();

    const shown = await eventually(async () => {
      const instance = await instanceOf(url, 'dca-btc');
      expect(instance.retrying).not.toBeNull();
      return instance;
    }, 15_000);
    const slotTime = new Date(Math.floor(at.getTime() / 1000) * 1000).toISOString();
    expect(shown).toMatchObject({ running: true, lastSlot: null, retrying: { slotTime, attempts: 1, code: 'E_UNAVAILABLE', error: expect.stringContaining('503') } });
    const nextTry = Date.parse((shown.retrying as { nextTry: string }).nextTry);
    expect(nextTry - Date.parse(slotTime)).toBeGreaterThanOrEqual(30_000);
    expect(orders()).toBe(0);

    // Stopped while it waits: the slot is left to the next start's catch-up, nothing was sent.
    await stop(daemon);
    expect(daemon.output()).toContain('slot-retry-abandoned');
    expect(orders()).toBe(0);
  }, 30_000);

  it("pauses an instance's scheduled slots (journalled as skipped: paused, nothing sent), keeps the pause across a restart, and resumes", async () => {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '* * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001' });
    let daemon = start(withToken);
    let url = await statusUrl(daemon);
    await daemon.waitFor('"to":"FILLED"');
    expect((await postControl(url, '/api/instances/dca-btc/pause', CONTROL_TOKEN)).status).toBe(200);
    // A slot already running when the pause arrived may still finish; none starts after it.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const before = orders();
    const lastBeforeRestart = await eventually(async () => {
      const slots = (await instanceOf(url, 'dca-btc')).recentSlots;
      expect(slots.slice(0, 2)).toMatchObject([
        { status: 'skipped', reason: 'paused' },
        { status: 'skipped', reason: 'paused' },
      ]);
      return Date.parse(slots[0]?.slotTime ?? '');
    });
    expect(orders()).toBe(before);
    await stop(daemon);

    daemon = start(withToken);
    url = await statusUrl(daemon);
    expect((await instanceOf(url, 'dca-btc')).paused).not.toBeNull();
    expect(daemon.output()).toContain('dca-btc is paused');
    // The scheduler of the new run fires and the slot is skipped again.
    await eventually(async () => {
      const slots = (await instanceOf(url, 'dca-btc')).recentSlots;
      expect(slots.some((slot) => slot.reason === 'paused' && Date.parse(slot.slotTime) > lastBeforeRestart)).toBe(true);
    });
    expect((await postControl(url, '/api/instances/dca-btc/run', CONTROL_TOKEN)).status).toBe(409);
    expect(orders()).toBe(before);

    expect((await postControl(url, '/api/instances/dca-btc/resume', CONTROL_TOKEN)).status).toBe(200);
    await eventually(async () => expect(orders()).toBeGreaterThan(before));
    await stop(daemon);

    await withLiveJournal(t.dir.data, async (journal) => {
      const paused = (await journal.listSlots({ instance: 'dca-btc', limit: 1000 })).filter((slot) => slot.reason === 'paused');
      expect(paused.length).toBeGreaterThanOrEqual(3);
      for (const slot of paused) {
        expect(slot.status).toBe('skipped');
        expect(await journal.listIntents({ instance: 'dca-btc', slotTimeMs: slot.slotTimeMs })).toEqual([]);
      }
    });
  }, 45_000);
});
