import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';
import { type CheckOverrides, check } from '../../src/cli/commands/check.ts';
import { CommandContext, type RunState } from '../../src/cli/context.ts';
import type { Io } from '../../src/cli/output.ts';
import { LiveExchange } from '../../src/exchange/live.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.ts';
import { type CountingProxy, countingProxy, runCli } from './run-cli.ts';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../src/domain/errors.ts';
import { DEMO_FLEX_PLAN_ID } from '../../src/sim/seed.ts';
import { openStore } from '../../src/store/open-store.ts';
import { STRATEGIES } from '../../strategies/index.ts';
import { Decimal, defineStrategy, intent, param } from '../../strategies/sdk.ts';

/**
 * `stacker check --live` with the shipped example instances against the sandbox's demo account,
 * through the real pre-flight and the real exchange adapter: it reads, judges, and sends nothing
 * that moves money (a counting proxy in front of the sandbox sees every request).
 */

const STRATEGIES_DIR = fileURLToPath(new URL('../../config/strategies', import.meta.url));
const WRITES = ['/api/v4/order/stock_market', '/api/v4/order/market', '/api/v4/main-account/transfer', '/api/v4/main-account/smart-flex/investments/withdraw'];

let sandbox: Sandbox;
let proxy: CountingProxy;

beforeAll(async () => {
  sandbox = await startSandbox();
  proxy = await countingProxy(sandbox.url);
});

afterAll(async () => {
  await proxy.close();
  await sandbox.stop();
});

