import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Decimal, formatDecimal } from '../../src/domain/money.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.ts';
import { startOtherExchange } from '../support/other-exchange.ts';
import { fixedPrices } from '../../src/sim/prices.ts';
import { SqliteJournal } from '../../src/store/sqlite-journal.ts';
import { runCli } from '../cli/run-cli.ts';
import { expectedPosition } from './report-expect.ts';
import { type DaemonDir, daemonDir, startDaemon } from './daemon-process.ts';
import { CONTROL_TOKEN, postControl, readStatus, statusUrl, withLiveJournal } from './status-daemon.ts';

// Two accounts in one daemon, against the sandbox serving two keys (two accounts of one
// exchange, order ids unique across them): each instance's orders land on its own account,
// an account's cap stops its second instance, and the report per account agrees with each
// account's own history to the last decimal. The real CLI in a child process, as a user runs it.

const KEY_MAIN = 'key-main-5c1d8e2f9a7b3c4d';
const KEY_SIDE = 'key-side-0a9b8c7d6e5f4a3b';
const SECRET_MAIN = 'canary-main-secret-1f2e3d4c5b6a79880a1b2c3d4e5f6a7b';
const SECRET_SIDE = 'canary-side-secret-9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b';
const SIGNATURE_SHAPE = /[0-9a-f]{128}/i;

let sandbox: Sandbox;
let dir: DaemonDir;
beforeEach(async () => {
  sandbox = await startSandbox({ apiKey: KEY_MAIN, apiSecret: SECRET_MAIN, moreAccounts: [{ apiKey: KEY_SIDE, apiSecret: SECRET_SIDE }] });
  dir = daemonDir();
});
afterEach(async () => {
  await sandbox.stop();
  dir.remove();
});

const env = (extra: Record<string, string> = {}): Record<string, string> => ({
  HOME: dir.root,
  STACKER_MODE: 'live',
  STACKER_BASE_URL: sandbox.url,
  STACKER_ACCOUNT_main_API_KEY: KEY_MAIN,
  STACKER_ACCOUNT_main_API_SECRET: SECRET_MAIN,
  // 0.001 BTC at 65000 is 65 USDT: one buy fits a cap of 100 a day, a second does not.
  STACKER_ACCOUNT_main_BUDGET_QUOTE_PER_DAY: '100',
  STACKER_ACCOUNT_side_API_KEY: KEY_SIDE,
  STACKER_ACCOUNT_side_API_SECRET: SECRET_SIDE,
  ...extra,
});

/** A weekly dca instance (its slot never falls during a test: `--once` runs it) on an account. */
function writeDca(target: DaemonDir, name: string, account: string, amount: string, market: string, extra: Record<string, string> = {}): void {
  target.writeStrategy(name, { STRATEGY: 'dca', SCHEDULE: '0 9 * * 1', MARKET: market, AMOUNT: amount, ACCOUNT: account, ...extra });
}

/** a1-main on account main and b1-side on account side, each buying 0.001 BTC. */
function oneInstanceOnEach(): void {
  writeDca(dir, 'a1-main', 'main', '0.001', 'BTC_USDT');
  writeDca(dir, 'b1-side', 'side', '0.001', 'BTC_USDT');
}

