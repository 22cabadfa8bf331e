import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';
import { loadDaemonConfig } from '../../src/config/daemon-config.ts';
import { type DaemonResult, runDaemon } from '../../src/daemon/daemon.ts';
import { INSTANT_TIMING } from '../../src/engine/runtime.ts';
import { ApiMarketData } from '../../src/exchange/market-data.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.ts';
import { PaperExchange } from '../../src/sim/paper-exchange.ts';
import { Decimal } from '../../src/domain/money.ts';
import { openStore } from '../../src/store/open-store.ts';
import { parseExposition, valueOf } from '../observability/exposition-format.ts';
import { CONTROL_TOKEN, postControl } from '../e2e/status-daemon.ts';

// What /metrics shows of a dry-run daemon from its start, over real HTTP on 127.0.0.1, its prices
// from the sandbox exchange: the series an alert needs exist before their first event.
const root = mkdtempSync(join(tmpdir(), 'stacker-daemon-metrics-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

// New Year 09:00 UTC: never fires during a test.
const RARE = '0 9 1 1 *';

let sandbox: Sandbox;
let dir: string;
let running: Array<{ stop(): Promise<DaemonResult> }> = [];
beforeEach(async () => {
  sandbox = await startSandbox();
  dir = mkdtempSync(join(root, 'run-'));
  mkdirSync(join(dir, 'strategies'));
});
afterEach(async () => {
  for (const daemon of running) await daemon.stop();
  running = [];
  await sandbox.stop();
});

function writeStrategy(name: string, settings: Record<string, string>): void {
  const lines = Object.entries(settings).map(([key, value]) => `${key}="${value}"`);
  writeFileSync(join(dir, 'strategies', `${name}.env`), `${lines.join('\n')}\n`);
}

/** `stacker run` in dry-run with its status server on a free port; `stop` ends it as SIGTERM would. */
async function startDaemon(env: Record<string, string> = {}): Promise<{ readonly url: string; stop(): Promise<DaemonResult> }> {
  const config = await loadDaemonConfig(
    { strategiesDir: join(dir, 'strategies'), dataDir: join(dir, 'data') },
    { env: { STACKER_DRY_RUN_WALLET: 'USDT=1000', STACKER_METRICS_PORT: '0', STACKER_LOCK_DIR: join(dir, 'locks'), ...env } },
  );
  const exchange = new PaperExchange({ marketData: new ApiMarketData(new ApiClient({ baseUrl: sandbox.url })), wallet: config.dryRunWallet, slippagePct: config.dryRunSlippagePct });
  const stop = new AbortController();
  let ready: (url: string) => void = () => undefined;
  const listening = new Promise<string>((resolve) => (ready = resolve));
  const result = runDaemon({
    config,
    logger: await createLogger({ level: 'warn', destination: new Writable({ write: (_chunk, _encoding, done) => done() }) }),
    exchange,
    metrics: new Metrics({ mode: 'dry-run' }),
    timing: INSTANT_TIMING,
    stop: stop.signal,
    onReady: ({ metricsUrl }) => ready(metricsUrl ?? ''),
  });
  const url = await Promise.race([listening, result.then((ended) => Promise.reject(new Error(`the daemon ended before it was ready: exit ${ended.exitCode}`)))]);
  let stopped: Promise<DaemonResult> | null = null;
  const daemon = {
    url,
    stop: () => {
      stop.abort();
      stopped ??= result;
      return stopped;
    },
  };
  running.push(daemon);
  return daemon;
}

async function scrape(url: string): Promise<ReturnType<typeof parseExposition>> {
  const response = await fetch(`${url}/metrics`);
  expect(response.status).toBe(200);
  return parseExposition(await response.text());
}

describe('/metrics of a daemon that has just started', () => {
  it("has every scheduled instance's slot outcomes, orders placed, known refusal reasons and retry codes at 0, and each account's API error classes", async () => {
    writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: RARE, MARKET: 'BTC_USDT', AMOUNT: '0.001' });
    writeStrategy('report', { STRATEGY: 'balance-report', SCHEDULE: RARE, ENABLED: 'false' });
    const daemon = await startDaemon();
    const { samples } = await scrape(daemon.url);
    const instance = { strategy_instance: 'dca-btc' };
    for (const outcome of ['done', 'failed', 'skipped', 'missed']) expect(valueOf(samples, 'stacker_slots_total', { ...instance, outcome }), outcome).toBe(0);
    expect(valueOf(samples, 'stacker_orders_placed_total', instance)).toBe(0);
    for (const reason of ['kill-switch', 'over-budget', 'insufficient-funds', 'budget-too-small', 'exchange-refused', 'transfer-unresolved', 'withdraw-unresolved', 'earlier-intent-stopped', 'journal-behind']) {
      expect(valueOf(samples, 'stacker_refusals_total', { ...instance, reason }), reason).toBe(0);
    }
    for (const code of ['E_UNAVAILABLE', 'E_RATE_LIMIT', 'E_NETWORK', 'E_TIMEOUT']) expect(valueOf(samples, 'stacker_slot_retries_total', { ...instance, code }), code).toBe(0);
    for (const errorClass of ['E_AUTH', 'E_NONCE', 'E_RATE_LIMIT', 'E_UNAVAILABLE', 'E_NETWORK', 'E_TIMEOUT', 'E_UNEXPECTED']) {
      expect(valueOf(samples, 'stacker_api_errors_total', { account: 'default', class: errorClass }), errorClass).toBe(0);
    }
    // An instance the daemon does not schedule (ENABLED=false) has no series to alert on.
    expect(samples.filter((sample) => sample.labels['strategy_instance'] === 'report')).toEqual([]);
    expect((await daemon.stop()).exitCode).toBe(0);
  });
});

