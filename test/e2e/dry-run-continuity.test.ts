import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatDecimal } from '../../src/domain/money.ts';
import { SqliteJournal } from '../../src/store/sqlite-journal.ts';
import { runCli } from '../cli/run-cli.ts';
import { sandboxPerTest, startDaemon } from './daemon-process.ts';

// Dry-run as a user runs it (the real CLI, prices from the sandbox's public endpoints), stopped
// and started again: the paper account lives in the dry-run journal and continues.
const t = sandboxPerTest();

async function ordersOf(dataDir: string): Promise<Array<{ orderId: string; filledQuote: string }>> {
  const journal = new SqliteJournal({ path: join(dataDir, 'stacker-dry-run.db'), readOnly: true });
  await journal.open();
  try {
    return (await journal.listOrders({ limit: 1000 })).map((o) => ({ orderId: o.orderId, filledQuote: formatDecimal(o.filledQuote) }));
  } finally {
    await journal.close();
  }
}

describe('a dry-run stopped and started again', () => {
  it('continues the same paper account: order ids never repeat, every order is in the journal, the wallet is where it was left', async () => {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '* * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001' });
    const env = { STACKER_BASE_URL: t.sandbox.url, STACKER_DRY_RUN_WALLET: 'USDT=300', HOME: t.dir.root };
    const args = ['--strategies', t.dir.strategies, '--data-dir', t.dir.data];
    const first = startDaemon(args, env);
    await first.waitFor('"to":"FILLED"');
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    const before = await ordersOf(t.dir.data);
    expect(before.length).toBeGreaterThanOrEqual(1);

    // The same wallet setting: the account continues. 300 USDT buys four 65-USDT orders in all.
    const second = startDaemon(args, env);
    await second.waitFor('"event":"paper-account-continues"');
    await second.waitFor('"reason":"insufficient-funds"', 20_000);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    const after = await ordersOf(t.dir.data);
    const ids = after.map((o) => o.orderId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const order of before) expect(ids).toContain(order.orderId);
    expect(after).toHaveLength(4);
    expect(t.sandbox.exchange.orderHistory({})).toHaveLength(0);

    // Another wallet setting: said plainly, and the account still continues (no 300 USDT anew).
    const third = startDaemon(args, { ...env, STACKER_DRY_RUN_WALLET: 'USDT=5000' });
    await third.waitFor('"event":"paper-account-continues"');
    await third.waitFor('"reason":"insufficient-funds"', 20_000);
    third.child.kill('SIGTERM');
    expect(await third.exited).toBe(0);
    expect(third.output()).toMatch(/the configured wallet \(USDT=5000\) differs from the one this paper account started from \(USDT=300\).*STACKER_DRY_RUN_WALLET seeds a new paper account only/);
    expect(await ordersOf(t.dir.data)).toHaveLength(4);

    // Starting over as the warning says: the journal with its .id file. The journal alone reads as one lost.
    const journalFile = join(t.dir.data, 'stacker-dry-run.db');
    expect(third.output()).toContain(`delete ${journalFile} together with its .id file`);
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${journalFile}${suffix}`, { force: true });
    const lost = startDaemon(args, { ...env, STACKER_DRY_RUN_WALLET: 'USDT=5000' });
    expect(await lost.exited).toBe(3);
    rmSync(`${journalFile}.id`);
    const fresh = startDaemon(args, { ...env, STACKER_DRY_RUN_WALLET: 'USDT=200' });
    await fresh.waitFor('"to":"FILLED"');
    fresh.child.kill('SIGTERM');
    expect(await fresh.exited).toBe(0);
    expect(fresh.output()).not.toContain('paper-account-continues');
    // A new account of 200 USDT: its orders alone, 65 USDT each.
    expect((await ordersOf(t.dir.data)).length).toBeLessThanOrEqual(3);
  }, 90_000);

  it('shows the paper account in `stacker report`: its cash and coins as the daemon left them, and the wallet it started from', async () => {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '0 9 1 1 *', MARKET: 'BTC_USDT', AMOUNT: '0.001' });
    const env = { STACKER_BASE_URL: t.sandbox.url, STACKER_DRY_RUN_WALLET: 'USDT=100', HOME: t.dir.root, STACKER_LOG_LEVEL: 'silent' };
    const once = await runCli(['run', '--once', '--strategies', t.dir.strategies, '--data-dir', t.dir.data], env);
    expect(once.code).toBe(0);
    const report = await runCli(['report', '--mode', 'dry-run', '--data-dir', t.dir.data, '--json'], env);
    // 0.001 BTC at the sandbox's 65000 is 65 USDT, and 0.065 USDT of fee.
    expect((JSON.parse(report.stdout) as { paperAccounts: unknown }).paperAccounts).toEqual([{ account: 'default', trade: { BTC: '0.001', USDT: '34.935' }, main: {}, startedFrom: 'USDT=100' }]);
    const text = await runCli(['report', '--mode', 'dry-run', '--data-dir', t.dir.data], env);
    expect(text.stdout).toContain('paper account: trade 0.001 BTC, 34.935 USDT; main nothing (started from USDT=100)');
  }, 30_000);

  it('is not created by a start refused for its configuration: the wallet of the next start is the one it begins with', async () => {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '0 9 1 1 *', MARKET: 'BTC_USDX', AMOUNT: '0.001' });
    const env = { STACKER_BASE_URL: t.sandbox.url, HOME: t.dir.root };
    const args = ['--strategies', t.dir.strategies, '--data-dir', t.dir.data];
    const refused = startDaemon(args, { ...env, STACKER_DRY_RUN_WALLET: 'USDT=300' });
    expect(await refused.exited).toBe(2);
    expect(refused.output()).toContain('MARKET: the exchange does not list BTC_USDX; did you mean BTC_USDT?');

    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '0 9 1 1 *', MARKET: 'BTC_USDT', AMOUNT: '0.001' });
    const fixed = startDaemon(args, { ...env, STACKER_DRY_RUN_WALLET: 'USDT=5000' });
    await fixed.waitFor('"event":"scheduled"');
    fixed.child.kill('SIGTERM');
    expect(await fixed.exited).toBe(0);
    expect(fixed.output()).not.toContain('paper-account-continues');
    expect(fixed.output()).not.toContain('differs from the one this paper account started from');
    const journal = new SqliteJournal({ path: join(t.dir.data, 'stacker-dry-run.db'), readOnly: true });
    await journal.open();
    try {
      expect(await journal.accountState()).toContain('USDT=5000');
    } finally {
      await journal.close();
    }
  }, 30_000);
});
