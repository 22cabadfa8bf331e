import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';
import type { Strategy } from '../../src/engine/contract.ts';
import { readsOf } from '../../src/engine/contract.ts';
import { Engine, type EngineOptions, type ScheduledRuntime } from '../../src/engine/engine.ts';
import type { FatalEngineError } from '../../src/engine/error-policy.ts';
import { type KillSwitch, neverKilled } from '../../src/engine/kill-switch.ts';
import { type EngineLogger, noEngineMetrics } from '../../src/engine/observer.ts';
import { type EngineDeps, type EngineTiming } from '../../src/engine/runtime.ts';
import { parseCron } from '../../src/engine/schedule/cron.ts';
import { LiveExchange } from '../../src/exchange/live.ts';
import { type Sandbox, type SandboxOptions, startSandbox } from '../../src/sandbox/server.ts';
import type { Journal } from '../../src/store/journal.ts';
import { PgJournal } from '../../src/store/pg-journal.ts';
import { MemoryJournal } from '../../src/store/memory-journal.ts';
import { SqliteJournal } from '../../src/store/sqlite-journal.ts';
import { Decimal } from '../../src/domain/money.ts';
import { dca } from '../../strategies/dca.ts';
import { defineStrategy, param } from '../../strategies/sdk.ts';
import type { NotifyEvent } from '../../src/domain/notification.ts';
import { createDatabase, dropDatabase, pgCluster } from '../support/pg-databases.ts';

/** Every log line the engine wrote, as JSON text: what a secret grep reads. */
export interface CapturedLog {
  readonly level: string;
  readonly message: string;
  readonly fields: Record<string, unknown>;
}

export function captureLogger(lines: CapturedLog[]): EngineLogger {
  const at = (level: string) => (fields: Record<string, unknown>, message: string) => lines.push({ level, message, fields });
  return { isLevelEnabled: () => true, info: at('info'), warn: at('warn'), error: at('error'), debug: at('debug') };
}

/** Short waits: the sandbox answers in milliseconds; the rule (look up, never resend) is the same. */
export const TEST_TIMING: EngineTiming = {
  lookupDelaysMs: [0, 20],
  lookupSpacingMs: { min: 0, max: 0 },
  transferSettleMs: 500,
  pollMs: 20,
  snapshotRetry: { firstDelayMs: 50, maxDelayMs: 200 },
  // Past the settle window the suites move the clock by, so an order looked up late is not called stuck too.
  stuckOrderMs: 5 * 60_000,
  // A decide that never answers is given up on in the time a test can wait.
  decideTimeLimitMs: 1_000,
};

/** The settle window the harness's instances use: what a test moves the clock past. */
export const TEST_SETTLE_WINDOW_MS = 60_000;

export interface InstanceSpec<P> {
  readonly instance: string;
  readonly strategy: Strategy<P>;
  readonly env: Record<string, string>;
  readonly budgets?: { day?: Decimal; week?: Decimal; month?: Decimal };
  readonly maxOrderQuote?: Decimal;
  readonly schedule?: string;
  readonly orderSettleWindowMs?: number;
}

export function runtimeOf<P>(spec: InstanceSpec<P>): ScheduledRuntime {
  const params = spec.strategy.parseParams(spec.env, `${spec.instance}.env`);
  return {
    instance: spec.instance,
    timezone: 'UTC',
    budgets: spec.budgets ?? {},
    maxOrderQuote: spec.maxOrderQuote ?? null,
    clientOrderIdPrefix: null,
    orderSettleWindowMs: spec.orderSettleWindowMs ?? TEST_SETTLE_WINDOW_MS,
    strategy: spec.strategy as Strategy<unknown>,
    params,
    reads: readsOf(spec.strategy, params),
    candleWindows: spec.strategy.candleWindows?.(params) ?? [],
    budgetAsset: spec.strategy.budgetAsset?.(params) ?? null,
    schedule: parseCron(spec.schedule ?? '0 9 * * *', 'UTC'),
    catchUp: { policy: 'skip' },
  };
}

/**
 * The journals the engine's suites run on: SQLite always, PostgreSQL when the test run started a
 * cluster. `memory` (a backtest's journal) on asking: a suite whose rule reads only what every
 * journal stores runs on it too.
 */
export type EngineJournalKind = 'sqlite' | 'pg' | 'memory';
export const ENGINE_JOURNALS: readonly EngineJournalKind[] = pgCluster() === null ? ['sqlite'] : ['sqlite', 'pg'];

export interface EngineWorld {
  readonly sandbox: Sandbox;
  readonly journal: Journal;
  readonly client: ApiClient;
  readonly logs: CapturedLog[];
  /** Every event the engine handed its notifier, in order. */
  readonly notifications: NotifyEvent[];
  readonly fatal: FatalEngineError[];
  readonly dir: string;
  engine(
    instances: readonly ScheduledRuntime[],
    options?: {
      killSwitch?: KillSwitch;
      credentials?: { apiKey: string; apiSecret: string };
      ledger?: Partial<NonNullable<EngineOptions['ledger']>>;
      paused?: EngineOptions['paused'];
      stop?: AbortSignal;
      onLateSlotEnded?: EngineOptions['onLateSlotEnded'];
    },
  ): Engine;
  deps(options?: { killSwitch?: KillSwitch }): EngineDeps;
  /**
   * Move the engine's clock (not the journal's, not the sandbox's) forward: past a settle window,
   * say. To the exchange, no time passed: as this machine's clock stepped forward (NTP, a VM resumed).
   */
  advance(ms: number): void;
  /** Let time pass for the engine and the exchange (the sandbox's clock) alike. */
  elapse(ms: number): void;
  close(): Promise<void>;
}