describe('/metrics of a daemon restarted on a journal', () => {
  /** RARE's latest slot (Jan 1 09:00 UTC, this year's once it is past), or the one `back` years before it. */
  const newYear = (back: number): number => {
    const now = new Date();
    const year = now.getTime() >= Date.UTC(now.getUTCFullYear(), 0, 1, 9) ? now.getUTCFullYear() : now.getUTCFullYear() - 1;
    return Date.UTC(year - back, 0, 1, 9);
  };
  const BUY = { kind: 'buy-stock-market', market: 'BTC_USDT', amount: new Decimal('0.001') } as const;

  it("shows each scheduled instance's latest successful slot from the journal: one that ended done, or failed on a lost answer whose order was found since", async () => {
    writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: RARE, MARKET: 'BTC_USDT', AMOUNT: '0.001' });
    writeStrategy('dca-eth', { STRATEGY: 'dca', SCHEDULE: RARE, MARKET: 'ETH_USDT', AMOUNT: '0.01' });
    writeStrategy('dca-new', { STRATEGY: 'dca', SCHEDULE: RARE, MARKET: 'BTC_USDT', AMOUNT: '0.001' });
    const store = await openStore({ dataDir: join(dir, 'data'), mode: 'dry-run' });
    const { journal } = store;
    // dca-btc: done three years back; failed on a lost answer found since two years back; failed for good last time.
    await journal.claimSlot({ instance: 'dca-btc', slotTimeMs: newYear(3), runId: null });
    await journal.finishSlot({ instance: 'dca-btc', slotTimeMs: newYear(3), status: 'done' });
    await journal.claimSlot({ instance: 'dca-btc', slotTimeMs: newYear(2), runId: null, intents: [{ index: 0, intent: BUY }] });
    const [found] = await journal.listIntents({ instance: 'dca-btc', slotTimeMs: newYear(2) });
    await journal.updateIntent(found?.intentId ?? '', { status: 'sent' });
    await journal.updateIntent(found?.intentId ?? '', { status: 'unknown', error: { code: 'E_TIMEOUT', message: 'the answer was lost' } });
    await journal.updateIntent(found?.intentId ?? '', { status: 'done' });
    await journal.finishSlot({ instance: 'dca-btc', slotTimeMs: newYear(2), status: 'failed', reason: 'answer lost' });
    await journal.claimSlot({ instance: 'dca-btc', slotTimeMs: newYear(0), runId: null, intents: [{ index: 0, intent: BUY }] });
    const [refused] = await journal.listIntents({ instance: 'dca-btc', slotTimeMs: newYear(0) });
    await journal.updateIntent(refused?.intentId ?? '', { status: 'failed', error: { code: 'E_EXCHANGE_VALIDATION', message: 'refused' } });
    await journal.finishSlot({ instance: 'dca-btc', slotTimeMs: newYear(0), status: 'failed', reason: 'the exchange refused the buy' });
    // dca-eth: its latest slot ran done.
    await journal.claimSlot({ instance: 'dca-eth', slotTimeMs: newYear(0), runId: null });
    await journal.finishSlot({ instance: 'dca-eth', slotTimeMs: newYear(0), status: 'done' });
    await store.close();

    const daemon = await startDaemon();
    const { samples } = await scrape(daemon.url);
    const gauge = 'stacker_last_successful_slot_timestamp_seconds';
    expect(valueOf(samples, gauge, { strategy_instance: 'dca-btc' })).toBe(newYear(2) / 1000);
    expect(valueOf(samples, gauge, { strategy_instance: 'dca-eth' })).toBe(newYear(0) / 1000);
    // An instance that never had a successful slot has none to show.
    expect(valueOf(samples, gauge, { strategy_instance: 'dca-new' })).toBeUndefined();
    expect((await daemon.stop()).exitCode).toBe(0);
  });
});

