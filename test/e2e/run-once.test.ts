import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteJournal } from '../../src/store/sqlite-journal.ts';
import { runCli } from '../cli/run-cli.ts';
import { sandboxPerTest, startDaemon } from './daemon-process.ts';

// `stacker run --once`: a new user's first slot now, instead of hours later.
const t = sandboxPerTest();
const args = (...more: string[]): string[] => ['--strategies', t.dir.strategies, '--data-dir', t.dir.data, ...more];

describe('stacker run --once', () => {
  it("runs each enabled instance's slot now, journalled like any slot, follows the order to FILLED and exits 0", async () => {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '0 9 * * 1', MARKET: 'BTC_USDT', AMOUNT: '0.001' });
    t.dir.writeStrategy('report', { STRATEGY: 'balance-report', SCHEDULE: '0 0 1 1 *' });
    t.dir.writeStrategy('off', { STRATEGY: 'balance-report', SCHEDULE: '0 0 1 1 *', ENABLED: 'false' });
    const daemon = startDaemon(args('--live', '--once'), t.live());
    expect(await daemon.exited).toBe(0);
    expect(daemon.output()).toMatch(/^dca-btc: done$/m);
    expect(daemon.output()).toMatch(/^report: done$/m);
    expect(daemon.output()).not.toMatch(/^off:/m);
    expect(daemon.output()).toContain('"to":"FILLED"');
    expect(daemon.output()).not.toContain('"event":"scheduled"');
    expect(t.sandbox.exchange.orderHistory({})).toHaveLength(1);
    const journal = new SqliteJournal({ path: join(t.dir.data, 'stacker.db'), readOnly: true });
    await journal.open();
    try {
      const [slot] = await journal.listSlots({ instance: 'dca-btc' });
      expect(slot?.status).toBe('done');
      expect(await journal.unresolvedIntents()).toEqual([]);
      expect((await journal.listRuns())[0]?.exitReason).toBe('once');
    } finally {
      await journal.close();
    }
  }, 30_000);

  it('says when it makes the data dir and starts a new journal there (a first run, or a typo in the path), and only then', async () => {
    t.dir.writeStrategy('report', { STRATEGY: 'balance-report', SCHEDULE: '0 0 1 1 *' });
    const first = startDaemon(args('--live', '--once'), t.live());
    expect(await first.exited).toBe(0);
    expect(first.output()).toContain(`"event":"data-dir-created"`);
    expect(first.output()).toContain(`the data dir ${t.dir.data} did not exist: created it, and a new journal starts there`);
    const again = startDaemon(args('--live', '--once'), t.live());
    expect(await again.exited).toBe(0);
    expect(again.output()).not.toContain('data-dir-created');
  }, 30_000);

  it('says where a paused instance is resumed when its slot is skipped (--once has no status API of its own)', async () => {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '0 9 * * 1', MARKET: 'BTC_USDT', AMOUNT: '0.001' });
    const first = startDaemon(args('--live', '--once'), t.live());
    expect(await first.exited).toBe(0);
    const journal = new SqliteJournal({ path: join(t.dir.data, 'stacker.db') });
    await journal.open();
    try {
      await journal.setOperatorControl({ control: 'pause', instance: 'dca-btc', on: true });
    } finally {
      await journal.close();
    }
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const paused = startDaemon(args('--live', '--once'), t.live());
    await paused.exited;
    expect(paused.output()).toMatch(/^dca-btc: skipped \(paused from the status API: resume it there \(the status page, or POST \/api\/instances\/dca-btc\/resume\) on a running daemon\)$/m);
    expect(t.sandbox.exchange.orderHistory({})).toHaveLength(1);
  }, 30_000);

  it('says on its line why a slot failed: the journal\'s reason, printed beside the outcome', async () => {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '0 9 * * 1', MARKET: 'BTC_USDT', AMOUNT: '0.001' });
    // The exchange refuses every balance read for now: the snapshot fails, nothing is sent.
    t.sandbox.faults.inject({ path: '/api/v4/trade-account/balance', kind: 'status', status: 503, body: 'maintenance', times: 20 });
    const daemon = startDaemon(args('--live', '--once'), t.live());
    // The exchange down is a failure that passes: exit 4, as the exit table says, not 1.
    expect(await daemon.exited).toBe(4);
    expect(daemon.output()).toMatch(/^dca-btc: skipped \(snapshot failed \(E_UNAVAILABLE\): .*503.*\)$/m);
    expect(t.sandbox.exchange.orderHistory({})).toHaveLength(0);
    // The journal command it points to shows that slot too, though it has no intent.
    const read = await runCli(['journal', '--mode', 'live', '--data-dir', t.dir.data], { HOME: t.dir.root });
    expect(read.stdout).toMatch(/slots that did not end done \(newest first\):\n.*\n.*dca-btc +skipped +snapshot failed \(E_UNAVAILABLE\)/);
    const asJson = JSON.parse((await runCli(['journal', '--mode', 'live', '--data-dir', t.dir.data, '--json'], { HOME: t.dir.root })).stdout) as { slotsNotDone: Array<{ instance: string; status: string; reason: string }> };
    expect(asJson.slotsNotDone).toEqual([expect.objectContaining({ instance: 'dca-btc', status: 'skipped', reason: expect.stringContaining('snapshot failed') })]);
  }, 30_000);

  it('exits 4 for a buy whose answer was lost (it may have happened; it is looked up), and 1 for an answer it cannot read (that does not pass by itself)', async () => {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '0 9 * * 1', MARKET: 'BTC_USDT', AMOUNT: '0.001' });
    t.sandbox.faults.inject({ path: '/api/v4/order/stock_market', kind: 'drop-after-commit' });
    // Longer than the slot's own lookups: the answer stays lost while --once runs.
    t.sandbox.faults.historyLagMs = 60_000;
    const lost = startDaemon(args('--live', '--once'), t.live());
    expect(await lost.exited).toBe(4);
    expect(lost.output()).toMatch(/^dca-btc: failed/m);
    expect(lost.output()).toMatch(/buy 0\.001 BTC_USDT stp=no: unknown/);
    expect(t.sandbox.exchange.orderHistory({})).toHaveLength(1);

    t.sandbox.faults.historyLagMs = 0;
    t.sandbox.faults.inject({ path: '/api/v4/trade-account/balance', kind: 'status', status: 200, body: { USDT: { available: 'lots', freeze: '0' } }, times: 20 });
    await new Promise((resolve) => setTimeout(resolve, 1050 - (Date.now() % 1000)));
    const unreadable = startDaemon(args('--live', '--once'), t.live());
    expect(await unreadable.exited).toBe(1);
    expect(unreadable.output()).toMatch(/^dca-btc: skipped \(snapshot failed \(E_PROTOCOL\)/m);
  }, 40_000);

  it('with --instance runs that one only, in dry-run by default, and sends the exchange nothing', async () => {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '0 9 * * 1', MARKET: 'BTC_USDT', AMOUNT: '0.001' });
    t.dir.writeStrategy('dca-eth', { STRATEGY: 'dca', SCHEDULE: '0 9 * * 1', MARKET: 'ETH_USDT', AMOUNT: '0.01' });
    const daemon = startDaemon(args('--once', '--instance', 'dca-eth'), { ...t.live(), STACKER_MODE: 'dry-run', STACKER_DRY_RUN_WALLET: 'USDT=100' });
    expect(await daemon.exited).toBe(0);
    expect(daemon.output()).toMatch(/^dca-eth: done$/m);
    expect(daemon.output()).not.toMatch(/^dca-btc:/m);
    expect(daemon.output()).toContain('stacker journal --mode dry-run');
    expect(t.sandbox.exchange.orderHistory({})).toHaveLength(0);
  }, 30_000);

  it('names under its instance what of the slot did not happen: a buy refused (the kill switch, the balance) is not just "done"', async () => {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '0 9 * * 1', MARKET: 'BTC_USDT', AMOUNT: '0.001' });
    t.dir.writeStrategy('sweep', { STRATEGY: 'flex-sweep', SCHEDULE: '0 9 * * 1', TICKER: 'BTC', MODE: 'all' });
    const killed = startDaemon(args('--live', '--once'), { ...t.live(), STACKER_KILL_SWITCH: '1' });
    expect(await killed.exited).toBe(0);
    expect(killed.output()).toMatch(/^dca-btc: done\n {2}buy 0\.001 BTC_USDT stp=no: refused \(kill-switch: not sent: STACKER_KILL_SWITCH is set\)$/m);
    expect(killed.output()).toMatch(/^sweep: done\n {2}declined by the strategy: .* \(no-active-investment\)$/m);
    expect(t.sandbox.exchange.orderHistory({})).toHaveLength(0);

    // An empty paper wallet, as a new user's first dry-run has: refused for the balance, said so.
    const broke = startDaemon(['--strategies', t.dir.strategies, '--data-dir', join(t.dir.root, 'dry'), '--once', '--instance', 'dca-btc'], { HOME: t.dir.root, STACKER_BASE_URL: t.sandbox.url });
    expect(await broke.exited).toBe(0);
    expect(broke.output()).toMatch(/^dca-btc: done\n {2}buy 0\.001 BTC_USDT stp=no: refused \(insufficient-funds: .*\)$/m);

    // A slot that bought has nothing under it. The next second: the killed run's slot (this
    // second, in the same journal) is journalled already.
    await new Promise((resolve) => setTimeout(resolve, 1050 - (Date.now() % 1000)));
    const bought = startDaemon(args('--live', '--once', '--instance', 'dca-btc'), t.live());
    expect(await bought.exited).toBe(0);
    expect(bought.output()).toMatch(/^dca-btc: done\n\(what each slot did/m);
  }, 30_000);

  it('prints the journal command that reads what it did: with the --data-dir and --env-file it was given, as stacker journal finds its journal', async () => {
    t.dir.writeStrategy('dca-eth', { STRATEGY: 'dca', SCHEDULE: '0 9 * * 1', MARKET: 'ETH_USDT', AMOUNT: '0.01' });
    // A data dir given by flag, and one given by the env file: each must travel with the command.
    const envFile = join(t.dir.root, 'dry.env');
    writeFileSync(envFile, `STACKER_DATA_DIR=${join(t.dir.root, 'from-env-file')}\nSTACKER_DRY_RUN_WALLET=USDT=100\n`);
    for (const more of [['--data-dir', t.dir.data], ['--env-file', envFile]]) {
      const daemon = startDaemon(['--strategies', t.dir.strategies, '--once', ...more], { HOME: t.dir.root, STACKER_BASE_URL: t.sandbox.url, STACKER_DRY_RUN_WALLET: 'USDT=100' });
      expect(await daemon.exited).toBe(0);
      const printed = /^\(what each slot did: (stacker journal .*)\)$/m.exec(daemon.output())?.[1] ?? '';
      expect(printed).toBe(['stacker journal --mode dry-run', ...more].join(' '));
      const read = await runCli(printed.split(' ').slice(1), { HOME: t.dir.root });
      expect([read.code, read.stderr]).toEqual([0, '']);
      expect(read.stdout).toMatch(/dca-eth .* done +buy 0\.01 ETH_USDT/);
    }
  }, 30_000);

  it('refuses an unknown or disabled --instance, --instance without --once, and --standby without PostgreSQL, with exit 2 and nothing sent', async () => {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '0 9 * * 1', MARKET: 'BTC_USDT', AMOUNT: '0.001' });
    t.dir.writeStrategy('off', { STRATEGY: 'dca', SCHEDULE: '0 9 * * 1', MARKET: 'BTC_USDT', AMOUNT: '0.001', ENABLED: 'false' });
    for (const [more, message] of [
      [['--once', '--instance', 'dca-eht'], /--instance: no instance "dca-eht" in the strategies folder \(instances: dca-btc, off\)/],
      [['--once', '--instance', 'off'], /--instance: off is disabled \(ENABLED=false/],
      [['--instance', 'dca-btc'], /--instance: only applies with --once/],
      [['--standby'], /--standby: needs the journal in PostgreSQL \(set STACKER_DATABASE_URL\)/],
    ] as const) {
      const daemon = startDaemon(args('--live', ...more), t.live());
      expect(await daemon.exited).toBe(2);
      expect(daemon.output()).toMatch(message);
    }
    expect(t.sandbox.exchange.orderHistory({})).toHaveLength(0);
  }, 30_000);
});
