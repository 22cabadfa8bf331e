import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../cli/run-cli.ts';
import { CLI, type DaemonDir, type RunningDaemon, daemonDir, sandboxPerTest, startDaemon } from '../daemon-process.ts';
import { agreement, eventually, report, sleep } from './agreement.ts';

// Containers and hosts: the daemon as PID 1 of a PID namespace of its own (what Docker runs),
// killed -9 and started again under the same or a new host name; and two daemons with their
// own HOME and data dir on one API key (two containers, two machines).
const t = sandboxPerTest();

/** unshare(1) with PID, UTS and mount namespaces needs privileges a CI container may not grant. */
const namespaces = spawnSync('unshare', ['--pid', '--fork', '--uts', '--mount-proc', 'true']).status === 0;
if (!namespaces) console.info('[exactly-once] skipping the PID-namespace (container) tests: unshare --pid --uts --mount-proc is not permitted here');

/** `node src/cli.ts` as PID 1 of a new PID namespace named `hostname`, killed with its namespace. */
function container(hostname: string): [string, ...string[]] {
  return ['unshare', '--pid', '--fork', '--uts', '--mount-proc', '--kill-child', 'sh', '-c', `hostname ${hostname} && exec "$0" "$@"`, process.execPath, CLI];
}

/** What `docker stop` does: SIGTERM to PID 1 of the container (unshare itself passes no signal on). */
function dockerStop(daemon: RunningDaemon): void {
  const inner = spawnSync('pgrep', ['-P', String(daemon.child.pid)], { encoding: 'utf8' }).stdout.trim().split('\n')[0];
  if (inner === undefined || inner === '') throw new Error('no process inside the container');
  process.kill(Number(inner), 'SIGTERM');
}

const args = (dir: DaemonDir): string[] => ['--live', '--strategies', dir.strategies, '--data-dir', dir.data];
const journalOf = (dir: DaemonDir): string => join(dir.data, 'stacker.db');
const dca = { STRATEGY: 'dca', SCHEDULE: '*/2 * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001' };

/** The daemon started second said why it held every buy (`event`), and across both journals nothing was bought twice or left unjournalled. */
async function expectSecondHeld(second: RunningDaemon, event: string, journals: readonly string[], label: string): Promise<void> {
  expect(second.output()).toContain(`"event":"${event}"`);
  expect(second.output()).toMatch(/every buy is refused \(journal-behind\)/);
  const result = await agreement(t.sandbox, journals);
  report(label, result);
  expect(result.placedTwice).toEqual([]);
  expect(result.notJournalled).toEqual([]);
}

describe('a daemon in a container', () => {
  it.skipIf(!namespaces)('killed -9 as PID 1 and restarted (same host name, then a new one) trades again without a human; a second live daemon is still refused', async () => {
    t.dir.writeStrategy('dca-btc', dca);
    const env = t.live();
    const first = startDaemon(args(t.dir), env, container('stacker-a'));
    await first.waitFor('"to":"FILLED"', 20_000);
    const owner = JSON.parse(readFileSync(join(t.dir.data, 'stacker.db.run-lock.json'), 'utf8')) as { pid: number; hostname: string };
    expect(owner).toMatchObject({ pid: 1, hostname: 'stacker-a' });

    // Two live daemons on one data dir: still refused, naming the holder.
    const second = startDaemon(args(t.dir), env, container('stacker-b'));
    expect(await second.exited).not.toBe(0);
    expect(second.output()).toContain('E_LOCKED');
    expect(second.output()).toContain('pid 1 on stacker-a');

    first.child.kill('SIGKILL');
    await first.exited;
    // `docker restart`: the same host name, PID 1 again.
    const restartedAt = Date.now();
    const restarted = startDaemon(args(t.dir), env, container('stacker-a'));
    await restarted.waitFor('"to":"FILLED"', 20_000);
    const sameHostMs = Date.now() - restartedAt;
    restarted.child.kill('SIGKILL');
    await restarted.exited;

    // A re-created container: a new host name. A lock file as stacker 0.1 left it (pid 1 on the old host) is no obstacle either.
    writeFileSync(join(t.dir.data, 'stacker.db.lock'), JSON.stringify({ pid: 1, hostname: 'stacker-a', startedAtMs: Date.now(), scope: 'data-dir', token: 'old' }));
    const recreatedAt = Date.now();
    const recreated = startDaemon(args(t.dir), env, container('stacker-c'));
    const before = t.sandbox.exchange.orderHistory({}).length;
    await eventually(() => Promise.resolve(t.sandbox.exchange.orderHistory({}).length), (n) => n > before, 20_000, 'a buy after the re-created start');
    const newHostMs = Date.now() - recreatedAt;
    dockerStop(recreated);
    expect(await recreated.exited).toBe(0);

    console.info(`[exactly-once] restart as PID 1: first buy ${sameHostMs} ms after a same-host restart, ${newHostMs} ms after a new-host start (target: within 60 s, no human)`);
    expect(Math.max(sameHostMs, newHostMs)).toBeLessThan(60_000);
    const result = await agreement(t.sandbox, [journalOf(t.dir)]);
    report('daemon (PID 1) killed -9, restarted as PID 1 on the same and a new host name × order', result);
    expect(result).toMatchObject({ placedTwice: [], notJournalled: [], notAtExchange: [], unresolved: 0 });
  }, 90_000);
});

