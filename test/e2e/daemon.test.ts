import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deriveClientOrderId } from '../../src/domain/client-order-id.ts';
import { Decimal, formatDecimal } from '../../src/domain/money.ts';
import { DEMO_FLEX_PLAN_ID } from '../../src/sim/seed.ts';
import { SqliteJournal } from '../../src/store/sqlite-journal.ts';
import { startSandbox } from '../../src/sandbox/server.ts';
import { daemonDir, liveEnv, sandboxPerTest, startDaemon } from './daemon-process.ts';

// `stacker run` as a user starts it (the real CLI in a child process), trading live against the
// sandbox on second-level schedules; afterwards the journal is compared with the sandbox's books.
const t = sandboxPerTest();

const live = (): Record<string, string> => t.live();

interface LogLine {
  readonly event?: string;
  readonly msg?: string;
  readonly mode?: string;
  readonly [key: string]: unknown;
}

const jsonLines = (text: string): LogLine[] =>
  text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);

/** The CPU time a process has used (Linux's /proc); null where there is none. */
function cpuSecondsOf(pid: number | undefined): number | null {
  if (pid === undefined || !existsSync(`/proc/${pid}/stat`)) return null;
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** SIGTERM ends the run with exit 0, journalled as such, every order the sandbox holds in the journal. */
async function stopsCleanlyOnSigterm(daemon: ReturnType<typeof startDaemon>): Promise<void> {
  daemon.child.kill('SIGTERM');
  expect(await daemon.exited).toBe(0);
  const journal = new SqliteJournal({ path: join(t.dir.data, 'stacker.db'), readOnly: true });
  await journal.open();
  try {
    expect((await journal.listRuns(1))[0]?.exitReason).toBe('SIGTERM');
    expect((await journal.listOrders({ limit: 100 })).map((o) => o.orderId).sort()).toEqual(t.sandbox.exchange.orderHistory({}).map((o) => o.orderId).sort());
  } finally {
    await journal.close();
  }
}

/** A daemon buying every second whose first order the exchange sits on for `latencyMs`: its slot is in flight when this returns. */
/** A live daemon buying every second on the sandbox, once its first buy has filled. */
async function buyingEverySecond(): Promise<ReturnType<typeof startDaemon>> {
  t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '* * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001' });
  const daemon = startDaemon(['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data], live());
  await daemon.waitFor('"to":"FILLED"');
  return daemon;
}

async function withSlotInFlight(latencyMs: number): Promise<ReturnType<typeof startDaemon>> {
  t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '* * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001' });
  t.sandbox.faults.inject({ path: '/api/v4/order/stock_market', kind: 'latency', latencyMs, times: 1 });
  const daemon = startDaemon(['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data], live());
  await daemon.waitFor('"event":"order-send"');
  return daemon;
}

describe('stacker run against the sandbox', () => {
  it('buys, sweeps and logs every transition; the journal equals the sandbox ledger; SIGTERM exits 0', async () => {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '* * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001', STP: 'cancel_new', ALLOW_TRANSFER: 'true' });
    t.dir.writeStrategy('sweep', { STRATEGY: 'flex-sweep', SCHEDULE: '*/2 * * * * *', PLAN: DEMO_FLEX_PLAN_ID, MODE: 'all' });
    t.dir.writeStrategy('report', { STRATEGY: 'balance-report', SCHEDULE: '*/2 * * * * *' });
    const daemon = startDaemon(['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data], live());
    await daemon.waitFor('"event":"scheduled"');
    await daemon.waitFor('"to":"FILLED"');
    await new Promise((resolve) => setTimeout(resolve, 3000));
    daemon.child.kill('SIGTERM');
    expect(await daemon.exited).toBe(0);

    const lines = jsonLines(daemon.output());
    expect(lines.every((line) => line.mode === 'live')).toBe(true);

    const journal = new SqliteJournal({ path: join(t.dir.data, 'stacker.db'), readOnly: true });
    await journal.open();
    try {
      const sandboxOrders = t.sandbox.exchange.orderHistory({});
      expect(sandboxOrders.length).toBeGreaterThanOrEqual(3);
      const stored = await journal.listOrders({ limit: 1000 });
      expect(stored.map((o) => o.orderId).sort()).toEqual(sandboxOrders.map((o) => o.orderId).sort());
      for (const order of sandboxOrders) {
        const mine = stored.find((o) => o.orderId === order.orderId);
        expect([mine?.status, formatDecimal(mine?.filledBase ?? order.amount.neg()), formatDecimal(mine?.filledQuote ?? order.amount.neg()), formatDecimal(mine?.fee ?? order.amount.neg())]).toEqual([
          order.status,
          formatDecimal(order.filledBase),
          formatDecimal(order.filledQuote),
          formatDecimal(order.fee),
        ]);
      }
      // One clientOrderId per order: nothing was placed twice.
      expect(new Set(sandboxOrders.map((o) => o.clientOrderId)).size).toBe(sandboxOrders.length);

      // Every transition in the journal was logged exactly once.
      const transitions = (await Promise.all(stored.map((o) => journal.orderTransitions(o.orderId)))).flat();
      const logged = lines.filter((line) => line.event === 'order-transition');
      expect(logged).toHaveLength(transitions.length);

      // The sweep: one withdrawal in the sandbox ledger, one done flex operation in the journal.
      const withdrawals = t.sandbox.exchange.ledger().filter((entry) => entry.reason === 'flex-withdraw' && entry.account === 'main');
      const entries = await journal.recentJournal({ instance: 'sweep', limit: 100 });
      const done = entries.filter((entry) => entry.flexOperation?.status === 'done');
      expect(done).toHaveLength(withdrawals.length);
      expect(withdrawals).toHaveLength(1);

      // Nothing left open.
      expect(await journal.unresolvedIntents()).toHaveLength(0);
      const runs = await journal.listRuns();
      expect(runs[0]?.exitReason).toBe('SIGTERM');
    } finally {
      await journal.close();
    }
    expect(t.sandbox.exchange.verifyLedger()).toBe(true);
    expect(daemon.output()).not.toContain(t.sandbox.apiSecret);
  }, 30_000);

  it('dry-run trades on a paper account with the exchange\'s prices and sends the exchange nothing that moves money', async () => {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '* * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001' });
    const before = t.sandbox.exchange.ledger().length;
    // Keys set, STACKER_MODE=live, but no --live: one switch alone is dry-run, and it says so.
    const daemon = startDaemon(['--strategies', t.dir.strategies, '--data-dir', t.dir.data], { ...live(), STACKER_DRY_RUN_WALLET: 'USDT=500' });
    await daemon.waitFor('"to":"FILLED"');
    daemon.child.kill('SIGTERM');
    expect(await daemon.exited).toBe(0);
    const lines = jsonLines(daemon.output());
    expect(lines.every((line) => line.mode === 'dry-run')).toBe(true);
    expect(daemon.output()).toContain('--live');
    expect(t.sandbox.exchange.orderHistory({})).toHaveLength(0);
    expect(t.sandbox.exchange.ledger()).toHaveLength(before);
    const journal = new SqliteJournal({ path: join(t.dir.data, 'stacker-dry-run.db'), readOnly: true });
    await journal.open();
    try {
      const orders = await journal.listOrders({ limit: 100 });
      expect(orders.length).toBeGreaterThanOrEqual(1);
      // Paper fills at the sandbox's own price: 0.001 × 65000.
      expect(formatDecimal(orders[0]?.filledQuote ?? orders[0]?.amount.neg() ?? new Decimal(-1))).toBe('65');
    } finally {
      await journal.close();
    }
  }, 30_000);

  it('refuses to start with a bad configuration, naming every problem, and sends nothing', async () => {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '61 * * * *', MARKET: 'BTC_USDT', AMOUNT: '1e-3', AMOUTN: '1' });
    t.dir.writeStrategy('other', { STRATEGY: 'dac', SCHEDULE: '0 9 * * *' });
    const daemon = startDaemon(['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data], live());
    expect(await daemon.exited).toBe(2);
    const text = daemon.output();
    for (const part of ['SCHEDULE', 'AMOUNT', 'AMOUTN', 'dac']) expect(text).toContain(part);
    expect(t.sandbox.exchange.orderHistory({})).toHaveLength(0);
    // Said in the log a supervisor reads too: one JSON line on stdout.
    const logged = text.split('\n').filter((line) => line.startsWith('{') && line.includes('"event":"start-failed"'));
    expect(logged).toHaveLength(1);
    expect(JSON.parse(logged[0] ?? '{}')).toMatchObject({ level: 50, event: 'start-failed', code: 'E_CONFIG', msg: expect.stringContaining('AMOUTN') });
  }, 20_000);

  it('refuses to start when its metrics port is taken, naming STACKER_METRICS_PORT, and sends nothing', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '* * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001' });
      const daemon = startDaemon(['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data], { ...live(), STACKER_METRICS_PORT: String(port), STACKER_METRICS_HOST: '127.0.0.1' });
      expect(await daemon.exited).toBe(2);
      expect(daemon.output()).toContain(`STACKER_METRICS_PORT: port ${port} is already in use on 127.0.0.1`);
      expect(daemon.output()).not.toContain('unexpected failure');
      expect(t.sandbox.exchange.orderHistory({})).toHaveLength(0);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  }, 20_000);

  it('ignores SIGHUP (a log rotation, systemctl reload, a terminal hanging up) with a warning that says how to stop it, and trades on; SIGTERM then stops it, exit 0', async () => {
    const daemon = await buyingEverySecond();
    daemon.child.kill('SIGHUP');
    await daemon.waitFor('"event":"signal-ignored"');
    const warned = jsonLines(daemon.output()).find((line) => line.event === 'signal-ignored');
    expect(warned).toMatchObject({ level: 40, signal: 'SIGHUP', msg: expect.stringContaining('SIGTERM or SIGINT stops it') });
    const before = t.sandbox.exchange.orderHistory({}).length;
    await expect.poll(() => t.sandbox.exchange.orderHistory({}).length, { timeout: 10_000 }).toBeGreaterThan(before + 1);
    expect(daemon.output()).not.toContain('"event":"stopping"');
    await stopsCleanlyOnSigterm(daemon);
  }, 60_000);

  it('trades on when its terminal or log reader goes away (writes to stdout and stderr fail), without crashing or spinning, and still stops on SIGTERM', async () => {
    const daemon = await buyingEverySecond();
    // What a hang-up does: the reader is gone (every write now fails) and SIGHUP comes.
    daemon.child.stdout?.destroy();
    daemon.child.stderr?.destroy();
    daemon.child.kill('SIGHUP');
    const before = t.sandbox.exchange.orderHistory({}).length;
    const cpuBefore = cpuSecondsOf(daemon.child.pid);
    const startedAt = Date.now();
    await expect.poll(() => t.sandbox.exchange.orderHistory({}).length, { timeout: 10_000 }).toBeGreaterThan(before + 2);
    // A write retried in a loop would take a whole core; a slot a second takes a few per cent.
    if (cpuBefore !== null) expect((cpuSecondsOf(daemon.child.pid) ?? 0) - cpuBefore).toBeLessThan((0.5 * (Date.now() - startedAt)) / 1000);
    expect(daemon.child.exitCode).toBeNull();
    await stopsCleanlyOnSigterm(daemon);
  }, 60_000);

  it("a stop whose lock owner file cannot be removed (the data dir remounted read-only) is a clean stop with a warning in the stop's words, not a failed start: exit 0", async () => {
    const daemon = await buyingEverySecond();
    // Something its unlink refuses, as EROFS would (root writes anywhere, so not a permission).
    const ownerFile = join(t.dir.data, 'stacker.db.run-lock.json');
    rmSync(ownerFile);
    mkdirSync(ownerFile);
    daemon.child.kill('SIGTERM');
    expect(await daemon.exited, daemon.output()).toBe(0);
    const lines = jsonLines(daemon.output());
    expect(lines.find((line) => line.event === 'stop-cleanup-failed')).toMatchObject({ level: 40, msg: expect.stringContaining(`could not remove its owner file ${ownerFile}`) });
    expect(lines.at(-1)).toMatchObject({ event: 'stopped', reason: 'SIGTERM' });
    expect(daemon.output()).not.toContain('start-failed');
    expect(daemon.output()).not.toContain('unexpected failure');
  }, 30_000);

  it('handles the slots missed while the process was paused (a container paused, a machine suspended) as a restart does: one slot of the wake buys (the newest run late with CATCH_UP=last, or the one due at the wake), the others are journalled missed, said in one line', async () => {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '*/2 * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001', CATCH_UP: 'last', CATCH_UP_WINDOW: '1m' });
    const daemon = startDaemon(['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data], live());
    await daemon.waitFor('"to":"FILLED"');
    const pausedAtMs = Date.now();
    daemon.child.kill('SIGSTOP');
    await new Promise((resolve) => setTimeout(resolve, 7000));
    const wokeAtMs = Date.now();
    daemon.child.kill('SIGCONT');
    await daemon.waitFor('"event":"slots-missed"', 30_000).catch((error: unknown) => {
      throw new Error(`paused ${new Date(pausedAtMs).toISOString()}, woken ${new Date(wokeAtMs).toISOString()}: ${error instanceof Error ? error.message : String(error)}`);
    });
    await new Promise((resolve) => setTimeout(resolve, 800));
    daemon.child.kill('SIGTERM');
    expect(await daemon.exited).toBe(0);
    const lines = jsonLines(daemon.output());
    expect(lines.filter((line) => line.event === 'slots-missed')).toHaveLength(1);
    expect(lines.filter((line) => line.event === 'slot-missed')).toEqual([]);
    const journal = new SqliteJournal({ path: join(t.dir.data, 'stacker.db'), readOnly: true });
    await journal.open();
    try {
      const missed = await journal.listSlots({ instance: 'dca-btc', status: 'missed' });
      expect(missed.length).toBeGreaterThanOrEqual(2);
      expect(missed.every((slot) => slot.reason?.startsWith('its time passed without it firing') === true)).toBe(true);
      // Of the slots due from the pause to the wake, one bought, as a restart at the wake would
      // have bought one: the newest missed run late, or the one node-cron fired at the wake.
      const wake = await journal.listSlots({ instance: 'dca-btc', status: 'done', sinceMs: pausedAtMs, untilMs: wokeAtMs + 1 });
      expect(wake).toHaveLength(1);
      // The slot run late is journalled done, with its order; none twice.
      const stored = await journal.listOrders({ limit: 100 });
      expect(stored.map((o) => o.orderId).sort()).toEqual(t.sandbox.exchange.orderHistory({}).map((o) => o.orderId).sort());
    } finally {
      await journal.close();
    }
  }, 60_000);

  it('journals every slot that falls while the start catches up (a slot run late that takes seconds): none is left without a row', async () => {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '*/2 * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001', CATCH_UP: 'last', CATCH_UP_WINDOW: '1m' });
    const first = startDaemon(['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data], live());
    await first.waitFor('"to":"FILLED"');
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    // Stopped across a slot; at the next start that slot is run late, and its order takes 5 s.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    t.sandbox.faults.inject({ path: '/api/v4/order/stock_market', kind: 'latency', latencyMs: 5000, times: 1 });
    const second = startDaemon(['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data], live());
    await second.waitFor('"event":"catch-up"');
    await second.waitFor('"event":"scheduled"', 20_000);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    const journal = new SqliteJournal({ path: join(t.dir.data, 'stacker.db'), readOnly: true });
    await journal.open();
    try {
      const slots = (await journal.listSlots({ instance: 'dca-btc', limit: 1000 })).map((slot) => slot.slotTimeMs).sort((a, b) => a - b);
      const every: number[] = [];
      for (let at = slots[0] as number; at <= (slots.at(-1) as number); at += 2000) every.push(at);
      expect(slots).toEqual(every);
    } finally {
      await journal.close();
    }
  }, 60_000);

  it('runs the newest slot that fell while the start caught up as a late fire, whatever CATCH_UP says, and journals the older ones missed while stacker was starting', async () => {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '*/2 * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001', CATCH_UP: 'last', CATCH_UP_WINDOW: '1m' });
    t.dir.writeStrategy('dca-skip', { STRATEGY: 'dca', SCHEDULE: '*/2 * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001', CATCH_UP: 'skip' });
    const first = startDaemon(['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data], live());
    await first.waitFor('"to":"FILLED"');
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    // Stopped across a slot; at the next start dca-btc's is run late, its order taking 7 s: dca-skip's slots fall meanwhile.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    t.sandbox.faults.inject({ path: '/api/v4/order/stock_market', kind: 'latency', latencyMs: 7000, times: 1 });
    // dca-skip's late fire's order takes 3 s, and a stop comes at once: it waits for it.
    t.sandbox.faults.inject({ path: '/api/v4/order/stock_market', kind: 'latency', latencyMs: 3000, times: 1 });
    const second = startDaemon(['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data], live());
    await second.waitFor('"event":"scheduled"', 20_000);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    const scheduledAtMs = Number(jsonLines(second.output()).find((line) => line.event === 'scheduled')?.['time']);
    const journal = new SqliteJournal({ path: join(t.dir.data, 'stacker.db'), readOnly: true });
    await journal.open();
    try {
      const slots = await journal.listSlots({ instance: 'dca-skip', limit: 1000 });
      const starting = slots.filter((slot) => slot.reason?.startsWith('its time passed without it firing (stacker was starting)') ?? false);
      expect(starting.length).toBeGreaterThan(0);
      for (const slot of starting) expect(slot.status).toBe('missed');
      // The newest of them, seconds old when the scheduler began, ran.
      const newest = Math.max(...starting.map((slot) => slot.slotTimeMs)) + 2000;
      expect(newest).toBeLessThanOrEqual(scheduledAtMs);
      expect(slots.find((slot) => slot.slotTimeMs === newest)?.status).toBe('done');
      expect((await journal.listOrders({ instance: 'dca-skip', limit: 1000 })).map((order) => order.clientOrderId)).toContain(deriveClientOrderId('dca-skip', newest, 0));
    } finally {
      await journal.close();
    }
    expect(second.output()).toMatch(/"event":"slots-missed","instance":"dca-skip"[^\n]*passed while stacker was starting; journalled as missed/);
  }, 60_000);

  it("a second SIGTERM while a slow slot finishes leaves at once, with the shell's code for SIGTERM (143)", async () => {
    const daemon = await withSlotInFlight(30_000);
    daemon.child.kill('SIGTERM');
    await daemon.waitFor('"event":"stopping"');
    daemon.child.kill('SIGTERM');
    expect(await daemon.exited).toBe(143);
    expect(daemon.output()).toContain('"event":"forced-exit"');
  }, 60_000);

  it('a SIGTERM while a read hangs is not held for the read to be tried again: the read in flight ends at its time limit, and the slot is left to the next start', async () => {
    const BALANCE = '/api/v4/trade-account/balance';
    const reads: number[] = [];
    const sandbox = await startSandbox({ onRequest: (request) => void (request.path === BALANCE && reads.push(request.receivedAtMs)) });
    const dir = daemonDir();
    try {
      dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '* * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001' });
      // Each balance read waits past the client's 10 s time limit: unstopped, it is tried 4 times.
      sandbox.faults.inject({ path: BALANCE, kind: 'latency', latencyMs: 12_000, times: 20 });
      const daemon = startDaemon(['--live', '--strategies', dir.strategies, '--data-dir', dir.data], liveEnv(sandbox, dir));
      await expect.poll(() => reads.length, { timeout: 15_000 }).toBeGreaterThanOrEqual(1);
      daemon.child.kill('SIGTERM');
      expect(await daemon.exited, daemon.output()).toBe(0);
      // The read in flight ran out; none followed it.
      expect(reads).toHaveLength(1);
      expect(sandbox.exchange.orderHistory({})).toHaveLength(0);
    } finally {
      await sandbox.stop();
      dir.remove();
    }
  }, 60_000);

  it('waits out an exchange that answers 503 at start, logging each try, then schedules and buys; a SIGTERM while it waits exits 0 with nothing sent', async () => {
    const MARKETS = '/api/v4/public/markets';
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '* * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001' });
    // Enough 503s to outlast the client's own retries of the first read: the start itself must wait.
    t.sandbox.faults.inject({ path: MARKETS, kind: 'status', status: 503, body: 'maintenance', times: 6 });
    const daemon = startDaemon(['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data], live());
    await daemon.waitFor('"event":"exchange-waiting"');
    await daemon.waitFor('"event":"exchange-back"', 20_000);
    await daemon.waitFor('"to":"FILLED"');
    daemon.child.kill('SIGTERM');
    expect(await daemon.exited, daemon.output()).toBe(0);
    const waiting = jsonLines(daemon.output()).find((line) => line.event === 'exchange-waiting');
    expect(waiting).toMatchObject({ account: 'default', code: 'E_UNAVAILABLE', attempt: 1, retryInMs: 2000 });

    // An exchange that stays down: the daemon waits until told to stop, and sends nothing.
    const other = daemonDir();
    try {
      other.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '* * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001' });
      t.sandbox.faults.inject({ path: MARKETS, kind: 'status', status: 503, body: 'maintenance', times: Number.POSITIVE_INFINITY });
      const before = t.sandbox.exchange.orderHistory({}).length;
      const stuck = startDaemon(['--live', '--strategies', other.strategies, '--data-dir', other.data], liveEnv(t.sandbox, other));
      await stuck.waitFor('"event":"exchange-waiting"');
      stuck.child.kill('SIGTERM');
      expect(await stuck.exited, stuck.output()).toBe(0);
      expect(stuck.output()).not.toContain('"event":"scheduled"');
      expect(t.sandbox.exchange.orderHistory({})).toHaveLength(before);
    } finally {
      other.remove();
    }
  }, 60_000);

  it('exits non-zero and stops trading when the exchange refuses the key', async () => {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '* * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001' });
    const daemon = startDaemon(['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data], { ...live(), STACKER_API_SECRET: 'wrong-secret-value' });
    const code = await daemon.exited;
    expect(code).not.toBe(0);
    expect(daemon.output()).toContain('E_AUTH');
    expect(daemon.output()).not.toContain('wrong-secret-value');
    expect(t.sandbox.exchange.orderHistory({})).toHaveLength(0);
  }, 20_000);
});
