import { afterAll, describe, expect, it } from 'vitest';
import { parseClientOrderId } from '../../src/domain/client-order-id.ts';
import { pgCluster } from '../support/pg-databases.ts';
import type { RunningDaemon } from './daemon-process.ts';
import { agreementWith, eventually } from './exactly-once/agreement.ts';
import { pgSandboxPerFile } from './pg-sandbox.ts';

/**
 * An owner frozen with its database session open (SIGSTOP, as a VM paused or a process stuck):
 * the server keeps the session, and so the journal's lock. The standby sees the owner's pulse
 * stand still, ends that session, takes the journal over and trades on; the owner, thawed,
 * journals nothing and sends nothing, and stops. No slot is ordered twice.
 *
 * STACKER_DATABASE_TIMEOUT=1s: the owner pulses every 0.5 s, the standby's lapse is 3 s.
 */
const cluster = pgCluster();
const t = pgSandboxPerFile(cluster);
const started: RunningDaemon[] = [];
afterAll(async () => {
  for (const daemon of started) {
    if (daemon.child.exitCode === null && daemon.child.signalCode === null) {
      daemon.child.kill('SIGCONT');
      daemon.child.kill('SIGKILL');
    }
    await daemon.exited;
  }
});

function startOn(host: string): RunningDaemon {
  const daemon = t.standbyOn(host, { STACKER_DATABASE_TIMEOUT: '1s' });
  started.push(daemon);
  return daemon;
}

describe.skipIf(cluster === null)('a PostgreSQL journal whose owner froze with its session open', () => {
  it('is taken over by the standby once the owner’s pulse stands still; the thawed owner sends nothing and stops; no slot is ordered twice', async () => {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '* * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.0001', CATCH_UP: 'last', CATCH_UP_WINDOW: '1m' });
    const owner = startOn('host-a');
    await owner.waitFor('"event":"scheduled"', 20_000);
    const standby = startOn('host-b');
    await standby.waitFor('"event":"standby"', 20_000);
    expect(await t.leaseHolderPid()).toBe(owner.child.pid);
    await eventually(async () => t.sandbox.exchange.orderHistory({}).length, (n) => n >= 2, 10_000, 'the owner trading');

    owner.child.kill('SIGSTOP');
    const frozenAt = Date.now();
    await standby.waitFor('"event":"standby-ended-frozen-owner"', 20_000);
    await standby.waitFor('"event":"took-over"', 20_000);
    const tookOverMs = Date.now() - frozenAt;
    expect(await t.leaseHolderPid()).toBe(standby.child.pid);
    const ordersForSlotsAfter = (sinceMs: number): number =>
      t.sandbox.exchange.orderHistory({}).filter((order) => (parseClientOrderId(order.clientOrderId)?.slotTimeMs ?? 0) > sinceMs).length;
    await eventually(async () => ordersForSlotsAfter(frozenAt + tookOverMs), (n) => n > 0, 15_000, 'the standby trading');

    // Thawed: its lock session is gone and the lease names the standby. It stops, non-zero, having journalled nothing more.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, frozenAt + 7_000 - Date.now())));
    owner.child.kill('SIGCONT');
    const ownerExit = await Promise.race([owner.exited, new Promise((resolve) => setTimeout(() => resolve('still running'), 20_000))]);
    expect(ownerExit).not.toBe('still running');
    expect(ownerExit).not.toBe(0);
    expect(owner.output()).toMatch(/not-owner|no longer owns|took the journal over/);
    // It says it was paused, before any timeout of that wake blames the exchange or the database.
    const lines = owner.output().split('\n');
    const paused = lines.findIndex((line) => line.includes('"event":"process-paused"'));
    expect(paused).toBeGreaterThanOrEqual(0);
    const blamed = lines.findIndex((line, at) => at > lines.findIndex((l) => l.includes('"event":"scheduled"')) && /"event":"(order-answer-lost|engine-error)"/.test(line));
    if (blamed >= 0) expect(paused).toBeLessThan(blamed);

    standby.child.kill('SIGTERM');
    expect(await standby.exited).toBe(0);
    await t.readJournal(async (journal) => {
      // What the thawed owner may have sent in the moment it ran (an order journalled as sent before the freeze) is found by the history.
      const result = await agreementWith(t.sandbox, [journal]);
      console.info(`[frozen owner] took over ${tookOverMs} ms after SIGSTOP; exchange orders ${result.exchangeOrders}, placed twice ${result.placedTwice.length}, lost ${result.notJournalled.length}`);
      expect(result.placedTwice).toEqual([]);
      const ids = t.sandbox.exchange.orderHistory({}).map((order) => order.clientOrderId);
      expect(new Set(ids).size).toBe(ids.length);
    });
  }, 120_000);
});
