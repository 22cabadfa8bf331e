import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatDecimal } from '../../../src/domain/money.ts';
import { startSandbox } from '../../../src/sandbox/server.ts';
import { SqliteJournal } from '../../../src/store/sqlite-journal.ts';
import { liveEnv, sandboxPerTest, startDaemon } from '../daemon-process.ts';
import { agreement, eventually, report } from './agreement.ts';

// The daemon (`stacker run --live`, a child process) against the sandbox over HTTP, misbehaving
// as a real exchange does; the journal is a real SQLite file compared with the sandbox's books.
const t = sandboxPerTest();
const ORDER_PATH = '/api/v4/order/stock_market';

const journalPath = (): string => join(t.dir.data, 'stacker.db');
const args = (): string[] => ['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data];
/** The shortest settle window allowed: the tests wait for it in real time. */
const env = (): Record<string, string> => ({ ...t.live(), STACKER_ORDER_SETTLE_WINDOW: '30s', STACKER_KILL_SWITCH_FILE: join(t.dir.root, 'STOP') });
const stopTrading = (): void => writeFileSync(join(t.dir.root, 'STOP'), '');
const DCA_BUDGET = { instance: 'dca-btc', asset: 'USDT', timeZone: 'UTC' } as const;
const today = (): string => new Date().toISOString().slice(0, 10);

/** What `read` makes of the daemon's journal file, opened read-only once the daemon has stopped. */
async function readJournal<T>(read: (journal: SqliteJournal) => Promise<T>): Promise<T> {
  const journal = new SqliteJournal({ path: journalPath(), readOnly: true });
  await journal.open();
  try {
    return await read(journal);
  } finally {
    await journal.close();
  }
}

describe('a lagging exchange', () => {
  it('takes each order, answers 502, shows it in its history only 8 s later: no order is sent twice, every one is journalled', async () => {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '*/2 * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001' });
    t.sandbox.faults.inject({ path: ORDER_PATH, kind: 'status', status: 502, body: { message: 'Bad Gateway' }, commit: true, times: Number.POSITIVE_INFINITY });
    t.sandbox.faults.historyLagMs = 8000;
    const daemon = startDaemon(args(), env());
    await daemon.waitFor('"event":"scheduled"', 20_000);
    await eventually(() => Promise.resolve(t.sandbox.exchange.orderHistory({}).length), (n) => n >= 6, 30_000, 'six orders taken');
    stopTrading();
    // Every lost answer is found once the history shows its order; nothing is concluded early.
    await eventually(() => agreement(t.sandbox, [journalPath()]), (a) => a.unresolved === 0 && a.notJournalled.length === 0, 40_000, 'every order resolved');
    daemon.child.kill('SIGTERM');
    expect(await daemon.exited).toBe(0);
    const result = await agreement(t.sandbox, [journalPath()]);
    report('502 after commit, history 8 s late × order', result);
    expect(result).toMatchObject({ placedTwice: [], notJournalled: [], notAtExchange: [], unresolved: 0 });
    expect(daemon.output()).toContain('"event":"order-answer-lost"');
    expect(daemon.output()).not.toContain('"event":"order-not-found"');
  }, 120_000);

  it("answers 504 at once and performs the order after its settle window: the order is found late, journalled and counted in the day's budget, which was never given back meanwhile", async () => {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '*/2 * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001', BUDGET_QUOTE_PER_DAY: '100000' });
    // The gateway gives up at once; its backend takes the order 36 s later, past the 30 s window.
    t.sandbox.faults.inject({ path: ORDER_PATH, kind: 'commit-late', status: 504, body: 'Gateway Time-out', latencyMs: 36_000, times: 1 });
    const daemon = startDaemon(args(), env());
    // One order is enough (the wallet must still pay for it when the backend gets to it); the
    // slots after it still read the history before each send.
    await daemon.waitFor('"event":"order-answer-lost"', 20_000);
    stopTrading();
    await daemon.waitFor('"was":"not-found"', 60_000);
    daemon.child.kill('SIGTERM');
    expect(await daemon.exited).toBe(0);
    // Past its window but within the hour: its budget stayed counted, so no later buy could spend it again.
    expect(daemon.output()).not.toContain('"event":"not-found-cleared"');
    const result = await agreement(t.sandbox, [journalPath()]);
    report('504 at once, performed after the settle window × order', result);
    expect(result).toMatchObject({ placedTwice: [], notJournalled: [], notAtExchange: [], unresolved: 0 });
    expect(await readJournal(async (journal) => formatDecimal((await journal.budgetSpent(DCA_BUDGET, Date.now())).day))).toBe(result.spentPerDay[today()]);
  }, 120_000);

  it("answers each order without a status and with nothing filled, as an older exchange did before the match: each is followed until the history shows its fill, recorded and counted in the day's budget, never told as refused", async () => {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '*/2 * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001', BUDGET_QUOTE_PER_DAY: '100000' });
    t.sandbox.faults.inject({ path: ORDER_PATH, kind: 'unfilled-answer', times: Number.POSITIVE_INFINITY });
    const daemon = startDaemon(args(), env());
    // Each order is journalled NEW (not known to be over), then followed until the history lists it FILLED.
    await eventually(() => Promise.resolve(daemon.output().split('"to":"FILLED"').length - 1), (n) => n >= 2, 30_000, 'two orders filled');
    stopTrading();
    daemon.child.kill('SIGTERM');
    expect(await daemon.exited).toBe(0);
    // A start reads the history before anything else: the last order is corrected there.
    const again = startDaemon(args(), env());
    await again.waitFor('"event":"scheduled"', 20_000);
    again.child.kill('SIGTERM');
    expect(await again.exited).toBe(0);
    const result = await agreement(t.sandbox, [journalPath()]);
    report('orders answered unfilled, filled in the history × order', result);
    expect(result).toMatchObject({ placedTwice: [], notJournalled: [], notAtExchange: [], unresolved: 0 });
    expect(daemon.output()).not.toContain('"event":"order-unfilled"');
    const statuses = await readJournal(async (journal) => (await journal.listOrders({ limit: -1 })).map((order) => order.status));
    expect(statuses).toEqual(t.sandbox.exchange.orderHistory({}).map(() => 'FILLED'));
    expect(await readJournal(async (journal) => formatDecimal((await journal.budgetSpent(DCA_BUDGET, Date.now())).day))).toBe(result.spentPerDay[today()]);
  }, 120_000);

  it("takes each order, then answers as if it had refused it (a 200 whose body is an error, a nonce-window refusal while the clocks agree, \"This client order id is already used\"), its history 8 s late: each is a lost answer, found, journalled once and counted, none told refused or sent again", async () => {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '*/2 * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001', BUDGET_QUOTE_PER_DAY: '100000' });
    const answers = [
      { status: 200, body: { success: false, message: 'Internal error', result: null } },
      { status: 400, body: { code: 0, errors: {}, message: 'Your nonce is more than 5 seconds lesser than the current nonce' } },
      { status: 422, body: { code: 36, message: 'Validation failed', errors: { clientOrderId: ['This client order id is already used by the current account.'] } } },
    ];
    for (const answer of answers) t.sandbox.faults.inject({ path: ORDER_PATH, kind: 'status', ...answer, commit: true });
    t.sandbox.faults.historyLagMs = 8000;
    const daemon = startDaemon(args(), env());
    await eventually(() => Promise.resolve(t.sandbox.faults.pending().length), (n) => n === 0, 30_000, 'each answer given once');
    stopTrading();
    await eventually(() => agreement(t.sandbox, [journalPath()]), (a) => a.unresolved === 0 && a.notJournalled.length === 0, 40_000, 'every order resolved');
    daemon.child.kill('SIGTERM');
    expect(await daemon.exited).toBe(0);
    const result = await agreement(t.sandbox, [journalPath()]);
    report('200 error body, nonce window, id already used, after commit × order', result);
    expect(result).toMatchObject({ placedTwice: [], notJournalled: [], notAtExchange: [], unresolved: 0 });
    expect(daemon.output().split('"event":"order-answer-lost"').length - 1).toBe(3);
    expect(daemon.output()).not.toContain('"event":"exchange-refused"');
    expect(daemon.output()).not.toContain('"event":"trading-stopped"');
    expect(await readJournal(async (journal) => formatDecimal((await journal.budgetSpent(DCA_BUDGET, Date.now())).day))).toBe(result.spentPerDay[today()]);
  }, 120_000);

  it('processes an order 4 s late while the daemon is killed -9 right after sending and restarted: each late order is found and journalled', async () => {
    // A sandbox of its own, which says when an order request has arrived: the kill must land after the send.
    let arrived = 0;
    const sandbox = await startSandbox({ onRequest: (request) => void (request.path === ORDER_PATH && (arrived += 1)) });
    try {
      t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '*/2 * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001' });
      sandbox.faults.inject({ path: ORDER_PATH, kind: 'latency', latencyMs: 4000, times: Number.POSITIVE_INFINITY });
      const envHere = { ...env(), ...liveEnv(sandbox, t.dir) };
      for (let kill = 1; kill <= 4; kill += 1) {
        const daemon = startDaemon(args(), envHere);
        await eventually(() => Promise.resolve(arrived), (n) => n >= kill, 20_000, `order request ${kill} arrived`);
        daemon.child.kill('SIGKILL');
        expect(await daemon.exited).toBe('SIGKILL');
      }
      // The last start sends nothing new: it only has to find what the killed ones sent.
      stopTrading();
      const last = startDaemon(args(), envHere);
      await last.waitFor('"event":"scheduled"', 20_000);
      await eventually(() => agreement(sandbox, [journalPath()]), (a) => a.unresolved === 0 && a.exchangeOrders >= 4 && a.notJournalled.length === 0, 45_000, 'every late order found');
      last.child.kill('SIGTERM');
      expect(await last.exited).toBe(0);
      const result = await agreement(sandbox, [journalPath()]);
      report('order processed 4 s late, daemon killed -9 after send × order', result);
      expect(result).toMatchObject({ placedTwice: [], notJournalled: [], notAtExchange: [], unresolved: 0 });
      expect(result.exchangeOrders).toBe(4);
    } finally {
      await sandbox.stop();
    }
  }, 150_000);
});