describe('several accounts in one daemon, against the sandbox', () => {
  it("sends each instance's orders on its own account, stops an account's second instance at the account cap, and reports per account to the last decimal", async () => {
    writeDca(dir, 'a1-main', 'main', '0.001', 'BTC_USDT');
    writeDca(dir, 'a2-main', 'main', '0.001', 'BTC_USDT');
    writeDca(dir, 'b1-side', 'side', '0.00123', 'BTC_USDT');
    const daemon = startDaemon(['--live', '--once', '--strategies', dir.strategies, '--data-dir', dir.data], env());
    expect(await daemon.exited).toBe(0);
    const output = daemon.output();

    const mainCore = sandbox.accountOf(KEY_MAIN);
    const sideCore = sandbox.accountOf(KEY_SIDE);
    if (mainCore === undefined || sideCore === undefined) throw new Error('the sandbox lost an account');
    const mainOrders = mainCore.orderHistory({});
    const sideOrders = sideCore.orderHistory({});
    // Each account's history holds its own instances' orders only; the cap let one of main's two instances buy.
    expect(mainOrders).toHaveLength(1);
    expect(sideOrders).toHaveLength(1);
    expect(formatDecimal(sideOrders[0]?.filledBase ?? new Decimal(0))).toBe('0.00123');
    expect(formatDecimal(mainOrders[0]?.filledBase ?? new Decimal(0))).toBe('0.001');
    // No nonce of one key was refused for the other's: each account signs with its own sequence.
    expect(output).not.toContain('E_NONCE');

    const journal = new SqliteJournal({ path: join(dir.data, 'stacker.db'), readOnly: true });
    await journal.open();
    try {
      const buys = (await journal.listIntents({ limit: 100 })).filter((intent) => intent.intent.kind === 'buy-stock-market');
      const byInstance = new Map(buys.map((intent) => [intent.instance, intent]));
      expect(byInstance.get('a1-main')).toMatchObject({ account: 'main', status: 'done', clientOrderId: mainOrders[0]?.clientOrderId });
      expect(byInstance.get('b1-side')).toMatchObject({ account: 'side', status: 'done', clientOrderId: sideOrders[0]?.clientOrderId });
      // a2 is stopped before anything is sent: by its own guard (the budget it reads includes the
      // account's cap) or by the reservation against the cap; either way journalled, never sent.
      const a2 = (await journal.listIntents({ instance: 'a2-main', limit: 10 }))[0];
      expect(a2?.status).toBe('refused');
      expect(a2?.error?.code).toBe('over-budget');
      expect(a2?.attempts).toBe(0);
      // The cap is counted across the account's instances, at what the order really spent.
      const spent = await journal.budgetSpent({ instance: 'account:main', asset: 'USDT', timeZone: 'UTC' }, Date.now());
      expect(formatDecimal(spent.day)).toBe(formatDecimal(mainOrders[0]?.filledQuote ?? new Decimal(-1)));
      expect(await journal.heldBudgetReservations()).toEqual([]);
    } finally {
      await journal.close();
    }

    const price = sandbox.exchange.price('BTC_USDT') as Decimal;
    const all = await runCli(['report', '--mode', 'live', '--data-dir', dir.data, '--json'], env());
    expect(all.code).toBe(0);
    const report = JSON.parse(all.stdout) as { accounts: Array<{ account: string; markets: unknown[] }>; instances: unknown[] };
    expect(report.accounts).toEqual([
      { account: 'main', markets: [expectedPosition(mainOrders, 'BTC_USDT', price)] },
      { account: 'side', markets: [expectedPosition(sideOrders, 'BTC_USDT', price)] },
    ]);
    expect(report.instances).toEqual([
      { instance: 'a1-main', account: 'main', orders: 1 },
      { instance: 'b1-side', account: 'side', orders: 1 },
    ]);
    const side = await runCli(['report', '--mode', 'live', '--data-dir', dir.data, '--account', 'side', '--json'], env());
    expect((JSON.parse(side.stdout) as { markets: unknown[] }).markets).toEqual([expectedPosition(sideOrders, 'BTC_USDT', price)]);
    const text = await runCli(['report', '--mode', 'live', '--data-dir', dir.data], env());
    expect(text.stdout).toMatch(/^ACCOUNT +MARKET/m);
    expect(text.stdout).toMatch(/^b1-side +side +1$/m);

    for (const written of [output, all.stdout, all.stderr, side.stdout, text.stdout, text.stderr]) {
      expect(written).not.toContain(SECRET_MAIN);
      expect(written).not.toContain(SECRET_SIDE);
      expect(written).not.toMatch(SIGNATURE_SHAPE);
    }
  }, 90_000);

  it('refuses live accounts on two exchanges at start, naming the key, and sends nothing to either: the journal knows an order by the exchange\'s order id, which both hand out', async () => {
    const other = await startOtherExchange({ apiKey: KEY_SIDE, apiSecret: SECRET_SIDE, prices: fixedPrices({ BTC_USDT: '70000', ETH_USDT: '3000' }) });
    try {
      writeDca(dir, 'a1-main', 'main', '0.001', 'BTC_USDT');
      writeDca(dir, 'b1-side', 'side', '0.002', 'BTC_USDT');
      const daemon = startDaemon(['--live', '--once', '--strategies', dir.strategies, '--data-dir', dir.data], env({ STACKER_ACCOUNT_side_BASE_URL: other.url }));
      expect(await daemon.exited, daemon.output()).toBe(2);
      expect(daemon.output()).toContain(`STACKER_ACCOUNT_side_BASE_URL: puts account side on ${other.url}, while account main trades on`);
      expect(sandbox.accountOf(KEY_MAIN)?.orderHistory({})).toEqual([]);
      expect(other.exchange.orderHistory({})).toEqual([]);
      const checked = await runCli(['check', '--live', '--strategies', dir.strategies, '--data-dir', dir.data], env({ STACKER_ACCOUNT_side_BASE_URL: other.url }));
      expect(checked.code).toBe(2);
      expect(checked.stdout + checked.stderr).toContain('one daemon trades on one exchange');
    } finally {
      await other.stop();
    }
  }, 60_000);

  it("stops the whole daemon when one account's key is refused, naming the account, before any account trades", async () => {
    oneInstanceOnEach();
    const wrong = 'canary-wrong-side-secret-00112233445566778899aabb';
    const daemon = startDaemon(['--live', '--once', '--strategies', dir.strategies, '--data-dir', dir.data], env({ STACKER_ACCOUNT_side_API_SECRET: wrong }));
    expect(await daemon.exited).not.toBe(0);
    const output = daemon.output();
    expect(output).toMatch(/"event":"trading-stopped","code":"E_AUTH","error":"account side: reading the order history: /);
    expect(output).not.toContain(wrong);
    expect(output).not.toContain(SECRET_MAIN);
    // The history of every account is read before the first slot: main never traded either.
    expect(sandbox.accountOf(KEY_MAIN)?.orderHistory({})).toEqual([]);
    expect(sandbox.accountOf(KEY_SIDE)?.orderHistory({})).toEqual([]);
  }, 60_000);

  it('dry-run: each account trades on its own paper wallet, so one account short of money never borrows from another', async () => {
    writeDca(dir, 'a1-main', 'main', '0.001', 'BTC_USDT', { ALLOW_TRANSFER: 'true' });
    writeDca(dir, 'b1-side', 'side', '0.001', 'BTC_USDT', { ALLOW_TRANSFER: 'true' });
    const dryEnv = {
      HOME: dir.root,
      STACKER_BASE_URL: sandbox.url,
      STACKER_DRY_RUN_WALLET: 'USDT=1000',
      STACKER_ACCOUNT_side_DRY_RUN_WALLET: 'USDT=7',
      STACKER_ACCOUNT_side_API_KEY: KEY_SIDE,
      STACKER_ACCOUNT_side_API_SECRET: SECRET_SIDE,
      STACKER_ACCOUNT_main_API_KEY: KEY_MAIN,
      STACKER_ACCOUNT_main_API_SECRET: SECRET_MAIN,
    };
    const daemon = startDaemon(['--once', '--strategies', dir.strategies, '--data-dir', dir.data], dryEnv);
    await daemon.exited;
    expect(daemon.output()).not.toContain(SECRET_SIDE);
    // Nothing reaches the exchange's accounts in dry-run.
    expect(sandbox.accountOf(KEY_MAIN)?.orderHistory({})).toEqual([]);
    expect(sandbox.accountOf(KEY_SIDE)?.orderHistory({})).toEqual([]);
    const journal = new SqliteJournal({ path: join(dir.data, 'stacker-dry-run.db'), readOnly: true });
    await journal.open();
    try {
      const main = (await journal.listIntents({ instance: 'a1-main', limit: 10 })).filter((intent) => intent.intent.kind === 'buy-stock-market');
      const side = await journal.listIntents({ instance: 'b1-side', limit: 10 });
      expect(main.map((intent) => [intent.account, intent.status])).toEqual([['main', 'done']]);
      // 0.001 BTC at 65000 needs about 65 USDT: side's 7 cannot pay, whatever main holds.
      expect(side.every((intent) => intent.status === 'refused')).toBe(true);
      expect(side.map((intent) => intent.error?.code)).toContain('insufficient-funds');
      expect(await journal.accountState('side')).toContain('"7"');
      expect(await journal.accountState('main')).not.toBeNull();
    } finally {
      await journal.close();
    }
  }, 60_000);

  it("dry-run: both accounts' buys are journalled as orders of their own, with ids no other account's order has, across a restart", async () => {
    oneInstanceOnEach();
    const dryEnv = { HOME: dir.root, STACKER_BASE_URL: sandbox.url, STACKER_DRY_RUN_WALLET: 'USDT=1000' };
    for (let run = 0; run < 2; run += 1) {
      // `--once` runs the current second's slot: a second run in the same second would be the same slot.
      if (run > 0) await new Promise((resolve) => setTimeout(resolve, 1050 - (Date.now() % 1000)));
      const daemon = startDaemon(['--once', '--strategies', dir.strategies, '--data-dir', dir.data], dryEnv);
      expect(await daemon.exited).toBe(0);
    }
    const journal = new SqliteJournal({ path: join(dir.data, 'stacker-dry-run.db'), readOnly: true });
    await journal.open();
    try {
      const main = await journal.listOrders({ instance: 'a1-main', limit: 10 });
      const side = await journal.listOrders({ instance: 'b1-side', limit: 10 });
      expect(main.map((order) => [order.status, order.filledBase.toFixed()])).toEqual([['FILLED', '0.001'], ['FILLED', '0.001']]);
      expect(side.map((order) => [order.status, order.filledBase.toFixed()])).toEqual([['FILLED', '0.001'], ['FILLED', '0.001']]);
      expect(new Set([...main, ...side].map((order) => order.orderId)).size).toBe(4);
      expect(side.every((order) => order.clientOrderId.startsWith('b1-side-'))).toBe(true);
    } finally {
      await journal.close();
    }
  }, 60_000);

  it("takes every account key's lock: a second daemon on any one of them is refused, naming the holder", async () => {
    oneInstanceOnEach();
    const first = startDaemon(['--live', '--strategies', dir.strategies, '--data-dir', dir.data], env({ STACKER_METRICS_PORT: '0' }));
    try {
      await first.waitFor('"event":"scheduled"');
      // The status API names each instance's account and each account's cap, never a key or secret.
      const url = /"event":"metrics","url":"(http:\/\/[^"]+)"/.exec(first.output())?.[1];
      const statusText = await (await fetch(`${url ?? ''}/api/status`)).text();
      const status = JSON.parse(statusText) as { instances: Array<{ name: string; account: string }>; accounts: Array<{ name: string; instances: string[]; cap: { asset: string; periods: Array<{ period: string; limit: string; spent: string }> } | null }> };
      expect(status.instances.map((i) => [i.name, i.account])).toEqual([
        ['a1-main', 'main'],
        ['b1-side', 'side'],
      ]);
      expect(status.accounts).toEqual([
        { name: 'main', instances: ['a1-main'], cap: { asset: 'USDT', periods: [expect.objectContaining({ period: 'day', limit: '100', spent: '0' })] }, capTimeZone: 'UTC', killSwitch: { on: false, since: null }, exchangeDown: null },
        { name: 'side', instances: ['b1-side'], cap: null, capTimeZone: null, killSwitch: { on: false, since: null }, exchangeDown: null },
      ]);
      for (const secret of [KEY_MAIN, KEY_SIDE, SECRET_MAIN, SECRET_SIDE]) expect(statusText).not.toContain(secret);
      const metrics = await (await fetch(`${url ?? ''}/metrics`)).text();
      expect(metrics).toMatch(/stacker_api_requests_total\{account="side",path="[^"]+",outcome="ok"\} [1-9]/);
      const other = daemonDir();
      try {
        writeDca(other, 'only-side', 'side', '0.001', 'BTC_USDT');
        const sideOnly = { HOME: dir.root, STACKER_MODE: 'live', STACKER_BASE_URL: sandbox.url, STACKER_ACCOUNT_side_API_KEY: KEY_SIDE, STACKER_ACCOUNT_side_API_SECRET: SECRET_SIDE };
        const second = startDaemon(['--live', '--strategies', other.strategies, '--data-dir', other.data], sideOnly);
        expect(await second.exited).not.toBe(0);
        // Its log is JSON (no terminal): the start-failed line is all it says.
        expect(second.output()).toMatch(/"event":"start-failed".*"code":"E_LOCKED".*stacker did not start \(E_LOCKED\): the API key is in use by stacker pid/);
        expect(second.output()).toContain(`data dir ${dir.data}`);
        expect(second.output()).not.toContain(SECRET_SIDE);
        // Nothing of the refused daemon reached the exchange.
        expect(sandbox.accountOf(KEY_SIDE)?.orderHistory({})).toEqual([]);
      } finally {
        other.remove();
      }
    } finally {
      first.child.kill('SIGTERM');
      expect(await first.exited).toBe(0);
    }
  }, 60_000);
});

