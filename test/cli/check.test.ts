import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type CheckOverrides, check, zonedTime } from '../../src/cli/commands/check.ts';
import { CommandContext, type GlobalFlags, type RunState } from '../../src/cli/context.ts';
import type { Io } from '../../src/cli/output.ts';
import { buildProgram } from '../../src/cli/program.ts';
import { Decimal } from '../../src/domain/money.ts';
import type { MarketRules } from '../../src/domain/market.ts';
import type { DaemonConfig } from '../../src/config/daemon-config.ts';
import { AuthError, ConfigError, EXIT, exitCodeFor } from '../../src/domain/errors.ts';
import { reportError } from '../../src/cli/report-error.ts';
import type { PreflightResult } from '../../src/engine/preflight.ts';
import type { Exchange } from '../../src/exchange/port.ts';
import { ConfigWorld, DCA, REPORT } from '../config/helpers.ts';
import { startSandbox } from '../../src/sandbox/server.ts';
import { createDatabase, dropDatabase, pgCluster } from '../support/pg-databases.ts';

/**
 * `stacker check`: the configuration part runs for real (files in a temp folder); the exchange
 * and the pre-flight are replaced by fakes that record what they were asked, so the tests prove
 * that an invalid configuration reaches neither.
 */

const NOW = Date.UTC(2025, 0, 1, 7, 30); // 2025-01-01 07:30Z, a Wednesday

let world: ConfigWorld;
let captured: { out: string[]; err: string[] };
let calls: string[];

beforeEach(() => {
  world = new ConfigWorld();
  calls = [];
});
afterEach(() => world.cleanup());

function context(json: boolean): CommandContext {
  captured = { out: [], err: [] };
  const io: Io = { out: (text) => void captured.out.push(text), err: (text) => void captured.err.push(text) };
  const state: RunState = { json, verbose: false, lookupHint: undefined };
  return new CommandContext('check', { json } satisfies GlobalFlags, io, state);
}

const stdout = (): string => captured.out.join('');

const BTC_USDT: MarketRules = {
  name: 'BTC_USDT',
  base: 'BTC',
  quote: 'USDT',
  basePrecision: 6,
  quotePrecision: 2,
  feePrecision: 8,
  makerFeePct: new Decimal('0.1'),
  takerFeePct: new Decimal('0.1'),
  minBaseAmount: new Decimal('0.0001'),
  minQuoteTotal: new Decimal('5'),
  maxQuoteTotal: null,
  tradesEnabled: true,
  type: 'spot',
};

function fakes(reports: (config: DaemonConfig) => PreflightResult[], env: Record<string, string> = {}): CheckOverrides {
  const exchange = { kind: 'dry-run', markets: async () => [BTC_USDT], close: async () => void calls.push('close') } as unknown as Exchange;
  return {
    env,
    nowMs: () => NOW,
    createExchange: async (config) => {
      calls.push(`createExchange ${config.mode}`);
      return exchange;
    },
    preflight: async (config, given, nowMs) => {
      calls.push(`preflight ${config.instances.length} ${given === exchange} ${nowMs}`);
      return reports(config);
    },
  };
}

const allOk = (config: DaemonConfig): PreflightResult[] =>
  config.instances.map((instance) => ({
    instance: instance.instance,
    ok: true,
    intents: instance.strategy.name === 'dca' ? [{ kind: 'buy-stock-market', summary: 'buy 0.0005 BTC_USDT (≈ 32.5 USDT)', verdict: 'would-send' }] : [],
    problems: [],
  }));