describe('a slot run late at start (CATCH_UP=last)', () => {
  it("is the instance's last slot on /healthz and its latest successful slot on /metrics, as a slot the scheduler fires is", async () => {
    // A daily slot three minutes ago, missed: the instance was first scheduled ten minutes ago and stacker stopped since.
    const slotMs = Math.floor(Date.now() / 60_000) * 60_000 - 3 * 60_000;
    const slot = new Date(slotMs);
    writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: `${slot.getUTCMinutes()} ${slot.getUTCHours()} * * *`, MARKET: 'BTC_USDT', AMOUNT: '0.001', CATCH_UP: 'last', CATCH_UP_WINDOW: '1h' });
    const store = await openStore({ dataDir: join(dir, 'data'), mode: 'dry-run' });
    await store.journal.markScheduled('dca-btc', slotMs - 7 * 60_000);
    await store.close();

    const daemon = await startDaemon();
    const health = (await (await fetch(`${daemon.url}/healthz`)).json()) as { lastSlot: Record<string, unknown> };
    expect(health.lastSlot).toEqual({ 'dca-btc': { slotTime: slot.toISOString(), outcome: 'done' } });
    const { samples } = await scrape(daemon.url);
    expect(valueOf(samples, 'stacker_last_successful_slot_timestamp_seconds', { strategy_instance: 'dca-btc' })).toBe(slotMs / 1000);
    expect(valueOf(samples, 'stacker_slots_total', { strategy_instance: 'dca-btc', outcome: 'done' })).toBe(1);
    expect((await daemon.stop()).exitCode).toBe(0);
  });
});

