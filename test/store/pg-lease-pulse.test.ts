import { describe, expect, it } from 'vitest';
import { PulseWatch, formatPulse, lapseMs, parsePulse, pulseIntervalMs } from '../../src/store/pg-lease-pulse.ts';
import { PgAdvisoryLock } from '../../src/store/pg-lock.ts';
import { createDatabase, dropDatabase, pgCluster } from '../support/pg-databases.ts';

const pulse = (count: number, token = 7, intervalMs = 5_000) => ({ pulse: { token, count, intervalMs }, leaseToken: token });

describe("a standby's watch on its owner's pulse", () => {
  it('says the owner froze only after its pulse stood still for the whole lapse, by the standby’s own clock', () => {
    let now = 0;
    const watch = new PulseWatch(30_000, () => now);
    expect(watch.lapsed(pulse(1)).lapsed).toBe(false);
    now = 29_999;
    expect(watch.lapsed(pulse(1))).toEqual({ lapsed: false, stillForMs: 29_999 });
    // A new pulse starts the wait again.
    expect(watch.lapsed(pulse(2)).lapsed).toBe(false);
    now = 29_999 + 30_000;
    expect(watch.lapsed(pulse(2))).toEqual({ lapsed: true, stillForMs: 30_000 });
  });

  it('waits at least six of the owner’s own pulses, however short its own lapse', () => {
    let now = 0;
    const watch = new PulseWatch(3_000, () => now);
    watch.lapsed(pulse(1, 7, 10_000));
    now = 59_999;
    expect(watch.lapsed(pulse(1, 7, 10_000)).lapsed).toBe(false);
    now = 60_000;
    expect(watch.lapsed(pulse(1, 7, 10_000)).lapsed).toBe(true);
  });

  it('never takes an owner that does not pulse for a frozen one: no pulse yet, or a pulse left under an earlier lease (an older build owns it now)', () => {
    let now = 0;
    const watch = new PulseWatch(1_000, () => now);
    for (const reading of [null, { pulse: { token: 6, count: 9, intervalMs: 500 }, leaseToken: 7 }]) {
      watch.lapsed(reading);
      now += 60_000;
      expect(watch.lapsed(reading)).toEqual({ lapsed: false, stillForMs: 0 });
    }
  });

  it('starts again after a gap in reading (the database unreachable): an outage is not a freeze', () => {
    let now = 0;
    const watch = new PulseWatch(1_000, () => now);
    watch.lapsed(pulse(1));
    watch.reset();
    now = 60_000;
    expect(watch.lapsed(pulse(1)).lapsed).toBe(false);
  });

  it('is written and read back as text, and follows the database timeout: a pulse every half of it, a lapse of three', () => {
    expect(parsePulse(formatPulse({ token: 3, count: 12, intervalMs: 500 }))).toEqual({ token: 3, count: 12, intervalMs: 500 });
    expect(parsePulse('not a pulse')).toBeNull();
    expect([pulseIntervalMs(10_000), lapseMs(10_000), pulseIntervalMs(1_000), lapseMs(1_000)]).toEqual([5_000, 30_000, 500, 3_000]);
  });
});

describe.skipIf(pgCluster() === null)('a standby ending a frozen owner’s session, with other databases on the cluster', () => {
  it('names and ends only the holder in its own database: the same lock key held in another database is another daemon’s', async () => {
    const cluster = pgCluster() as NonNullable<ReturnType<typeof pgCluster>>;
    const [urlA, urlB] = [await createDatabase(cluster), await createDatabase(cluster)];
    const lost: string[] = [];
    const inA = new PgAdvisoryLock(urlA, 'journal', 'journal:stacker_live', { pid: 1111, hostname: 'host-a', keep: { onLost: () => lost.push('a'), pollMs: 60_000 } });
    const inB = new PgAdvisoryLock(urlB, 'journal', 'journal:stacker_live', { pid: 2222, hostname: 'host-b', keep: { onLost: () => lost.push('b'), pollMs: 60_000 } });
    const standby = new PgAdvisoryLock(urlB, 'journal', 'journal:stacker_live', { pid: 3333, hostname: 'host-c' });
    try {
      await inA.acquire();
      await inB.acquire();
      const holders: string[] = [];
      let now = 0;
      // The owner in B pulses no more: the same pulse at every look.
      const stale = { pulse: { token: 1, count: 5, intervalMs: 0 }, leaseToken: 1 };
      await standby.acquire({
        pollMs: 20,
        onWaiting: (held) => holders.push(held.message),
        lapse: { watch: new PulseWatch(0, () => (now += 1_000)), read: async () => stale },
      });
      expect(holders).toEqual([expect.stringContaining('stacker pid 2222 on host-b')]);
      await expect.poll(() => lost).toEqual(['b']);
      // Database A's holder keeps its session and its lock.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(lost).toEqual(['b']);
    } finally {
      for (const lock of [standby, inB, inA]) await lock.release();
      await dropDatabase(cluster, urlA);
      await dropDatabase(cluster, urlB);
    }
  });
});