describe('stacker check', () => {
  it('refuses an invalid configuration with every problem (exit 2) before any exchange is built', async () => {
    world.instance('dca-btc', 'STRATEGY=dca\nSCHEDULE="0 9 * *"\nAMOUNT=-1');
    world.instance('report', 'STRATEGY=balance-reprot\nSCHEDULE="0 */6 * * *"');
    const error = await check(context(false), { strategies: world.strategiesDir }, fakes(allOk)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect(exitCodeFor(error)).toBe(EXIT.badInput);
    expect((error as ConfigError).problems.map((p) => p.field)).toEqual(['SCHEDULE', 'MARKET', 'AMOUNT', 'STRATEGY']);
    expect(calls).toEqual([]);
    expect(stdout()).toBe('');
  });

  it('prints the configuration, each instance with its schedule, next slot, catch-up and budgets, then the pre-flight', async () => {
    world.instance('dca-btc', `${DCA}\nTIMEZONE=Europe/Berlin\nBUDGET_QUOTE_PER_WEEK=250\nMAX_ORDER_QUOTE=50\nCATCH_UP=last\nCATCH_UP_WINDOW=2h`);
    world.instance('report', `${REPORT}\nENABLED=false`);
    await check(context(false), { strategies: world.strategiesDir, dataDir: world.dir }, fakes(allOk, { STACKER_DRY_RUN_WALLET: 'USDT=1000,BTC=0' }));
    const text = stdout();
    expect(text).toContain('mode:            dry-run\n');
    expect(text).toContain(`data dir:        ${world.dir}\n`);
    expect(text).toContain(`journal:         ${join(world.dir, 'stacker-dry-run.db')}\n`);
    expect(text).toContain(`strategies:      ${world.strategiesDir} (2 instances)\n`);
    expect(text).toContain('kill switch:     off\n');
    expect(text).toContain('metrics:         off\n');
    expect(text).toContain('paper wallet:    USDT=1000, BTC=0\n');
    expect(text).toContain(`dca-btc (${join(world.strategiesDir, 'dca-btc.env')})\n  strategy:   dca\n  account:    default\n  enabled:    yes\n  schedule:   0 9 * * * (Europe/Berlin)\n`);
    expect(text).toMatch(/ {2}next slot: {2}2025-01-01 09:00 Europe\/Berlin \(UTC\+01:00\)\n/);
    expect(text).toContain('  catch-up:   last, within 2h\n  budgets:    250 per week; max 50 per order\n');
    expect(text).toContain('  enabled:    no (ENABLED=false: checked, never scheduled)\n');
    expect(text).toContain('pre-flight against the paper account (as the last run left it, else as the wallet seeds it) (nothing was placed):\ndca-btc: ok\n  would-send  buy-stock-market  buy 0.0005 BTC_USDT (≈ 32.5 USDT)\nreport: ok\n  nothing that moves money now (notes only, or nothing to do)\n');
    expect(calls).toEqual(['createExchange dry-run', `preflight 2 true ${NOW}`, 'close']);
  });

  it('with several accounts: shows each account (endpoint, paper wallet or whether its key is set, cap, instances) and judges each instance on its own account', async () => {
    world.instance('a-dca', `${DCA}\nACCOUNT=main`);
    world.instance('b-dca', `${DCA}\nACCOUNT=side`);
    const secret = 'check-side-secret-0123456789abcdef';
    const accountsSeen: string[] = [];
    const overrides = fakes(allOk, { STACKER_DRY_RUN_WALLET: 'USDT=1000', STACKER_ACCOUNT_side_DRY_RUN_WALLET: 'USDT=7', STACKER_ACCOUNT_main_BUDGET_QUOTE_PER_DAY: '100', STACKER_ACCOUNT_side_API_KEY: 'k-side', STACKER_ACCOUNT_side_API_SECRET: secret });
    const make = overrides.createExchange;
    await check(context(false), { strategies: world.strategiesDir, dataDir: world.dir }, {
      ...overrides,
      createExchange: async (config, logger, options) => {
        accountsSeen.push(options.account);
        return (make as NonNullable<typeof make>)(config, logger, options);
      },
    });
    const text = stdout();
    expect(text).toContain('account main\n  endpoint:      global\n  paper wallet:  USDT=1000\n  cap:           100 USDT per day (UTC)\n  instances:     a-dca\n');
    expect(text).toContain('account side\n  endpoint:      global\n  paper wallet:  USDT=7\n  cap:           none\n  instances:     b-dca\n');
    expect(text).toContain('  account:    side\n');
    expect(text).not.toContain(secret);
    expect(accountsSeen).toEqual(['main', 'side']);
    expect(calls).toEqual(['createExchange dry-run', `preflight 1 true ${NOW}`, 'close', 'createExchange dry-run', `preflight 1 true ${NOW}`, 'close']);
  });

  it("shows the default account's cap, the one account of a configuration of one key: a cap edited is verified here too", async () => {
    world.instance('dca-btc', `${DCA}\nBUDGET_QUOTE_PER_DAY=25`);
    await check(context(false), { strategies: world.strategiesDir, dataDir: world.dir }, fakes(allOk, { STACKER_DRY_RUN_WALLET: 'USDT=1000', STACKER_ACCOUNT_default_BUDGET_QUOTE_PER_DAY: '35' }));
    expect(stdout()).toContain('account default\n  endpoint:      global\n  paper wallet:  USDT=1000\n  cap:           35 USDT per day (UTC)\n  instances:     dca-btc\n');
    // Without a cap, one key reads as before: no account block.
    await check(context(false), { strategies: world.strategiesDir, dataDir: world.dir }, fakes(allOk, { STACKER_DRY_RUN_WALLET: 'USDT=1000' }));
    expect(stdout()).not.toContain('account default');
  });

  it("with several accounts: judges the others when one account's exchange refuses its key, and the error names that account (text and JSON)", async () => {
    world.instance('a-dca', `${DCA}\nACCOUNT=main`);
    world.instance('b-dca', `${DCA}\nACCOUNT=side`);
    const overrides = fakes(allOk, { STACKER_DRY_RUN_WALLET: 'USDT=1000', STACKER_ACCOUNT_side_DRY_RUN_WALLET: 'USDT=7' });
    const make = overrides.createExchange as NonNullable<typeof overrides.createExchange>;
    const refusing: CheckOverrides = {
      ...overrides,
      createExchange: async (config, logger, options) => {
        const exchange = await make(config, logger, options);
        if (options.account !== 'main') return exchange;
        const refused = new AuthError({ httpStatus: 401, path: '/api/v4/main-account/balance', exchangeCode: 2, exchangeMessage: 'This action is unauthorized. Enable your key in API settings' });
        return { ...exchange, markets: async () => Promise.reject(refused) } as Exchange;
      },
    };
    const error = await check(context(false), { strategies: world.strategiesDir, dataDir: world.dir }, refusing).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthError);
    // The other account was judged and shown; the one refused is named.
    expect(stdout()).toContain('b-dca: ok\n');
    expect(stdout()).toContain('account main (a-dca): NOT CHECKED: its exchange could not be read (the error below)\n');
    const io = { out: [] as string[], err: [] as string[] };
    const code = reportError(error, { out: (text) => void io.out.push(text), err: (text) => void io.err.push(text) }, { json: false, verbose: false, lookupHint: undefined });
    expect(code).toBe(EXIT.refused);
    expect(io.err.join('')).toMatch(/^error: account main: E_AUTH \(AuthError\): the exchange answered HTTP 401 on \/api\/v4\/main-account\/balance\n/);
    const asJson: string[] = [];
    reportError(error, { out: (text) => void asJson.push(text), err: (text) => void asJson.push(text) }, { json: true, verbose: false, lookupHint: undefined });
    expect(JSON.parse(asJson.join(''))).toMatchObject({ error: { code: 'E_AUTH', account: 'main' } });
    // The JSON document on stdout says it too: not ok, and which account was not checked.
    await check(context(true), { strategies: world.strategiesDir, dataDir: world.dir }, refusing).catch(() => undefined);
    const document = JSON.parse(stdout()) as { ok: boolean; notChecked: Array<{ account: string; error: string }>; preflight: Array<{ instance: string }> };
    expect(document.ok).toBe(false);
    expect(document.notChecked).toEqual([{ account: 'main', error: expect.stringMatching(/^account main: /) }]);
    expect(document.preflight.map((report) => report.instance)).toEqual(['b-dca']);
  });

  it("reads the clock of each exchange the accounts trade on, never the default one no instance uses", async () => {
    const ahead = await startSandbox({ clock: { nowMs: () => Date.now() + 120_000 } });
    const behind = await startSandbox({ clock: { nowMs: () => Date.now() - 30_000 } });
    try {
      world.instance('a-dca', `${DCA}\nACCOUNT=main`);
      world.instance('b-dca', `${DCA}\nACCOUNT=side`);
      world.instance('c-dca', `${DCA}\nACCOUNT=kids`);
      const env = { STACKER_DRY_RUN_WALLET: 'USDT=1000', STACKER_ACCOUNT_main_BASE_URL: ahead.url, STACKER_ACCOUNT_side_BASE_URL: behind.url, STACKER_ACCOUNT_kids_BASE_URL: ahead.url };
      await check(context(false), { strategies: world.strategiesDir, dataDir: world.dir }, fakes(allOk, env));
      expect(stdout()).toMatch(/^exchange: +global, the default \(no instance trades on it: each names an account, below\)$/m);
      const lines = stdout().split('\n').filter((line) => line.startsWith('clock:'));
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(new RegExp(`^clock: this machine is 1(19\\.[5-9]|20\\.[0-5]) s behind the exchange at ${ahead.url} \\(accounts kids, main\\)`));
      expect(lines[1]).toMatch(new RegExp(`^clock: this machine is (29\\.[5-9]|30\\.[0-5]) s ahead of the exchange at ${behind.url} \\(account side\\)`));
      await check(context(true), { strategies: world.strategiesDir, dataDir: world.dir }, fakes(allOk, env));
      const report = JSON.parse(stdout().slice(stdout().lastIndexOf('\n{') + 1)) as { clocks: Array<{ endpoint: string; accounts: string[] }> };
      expect(report.clocks.map((c) => [c.endpoint, c.accounts])).toEqual([[ahead.url, ['kids', 'main']], [behind.url, ['side']]]);
    } finally {
      await ahead.stop();
      await behind.stop();
    }
  });

  it('names the notification channels and their events, never a secret, a token or a URL path', async () => {
    world.instance('dca-btc', DCA);
    const token = '123456789:AAHsecretPartOfTheTokenabcdefghij';
    const env = {
      STACKER_NOTIFY_WEBHOOK_URL: 'https://hooks.example.com/in/T0KEN',
      STACKER_NOTIFY_WEBHOOK_SECRET: 'whsec-canary',
      STACKER_TELEGRAM_BOT_TOKEN: token,
      STACKER_TELEGRAM_CHAT_ID: '42',
      STACKER_NOTIFY_EVENTS: 'order-filled,trading-stopped',
    };
    await check(context(false), { strategies: world.strategiesDir }, fakes(allOk, env));
    const text = stdout();
    expect(text).toContain('notifications:   webhook to https://hooks.example.com (signed), telegram chat 42; events: order-filled, trading-stopped\n');
    for (const secret of ['T0KEN', 'whsec-canary', 'AAHsecretPart']) expect(text).not.toContain(secret);
  });

  it('names a journal in PostgreSQL by its URL without the password, and its schema; one it cannot reach fails the check, as run would not start', async () => {
    world.instance('dca-btc', DCA);
    const error = await check(context(false), { strategies: world.strategiesDir }, fakes(allOk, { STACKER_DATABASE_URL: 'postgres://stacker:hunter2-secret@db.internal/stacker' })).catch((e: unknown) => e);
    expect(stdout()).toContain('journal:         postgres://stacker:***@db.internal/stacker (schema stacker_dry_run): cannot be read, `stacker run` will not start: ');
    expect(error).toMatchObject({ code: 'E_STORE' });
    expect(exitCodeFor(error)).toBe(EXIT.transient);
    expect(stdout()).not.toContain('hunter2-secret');
    expect(String((error as Error).message)).not.toContain('hunter2-secret');
  });

  it('prints one JSON document with the config, the instances and the pre-flight, decimals as strings', async () => {
    world.instance('dca-btc', `${DCA}\nBUDGET_QUOTE_PER_DAY=40.5`);
    await check(context(true), { strategies: world.strategiesDir }, fakes(allOk, { STACKER_METRICS_PORT: '9464', STACKER_KILL_SWITCH: '1' }));
    const result = JSON.parse(stdout()) as Record<string, unknown>;
    expect(result).toMatchObject({
      ok: true,
      mode: 'dry-run',
      modeNote: null,
      metrics: 'http://127.0.0.1:9464/metrics',
      killSwitch: { env: true, file: null, active: true },
      dryRun: { wallet: {}, slippagePct: '0' },
      startupProblems: [],
      instances: [{ instance: 'dca-btc', strategy: 'dca', schedule: '0 9 * * *', timezone: 'UTC', nextSlot: '2025-01-01 09:00 UTC', nextSlotMs: Date.UTC(2025, 0, 1, 9), catchUp: 'skip', budgets: { day: '40.5', week: null, month: null }, maxOrderQuote: null }],
      preflight: [{ instance: 'dca-btc', ok: true }],
    });
  });

  it('warns of a status page that would listen off loopback: plain HTTP, whether the controls are on (their token then crosses the network in clear), the allowed hosts', async () => {
    world.instance('dca-btc', DCA);
    const open = { STACKER_METRICS_PORT: '9464', STACKER_METRICS_HOST: '0.0.0.0', STACKER_CONTROL_TOKEN: 'a-control-token-0123456789' };
    await check(context(false), { strategies: world.strategiesDir }, fakes(allOk, open));
    expect(stdout()).toContain(
      'metrics:         http://0.0.0.0:9464/metrics\n' +
        '  warning: the status page listens on 0.0.0.0:9464, off loopback, and speaks plain HTTP: whoever reaches the port reads /api/status (instances, orders, P&L), ' +
        'and the controls are on: their bearer token (STACKER_CONTROL_TOKEN) crosses the network in clear; allowed hosts: * (any Host is answered: no guard against DNS rebinding) (STACKER_METRICS_ALLOWED_HOSTS). ' +
        "Keep STACKER_METRICS_HOST=127.0.0.1 and reach it over SSH, or put a TLS proxy in front; in a container, publish the port on the host's loopback only (-p 127.0.0.1:9464:9464)\n",
    );
    await check(context(true), { strategies: world.strategiesDir }, fakes(allOk, { ...open, STACKER_CONTROL_TOKEN: '', STACKER_METRICS_ALLOWED_HOSTS: 'localhost,stacker' }));
    expect((JSON.parse(stdout()) as { metricsWarning: string }).metricsWarning).toMatch(/listens on 0\.0\.0\.0:9464, .*; the controls are off; allowed hosts: localhost, stacker \(STACKER_METRICS_ALLOWED_HOSTS\)\./);
    await check(context(true), { strategies: world.strategiesDir }, fakes(allOk, { STACKER_METRICS_PORT: '9464' }));
    expect(JSON.parse(stdout())).toMatchObject({ metrics: 'http://127.0.0.1:9464/metrics', metricsWarning: null });
  });

  it('fails with exit 2 when a pre-flight does not pass, naming the file, the instance and each refusal, after printing the report', async () => {
    const file = world.instance('dca-btc', DCA);
    const refused = (): PreflightResult[] => [
      {
        instance: 'dca-btc',
        ok: false,
        intents: [{ kind: 'buy-stock-market', summary: 'buy 0.0005 BTC_USDT', verdict: 'refused', reason: 'insufficient-funds: 0 USDT on the trade balance' }],
        problems: ['MARKET: the exchange does not list BTC_USDT'],
      },
    ];
    const error = await check(context(false), { strategies: world.strategiesDir }, fakes(refused)).catch((e: unknown) => e);
    expect(exitCodeFor(error)).toBe(EXIT.badInput);
    expect((error as ConfigError).message).toBe(
      [
        `${file}: dca-btc: pre-flight: MARKET: the exchange does not list BTC_USDT`,
        `${file}: dca-btc: pre-flight: buy 0.0005 BTC_USDT would be refused: insufficient-funds: 0 USDT on the trade balance`,
      ].join('\n'),
    );
    expect(stdout()).toContain('dca-btc: PROBLEMS\n  refused     buy-stock-market  buy 0.0005 BTC_USDT (insufficient-funds: 0 USDT on the trade balance)\n  problem: MARKET: the exchange does not list BTC_USDT\n');
    expect(calls.at(-1)).toBe('close');
  });

  it("shows a refusal the strategy returns itself without failing the check: it is a decision about now, not a fault", async () => {
    world.instance('sweep', 'STRATEGY=flex-sweep\nSCHEDULE="0 9 * * *"\nTICKER=USDT\nMODE=all');
    const declines = (): PreflightResult[] => [
      { instance: 'sweep', ok: false, intents: [{ kind: 'refusal', summary: 'no active flex investment in USDT plans', verdict: 'refused', reason: 'no-active-investment' }], problems: [] },
    ];
    await check(context(false), { strategies: world.strategiesDir }, fakes(declines));
    expect(stdout()).toContain('sweep: ok (the strategy declines to act now)\n  declines    refusal  no active flex investment in USDT plans (no-active-investment)\n');
    await check(context(true), { strategies: world.strategiesDir }, fakes(declines));
    expect((JSON.parse(stdout()) as { ok: boolean }).ok).toBe(true);
  });

  it('makes the start-up checks stacker run makes once it has the markets (unknown market, amount below the minimum)', async () => {
    const eth = world.instance('dca-eth', 'STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USTD\nAMOUNT=1');
    const tiny = world.instance('dca-tiny', 'STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nAMOUNT=0.00001');
    const error = await check(context(false), { strategies: world.strategiesDir }, fakes(allOk)).catch((e: unknown) => e);
    expect(exitCodeFor(error)).toBe(EXIT.badInput);
    expect((error as ConfigError).problems.map((p) => `${p.source}: ${p.field}`)).toEqual([`${eth}: MARKET`, `${tiny}: AMOUNT`]);
    expect((error as ConfigError).problems[0]?.rule).toBe('the exchange does not list BTC_USTD; did you mean BTC_USDT?');
    expect(stdout()).toContain(`start-up checks against the exchange (stacker run would refuse to start):\n  ${eth}: MARKET: the exchange does not list BTC_USTD; did you mean BTC_USDT?\n`);
    // Not "ok" beside it, whatever its strategy answered.
    expect(stdout()).toMatch(/^dca-eth: PROBLEMS \(the start-up checks above\)$/m);
    expect(stdout()).toMatch(/^dca-tiny: PROBLEMS \(the start-up checks above\)$/m);
    expect(calls.at(-1)).toBe('close');
  });

  it('closes the exchange when the pre-flight throws', async () => {
    world.instance('dca-btc', DCA);
    const overrides: CheckOverrides = {
      ...fakes(allOk),
      preflight: async () => {
        throw new Error('network down');
      },
    };
    await expect(check(context(false), { strategies: world.strategiesDir }, overrides)).rejects.toThrow('network down');
    expect(calls).toEqual(['createExchange dry-run', 'close']);
  });

  it('shows why the mode is dry-run when only one live switch is given', async () => {
    world.instance('dca-btc', DCA);
    await check(context(false), { strategies: world.strategiesDir, live: true }, { ...fakes(allOk), configOnly: true });
    expect(stdout()).toContain('mode:            dry-run (--live was given but STACKER_MODE is not set: running in dry-run; live trading needs STACKER_MODE=live as well)\n');
    expect(calls).toEqual([]);
  });

  it('checks live mode against the account, with the credentials present', async () => {
    world.instance('dca-btc', DCA);
    const env = { STACKER_MODE: 'live', STACKER_API_KEY: 'k', STACKER_API_SECRET: 's3cr3t-value' };
    await check(context(false), { strategies: world.strategiesDir, live: true }, fakes(allOk, env));
    expect(stdout()).toMatch(/^exchange: +global, the default; credentials set$/m);
    expect(stdout()).toContain('pre-flight against the account (nothing was placed):\n');
    expect(stdout()).not.toContain('s3cr3t-value');
    expect(calls[0]).toBe('createExchange live');
  });

  it("shows what the status API switched, read from the journal: the kill switch, an account's own, a paused instance", async () => {
    world.instance('a-dca', `${DCA}\nACCOUNT=main`);
    world.instance('b-dca', `${DCA}\nACCOUNT=kids`);
    const { SqliteJournal } = await import('../../src/store/sqlite-journal.ts');
    const { journalPath } = await import('../../src/store/open-store.ts');
    const at = Date.UTC(2025, 0, 1, 6);
    const journal = new SqliteJournal({ path: journalPath(world.dir, 'dry-run'), clock: () => at });
    await journal.open();
    await journal.setOperatorControl({ control: 'kill-switch', account: 'kids', on: true });
    await journal.setOperatorControl({ control: 'pause', instance: 'a-dca', on: true });
    await journal.close();
    const env = { STACKER_DRY_RUN_WALLET: 'USDT=1000' };
    await check(context(false), { strategies: world.strategiesDir, dataDir: world.dir }, { ...fakes(allOk, env), configOnly: true });
    expect(stdout()).toContain("kill switch:     off; account kids's own is ON (turned on from the status API at 2025-01-01T06:00:00.000Z)\n");
    expect(stdout()).toContain('  paused:     since 2025-01-01T06:00:00.000Z (from the status API; its slots are skipped until resumed)\n');

    const again = new SqliteJournal({ path: journalPath(world.dir, 'dry-run'), clock: () => at });
    await again.open();
    await again.setOperatorControl({ control: 'kill-switch', on: true });
    await again.close();
    await check(context(true), { strategies: world.strategiesDir, dataDir: world.dir }, { ...fakes(allOk, env), configOnly: true });
    expect(JSON.parse(stdout()).operator).toEqual({ killSwitchSince: '2025-01-01T06:00:00.000Z', accountKillSwitches: { kids: '2025-01-01T06:00:00.000Z' }, paused: { 'a-dca': '2025-01-01T06:00:00.000Z' }, lastRunStopped: null });
    await check(context(false), { strategies: world.strategiesDir, dataDir: world.dir }, { ...fakes(allOk, env), configOnly: true });
    expect(stdout()).toContain('kill switch:     ON: nothing that moves money would be sent (turned on from the status API at 2025-01-01T06:00:00.000Z); account kids');
  });

  it('on a journal an older build left: says run migrates it at its start (or journal upgrade now), shows its switches and pauses from a migrated copy, passes, and changes nothing', async () => {
    world.instance('dca-btc', DCA);
    const { journalPath } = await import('../../src/store/open-store.ts');
    const { SCHEMA_VERSION } = await import('../../src/store/migrations.ts');
    const { olderJournal, schemaOf } = await import('../support/older-journal.ts');
    const path = journalPath(world.dir, 'dry-run');
    olderJournal(path, 4);
    await check(context(false), { strategies: world.strategiesDir, dataDir: world.dir }, fakes(allOk, { STACKER_DRY_RUN_WALLET: 'USDT=1000' }));
    expect(stdout()).toContain(
      `journal:         ${path}: schema 4, older than this stacker's ${SCHEMA_VERSION} (an older stacker wrote it): \`stacker run\` migrates it at its start, keeping a copy of the file as it was (${path}.schema-4.bak), one-way; ` +
        '`stacker journal upgrade` migrates it now without trading; what follows is read from a migrated copy of it, as the start will find it\n',
    );
    expect(stdout()).not.toContain('will not start');
    expect(stdout()).toContain('kill switch:     ON: nothing that moves money would be sent (turned on from the status API at 1970-01-01T00:00:00.005Z)');
    expect(stdout()).toContain('  paused:     since 1970-01-01T00:00:00.006Z (from the status API; its slots are skipped until resumed)\n');
    expect(schemaOf(path)).toBe(4);
    expect(existsSync(`${path}.schema-4.bak`)).toBe(false);
    await check(context(true), { strategies: world.strategiesDir, dataDir: world.dir }, { ...fakes(allOk, { STACKER_DRY_RUN_WALLET: 'USDT=1000' }), configOnly: true });
    expect(JSON.parse(stdout())).toMatchObject({ ok: true, journalSchema: { version: 4, current: SCHEMA_VERSION, read: 'from-a-migrated-copy' }, operator: { killSwitchSince: '1970-01-01T00:00:00.005Z' } });
  });

  it.skipIf(pgCluster() === null)('on a PostgreSQL journal of an older schema: says run migrates it, and plainly that its switches and pauses cannot be read before', async () => {
    world.instance('dca-btc', DCA);
    const cluster = pgCluster();
    if (cluster === null) return;
    const url = await createDatabase(cluster);
    try {
      const { openPool } = await import('../../src/store/pg-db.ts');
      const { PG_MIGRATIONS, migratePg } = await import('../../src/store/pg-migrations.ts');
      const pool = openPool({ url, schema: 'stacker_dry_run' });
      try {
        await migratePg(pool, 'stacker_dry_run', 'test', () => 1, PG_MIGRATIONS.filter((m) => m.version <= 5));
      } finally {
        await pool.end();
      }
      await check(context(false), { strategies: world.strategiesDir, dataDir: world.dir }, { ...fakes(allOk, { STACKER_DATABASE_URL: url }), configOnly: true });
      expect(stdout()).toMatch(/journal: +.*\(schema stacker_dry_run\): schema 5, older than this stacker's \d+ \(an older stacker wrote it\): `stacker run` migrates it at its start, one-way; `stacker journal upgrade` migrates it now without trading; what it holds \(switches, pauses, budgets\) cannot be read before\n/);
      // Not "off": the journal may hold the kill switch on, which an older build set.
      expect(stdout()).toMatch(/kill switch: +UNKNOWN: the status API's switches could not be read from the journal \(they cannot be read before the journal is migrated to this stacker's schema: `stacker journal upgrade` does it without trading, and the check reads them then\); STACKER_KILL_SWITCH and the switch file are off\n/);
    } finally {
      await dropDatabase(cluster, url);
    }
  });

  it('refuses a journal that is lost as run would (E_STORE, exit 3), after showing the whole configuration and its pre-flight', async () => {
    world.instance('dca-btc', DCA);
    const { journalPath } = await import('../../src/store/open-store.ts');
    const path = journalPath(world.dir, 'dry-run');
    world.file('stacker-dry-run.db.id', `${JSON.stringify({ journalId: 'j-1', createdAtMs: NOW, file: 'stacker-dry-run.db' })}\n`);
    const error = await check(context(false), { strategies: world.strategiesDir, dataDir: world.dir }, fakes(allOk, { STACKER_DRY_RUN_WALLET: 'USDT=1000' })).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'E_STORE', reason: 'journal-lost' });
    expect(exitCodeFor(error)).toBe(EXIT.refused);
    expect(stdout()).toContain(`journal:         ${path}: LOST, \`stacker run\` will not start: the journal ${path} is missing, but ${path}.id says journal j-1`);
    expect(stdout()).toContain('kill switch:     off\n');
    expect(stdout()).toContain('pre-flight');
    await check(context(true), { strategies: world.strategiesDir, dataDir: world.dir }, fakes(allOk, { STACKER_DRY_RUN_WALLET: 'USDT=1000' })).catch(() => undefined);
    expect(JSON.parse(stdout().slice(stdout().lastIndexOf('\n{') + 1)).journalLost).toMatch(/is missing, but/);
  });

  it('refuses, as run would (E_FOREIGN_ORDER, exit 3), a journal holding orders another client placed with its ids that nobody acknowledged; journal lists them without marking them seen', async () => {
    world.instance('dca-btc', DCA);
    const { SqliteJournal } = await import('../../src/store/sqlite-journal.ts');
    const { journalPath } = await import('../../src/store/open-store.ts');
    const journal = new SqliteJournal({ path: journalPath(world.dir, 'dry-run'), clock: () => NOW });
    await journal.open();
    await journal.recordFinding({ kind: 'foreign', instance: 'dca-btc', clientOrderId: 'dca-btc-1700000000000-0', orderId: '4100000001', market: 'BTC_USDT', detail: 'no intent of this journal has its id' });
    await journal.close();
    const error = await check(context(false), { strategies: world.strategiesDir, dataDir: world.dir }, fakes(allOk, { STACKER_DRY_RUN_WALLET: 'USDT=1000' })).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'E_FOREIGN_ORDER' });
    expect(exitCodeFor(error)).toBe(EXIT.refused);
    expect(String((error as Error).message)).toContain('dca-btc-1700000000000-0');

    const { journal: listJournal } = await import('../../src/cli/commands/journal.ts');
    await listJournal(context(false), { dataDir: world.dir, mode: 'dry-run' });
    expect(stdout()).toMatch(/found at the exchange and not acknowledged \(read them, then `stacker journal acknowledge`; a foreign order stops trading until then\):\n.*\n.*foreign +dca-btc +dca-btc-1700000000000-0 +4100000001 +no intent of this journal has its id/);
    await listJournal(context(true), { dataDir: world.dir, mode: 'dry-run' });
    expect(JSON.parse(stdout().slice(stdout().lastIndexOf('\n{') + 1)).findings).toEqual([expect.objectContaining({ kind: 'foreign', clientOrderId: 'dca-btc-1700000000000-0' })]);
    // Listing is not acknowledging: the check still refuses.
    await expect(check(context(false), { strategies: world.strategiesDir, dataDir: world.dir }, fakes(allOk, { STACKER_DRY_RUN_WALLET: 'USDT=1000' }))).rejects.toMatchObject({ code: 'E_FOREIGN_ORDER' });
    // Asked for another instance, it lists that instance's findings only, and counts the others.
    await listJournal(context(false), { dataDir: world.dir, mode: 'dry-run', instance: 'other-instance' });
    expect(stdout()).not.toMatch(/found at the exchange and not acknowledged \(/);
    expect(stdout()).toContain('and 1 more of other instances, not acknowledged (`stacker journal` without --instance lists them; acknowledging is for the whole journal)');
  });

  it('shows a kill-switch file that exists as ON', async () => {
    world.instance('dca-btc', DCA);
    const stop = world.file('STOP', '');
    await check(context(false), { strategies: world.strategiesDir }, { ...fakes(allOk, { STACKER_KILL_SWITCH_FILE: stop }), configOnly: true });
    expect(stdout()).toContain(`kill switch:     ON: nothing that moves money would be sent (${stop} exists)\n`);
  });
});

