import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RequestEvent } from '../../src/api/requester.ts';
import type { EngineMetrics as EngineObserverMetrics } from '../../src/engine/observer.ts';
import { EXPOSITION_CONTENT_TYPE } from '../../src/observability/exposition.ts';
import { type EngineMetrics, Metrics, type ProcessStats, errorClassLabel, noMetrics, pathLabel } from '../../src/observability/metrics.ts';
import { parseExposition, valueOf } from './exposition-format.ts';

const STATS: ProcessStats = { rssBytes: 50_000_000, heapUsedBytes: 10_000_000, heapTotalBytes: 20_000_000, externalBytes: 1_000_000, cpuUserMicros: 1_500_000, cpuSystemMicros: 500_000 };
const START_MS = Date.UTC(2025, 0, 1);

function metricsAt(nowMs = START_MS + 90_000): Metrics {
  return new Metrics({ mode: 'dry-run', version: '9.9.9', nowMs: () => nowMs, processStartMs: START_MS, processStats: () => STATS });
}

async function scrape(metrics: Metrics) {
  return parseExposition(await metrics.render());
}

describe('Metrics', () => {
  it('serves the Prometheus text format, version 0.0.4', () => {
    expect(metricsAt().contentType).toBe(EXPOSITION_CONTENT_TYPE);
    expect(EXPOSITION_CONTENT_TYPE).toBe('text/plain; version=0.0.4; charset=utf-8');
  });

  it('says which version runs in which mode in stacker_info', async () => {
    const { samples, types } = await scrape(metricsAt());
    expect(valueOf(samples, 'stacker_info', { version: '9.9.9', mode: 'dry-run' })).toBe(1);
    expect(types.get('stacker_info')).toBe('gauge');
  });

  it('takes the version from package.json by default', async () => {
    const { samples } = await scrape(new Metrics({ mode: 'live' }));
    const info = samples.find((s) => s.name === 'stacker_info');
    expect(info?.labels).toEqual({ version: expect.stringMatching(/^\d+\.\d+\.\d+/), mode: 'live' });
  });

  it('reports process memory, CPU, start time and uptime at scrape time', async () => {
    const { samples, types } = await scrape(metricsAt());
    expect(valueOf(samples, 'process_resident_memory_bytes')).toBe(50_000_000);
    expect(valueOf(samples, 'nodejs_heap_size_used_bytes')).toBe(10_000_000);
    expect(valueOf(samples, 'nodejs_heap_size_total_bytes')).toBe(20_000_000);
    expect(valueOf(samples, 'nodejs_external_memory_bytes')).toBe(1_000_000);
    expect(valueOf(samples, 'process_cpu_user_seconds_total')).toBe(1.5);
    expect(valueOf(samples, 'process_cpu_system_seconds_total')).toBe(0.5);
    expect(valueOf(samples, 'process_cpu_seconds_total')).toBe(2);
    expect(types.get('process_cpu_seconds_total')).toBe('counter');
    expect(valueOf(samples, 'process_start_time_seconds')).toBe(START_MS / 1000);
    expect(valueOf(samples, 'stacker_uptime_seconds')).toBe(90);
  });

  it('reads the real process when no stats are injected', async () => {
    const { samples } = await scrape(new Metrics({ mode: 'dry-run' }));
    expect(valueOf(samples, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(valueOf(samples, 'stacker_uptime_seconds')).toBeGreaterThan(0);
  });

  it('counts orders placed and each status reached, per instance', async () => {
    const metrics = metricsAt();
    metrics.orderPlaced('dca-btc', START_MS);
    metrics.orderTransition('dca-btc', 'FILLED');
    metrics.orderTransition('dca-btc', 'FILLED');
    metrics.orderTransition('dca-eth', 'CANCELED_TAKER_BAND');
    const { samples, types } = await scrape(metrics);
    expect(valueOf(samples, 'stacker_orders_placed_total', { strategy_instance: 'dca-btc' })).toBe(1);
    expect(valueOf(samples, 'stacker_order_transitions_total', { strategy_instance: 'dca-btc', status: 'FILLED' })).toBe(2);
    expect(valueOf(samples, 'stacker_order_transitions_total', { strategy_instance: 'dca-eth', status: 'CANCELED_TAKER_BAND' })).toBe(1);
    expect(types.get('stacker_orders_placed_total')).toBe('counter');
  });

  it('keeps when the exchange accepted each instance\'s latest order, never moving back for one found late', async () => {
    const metrics = metricsAt();
    const nine = Date.UTC(2025, 0, 2, 9);
    const ten = Date.UTC(2025, 0, 2, 10);
    metrics.orderPlaced('dca-btc', ten);
    // A lost answer's order found after a later one was placed.
    metrics.orderPlaced('dca-btc', nine);
    let { samples, types } = await scrape(metrics);
    expect(valueOf(samples, 'stacker_last_order_timestamp_seconds', { strategy_instance: 'dca-btc' })).toBe(ten / 1000);
    expect(types.get('stacker_last_order_timestamp_seconds')).toBe('gauge');
    metrics.lastOrder('dca-eth', nine);
    ({ samples } = await scrape(metrics));
    expect(valueOf(samples, 'stacker_last_order_timestamp_seconds', { strategy_instance: 'dca-eth' })).toBe(nine / 1000);
  });

  it('counts refusals by instance and reason', async () => {
    const metrics = metricsAt();
    metrics.refusal('dca-btc', 'over-budget');
    metrics.refusal('dca-btc', 'over-budget');
    metrics.refusal('sweep', 'no-active-investment');
    const { samples } = await scrape(metrics);
    expect(valueOf(samples, 'stacker_refusals_total', { strategy_instance: 'dca-btc', reason: 'over-budget' })).toBe(2);
    expect(valueOf(samples, 'stacker_refusals_total', { strategy_instance: 'sweep', reason: 'no-active-investment' })).toBe(1);
  });

  it('counts notifications by channel and outcome: sent, failed after retries, dropped', async () => {
    const metrics = metricsAt();
    metrics.notificationSent('webhook');
    metrics.notificationSent('webhook');
    metrics.notificationFailed('telegram');
    metrics.notificationDropped('telegram');
    const { samples } = await scrape(metrics);
    expect(valueOf(samples, 'stacker_notifications_total', { channel: 'webhook', outcome: 'sent' })).toBe(2);
    expect(valueOf(samples, 'stacker_notifications_total', { channel: 'telegram', outcome: 'failed' })).toBe(1);
    expect(valueOf(samples, 'stacker_notifications_total', { channel: 'telegram', outcome: 'dropped' })).toBe(1);
  });

  it('counts API attempts by path and outcome, errors by class, and times them in seconds', async () => {
    const metrics = metricsAt();
    metrics.apiRequest({ path: '/api/v4/order/stock_market', status: 200, durationMs: 40, errorCode: null });
    metrics.apiRequest({ path: '/api/v4/order/stock_market', status: 503, durationMs: 2000, errorCode: 'E_UNAVAILABLE' });
    metrics.apiRequest({ path: '/api/v4/public/ticker', status: null, durationMs: 30_000, errorCode: 'E_TIMEOUT' });
    const { samples, types } = await scrape(metrics);
    expect(valueOf(samples, 'stacker_api_requests_total', { account: 'default', path: '/api/v4/order/stock_market', outcome: 'ok' })).toBe(1);
    expect(valueOf(samples, 'stacker_api_requests_total', { account: 'default', path: '/api/v4/order/stock_market', outcome: 'error' })).toBe(1);
    expect(valueOf(samples, 'stacker_api_errors_total', { account: 'default', class: 'E_UNAVAILABLE' })).toBe(1);
    expect(valueOf(samples, 'stacker_api_errors_total', { account: 'default', class: 'E_TIMEOUT' })).toBe(1);
    expect(types.get('stacker_api_request_duration_seconds')).toBe('histogram');
    expect(valueOf(samples, 'stacker_api_request_duration_seconds_count', { account: 'default', path: '/api/v4/order/stock_market' })).toBe(2);
    expect(valueOf(samples, 'stacker_api_request_duration_seconds_sum', { account: 'default', path: '/api/v4/order/stock_market' })).toBeCloseTo(2.04);
    expect(valueOf(samples, 'stacker_api_request_duration_seconds_bucket', { account: 'default', path: '/api/v4/order/stock_market', le: '0.05' })).toBe(1);
    expect(valueOf(samples, 'stacker_api_request_duration_seconds_bucket', { account: 'default', path: '/api/v4/public/ticker', le: '+Inf' })).toBe(1);
  });

  it("takes the API client's own request events as they are", async () => {
    const metrics = metricsAt();
    const event: RequestEvent = { method: 'POST', path: '/api/v4/main-account/transfer', scope: 'main-account', attempt: 1, status: 200, durationMs: 12, errorCode: null };
    metrics.apiRequest(event);
    const { samples } = await scrape(metrics);
    expect(valueOf(samples, 'stacker_api_requests_total', { account: 'default', path: '/api/v4/main-account/transfer', outcome: 'ok' })).toBe(1);
  });

  it('labels API attempts, their errors and their durations with the account they were made for', async () => {
    const metrics = metricsAt();
    metrics.apiRequest({ path: '/api/v4/order/stock_market', status: 429, durationMs: 5, errorCode: 'E_NONCE', account: 'side' });
    metrics.apiRequest({ path: '/api/v4/order/stock_market', status: 200, durationMs: 5, errorCode: null, account: 'main' });
    const { samples } = await scrape(metrics);
    expect(valueOf(samples, 'stacker_api_errors_total', { account: 'side', class: 'E_NONCE' })).toBe(1);
    expect(valueOf(samples, 'stacker_api_requests_total', { account: 'main', path: '/api/v4/order/stock_market', outcome: 'ok' })).toBe(1);
    expect(valueOf(samples, 'stacker_api_request_duration_seconds_count', { account: 'side', path: '/api/v4/order/stock_market' })).toBe(1);
    expect(valueOf(samples, 'stacker_api_request_duration_seconds_count', { account: 'main', path: '/api/v4/order/stock_market' })).toBe(1);
  });

  it('never puts a query string or anything but a plain path into a label', async () => {
    expect(pathLabel('/api/v4/public/ticker?market=BTC_USDT&apiKey=abc')).toBe('/api/v4/public/ticker');
    expect(pathLabel('/api/v4/orders#frag')).toBe('/api/v4/orders');
    expect(pathLabel('https://user:secret@host/api')).toBe('other');
    expect(pathLabel('/api/{"secret":"x"}')).toBe('other');
    expect(errorClassLabel('E_NONCE')).toBe('E_NONCE');
    expect(errorClassLabel('something odd with secret=abc')).toBe('E_UNEXPECTED');
    const metrics = metricsAt();
    metrics.apiRequest({ path: '/api/v4/public/orderbook/BTC_USDT?limit=5&token=SECRET', status: 200, durationMs: 1, errorCode: null });
    const text = await metrics.render();
    expect(text).not.toContain('SECRET');
    expect(text).toContain('path="/api/v4/public/orderbook/BTC_USDT"');
  });

  it('counts slots by outcome, times the ones that ran, and keeps the latest successful slot time', async () => {
    const metrics = metricsAt();
    const nine = Date.UTC(2025, 0, 2, 9);
    const ten = Date.UTC(2025, 0, 2, 10);
    metrics.slotFinished('dca-btc', 'done', 250, ten);
    // A catch-up slot from earlier finishing later does not move the gauge back.
    metrics.slotFinished('dca-btc', 'done', 100, nine);
    metrics.slotFinished('dca-btc', 'failed', 50, ten + 3_600_000);
    metrics.slotFinished('dca-btc', 'missed', 0, ten + 7_200_000);
    const { samples } = await scrape(metrics);
    expect(valueOf(samples, 'stacker_slots_total', { strategy_instance: 'dca-btc', outcome: 'done' })).toBe(2);
    expect(valueOf(samples, 'stacker_slots_total', { strategy_instance: 'dca-btc', outcome: 'failed' })).toBe(1);
    expect(valueOf(samples, 'stacker_slots_total', { strategy_instance: 'dca-btc', outcome: 'missed' })).toBe(1);
    expect(valueOf(samples, 'stacker_slot_duration_seconds_count', { strategy_instance: 'dca-btc' })).toBe(3);
    expect(valueOf(samples, 'stacker_slot_duration_seconds_sum', { strategy_instance: 'dca-btc' })).toBeCloseTo(0.4);
    expect(valueOf(samples, 'stacker_last_successful_slot_timestamp_seconds', { strategy_instance: 'dca-btc' })).toBe(ten / 1000);
  });

  it('counts a slot that failed on a lost answer as successful once its order is found (settled), never moving the gauge back', async () => {
    const metrics = metricsAt();
    const nine = Date.UTC(2025, 0, 2, 9);
    const ten = Date.UTC(2025, 0, 2, 10);
    metrics.slotFinished('dca-btc', 'done', 100, nine);
    metrics.slotFinished('dca-btc', 'failed', 100, ten);
    expect(valueOf((await scrape(metrics)).samples, 'stacker_last_successful_slot_timestamp_seconds', { strategy_instance: 'dca-btc' })).toBe(nine / 1000);
    metrics.slotSucceeded('dca-btc', ten);
    expect(valueOf((await scrape(metrics)).samples, 'stacker_last_successful_slot_timestamp_seconds', { strategy_instance: 'dca-btc' })).toBe(ten / 1000);
    metrics.slotSucceeded('dca-btc', nine);
    expect(valueOf((await scrape(metrics)).samples, 'stacker_last_successful_slot_timestamp_seconds', { strategy_instance: 'dca-btc' })).toBe(ten / 1000);
  });

  it('starts a scheduled instance\'s counters and an account\'s error classes at 0, so the first event is a rise of 1', async () => {
    const metrics = metricsAt();
    metrics.scheduled('dca-btc', ['kill-switch', 'over-budget']);
    metrics.accountInUse('kids');
    let { samples } = await scrape(metrics);
    expect(valueOf(samples, 'stacker_strategy_enabled', { strategy_instance: 'dca-btc' })).toBe(1);
    expect(valueOf(samples, 'stacker_slots_total', { strategy_instance: 'dca-btc', outcome: 'failed' })).toBe(0);
    expect(valueOf(samples, 'stacker_refusals_total', { strategy_instance: 'dca-btc', reason: 'kill-switch' })).toBe(0);
    expect(valueOf(samples, 'stacker_slot_retries_total', { strategy_instance: 'dca-btc', code: 'E_UNAVAILABLE' })).toBe(0);
    expect(valueOf(samples, 'stacker_api_errors_total', { account: 'kids', class: 'E_NONCE' })).toBe(0);
    metrics.slotFinished('dca-btc', 'failed', 1, START_MS);
    metrics.refusal('dca-btc', 'kill-switch');
    metrics.apiRequest({ path: '/x', status: 429, durationMs: 1, errorCode: 'E_NONCE', account: 'kids' });
    ({ samples } = await scrape(metrics));
    expect(valueOf(samples, 'stacker_slots_total', { strategy_instance: 'dca-btc', outcome: 'failed' })).toBe(1);
    expect(valueOf(samples, 'stacker_refusals_total', { strategy_instance: 'dca-btc', reason: 'kill-switch' })).toBe(1);
    expect(valueOf(samples, 'stacker_api_errors_total', { account: 'kids', class: 'E_NONCE' })).toBe(1);
  });

  it('shows a strategy as enabled from its first event and 0 once disabled, until explicitly enabled again', async () => {
    const metrics = metricsAt();
    metrics.strategyEnabled('report');
    metrics.slotFinished('dca-btc', 'done', 1, START_MS);
    metrics.strategyDisabled('dca-btc');
    metrics.slotFinished('dca-btc', 'failed', 1, START_MS);
    let { samples } = await scrape(metrics);
    expect(valueOf(samples, 'stacker_strategy_enabled', { strategy_instance: 'report' })).toBe(1);
    expect(valueOf(samples, 'stacker_strategy_enabled', { strategy_instance: 'dca-btc' })).toBe(0);
    metrics.strategyEnabled('dca-btc');
    ({ samples } = await scrape(metrics));
    expect(valueOf(samples, 'stacker_strategy_enabled', { strategy_instance: 'dca-btc' })).toBe(1);
  });

  it('shows the kill switch as 0 from the start and follows it both ways', async () => {
    const metrics = metricsAt();
    expect(valueOf((await scrape(metrics)).samples, 'stacker_kill_switch')).toBe(0);
    metrics.killSwitch(true);
    expect(valueOf((await scrape(metrics)).samples, 'stacker_kill_switch')).toBe(1);
    metrics.killSwitch(false);
    expect(valueOf((await scrape(metrics)).samples, 'stacker_kill_switch')).toBe(0);
  });

  it("follows an account's own kill switch, an instance's pause and health, each both ways, and says in each help which switch it is", async () => {
    const metrics = metricsAt();
    metrics.accountKillSwitch('kids', true);
    metrics.paused('dca-btc', true);
    metrics.healthy(false);
    let { samples } = await scrape(metrics);
    expect(valueOf(samples, 'stacker_account_kill_switch', { account: 'kids' })).toBe(1);
    expect(valueOf(samples, 'stacker_strategy_paused', { strategy_instance: 'dca-btc' })).toBe(1);
    expect(valueOf(samples, 'stacker_healthy')).toBe(0);
    metrics.accountKillSwitch('kids', false);
    metrics.paused('dca-btc', false);
    metrics.healthy(true);
    ({ samples } = await scrape(metrics));
    expect(valueOf(samples, 'stacker_account_kill_switch', { account: 'kids' })).toBe(0);
    expect(valueOf(samples, 'stacker_strategy_paused', { strategy_instance: 'dca-btc' })).toBe(0);
    expect(valueOf(samples, 'stacker_healthy')).toBe(1);
    const text = await metrics.render();
    expect(text).toContain('# HELP stacker_kill_switch 1 while the kill switch of every account');
    expect(text).toContain('An account\'s own switch is stacker_account_kill_switch.');
  });

  it('shows the stuck market orders as a gauge, 0 from the start, following the health refresh both ways', async () => {
    const metrics = metricsAt();
    const { samples, types } = await scrape(metrics);
    expect(valueOf(samples, 'stacker_stuck_orders')).toBe(0);
    expect(types.get('stacker_stuck_orders')).toBe('gauge');
    const state = { unresolved: 0, oldestUnresolvedSentAtMs: null, writable: true, findings: {} };
    metrics.journalState({ ...state, stuckOrders: 2 });
    expect(valueOf((await scrape(metrics)).samples, 'stacker_stuck_orders')).toBe(2);
    metrics.journalState({ ...state, stuckOrders: 0 });
    expect(valueOf((await scrape(metrics)).samples, 'stacker_stuck_orders')).toBe(0);
  });

  it("names the strategy instance strategy_instance on every metric, never instance, which Prometheus keeps for the scraped target", async () => {
    const metrics = metricsAt();
    metrics.orderPlaced('dca-btc', START_MS);
    metrics.orderTransition('dca-btc', 'FILLED');
    metrics.refusal('dca-btc', 'over-budget');
    metrics.slotFinished('dca-btc', 'done', 1, START_MS);
    metrics.slotRetried('dca-btc', 'E_UNAVAILABLE');
    metrics.strategyDisabled('dca-eth');
    metrics.paused('dca-eth', true);
    const { samples } = await scrape(metrics);
    for (const sample of samples) expect(Object.keys(sample.labels)).not.toContain('instance');
    const named = new Set(samples.filter((s) => s.labels['strategy_instance'] !== undefined).map((s) => s.name.replace(/_(bucket|sum|count)$/, '')));
    expect([...named].sort()).toEqual([
      'stacker_last_order_timestamp_seconds',
      'stacker_last_successful_slot_timestamp_seconds',
      'stacker_order_transitions_total',
      'stacker_orders_placed_total',
      'stacker_refusals_total',
      'stacker_slot_duration_seconds',
      'stacker_slot_retries_total',
      'stacker_slots_total',
      'stacker_strategy_enabled',
      'stacker_strategy_paused',
    ]);
  });

  it('renders a document a strict exposition reader accepts, every metric named stacker_, process_ or nodejs_', async () => {
    const metrics = metricsAt();
    metrics.orderPlaced('a', START_MS);
    metrics.orderTransition('a', 'FILLED');
    metrics.refusal('a', 'kill-switch');
    metrics.apiRequest({ path: '/x', status: null, durationMs: 1, errorCode: 'E_NETWORK' });
    metrics.slotFinished('a', 'done', 1, START_MS);
    metrics.strategyDisabled('b');
    const { samples, types } = await scrape(metrics);
    expect(samples.length).toBeGreaterThan(40);
    for (const name of types.keys()) expect(name).toMatch(/^(stacker|process|nodejs)_/);
  });

  it("is what README's Metrics table lists: every metric served, with its labels, and none that is not", async () => {
    const readme = readFileSync(resolve(import.meta.dirname, '../../README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('### Metrics'), readme.indexOf('## Notifications'));
    const documented = new Map<string, string[]>();
    for (const row of section.split('\n').filter((line) => line.startsWith('| `'))) {
      const [names = '', labels = ''] = row.split('|').slice(1, 3);
      const labelNames = [...labels.matchAll(/`([a-z_]+)`/g)].map((match) => match[1] as string);
      for (const [, name] of names.matchAll(/`([a-z_*]+)`/g)) documented.set(name as string, labelNames);
    }
    const metrics = metricsAt();
    metrics.scheduled('a', ['kill-switch']);
    metrics.accountInUse('default');
    metrics.orderPlaced('a', START_MS);
    metrics.orderTransition('a', 'FILLED');
    metrics.apiRequest({ path: '/x', status: 200, durationMs: 1, errorCode: null });
    metrics.slotFinished('a', 'done', 1, START_MS);
    metrics.accountKillSwitch('default', false);
    metrics.paused('a', false);
    metrics.healthy(true);
    metrics.notificationSent('webhook');
    const { samples, types } = await scrape(metrics);
    const served = [...types.keys()];
    const listed = (name: string): string | undefined => [...documented.keys()].find((entry) => entry === name || (entry.endsWith('*') && name.startsWith(entry.slice(0, -1))));
    for (const name of served) expect(listed(name), `${name} is not in README's Metrics table`).toBeDefined();
    for (const name of documented.keys()) expect(served.some((metric) => listed(metric) === name), `README lists ${name}, which is not served`).toBe(true);
    for (const sample of samples) {
      const family = served.includes(sample.name) ? sample.name : sample.name.replace(/_(bucket|sum|count)$/, '');
      const labels = Object.keys(sample.labels).filter((label) => label !== 'le');
      if (documented.has(family)) expect(labels.sort(), family).toEqual([...(documented.get(family) ?? [])].sort());
    }
  });

  it('fits the engine\'s observer interface, and noMetrics does nothing', () => {
    const forEngine: EngineObserverMetrics = metricsAt();
    const facade: EngineMetrics = noMetrics;
    expect(() => {
      forEngine.orderPlaced('a', 1);
      facade.orderTransition('a', 'FILLED');
      facade.orderPlaced('a', 1);
      facade.refusal('a', 'r');
      facade.apiRequest({ path: '/', status: 200, durationMs: 1, errorCode: null });
      facade.slotFinished('a', 'done', 1, 1);
      facade.strategyDisabled('a');
      facade.killSwitch(true);
    }).not.toThrow();
    expect(Object.keys(noMetrics).sort()).toEqual(['apiRequest', 'killSwitch', 'orderPlaced', 'orderTransition', 'refusal', 'slotFinished', 'strategyDisabled']);
  });
});
