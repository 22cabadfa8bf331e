import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LockedError } from '../../src/store/errors.ts';
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

describe('data dir lock', () => {
  it('refuses a second holder with a typed error naming the pid that holds it', () => {
    track(dataDirLock(world.dir)).acquire();
    const error = lockedError(() => track(dataDirLock(world.dir)).acquire());
    expect(error).toMatchObject({ code: 'E_LOCKED', scope: 'data-dir', owner: { pid: process.pid, hostname: hostname() } });
    expect(error.message).toContain(`pid ${process.pid}`);
    expect(error.message).toContain(world.dir);
  });

  it('refuses while another live process holds the lock, and takes it over once that process is dead', async () => {
    const other = await liveProcess();
    const theirs = dataDirLock(world.dir, { pid: other.pid ?? 0 });
    theirs.acquire();
    expect(lockedError(() => dataDirLock(world.dir).acquire()).owner?.pid).toBe(other.pid);

    other.kill('SIGKILL');
    await new Promise((resolve) => other.once('close', resolve));
    const mine = track(dataDirLock(world.dir));
    mine.acquire();
    expect(mine.held).toBe(true);
    expect(JSON.parse(readFileSync(mine.path, 'utf8'))).toMatchObject({ pid: process.pid });
    // The presumed-dead holder releasing late must not remove the successor's lock.
    theirs.release();
    expect(existsSync(mine.path)).toBe(true);
  });

  it('takes over a stale lock file left by a dead pid on this host', async () => {
    const path = join(world.dir, 'stacker.lock');
    writeFileSync(path, JSON.stringify({ pid: await deadPid(), hostname: hostname(), startedAtMs: 1, scope: 'data-dir', token: 'x' }));
    const lock = track(dataDirLock(world.dir));
    lock.acquire();
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({ pid: process.pid });
  });

  it('never takes over a lock from another host, whose pids it cannot check', () => {
    writeFileSync(join(world.dir, 'stacker.lock'), JSON.stringify({ pid: 4242, hostname: 'elsewhere', startedAtMs: 1, scope: 'data-dir', token: 'x' }));
    const error = lockedError(() => track(dataDirLock(world.dir, { isAlive: () => false })).acquire());
    expect(error.owner).toEqual({ pid: 4242, hostname: 'elsewhere', startedAtMs: 1 });
    expect(error.message).toMatch(/pid 4242 on elsewhere/);
  });

  it('refuses a lock file it cannot read rather than guessing it is stale', () => {
    writeFileSync(join(world.dir, 'stacker.lock'), 'garbage');
    const error = lockedError(() => track(dataDirLock(world.dir)).acquire());
    expect(error.owner).toBeNull();
    expect(error.message).toMatch(/delete that file/);
  });

  it('removes the lock file on release, leaving no temporary files behind', () => {
    const lock = dataDirLock(world.dir);
    lock.acquire();
    lock.release();
    lock.release();
    expect(readdirSync(world.dir)).toEqual([]);
    const again = track(dataDirLock(world.dir));
    again.acquire();
    expect(readdirSync(world.dir)).toEqual(['stacker.lock']);
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

  it('never writes the key itself, neither in a file name nor in a file', () => {
    const lockDir = join(world.dir, 'locks');
    track(apiKeyLock(KEY, lockDir)).acquire();
    const names = readdirSync(lockDir);
    expect(names).toHaveLength(1);
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
    expect(readdirSync(dataDir).sort()).toEqual(['stacker-dry-run.db', 'stacker.db', 'stacker.db-shm', 'stacker.db-wal', 'stacker.db.lock']);
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
