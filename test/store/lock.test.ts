import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LockedError, StoreError } from '../../src/store/errors.ts';
import { FileLock, apiKeyLock, dataDirLock } from '../../src/store/lock.ts';
import { openStore, openStoreForReading } from '../../src/store/open-store.ts';
import { TempWorld } from './helpers.ts';
import { thrownBy } from '../support/thrown.ts';

let world: TempWorld;
const held: FileLock[] = [];
const closers: (() => Promise<void>)[] = [];
const children: ChildProcess[] = [];
beforeEach(() => {
  world = new TempWorld();
});
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  for (const lock of held.splice(0)) lock.release();
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await world.cleanup();
});

function track(lock: FileLock): FileLock {
  held.push(lock);
  return lock;
}

/** A real, live process that is not us. */
async function liveProcess(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
  children.push(child);
  await new Promise((resolve) => child.once('spawn', resolve));
  return child;
}

async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  const pid = child.pid;
  await new Promise((resolve) => child.once('close', resolve));
  if (pid === undefined) throw new Error('no pid');
  return pid;
}

const lockedError = (work: () => unknown): LockedError => thrownBy(LockedError, work);

/**
 * A real process (not us) that takes a lock through stacker's own module and holds it, as a
 * daemon does; `wrap` runs it under another program (unshare) to give it a PID namespace.
 */
