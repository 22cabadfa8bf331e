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
import { parseExposition, valueOf } from '../observability/exposition-format.ts';

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
    for (const reason of ['kill-switch', 'over-budget', 'insufficient-funds', 'budget-too-small', 'exchange-refused']) {
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