describe('zonedTime', () => {
  it("writes a time in the instance's zone with its UTC offset, summer and winter", () => {
    expect(zonedTime(Date.UTC(2025, 0, 1, 8), 'Europe/Berlin')).toBe('2025-01-01 09:00 Europe/Berlin (UTC+01:00)');
    expect(zonedTime(Date.UTC(2025, 6, 1, 7), 'Europe/Berlin')).toBe('2025-07-01 09:00 Europe/Berlin (UTC+02:00)');
    expect(zonedTime(Date.UTC(2025, 0, 1, 14, 30), 'America/New_York')).toBe('2025-01-01 09:30 America/New_York (UTC-05:00)');
    expect(zonedTime(Date.UTC(2025, 0, 1, 9, 0, 15), 'UTC')).toBe('2025-01-01 09:00:15 UTC');
  });
});

describe('registration', () => {
  it('registers `check` with --strategies, --data-dir and --live, and takes --env-file and --json from the program', async () => {
    const out: string[] = [];
    const io: Io = { out: (text) => void out.push(text), err: () => undefined };
    const state: RunState = { json: false, verbose: false, lookupHint: undefined };
    const root = buildProgram(io, state);
    const file = world.instance('dca-btc', 'STRATEGY=dca\nSCHEDULE="0 9 * * *"');
    const envFile = world.file('.env', 'METRICS_PORT=9464\n');
    const error = await root.parseAsync(['check', '--strategies', world.strategiesDir, '--env-file', envFile, '--json'], { from: 'user' }).catch((e: unknown) => e);
    expect((error as ConfigError).problems.map((p) => `${p.source}: ${p.field}`)).toEqual([`env file ${envFile}: METRICS_PORT`, `${file}: MARKET`, `${file}: AMOUNT`]);
    expect(out).toEqual([]);
  });
});