/** `stacker check --json` in dry-run on one instance file of its own (a data dir of its own), against the sandbox: the error it ended with and its JSON. */
async function checkInstance(name: string, text: string, wallet: string, strategies?: CheckOverrides['strategies'], env: Readonly<Record<string, string>> = {}): Promise<{ error: unknown; result: unknown }> {
  const dir = mkdtempSync(join(tmpdir(), 'stacker-check-'));
  try {
    writeFileSync(join(dir, `${name}.env`), text);
    const out: string[] = [];
    const io: Io = { out: (chunk) => void out.push(chunk), err: () => undefined };
    const ctx = new CommandContext('check', { json: true }, io, { json: true, verbose: false, lookupHint: undefined });
    const overrides: CheckOverrides = { env: { STACKER_BASE_URL: proxy.url, STACKER_DRY_RUN_WALLET: wallet, ...env }, ...(strategies === undefined ? {} : { strategies }) };
    const error = await check(ctx, { strategies: dir, dataDir: dir }, overrides).catch((e: unknown) => e);
    return { error, result: JSON.parse(out.join('')) as unknown };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A temporary strategies-and-data folder holding `dca.env` with `text`, for `work`; removed after. */
async function withDcaFile(text: string, work: (dir: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'stacker-check-dir-'));
  try {
    writeFileSync(join(dir, 'dca.env'), text);
    await work(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `stacker check --live --json` of a strategies folder against the sandbox's demo account, through LiveExchange over HTTP: its JSON. */
async function checkLive(strategies: string): Promise<{ ok: boolean; mode: string; startupProblems: unknown[]; preflight: Array<{ instance: string; ok: boolean; intents: Array<{ kind: string; verdict: string; summary?: string }> }> }> {
  const out: string[] = [];
  const io: Io = { out: (text) => void out.push(text), err: () => undefined };
  const state: RunState = { json: true, verbose: false, lookupHint: undefined };
  const ctx = new CommandContext('check', { json: true }, io, state);
  const env = { STACKER_MODE: 'live', STACKER_BASE_URL: proxy.url, STACKER_API_KEY: sandbox.apiKey, STACKER_API_SECRET: sandbox.apiSecret };
  const clients: ApiClient[] = [];
  try {
    await check(ctx, { strategies, live: true }, {
      env,
      createExchange: async (config) => {
        const credentials = config.settings.credentials;
        if (credentials === null) throw new Error('live config without credentials');
        const client = new ApiClient({ baseUrl: config.settings.endpoint, credentials });
        clients.push(client);
        return new LiveExchange(client);
      },
    }).catch((error: unknown) => {
      throw new Error(`check failed: ${error instanceof Error ? error.message : String(error)}\n${out.join('')}`);
    });
  } finally {
    await Promise.all(clients.map((client) => client.close()));
  }
  return JSON.parse(out.join('')) as Awaited<ReturnType<typeof checkLive>>;
}

describe('stacker check against the sandbox', () => {
  it('pre-flights the shipped examples against the demo account and places nothing', async () => {
    const result = await checkLive(STRATEGIES_DIR);
    expect(result.mode).toBe('live');
    expect(result.ok).toBe(true);
    expect(result.startupProblems).toEqual([]);
    expect(result.preflight.map((r) => r.instance)).toEqual(['balance-report', 'dca-btc', 'flex-sweep-usdt']);
    const dca = result.preflight.find((r) => r.instance === 'dca-btc');
    expect(dca?.intents.some((i) => i.kind === 'buy-stock-market' && i.verdict === 'would-send')).toBe(true);
    expect(proxy.requests.length).toBeGreaterThan(0);
    expect(proxy.requests.filter((request) => WRITES.some((path) => request.endsWith(path)))).toEqual([]);
  });

  it("reads the exchange's flex plans: a reserve whose withdrawal would leave less than the plan's minimum withdraws it all, which the exchange takes", async () => {
    // The demo account: 10000 USDT on main, 1500 in the plan whose minimum is 10; RESERVE 11495 needs 1495, which would leave 5.
    await withDcaFile('', async (dir) => {
      rmSync(join(dir, 'dca.env'));
      writeFileSync(join(dir, 'sweep.env'), `STRATEGY=flex-sweep\nSCHEDULE="30 8 * * *"\nPLAN=${DEMO_FLEX_PLAN_ID}\nMODE=reserve\nRESERVE=11495\n`);
      const result = await checkLive(dir);
      expect(result.ok).toBe(true);
      expect(result.preflight[0]?.intents.filter((i) => i.kind === 'flex-withdraw')).toEqual([expect.objectContaining({ verdict: 'would-send', summary: `withdraw 1500 from flex plan ${DEMO_FLEX_PLAN_ID}` })]);
    });
  });

  it('judges a strategy answer as a live slot does: one bad intent and nothing would be sent, the bad one named by its index', async () => {
    const goodAndBad = defineStrategy({
      name: 'good-and-bad',
      describe: 'A good buy and a bad one.',
      params: { MARKET: param.market({ description: 'Where to buy.', example: 'BTC_USDT' }) },
      reads: () => ['markets', 'prices', 'balances'],
      async decide(_view, params) {
        return [intent.buy(params.MARKET, new Decimal('0.0001')), intent.buy(params.MARKET, new Decimal('-1'))];
      },
    });
    const { error, result } = await checkInstance('mixed', 'STRATEGY=good-and-bad\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\n', 'USDT=1000', new Map([...STRATEGIES, [goodAndBad.name, goodAndBad as never]]));
    expect(error).toBeInstanceOf(ConfigError);
    expect((result as { preflight: unknown }).preflight).toEqual([{ instance: 'mixed', ok: false, intents: [], problems: ['intent #1 (buy-stock-market): amount must be greater than 0'] }]);
  });

  it('says a buy that would pass is held while the kill switch is on, as the slot would send nothing: not would-send, and not a fault of the file', async () => {
    const { error, result: json } = await checkInstance('held', 'STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nAMOUNT=0.001\n', 'USDT=100000', undefined, { STACKER_KILL_SWITCH: '1' });
    expect(error).toBeUndefined();
    const result = json as { ok: boolean; preflight: Array<{ ok: boolean; intents: Array<{ kind: string; verdict: string; reason?: string }> }> };
    expect(result.ok).toBe(true);
    expect(result.preflight[0]?.intents).toEqual([expect.objectContaining({ kind: 'buy-stock-market', verdict: 'held', reason: 'kill-switch: STACKER_KILL_SWITCH is set' })]);
  });

  it('judges a buy against the budget left, as the slot would: over a fresh daily budget it would be refused, and check says so', async () => {
    // 0.01 BTC at the sandbox's 65000 is 650 USDT, over a budget of 100 a day.
    const { error, result: json } = await checkInstance('big', 'STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nAMOUNT=0.01\nBUDGET_QUOTE_PER_DAY=100\n', 'USDT=100000');
    expect(error).toBeInstanceOf(ConfigError);
    const result = json as { ok: boolean; preflight: Array<{ intents: Array<{ kind: string; verdict: string; reason?: string }> }> };
    expect(result.ok).toBe(false);
    expect(result.preflight[0]?.intents).toContainEqual(expect.objectContaining({ kind: 'buy-stock-market', verdict: 'refused', reason: expect.stringMatching(/^budget-too-small: .*budget left for this slot, 100 USDT \(what the instance's own budget leaves\); that is above 100 USDT, the smallest limit configured \(the instance file's BUDGET_QUOTE_PER_DAY\), so no period lets it through: raise it or buy less$/) }));
  });

  it('fails with the exchange\'s own code when it refuses the key (E_AUTH, exit 3), not as a problem of the strategy file', async () => {
    await withDcaFile('STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nAMOUNT=0.0005\n', async (dir) => {
      const env = { STACKER_MODE: 'live', STACKER_BASE_URL: proxy.url, STACKER_API_KEY: sandbox.apiKey, STACKER_API_SECRET: 'not-the-secret-0123456789', STACKER_LOCK_DIR: join(dir, 'locks') };
      const checked = await runCli(['check', '--live', '--strategies', dir, '--data-dir', dir], env);
      expect(checked.code, checked.stderr).toBe(3);
      expect(checked.stderr).toContain('E_AUTH');
      expect(checked.stderr).not.toContain('dca.env');
      expect(checked.stderr).not.toContain('not-the-secret');
    });
  });

  it("passes the transfer funding a buy that waits for the budget: it waits with the buy, not a fault of the configuration", async () => {
    // The trade balance empty: each slot moves the buy's cost from main first.
    const spot = sandbox.exchange.tradeBalances().get('USDT')?.available ?? new Decimal(0);
    sandbox.exchange.transfer({ ticker: 'USDT', amount: spot, from: 'spot', to: 'main' });
    await withDcaFile('STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nAMOUNT=0.0005\nALLOW_TRANSFER=true\nBUDGET_QUOTE_PER_DAY=40\n', async (dir) => {
      const env = { STACKER_MODE: 'live', STACKER_BASE_URL: proxy.url, STACKER_API_KEY: sandbox.apiKey, STACKER_API_SECRET: sandbox.apiSecret, STACKER_LOCK_DIR: join(dir, 'locks'), STACKER_LOG_LEVEL: 'silent' };
      expect((await runCli(['run', '--live', '--once', '--strategies', dir, '--data-dir', dir], env)).code).toBe(0);
      const checked = await runCli(['check', '--live', '--strategies', dir, '--data-dir', dir], env);
      expect(checked.code, checked.stdout).toBe(0);
      expect(checked.stdout).toMatch(/ {2}waits {7}transfer .*\(group-refused: .*; it waits with the buy it funds, for the period to reset\)/);
      expect(checked.stdout).toMatch(/ {2}waits {7}buy-stock-market /);
    });
  });

  it("passes a buy that only waits for this period's budget to reset, and says so; one above the smallest limit still fails", async () => {
    // 0.0005 BTC at the sandbox's 65000 is 32.5 USDT: the day's 40 takes one, the second waits for tomorrow.
    await withDcaFile('STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nAMOUNT=0.0005\nBUDGET_QUOTE_PER_DAY=40\nBUDGET_QUOTE_PER_WEEK=1000\n', async (dir) => {
      const env = { STACKER_BASE_URL: proxy.url, STACKER_DRY_RUN_WALLET: 'USDT=1000', STACKER_LOG_LEVEL: 'silent' };
      expect((await runCli(['run', '--once', '--strategies', dir, '--data-dir', dir], env)).code).toBe(0);
      const checked = await runCli(['check', '--strategies', dir, '--data-dir', dir], env);
      expect(checked.code, checked.stderr).toBe(0);
      expect(checked.stdout).toContain("dca: ok (this period's budget is used up: the buy waits for it to reset)\n  budget left now: 7.5 USDT (what the instance's own budget leaves)\n");
      expect(checked.stdout).toMatch(/ {2}waits {7}buy-stock-market {2}buy 0\.0005 BTC_USDT at market \(stp no\) \(over-budget: .*budget left for this slot, 7\.5 USDT .*; it fits the smallest limit, 40 USDT, so it waits for the period to reset\)/);

      // The same buy against a day's budget it can never fit: a fault of the configuration.
      writeFileSync(join(dir, 'dca.env'), 'STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nAMOUNT=0.0005\nBUDGET_QUOTE_PER_DAY=30\n');
      const never = await runCli(['check', '--strategies', dir, '--data-dir', dir], env);
      expect(never.code).toBe(2);
      expect(never.stdout).toContain('dca: PROBLEMS\n');
    });
  });

  it('pre-flights a dry-run against the paper account as the last run left it, not as the wallet setting would seed a new one', async () => {
    // 0.0005 BTC at the sandbox's 65000 is 32.5 USDT (+ fee): a 40 USDT wallet buys it once.
    await withDcaFile('STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nAMOUNT=0.0005\n', async (dir) => {
      const env = { STACKER_BASE_URL: proxy.url, STACKER_DRY_RUN_WALLET: 'USDT=40', STACKER_LOG_LEVEL: 'silent' };
      const once = await runCli(['run', '--once', '--strategies', dir, '--data-dir', dir], env);
      expect(once.code).toBe(0);
      const out: string[] = [];
      const ctx = new CommandContext('check', { json: true }, { out: (chunk) => void out.push(chunk), err: () => undefined }, { json: true, verbose: false, lookupHint: undefined });
      const error = await check(ctx, { strategies: dir, dataDir: dir }, { env }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConfigError);
      const result = JSON.parse(out.join('')) as { preflight: Array<{ intents: Array<{ kind: string; verdict: string; reason?: string }> }> };
      expect(result.preflight[0]?.intents).toContainEqual(expect.objectContaining({ kind: 'buy-stock-market', verdict: 'refused', reason: expect.stringMatching(/^insufficient-funds: .*the trade balance has 7\.4675 USDT/) }));
    });
  });

  it('does not pre-flight an instance run would refuse to start: a dip on a market the exchange does not list is exit 2 naming MARKET, not the kline read\'s error (exit 3)', async () => {
    await withDcaFile('STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDX\nAMOUNT=0.001\nDIP_PCT=10\n', async (dir) => {
      writeFileSync(join(dir, 'tiny.env'), 'STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nAMOUNT=0.000001\n');
      const env = { STACKER_BASE_URL: proxy.url, STACKER_DRY_RUN_WALLET: 'USDT=1000', STACKER_LOG_LEVEL: 'silent' };
      const checked = await runCli(['check', '--strategies', dir, '--data-dir', dir], env);
      expect(checked.code, checked.stderr).toBe(2);
      expect(checked.stdout).toContain(`${join(dir, 'dca.env')}: MARKET: the exchange does not list BTC_USDX; did you mean BTC_USDT?`);
      // The other file's problem is not hidden behind it.
      expect(checked.stdout).toContain(`${join(dir, 'tiny.env')}: AMOUNT: `);
      expect(checked.stdout).toContain('dca: PROBLEMS (the start-up checks above)\n  not pre-flighted: stacker run would not start with it\n');
      expect(checked.stderr).not.toContain('kline');
    });
  });

  it('pre-flights on the state the strategy saved, as its next slot reads it, not on none', async () => {
    // value-avg counts its slots in its state: after one slot (40 USDT bought at 65000: 0.000615
    // BTC, 39.975 USDT), the next one's target is 80 and it buys the gap. Judged on no state, the
    // check saw slot 1 again, 0.025 USDT short of its target, and a buy too small to send.
    const text = 'STRATEGY=value-avg\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nTARGET_STEP_QUOTE=40\n';
    await withDcaFile(text, async (dir) => {
      const env = { STACKER_BASE_URL: proxy.url, STACKER_DRY_RUN_WALLET: 'USDT=1000', STACKER_LOG_LEVEL: 'silent' };
      expect((await runCli(['run', '--once', '--strategies', dir, '--data-dir', dir], env)).code).toBe(0);
      const checked = await runCli(['check', '--json', '--strategies', dir, '--data-dir', dir], env);
      expect(checked.code, checked.stderr).toBe(0);
      const result = JSON.parse(checked.stdout) as { preflight: Array<{ intents: Array<{ kind: string; verdict: string; summary: string }> }> };
      expect(result.preflight[0]?.intents).toEqual([{ kind: 'buy-stock-market', verdict: 'would-send', summary: 'buy 0.000615 BTC_USDT at market (stp no)' }]);
    });
  });

  it("says the daemon's last run stopped on a failure, beside a pre-flight that passes: a crash-looping daemon was checked ok", async () => {
    await withDcaFile('STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nAMOUNT=0.0005\n', async (dir) => {
      const store = await openStore({ dataDir: dir, mode: 'dry-run', userLockDir: join(dir, 'locks') });
      const run = await store.journal.startRun({ mode: 'dry-run', pid: 1, version: 'test' });
      await store.journal.finishRun(run.runId, 'trading stopped: E_STORE');
      await store.close();
      const env = { STACKER_BASE_URL: proxy.url, STACKER_DRY_RUN_WALLET: 'USDT=1000', STACKER_LOG_LEVEL: 'silent' };
      const checked = await runCli(['check', '--strategies', dir, '--data-dir', dir], env);
      expect(checked.code, checked.stderr).toBe(0);
      expect(checked.stdout).toMatch(/last run: +STOPPED at \d{4}-\d\d-\d\dT[\d:.]+Z: trading stopped: E_STORE; a start may stop the same way until its cause is gone/);
      const json = JSON.parse((await runCli(['check', '--json', '--strategies', dir, '--data-dir', dir], env)).stdout) as { operator: { lastRunStopped: { reason: string } | null } };
      expect(json.operator.lastRunStopped?.reason).toBe('trading stopped: E_STORE');
    });
  });

  it('pre-flights in dry-run through the real exchange factory: public market data, the paper wallet, no key sent', async () => {
    const out: string[] = [];
    const io: Io = { out: (text) => void out.push(text), err: () => undefined };
    const ctx = new CommandContext('check', { json: true }, io, { json: true, verbose: false, lookupHint: undefined });
    const before = proxy.requests.length;
    const env = { STACKER_BASE_URL: proxy.url, STACKER_DRY_RUN_WALLET: 'USDT=1000,BTC=0', STACKER_API_KEY: sandbox.apiKey, STACKER_API_SECRET: sandbox.apiSecret, STACKER_LOG_LEVEL: 'silent' };
    await check(ctx, { strategies: STRATEGIES_DIR }, { env }).catch((error: unknown) => {
      throw new Error(`check failed: ${error instanceof Error ? error.message : String(error)}\n${out.join('')}`);
    });
    const result = JSON.parse(out.join('')) as { ok: boolean; mode: string; preflight: Array<{ instance: string; intents: Array<{ kind: string; verdict: string }> }> };
    expect(result.mode).toBe('dry-run');
    expect(result.ok).toBe(true);
    const dca = result.preflight.find((r) => r.instance === 'dca-btc');
    expect(dca?.intents.some((i) => i.kind === 'buy-stock-market' && i.verdict === 'would-send')).toBe(true);
    // The paper wallet has no flex investment: the sweep declines, which does not fail the check.
    expect(result.preflight.find((r) => r.instance === 'flex-sweep-usdt')?.intents).toEqual([
      { kind: 'refusal', summary: 'no active flex investment in USDT plans', verdict: 'refused', reason: 'no-active-investment' },
    ]);
    const requests = proxy.requests.slice(before);
    expect(requests.length).toBeGreaterThan(0);
    // Market data is public (GET); a dry-run holds no key, so it sends no signed (POST) request at all.
    expect(requests.filter((request) => !request.startsWith('GET '))).toEqual([]);
  });
});
