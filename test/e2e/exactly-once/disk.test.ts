import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { sandboxPerTest, startDaemon } from '../daemon-process.ts';
import { agreement, eventually, metricsUrl, report } from './agreement.ts';
import { runCli } from '../../cli/run-cli.ts';

// The journal on a small real file system (tmpfs) that the test fills up and frees under the
// running daemon. Mounting needs root (CAP_SYS_ADMIN): elsewhere the test
// is skipped with a notice.
const t = sandboxPerTest();

function canMount(): boolean {
  const probe = mkdtempSync(join(tmpdir(), 'stacker-mount-probe-'));
  try {
    if (spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', probe]).status !== 0) return false;
    spawnSync('umount', [probe]);
    return true;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}
const mountable = canMount();
if (!mountable) console.info('[exactly-once] skipping the full-disk test: mounting a tmpfs is not permitted here');

const mounts: string[] = [];
afterEach(() => {
  for (const dir of mounts.splice(0)) spawnSync('umount', ['-l', dir]);
});

const run = (command: string, ...args: string[]): void => {
  const result = spawnSync(command, args, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')}: ${result.stderr}`);
};

async function health(url: string): Promise<{ status: number; problems: string[] }> {
  const response = await fetch(`${url}/healthz`);
  const body = (await response.json()) as { problems?: string[] };
  return { status: response.status, problems: body.problems ?? [] };
}

/** The data dir a real tmpfs of these mount options (unmounted after the test), and an instance buying every second. */
function onTmpfs(options: string): void {
  mkdirSync(t.dir.data, { recursive: true });
  run('mount', '-t', 'tmpfs', '-o', options, 'tmpfs', t.dir.data);
  mounts.push(t.dir.data);
  t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '* * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001' });
}

describe('a journal whose disk is full', () => {
  it.skipIf(!mountable)('sends nothing it cannot journal, answers 503 with the reason, and trades again once the disk takes writes', async () => {
    onTmpfs('size=8m');
    const daemon = startDaemon(['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data], { ...t.live(), STACKER_METRICS_PORT: '0' });
    await daemon.waitFor('"to":"FILLED"', 20_000);
    const url = metricsUrl(daemon.output());
    expect((await health(url)).status).toBe(200);

    // Fill every free block of the file system.
    const filler = join(t.dir.data, 'filler');
    const free = (): number => Number(statfsSync(t.dir.data).bavail) * Number(statfsSync(t.dir.data).bsize);
    run('fallocate', '-l', String(free()), filler);
    const fullFrom = Date.now() / 1000;
    const full = await eventually(() => health(url), (h) => h.status === 503, 15_000, '503 once the disk is full');
    expect(full.problems.join(' ')).toMatch(/the journal cannot be written .*full/);
    expect(await (await fetch(`${url}/metrics`)).text()).toMatch(/^stacker_journal_writable 0$/m);
    // A few slots pass on the full disk: nothing is sent.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const fullUntil = Date.now() / 1000;
    const sentWhileFull = t.sandbox.exchange.orderHistory({}).filter((order) => order.createdAtSec > fullFrom + 1 && order.createdAtSec < fullUntil);
    expect(sentWhileFull).toEqual([]);

    rmSync(filler);
    await eventually(() => health(url), (h) => h.status === 200, 15_000, 'healthy once the disk has room');
    const resumedFrom = t.sandbox.exchange.orderHistory({}).length;
    await eventually(() => Promise.resolve(t.sandbox.exchange.orderHistory({}).length), (n) => n > resumedFrom, 10_000, 'buying again');

    daemon.child.kill('SIGTERM');
    expect(await daemon.exited).toBe(0);
    const result = await agreement(t.sandbox, [join(t.dir.data, 'stacker.db')]);
    report('journal disk full under a running daemon × order', result);
    expect(result).toMatchObject({ placedTwice: [], notJournalled: [], notAtExchange: [], unresolved: 0 });
    // The slots that fell on the full disk are in the journal, as missed and why, once it took writes again.
    const db = new DatabaseSync(join(t.dir.data, 'stacker.db'), { readOnly: true });
    try {
      const rows = db.prepare('SELECT status, reason FROM slots WHERE slot_time_ms > ? AND slot_time_ms < ?').all((fullFrom + 2) * 1000, (fullUntil - 1) * 1000) as Array<{ status: string; reason: string | null }>;
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) expect([row.status, row.reason]).toEqual(['missed', expect.stringMatching(/^the journal could not be written at its time \(.*\); nothing was sent$/)]);
    } finally {
      db.close();
    }
  }, 90_000);

  it.skipIf(!mountable)('stops on SIGTERM with exit 0 while the disk is full: every commit is in the WAL, read at the next start', async () => {
    onTmpfs('size=8m');
    const args = ['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data];
    const daemon = startDaemon(args, { ...t.live(), STACKER_METRICS_PORT: '0' });
    await daemon.waitFor('"to":"FILLED"', 20_000);
    const url = metricsUrl(daemon.output());
    const filler = join(t.dir.data, 'filler');
    // Written until the disk says no (a size read first could be taken by the WAL meanwhile).
    spawnSync('dd', ['if=/dev/zero', `of=${filler}`, 'bs=64k'], { stdio: 'ignore' });
    await eventually(() => health(url), (h) => h.status === 503, 15_000, '503 once the disk is full');
    daemon.child.kill('SIGTERM');
    expect(await daemon.exited, daemon.output()).toBe(0);
    expect(daemon.output()).not.toMatch(/unexpected failure/);
    // Room again: the next start reads the journal, WAL and all, and finds every order it placed.
    rmSync(filler);
    const result = await agreement(t.sandbox, [join(t.dir.data, 'stacker.db')]);
    expect(result).toMatchObject({ placedTwice: [], notJournalled: [], notAtExchange: [], unresolved: 0 });
  }, 90_000);
});

describe('a data dir whose disk is full at start', () => {
  it.skipIf(!mountable)('is refused with exit 4 (it passes once space is freed), naming ENOSPC, and leaves no temporary file behind; nothing is sent', async () => {
    onTmpfs('size=1m');
    spawnSync('dd', ['if=/dev/zero', `of=${join(t.dir.data, 'filler')}`, 'bs=4k'], { stdio: 'ignore' });
    // A few blocks left: the locks are taken, and the journal's own file is what meets the full disk.
    for (const room of [0, 16_384, 32_768]) {
      rmSync(join(t.dir.data, 'filler'));
      run('fallocate', '-l', String(Number(statfsSync(t.dir.data).bavail) * Number(statfsSync(t.dir.data).bsize) - room), join(t.dir.data, 'filler'));
      const daemon = startDaemon(['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data], { ...t.live(), STACKER_LOCK_DIR: t.dir.data });
      expect(await daemon.exited, daemon.output()).toBe(4);
    }
    for (let start = 0; start < 2; start += 1) {
      const daemon = startDaemon(['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data], { ...t.live(), STACKER_LOCK_DIR: t.dir.data });
      expect(await daemon.exited, daemon.output()).toBe(4);
      expect(daemon.output()).toMatch(/ENOSPC|disk is full/);
      expect(daemon.output()).not.toContain('unexpected failure');
    }
    expect(readdirSync(t.dir.data).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    expect(t.sandbox.exchange.orderHistory({})).toHaveLength(0);
  });
});

describe('a data dir on a read-only file system', () => {
  it.skipIf(!mountable)('is refused at start with E_STORE naming the folder and why, and nothing is sent', async () => {
    onTmpfs('size=1m,ro');
    const daemon = startDaemon(['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data], t.live());
    expect(await daemon.exited).not.toBe(0);
    expect(daemon.output()).toContain('E_STORE');
    expect(daemon.output()).toContain(`the folder ${t.dir.data} is on a read-only file system`);
    expect(daemon.output()).not.toContain('unexpected failure');
    expect(t.sandbox.exchange.orderHistory({})).toHaveLength(0);
  });

  it.skipIf(!mountable)('leaves the readers unable to open a journal in WAL mode, and they say why and what to do (copy it), exit 3', async () => {
    onTmpfs('size=8m');
    const daemon = startDaemon(['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data], t.live());
    await daemon.waitFor('"to":"FILLED"', 20_000);
    // Killed: its writes are in the -wal file. Without the -shm file (a restore that left it out, as
    // backups of SQLite files usually do), SQLite must write one to read them: read-only, it cannot.
    daemon.child.kill('SIGKILL');
    await daemon.exited;
    rmSync(join(t.dir.data, 'stacker.db-shm'), { force: true });
    run('mount', '-o', 'remount,ro', t.dir.data);
    const result = await runCli(['orders', '--data-dir', t.dir.data, '--mode', 'live']);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`the folder ${t.dir.data} is on a read-only file system): a journal in WAL mode is written beside (its -shm file) even to be read; copy the data dir to a writable folder and read the copy`);
  });
});