describe('telling a daemon that stopped buying from one whose slots stopped', () => {
  /** A slot asked for from the API is the current second: wait for the next one so two runs are two slots. */
  const nextSecond = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 1050 - (Date.now() % 1000)));

  it('moves stacker_last_order_timestamp_seconds only when the exchange accepts an order, while a slot whose buy was refused moves the last successful slot; a restart reads both from the journal', async () => {
    writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: RARE, MARKET: 'BTC_USDT', AMOUNT: '0.001' });
    const withToken = { STACKER_CONTROL_TOKEN: CONTROL_TOKEN };
    const instance = { strategy_instance: 'dca-btc' };
    const first = await startDaemon(withToken);
    const run = async (): Promise<number> => {
      const ran = await postControl(first.url, '/api/instances/dca-btc/run', CONTROL_TOKEN);
      expect(ran.json).toMatchObject({ outcome: 'done' });
      return Date.parse(String(ran.json['slotTime'])) / 1000;
    };

    const before = Math.floor(Date.now() / 1000);
    const bought = await run();
    let { samples } = await scrape(first.url);
    const placedAt = valueOf(samples, 'stacker_last_order_timestamp_seconds', instance) ?? 0;
    expect(placedAt).toBeGreaterThanOrEqual(before);
    expect(placedAt).toBeLessThanOrEqual(Date.now() / 1000);
    expect(valueOf(samples, 'stacker_last_successful_slot_timestamp_seconds', instance)).toBe(bought);

    // The kill switch refuses the next slot's buy: the slot ran (done), nothing was bought.
    expect((await postControl(first.url, '/api/kill-switch', CONTROL_TOKEN, { on: true })).status).toBe(200);
    await nextSecond();
    const refused = await run();
    ({ samples } = await scrape(first.url));
    expect(valueOf(samples, 'stacker_last_successful_slot_timestamp_seconds', instance)).toBe(refused);
    expect(valueOf(samples, 'stacker_refusals_total', { ...instance, reason: 'kill-switch' })).toBe(1);
    expect(valueOf(samples, 'stacker_orders_placed_total', instance)).toBe(1);
    expect(valueOf(samples, 'stacker_last_order_timestamp_seconds', instance)).toBe(placedAt);
    expect((await first.stop()).exitCode).toBe(0);

    const second = await startDaemon(withToken);
    ({ samples } = await scrape(second.url));
    expect(valueOf(samples, 'stacker_last_order_timestamp_seconds', instance)).toBe(placedAt);
    expect(valueOf(samples, 'stacker_last_successful_slot_timestamp_seconds', instance)).toBe(refused);
    expect((await second.stop()).exitCode).toBe(0);
  });
});

describe('the switches an alert watches', () => {
  it("shows an account's own kill switch, a pause and what /healthz answers, from the moment they change", async () => {
    writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: RARE, MARKET: 'BTC_USDT', AMOUNT: '0.001' });
    const daemon = await startDaemon({ STACKER_CONTROL_TOKEN: CONTROL_TOKEN });
    const gauges = async (): Promise<Record<string, number | undefined>> => {
      const { samples } = await scrape(daemon.url);
      return {
        all: valueOf(samples, 'stacker_kill_switch'),
        account: valueOf(samples, 'stacker_account_kill_switch', { account: 'default' }),
        paused: valueOf(samples, 'stacker_strategy_paused', { strategy_instance: 'dca-btc' }),
        healthy: valueOf(samples, 'stacker_healthy'),
      };
    };
    const healthz = async (): Promise<number> => (await fetch(`${daemon.url}/healthz`)).status;

    expect(await gauges()).toEqual({ all: 0, account: 0, paused: 0, healthy: 1 });
    expect(await healthz()).toBe(200);
    // The only account's switch stops all trading: /healthz says so, and so does /metrics.
    expect((await postControl(daemon.url, '/api/accounts/default/kill-switch', CONTROL_TOKEN, { on: true })).status).toBe(200);
    expect(await gauges()).toEqual({ all: 0, account: 1, paused: 0, healthy: 0 });
    expect(await healthz()).toBe(503);
    expect((await postControl(daemon.url, '/api/accounts/default/kill-switch', CONTROL_TOKEN, { on: false })).status).toBe(200);
    expect((await postControl(daemon.url, '/api/instances/dca-btc/pause', CONTROL_TOKEN)).status).toBe(200);
    expect(await gauges()).toEqual({ all: 0, account: 0, paused: 1, healthy: 1 });
    expect((await postControl(daemon.url, '/api/instances/dca-btc/resume', CONTROL_TOKEN)).status).toBe(200);
    expect(await gauges()).toEqual({ all: 0, account: 0, paused: 0, healthy: 1 });
    expect((await daemon.stop()).exitCode).toBe(0);
  });
});