describe('one-off commands on an account (--account NAME)', () => {
  // The default account is the main key here; `side` is set up by its STACKER_ACCOUNT_side_* keys.
  const oneOff = (extra: Record<string, string> = {}): Record<string, string> => ({
    HOME: dir.root,
    STACKER_BASE_URL: sandbox.url,
    STACKER_API_KEY: KEY_MAIN,
    STACKER_API_SECRET: SECRET_MAIN,
    STACKER_ACCOUNT_side_API_KEY: KEY_SIDE,
    STACKER_ACCOUNT_side_API_SECRET: SECRET_SIDE,
    ...extra,
  });

  it("buys, reads balances and looks orders up on the account named, with its own key; without --account on the default one", async () => {
    const bought = await runCli(['buy', '--account', 'side', '--market', 'BTC_USDT', '--amount', '0.001', '--client-order-id', 'side-by-hand-1', '--json'], oneOff());
    expect(bought.code, bought.stderr).toBe(0);
    expect(sandbox.accountOf(KEY_SIDE)?.orderHistory({}).map((order) => order.clientOrderId)).toEqual(['side-by-hand-1']);
    expect(sandbox.accountOf(KEY_MAIN)?.orderHistory({})).toEqual([]);

    const side = await runCli(['balance', '--trade', '--ticker', 'BTC', '--account', 'side', '--json'], oneOff());
    const main = await runCli(['balance', '--trade', '--ticker', 'BTC', '--json'], oneOff());
    expect([side.code, main.code]).toEqual([0, 0]);
    expect((JSON.parse(side.stdout) as { balances: Record<string, { available: string }> }).balances['BTC']?.available).toBe('0.001');
    expect((JSON.parse(main.stdout) as { balances: Record<string, { available: string }> }).balances['BTC']?.available).toBe('0');

    const found = await runCli(['order', '--account', 'side', '--client-order-id', 'side-by-hand-1', '--json'], oneOff());
    const notThere = await runCli(['order', '--client-order-id', 'side-by-hand-1', '--json'], oneOff());
    expect([found.code, notThere.code]).toEqual([0, 0]);
    const orders = (result: { stdout: string }): Array<{ clientOrderId: string; status: string }> => (JSON.parse(result.stdout) as { orders: Array<{ clientOrderId: string; status: string }> }).orders;
    expect(orders(found).map((o) => [o.clientOrderId, o.status])).toEqual([['side-by-hand-1', 'FILLED']]);
    expect(orders(notThere)).toEqual([]);
    // Not on the default account is not "never placed": the text says which accounts were not searched.
    const told = await runCli(['order', '--client-order-id', 'side-by-hand-1'], oneOff());
    expect(told.stderr).toMatch(/\(searched the default account only; the env sets up accounts? .*side.*: give --account NAME to search/);
    for (const result of [bought, side, main, found, notThere, told]) expect(result.stdout + result.stderr).not.toContain(SECRET_SIDE);
  });

  it('refuses an account the env does not set up, a half-set key and a bad name: exit 2, the key named, nothing sent', async () => {
    const before = (sandbox.accountOf(KEY_MAIN)?.orderHistory({}).length ?? 0) + (sandbox.accountOf(KEY_SIDE)?.orderHistory({}).length ?? 0);
    const typo = await runCli(['buy', '--account', 'Side', '--market', 'BTC_USDT', '--amount', '0.001'], oneOff());
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('--account: no account Side is set up: its key is STACKER_ACCOUNT_Side_API_KEY / STACKER_ACCOUNT_Side_API_SECRET');
    expect(typo.stderr).toContain('did you mean side?');

    const half = await runCli(['balance', '--account', 'side'], oneOff({ STACKER_ACCOUNT_side_API_SECRET: '' }));
    expect(half.code).toBe(2);
    expect(half.stderr).toContain('STACKER_ACCOUNT_side_API_SECRET: is not set, but STACKER_ACCOUNT_side_API_KEY is');

    const bad = await runCli(['balance', '--account', 'side account'], oneOff());
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--account: must be 1 to 32 letters/);
    const after = (sandbox.accountOf(KEY_MAIN)?.orderHistory({}).length ?? 0) + (sandbox.accountOf(KEY_SIDE)?.orderHistory({}).length ?? 0);
    expect(after).toBe(before);
    for (const result of [typo, half, bad]) expect(result.stderr).not.toContain(SECRET_SIDE);
  });
});