/**
 * A real sandbox on 127.0.0.1, the real client over HTTP, and a real journal: SQLite in a temp
 * dir, or a new database on the test run's PostgreSQL cluster.
 */
export async function engineWorld(sandboxOptions: SandboxOptions = {}, kind: EngineJournalKind = 'sqlite'): Promise<EngineWorld> {
  let exchangeSkewMs = 0;
  const sandbox = await startSandbox({ clock: { nowMs: () => Date.now() + exchangeSkewMs }, ...sandboxOptions });
  const dir = mkdtempSync(join(tmpdir(), 'stacker-engine-'));
  const cluster = kind === 'pg' ? pgCluster() : null;
  if (kind === 'pg' && cluster === null) throw new Error('no PostgreSQL cluster in this test run');
  const pgUrl = cluster === null ? null : await createDatabase(cluster);
  const journal = kind === 'memory' ? new MemoryJournal() : pgUrl === null ? new SqliteJournal({ path: join(dir, 'stacker.db') }) : new PgJournal({ url: pgUrl, schema: 'stacker_live' });
  await journal.open();
  const logs: CapturedLog[] = [];
  const notifications: NotifyEvent[] = [];
  const fatal: FatalEngineError[] = [];
  const clients: ApiClient[] = [];
  const newClient = (credentials = { apiKey: sandbox.apiKey, apiSecret: sandbox.apiSecret }): ApiClient => {
    const client = new ApiClient({ baseUrl: sandbox.url, credentials, retry: { maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 10 }, responseTimeoutMs: 2000 });
    clients.push(client);
    return client;
  };
  const client = newClient();
  let skewMs = 0;
  const depsWith = (exchangeClient: ApiClient, killSwitch: KillSwitch = neverKilled): EngineDeps => ({
    exchange: new LiveExchange(exchangeClient),
    journal,
    mode: 'live',
    logger: captureLogger(logs),
    metrics: noEngineMetrics,
    notifier: { notify: (event) => notifications.push(event) },
    killSwitch,
    clock: { nowMs: () => Date.now() + skewMs },
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    timing: TEST_TIMING,
  });
  return {
    sandbox,
    journal,
    client,
    logs,
    notifications,
    fatal,
    dir,
    deps: (options = {}) => depsWith(client, options.killSwitch),
    engine(instances, options = {}) {
      const exchangeClient = options.credentials === undefined ? client : newClient(options.credentials);
      const ledger =
        options.ledger === undefined
          ? {}
          : {
              ledger: {
                adoptBeforeMs: Date.now(),
                firstLookBackMs: 30 * 86_400_000,
                acknowledgeAdoptions: false,
                intervalMs: 3_600_000,
                instances: instances.map((i) => ({ instance: i.instance, timezone: i.timezone, budgetAsset: i.budgetAsset, orderSettleWindowMs: i.orderSettleWindowMs })),
                ...options.ledger,
              },
            };
      return new Engine(depsWith(exchangeClient, options.killSwitch), instances, {
        runId: null,
        onFatal: (error) => fatal.push(error),
        ...ledger,
        ...(options.paused === undefined ? {} : { paused: options.paused }),
        ...(options.stop === undefined ? {} : { stop: options.stop }),
        ...(options.onLateSlotEnded === undefined ? {} : { onLateSlotEnded: options.onLateSlotEnded }),
      });
    },
    advance(ms) {
      skewMs += ms;
    },
    elapse(ms) {
      skewMs += ms;
      exchangeSkewMs += ms;
    },
    async close() {
      await Promise.allSettled(clients.map((c) => c.close()));
      await journal.close();
      if (cluster !== null && pgUrl !== null) await dropDatabase(cluster, pgUrl);
      await sandbox.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A fresh engineWorld for each test of the calling file or describe block, closed after it: call it where the hooks belong. */
export function eachEngineWorld(): () => EngineWorld {
  let world: EngineWorld | null = null;
  beforeEach(async () => {
    world = await engineWorld();
  });
  afterEach(async () => {
    await world?.close();
    world = null;
  });
  return () => {
    if (world === null) throw new Error('no engine world outside a test');
    return world;
  };
}

/** Moves 10 USDT to spot, then buys on MARKET: one all-or-nothing group of two money intents. */
export const transferThenBuy = defineStrategy({
  name: 'transfer-then-buy',
  describe: 'moves 10 USDT to spot, then buys',
  params: { MARKET: param.market({ description: 'Where to buy.', example: 'BTC_USDT' }) },
  reads: () => ['balances', 'markets', 'prices'],
  budgetAsset: () => 'USDT',
  decide: async (_view, params) => [
    { kind: 'transfer', ticker: 'USDT', amount: new Decimal('10'), from: 'main', to: 'spot' },
    { kind: 'buy-stock-market', market: params.MARKET, amount: new Decimal('0.0001') },
  ],
});

/** dca-btc: 0.001 BTC every day at 09:00 UTC, the plain instance most engine tests run. */
export function dcaBtc(): ScheduledRuntime {
  return runtimeOf({ instance: 'dca-btc', strategy: dca, env: { STRATEGY: 'dca', SCHEDULE: '0 9 * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001' } });
}