async function holderProcess(lockDir: string, wrap: readonly string[] = []): Promise<ChildProcess> {
  const script = `import { dataDirLock } from ${JSON.stringify(LOCK_MODULE)}; dataDirLock(${JSON.stringify(lockDir)}).acquire(); console.log('held'); setTimeout(() => {}, 60_000);`;
  const argv = [process.execPath, '--input-type=module', '-e', script];
  const [program, ...args] = [...wrap, ...argv] as [string, ...string[]];
  const child = spawn(program, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('held')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the lock holder exited (${String(code)}) before taking the lock`)));
  });
  return child;
}

async function killed(child: ChildProcess): Promise<void> {
  const gone = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await gone;
}

async function eventually(attempt: () => void, withinMs = 5_000): Promise<void> {
  const until = Date.now() + withinMs;
  for (;;) {
    try {
      attempt();
      return;
    } catch (error) {
      if (Date.now() > until) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

const LOCK_MODULE = join(import.meta.dirname, '../../src/store/lock.ts');

/** unshare(1) with PID and UTS namespaces needs privileges a CI container may not grant. */
const namespaces = spawnSync('unshare', ['--pid', '--fork', '--uts', 'true']).status === 0;

describe('data dir lock', () => {
  it('refuses a second holder with a typed error naming the pid that holds it', () => {
    track(dataDirLock(world.dir)).acquire();
    const error = lockedError(() => track(dataDirLock(world.dir)).acquire());
    expect(error).toMatchObject({ code: 'E_LOCKED', scope: 'data-dir', owner: { pid: process.pid, hostname: hostname() } });
    expect(error.message).toContain(`pid ${process.pid}`);
    expect(error.message).toContain(world.dir);
    expect(error.message).toMatch(/no file to delete/);
  });

  it('refuses while another live process holds it, and is free the moment that process is killed -9', async () => {
    const other = await holderProcess(world.dir);
    expect(lockedError(() => dataDirLock(world.dir).acquire()).owner?.pid).toBe(other.pid);
    await killed(other);
    const mine = track(dataDirLock(world.dir));
    mine.acquire();
    expect(mine.held).toBe(true);
    expect(JSON.parse(readFileSync(mine.ownerPath, 'utf8'))).toMatchObject({ pid: process.pid });
  });

  it.skipIf(!namespaces)('is free after a holder that ran as PID 1 of its own PID namespace, under another hostname, is killed -9 (a restarted container)', async () => {
    const restarted = ['unshare', '--pid', '--fork', '--uts', '--kill-child', 'sh', '-c', 'hostname restarted-container && exec "$0" "$@"'];
    const other = await holderProcess(world.dir, restarted);
    const error = lockedError(() => dataDirLock(world.dir).acquire());
    // Inside its namespace the holder is PID 1 on another host name: a pid file could never tell it from a live process.
    expect(error.owner).toMatchObject({ pid: 1, hostname: 'restarted-container' });
    await killed(other);
    // unshare passes the kill on to its child as it dies (--kill-child): the lock is free within moments.
    const mine = track(dataDirLock(world.dir));
    await eventually(() => mine.acquire());
    expect(mine.held).toBe(true);
  });

  it('replaces a lock file of stacker 0.1 that only a dead process can have written: its pid gone, its pid our own, or another host', async () => {
    const legacy = join(world.dir, 'stacker.lock');
    for (const owner of [{ pid: await deadPid(), hostname: hostname() }, { pid: process.pid, hostname: hostname() }, { pid: 1, hostname: 'old-container-id' }]) {
      writeFileSync(legacy, JSON.stringify({ ...owner, startedAtMs: 1, scope: 'data-dir', token: 'x' }));
      const lock = dataDirLock(world.dir);
      lock.acquire();
      expect(existsSync(legacy)).toBe(false);
      lock.release();
    }
  });

  it('honours a lock file of stacker 0.1 naming another live process on this host', async () => {
    const other = await liveProcess();
    writeFileSync(join(world.dir, 'stacker.lock'), JSON.stringify({ pid: other.pid, hostname: hostname(), startedAtMs: 1, scope: 'data-dir', token: 'x' }));
    const error = lockedError(() => track(dataDirLock(world.dir)).acquire());
    expect(error.owner?.pid).toBe(other.pid);
    expect(error.message).toMatch(/delete that file/);
  });

  it('names no holder when the name file is unreadable, and still refuses', () => {
    track(dataDirLock(world.dir)).acquire();
    writeFileSync(join(world.dir, 'stacker.run-lock.json'), 'garbage');
    const error = lockedError(() => track(dataDirLock(world.dir)).acquire());
    expect(error.owner).toBeNull();
    expect(error.message).toMatch(/another running stacker/);
  });

  it('refuses with E_STORE naming the owner file when it cannot be written (a full disk, a folder of another user), and leaves the lock free', () => {
    // A folder where the owner file goes: renaming the written file onto it fails, as a full disk's write would.
    mkdirSync(join(world.dir, 'stacker.run-lock.json', 'inside'), { recursive: true });
    const error = thrownBy(StoreError, () => dataDirLock(world.dir).acquire());
    expect(error).toMatchObject({ code: 'E_STORE', reason: 'open-failed' });
    expect(error.message).toMatch(/^cannot write the lock's owner file .*stacker\.run-lock\.json: /);
    rmSync(join(world.dir, 'stacker.run-lock.json'), { recursive: true });
    const next = track(dataDirLock(world.dir));
    next.acquire();
    expect(next.held).toBe(true);
  });

  it('keeps the lock file on release (deleting it could let two processes lock two files) and leaves no temporary files', () => {
    const lock = dataDirLock(world.dir);
    lock.acquire();
    expect(readdirSync(world.dir).sort()).toEqual(['stacker.run-lock', 'stacker.run-lock.json']);
    lock.release();
    lock.release();
    expect(readdirSync(world.dir)).toEqual(['stacker.run-lock']);
    const again = track(dataDirLock(world.dir));
    again.acquire();
    expect(again.held).toBe(true);
  });
});

describe('releasing a lock whose owner file cannot be removed', () => {
  it('frees the lock all the same, then names the file left behind', () => {
    const lock = dataDirLock(world.dir);
    lock.acquire();
    // Something the unlink refuses, as a file system remounted read-only would.
    rmSync(lock.ownerPath);
    mkdirSync(lock.ownerPath);
    expect(thrownBy(StoreError, () => lock.release())).toMatchObject({ reason: 'unwritable', message: expect.stringContaining(`could not remove its owner file ${lock.ownerPath}`) });
    expect(lock.held).toBe(false);
    rmSync(lock.ownerPath, { recursive: true });
    const next = track(dataDirLock(world.dir));
    next.acquire();
    expect(next.held).toBe(true);
  });

  it('of a store, releases every other lock too', async () => {
    const lockDir = join(world.dir, 'locks');
    const store = await openStore({ dataDir: world.dir, mode: 'live', apiKeys: ['AbCdEf0123456789-public-api-key'], userLockDir: lockDir });
    const journalLock = join(world.dir, 'stacker.db.run-lock.json');
    rmSync(journalLock);
    mkdirSync(journalLock);
    await expect(store.close()).rejects.toMatchObject({ reason: 'unwritable' });
    rmSync(journalLock, { recursive: true });
    const again = await openStore({ dataDir: world.dir, mode: 'live', apiKeys: ['AbCdEf0123456789-public-api-key'], userLockDir: lockDir });
    await again.close();
  });
});

describe('API key lock', () => {
  const KEY = 'AbCdEf0123456789-public-api-key';

  it('refuses a second data dir on the same API key, naming the holder and its data dir', async () => {
    const userLockDir = join(world.dir, 'user-locks');
    const first = await openStore({ dataDir: join(world.dir, 'a'), mode: 'live', apiKey: KEY, userLockDir });
    closers.push(() => first.close());
    const error = await openStore({ dataDir: join(world.dir, 'b'), mode: 'live', apiKey: KEY, userLockDir }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockedError);
    expect(error).toMatchObject({ scope: 'api-key', owner: { pid: process.pid, dataDir: join(world.dir, 'a') } });
    // Nothing of b was left locked: b opens with another key.
    const other = await openStore({ dataDir: join(world.dir, 'b'), mode: 'live', apiKey: `${KEY}-2`, userLockDir });
    closers.push(() => other.close());
  });

  it('locks every account key of a daemon together: a daemon on any one of them is refused; all are freed on close', async () => {
    const userLockDir = join(world.dir, 'user-locks');
    const both = await openStore({ dataDir: join(world.dir, 'a'), mode: 'live', apiKeys: [KEY, `${KEY}-side`], userLockDir });
    for (const key of [KEY, `${KEY}-side`]) {
      const error = await openStore({ dataDir: join(world.dir, 'b'), mode: 'live', apiKeys: [`${KEY}-other`, key], userLockDir }).catch((e: unknown) => e);
      expect(error).toMatchObject({ scope: 'api-key', owner: { dataDir: join(world.dir, 'a') } });
    }
    // A refused open kept none of its locks: the key it took first is free again.
    const other = await openStore({ dataDir: join(world.dir, 'c'), mode: 'live', apiKeys: [`${KEY}-other`], userLockDir });
    await other.close();
    await both.close();
    const after = await openStore({ dataDir: join(world.dir, 'b'), mode: 'live', apiKeys: [KEY, `${KEY}-side`], userLockDir });
    closers.push(() => after.close());
  });

  it('never writes the key itself, neither in a file name nor in a file', () => {
    const lockDir = join(world.dir, 'locks');
    track(apiKeyLock(KEY, lockDir)).acquire();
    const names = readdirSync(lockDir);
    expect(names).toHaveLength(2);
    for (const name of names) {
      expect(name).not.toContain(KEY);
      expect(readFileSync(join(lockDir, name), 'utf8')).not.toContain(KEY);
    }
  });
});

describe('openStore', () => {
  it('keeps two daemons of one mode off one data dir, lets a dry-run run beside live, and frees the dir on close', async () => {
    const dataDir = join(world.dir, 'data');
    const live = await openStore({ dataDir, mode: 'live' });
    await expect(openStore({ dataDir, mode: 'live' })).rejects.toMatchObject({ code: 'E_LOCKED', owner: { pid: process.pid } });
    const dryRun = await openStore({ dataDir, mode: 'dry-run' });
    await dryRun.close();
    await live.close();
    const again = await openStore({ dataDir, mode: 'live' });
    closers.push(() => again.close());
    expect(readdirSync(dataDir).sort()).toEqual([
      'stacker-dry-run.db',
      'stacker-dry-run.db.id',
      'stacker-dry-run.db.run-lock',
      'stacker.db',
      'stacker.db-shm',
      'stacker.db-wal',
      'stacker.db.id',
      'stacker.db.run-lock',
      'stacker.db.run-lock.json',
    ]);
  });

  it('opens a journal for reading beside the daemon that holds it', async () => {
    const dataDir = join(world.dir, 'data');
    const daemon = await openStore({ dataDir, mode: 'live' });
    closers.push(() => daemon.close());
    await daemon.journal.claimSlot({ instance: 'x', slotTimeMs: 0, runId: null });
    const reader = await openStoreForReading({ dataDir, mode: 'live' });
    closers.push(() => reader.close());
    expect(await reader.getSlot({ instance: 'x', slotTimeMs: 0 })).toMatchObject({ status: 'claimed' });
    await expect(reader.claimSlot({ instance: 'x', slotTimeMs: 1, runId: null })).rejects.toMatchObject({ code: 'E_STORE' });
    await expect(openStoreForReading({ dataDir, mode: 'dry-run' })).rejects.toMatchObject({ reason: 'not-found' });
  });

  it('creates the data dir when missing', async () => {
    const dataDir = join(world.dir, 'deep', 'er');
    mkdirSync(join(world.dir, 'deep'));
    const store = await openStore({ dataDir, mode: 'backtest' });
    closers.push(() => store.close());
    expect(existsSync(join(dataDir, 'stacker-backtest.db'))).toBe(true);
  });
});