describe("one account's own kill switch, from the status API", () => {
  it('stops what that account sends while the other trades on; survives a restart; shows in /healthz and /api/status; unknown accounts are 404', async () => {
    writeDca(dir, 'a1-main', 'main', '0.001', 'BTC_USDT');
    writeDca(dir, 'b1-side', 'side', '0.001', 'BTC_USDT');
    const daemonEnv = env({ STACKER_METRICS_PORT: '0', STACKER_CONTROL_TOKEN: CONTROL_TOKEN });
    const first = startDaemon(['--live', '--strategies', dir.strategies, '--data-dir', dir.data], daemonEnv);
    try {
      const url = await statusUrl(first);
      expect((await postControl(url, '/api/accounts/nope/kill-switch', CONTROL_TOKEN, { on: true })).status).toBe(404);
      const on = await postControl(url, '/api/accounts/side/kill-switch', CONTROL_TOKEN, { on: true });
      expect(on.status).toBe(200);
      expect(on.json).toMatchObject({ account: 'side', killSwitch: { on: true } });
      const health = await fetch(`${url}/healthz`);
      expect(health.status).toBe(503);
      const problems = ((await health.json()) as { problems: string[] }).problems;
      // One account's switch is said as one account's: the other trades on.
      expect(problems).toContainEqual(expect.stringMatching(/^the kill switch of account side was turned on from the status API at .*: nothing that moves money is sent on account side until it is turned off; the other accounts trade on$/));
      expect(problems.join('\n')).not.toContain('the kill switch is on');
      const status = (await readStatus(url)) as unknown as { killSwitch: { on: boolean }; accounts: Array<{ name: string; killSwitch: { on: boolean } }> };
      expect(status.killSwitch.on).toBe(false);
      expect(status.accounts.map((a) => [a.name, a.killSwitch.on])).toEqual([
        ['main', false],
        ['side', true],
      ]);
      // The slot ran (journalled done), and the answer says what it did not do: the buy the switch refused.
      expect((await postControl(url, '/api/instances/b1-side/run', CONTROL_TOKEN)).json).toMatchObject({
        outcome: 'done',
        notDone: [{ index: 0, kind: 'buy-stock-market', status: 'refused', code: 'kill-switch', message: expect.stringContaining('the kill switch of account side was turned on') }],
      });
      expect((await postControl(url, '/api/instances/a1-main/run', CONTROL_TOKEN)).json).toMatchObject({ outcome: 'done', notDone: [] });
      expect(sandbox.accountOf(KEY_SIDE)?.orderHistory({})).toEqual([]);
      expect(sandbox.accountOf(KEY_MAIN)?.orderHistory({})).toHaveLength(1);
    } finally {
      first.child.kill('SIGTERM');
      expect(await first.exited).toBe(0);
    }
    const refused = await withLiveJournal(dir.data, (journal) => journal.listIntents({ instance: 'b1-side' }));
    expect(refused.map((intent) => [intent.status, intent.error?.code])).toEqual([['refused', 'kill-switch']]);
    expect(refused[0]?.error?.message).toContain('the kill switch of account side was turned on from the status API');

    // A restart keeps it on; turned off, the account trades again.
    const second = startDaemon(['--live', '--strategies', dir.strategies, '--data-dir', dir.data], daemonEnv);
    try {
      const url = await statusUrl(second);
      const status = (await readStatus(url)) as unknown as { accounts: Array<{ name: string; killSwitch: { on: boolean } }> };
      expect(status.accounts.find((a) => a.name === 'side')?.killSwitch.on).toBe(true);
      expect((await postControl(url, '/api/accounts/side/kill-switch', CONTROL_TOKEN, { on: false })).json).toMatchObject({ account: 'side', killSwitch: { on: false, since: null } });
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 1050 - (Date.now() % 1000)));
      expect((await postControl(url, '/api/instances/b1-side/run', CONTROL_TOKEN)).json).toMatchObject({ outcome: 'done' });
      expect(sandbox.accountOf(KEY_SIDE)?.orderHistory({})).toHaveLength(1);
    } finally {
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    }
    expect(first.output() + second.output()).not.toContain(SECRET_SIDE);
  }, 60_000);
});