describe('one API key, two daemons with their own HOME and data dir, one lock folder (STACKER_LOCK_DIR, the Docker volume)', () => {
  it('refuses the second at start, naming the key lock and its holder: nothing of it is sent', async () => {
    const other = daemonDir();
    const locks = join(t.dir.root, 'shared-locks');
    try {
      for (const dir of [t.dir, other]) dir.writeStrategy('dca-btc', dca);
      const a = startDaemon(args(t.dir), { ...t.live(), STACKER_LOCK_DIR: locks });
      await a.waitFor('"to":"FILLED"', 20_000);
      const b = startDaemon(args(other), { ...t.live(), HOME: other.root, STACKER_LOCK_DIR: locks });
      expect(await b.exited).toBe(3);
      expect(b.output()).toMatch(/E_LOCKED/);
      expect(b.output()).toMatch(/api-key/i);
      a.child.kill('SIGTERM');
      expect(await a.exited).toBe(0);
      const result = await agreement(t.sandbox, [journalOf(t.dir), journalOf(other)]);
      expect(result).toMatchObject({ placedTwice: [], notJournalled: [] });
    } finally {
      other.remove();
    }
  }, 60_000);

  it('names STACKER_LOCK_DIR when the home it defaults to cannot hold the lock (a container user whose HOME is no folder of its own)', async () => {
    t.dir.writeStrategy('dca-btc', dca);
    // A file where the home should be: no user, root included, can make ~/.stacker in it.
    const home = join(t.dir.root, 'not-a-home');
    writeFileSync(home, '');
    const daemon = startDaemon(args(t.dir), { ...t.live(), HOME: home });
    expect(await daemon.exited).toBe(3);
    expect(daemon.output()).toMatch(/cannot create the lock's folder .*not-a-home.*set STACKER_LOCK_DIR to a folder this user can write/);
    expect(daemon.output()).not.toMatch(/unexpected/);
    expect(t.sandbox.exchange.orderHistory({})).toEqual([]);
  }, 30_000);
});

describe('one API key, two daemons with their own HOME and data dir', () => {
  it('with the same instance: the one started second finds the other’s orders of moments ago, buys nothing, and stops once it sees the next; no slot is bought twice', async () => {
    const other = daemonDir();
    try {
      for (const dir of [t.dir, other]) dir.writeStrategy('dca-btc', dca);
      const a = startDaemon(args(t.dir), t.live());
      await a.waitFor('"to":"FILLED"', 20_000);
      const b = startDaemon(args(other), { ...t.live(), HOME: other.root });
      const daemons = [a, b];
      // The first sign: a nonce only another client explains, or orders with our ids this journal did not send.
      await Promise.race([a.exited, b.exited, sleep(20_000)]);
      // Three more slots for the other one to see it too.
      await sleep(6_000);
      const stopped = await Promise.all(daemons.map(async (daemon) => (daemon.child.exitCode ?? daemon.child.signalCode) !== null));
      expect(stopped.some(Boolean)).toBe(true);
      for (const [i, daemon] of daemons.entries()) {
        if (stopped[i] === true) {
          expect(await daemon.exited).not.toBe(0);
          expect(daemon.output()).toMatch(/another client is using this API key|Two stackers on one key buy every slot twice: stop the other one/);
        } else {
          // Still running: it saw nothing because the other never bought; it trades alone.
          daemon.child.kill('SIGTERM');
          expect(await daemon.exited).toBe(0);
        }
      }
      // Its new journal adopted orders placed seconds before it started: every buy waited.
      await expectSecondHeld(b, 'journal-lost-found-by-history', [journalOf(t.dir), journalOf(other)], 'the same key and instance in two containers (own HOME and data dir) × order');
    } finally {
      other.remove();
    }
  }, 90_000);

  it('the second on a copy of the first’s journal (a backup restored elsewhere): it finds the orders the copy lacks, of moments ago, buys nothing, and stops at the first’s next order', async () => {
    const other = daemonDir();
    try {
      for (const dir of [t.dir, other]) dir.writeStrategy('dca-btc', dca);
      const a = startDaemon(args(t.dir), t.live());
      await a.waitFor('"to":"FILLED"', 20_000);
      mkdirSync(other.data, { recursive: true });
      const backup = await runCli(['journal', 'backup', '--mode', 'live', '--data-dir', t.dir.data, '--to', join(other.data, 'stacker.db')]);
      expect(backup.code, backup.stderr).toBe(0);
      // Some seconds on: the first buys slots the copy does not hold.
      await sleep(4_000);
      const b = startDaemon(args(other), { ...t.live(), HOME: other.root });
      await Promise.race([b.exited, sleep(15_000)]);
      const bStopped = b.child.exitCode !== null;
      for (const daemon of [a, b]) if (daemon.child.exitCode === null && daemon.child.signalCode === null) daemon.child.kill('SIGTERM');
      await Promise.all([a.exited, b.exited]);
      expect(bStopped).toBe(true);
      expect(b.output()).toContain('E_FOREIGN_ORDER');
      await expectSecondHeld(b, 'journal-lacks-recent-orders', [journalOf(t.dir), journalOf(other)], 'the same key and instance, the second on a copy of the first journal × order');
    } finally {
      other.remove();
    }
  }, 90_000);

  it('with interleaved slots: the one that sees the other’s order stops before buying again, the other goes on alone; the stopped one’s restart waits for a human', async () => {
    const other = daemonDir();
    try {
      t.dir.writeStrategy('dca-btc', dca);
      // The same instance on odd seconds: each one's orders carry the other's id scheme for slots it never ran.
      other.writeStrategy('dca-btc', { ...dca, SCHEDULE: '1-59/2 * * * * *' });
      const dirs = [t.dir, other];
      // A settle window of 30 s: the second's new journal adopts the first's orders of seconds ago, and every buy of it waits that long.
      const envs = [{ ...t.live(), STACKER_ORDER_SETTLE_WINDOW: '30s' }, { ...t.live(), HOME: other.root, STACKER_ORDER_SETTLE_WINDOW: '30s' }];
      const a = startDaemon(args(t.dir), envs[0] as Record<string, string>);
      await a.waitFor('"to":"FILLED"', 20_000);
      const b = startDaemon(args(other), envs[1] as Record<string, string>);
      const first = await Promise.race([a.exited.then(() => 0), b.exited.then(() => 1)]);
      const [stopped, survivor] = first === 0 ? [a, b] : [b, a];
      expect(await stopped.exited).not.toBe(0);
      expect(stopped.output()).toContain('E_FOREIGN_ORDER');
      // The other goes on alone.
      const before = t.sandbox.exchange.orderHistory({}).length;
      await eventually(() => Promise.resolve(t.sandbox.exchange.orderHistory({}).length), (n) => n >= before + 2, 10_000, 'the survivor buying on');
      survivor.child.kill('SIGTERM');
      expect(await survivor.exited).toBe(0);
      const result = await agreement(t.sandbox, dirs.map(journalOf));
      report('the same key and instance in two containers, interleaved schedules × order', result);
      expect(result).toMatchObject({ placedTwice: [], notJournalled: [], unresolved: 0 });

      // Started again, the stopped one refuses while the foreign orders are unacknowledged, sending nothing.
      const dir = dirs[first] as DaemonDir;
      const env = envs[first] as Record<string, string>;
      const again = startDaemon(args(dir), env);
      expect(await again.exited).not.toBe(0);
      expect(again.output()).toContain('stacker journal acknowledge');
      expect(t.sandbox.exchange.orderHistory({}).length).toBe(result.exchangeOrders);
      // A human made sure the other one is gone and acknowledges: it trades, adopting what the other bought.
      const ack = await runCli(['journal', 'acknowledge', '--data-dir', dir.data, '--mode', 'live'], { HOME: dir.root });
      expect(ack.code, ack.stderr).toBe(0);
      expect(ack.stdout).toMatch(/foreign/);
      const resumed = startDaemon(args(dir), env);
      const now = t.sandbox.exchange.orderHistory({}).length;
      // Once the settle window of its first start is over, if it started second.
      await eventually(() => Promise.resolve(t.sandbox.exchange.orderHistory({}).length), (n) => n > now, 45_000, 'trading after the acknowledgement');
      resumed.child.kill('SIGTERM');
      expect(await resumed.exited).toBe(0);
      expect(await agreement(t.sandbox, dirs.map(journalOf))).toMatchObject({ placedTwice: [], notJournalled: [], unresolved: 0 });
    } finally {
      other.remove();
    }
  }, 150_000);
});