describe('kill switches turned on from the status API, then kill -9', () => {
  it("hold after the restart: the journal had them on disk when the API answered 200, so the restarted daemon refuses side's order and main trades once the global switch is off", async () => {
    oneInstanceOnEach();
    const daemonEnv = env({ STACKER_METRICS_PORT: '0', STACKER_CONTROL_TOKEN: CONTROL_TOKEN });
    const args = ['--live', '--strategies', dir.strategies, '--data-dir', dir.data];
    const first = startDaemon(args, daemonEnv);
    const firstUrl = await statusUrl(first);
    expect((await postControl(firstUrl, '/api/accounts/side/kill-switch', CONTROL_TOKEN, { on: true })).status).toBe(200);
    expect((await postControl(firstUrl, '/api/kill-switch', CONTROL_TOKEN, { on: true })).status).toBe(200);
    // No SIGTERM, no close: whatever the daemon still held in memory is lost.
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');

    // The kernel lock died with the process: the restart takes the journal at once.
    const second = startDaemon(args, daemonEnv);
    try {
      const url = await statusUrl(second);
      const status = (await readStatus(url)) as unknown as { killSwitch: { on: boolean }; accounts: Array<{ name: string; killSwitch: { on: boolean } }> };
      expect(status.killSwitch.on).toBe(true);
      expect(status.accounts.map((a) => [a.name, a.killSwitch.on])).toEqual([
        ['main', false],
        ['side', true],
      ]);
      // The start says so, for each switch: the log is where an operator looks after a restart.
      const atStart = second.output();
      expect(atStart).toMatch(/"event":"kill-switch".*the kill switch was turned on from the status API/);
      expect(atStart).toMatch(/"event":"kill-switch".*the kill switch of account side was turned on/);
      expect((await postControl(url, '/api/instances/a1-main/run', CONTROL_TOKEN)).status).toBe(200);
      expect(sandbox.accountOf(KEY_MAIN)?.orderHistory({})).toEqual([]);

      expect((await postControl(url, '/api/kill-switch', CONTROL_TOKEN, { on: false })).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 1050 - (Date.now() % 1000)));
      // The slot ran (journalled done), and the answer says what it did not do: the buy the switch refused.
      expect((await postControl(url, '/api/instances/b1-side/run', CONTROL_TOKEN)).json).toMatchObject({
        outcome: 'done',
        notDone: [{ index: 0, kind: 'buy-stock-market', status: 'refused', code: 'kill-switch', message: expect.stringContaining('the kill switch of account side was turned on') }],
      });
      expect((await postControl(url, '/api/instances/a1-main/run', CONTROL_TOKEN)).json).toMatchObject({ outcome: 'done', notDone: [] });
      expect(sandbox.accountOf(KEY_SIDE)?.orderHistory({})).toEqual([]);
      expect(sandbox.accountOf(KEY_MAIN)?.orderHistory({})).toHaveLength(1);
    } finally {
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    }
    await withLiveJournal(dir.data, async (journal) => {
      const side = await journal.listIntents({ instance: 'b1-side' });
      expect(side.map((intent) => [intent.status, intent.error?.code])).toEqual([['refused', 'kill-switch']]);
      const main = await journal.listIntents({ instance: 'a1-main' });
      expect(main.map((intent) => [intent.status, intent.error?.code ?? null]).sort()).toEqual([
        ['done', null],
        ['refused', 'kill-switch'],
      ]);
      const [order] = await journal.listOrders({ limit: 10 });
      expect((await journal.orderTransitions(order?.orderId ?? '')).map((t) => [t.seq, t.fromStatus, t.toStatus])).toEqual([[1, null, 'FILLED']]);
      expect((await journal.operatorControls()).killSwitchSinceMs).toBeNull();
    });
  }, 60_000);
});
