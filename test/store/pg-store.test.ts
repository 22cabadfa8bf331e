import { spawn } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LockedError } from '../../src/store/errors.ts';
import { type OpenedStore, openStore, openStoreForReading } from '../../src/store/open-store.ts';
import type { LockKeep, LockWait } from '../../src/store/pg-lock.ts';
import { failure } from '../support/thrown.ts';
import { pgCluster } from '../support/pg-databases.ts';
import { SLOT, TempWorld } from './helpers.ts';

/**
 * STACKER_DATABASE_URL puts a daemon's journal in PostgreSQL: opened, locked and checked like
 * the data dir's SQLite file, with an advisory lock in place of the kernel's file lock.
 */

let world: TempWorld;
const opened: OpenedStore[] = [];
beforeEach(() => {
  world = new TempWorld();
});
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
  await world.cleanup();
});

const dataDir = (name = 'data'): string => join(world.dir, name);

async function open(
  options: { mode?: 'live' | 'dry-run'; dir?: string; pid?: number; onLostJournal?: 'refuse' | 'rebuild'; standby?: LockWait; keep?: LockKeep } = {},
): Promise<OpenedStore> {
  const store = await openStore({
    dataDir: options.dir ?? dataDir(),
    mode: options.mode ?? 'live',
    databaseUrl: await world.pgUrl(),
    userLockDir: join(world.dir, 'locks'),
    ...(options.pid === undefined ? {} : { pid: options.pid, hostname: 'host-a' }),
    ...(options.onLostJournal === undefined ? {} : { onLostJournal: options.onLostJournal }),
    ...(options.standby === undefined ? {} : { standby: options.standby }),
    ...(options.keep === undefined ? {} : { keep: options.keep }),
  });
  opened.push(store);
  return store;
}

async function sql(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: await world.pgUrl() });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

describe.skipIf(pgCluster() === null)('a daemon journal in PostgreSQL', () => {
  it('refuses a second daemon on the same database and mode, naming the holder, and lets it in once the first stops', async () => {
    const first = await open({ pid: 4242 });
    await first.journal.claimSlot({ ...SLOT, runId: null });
    const error = await failure(open({ dir: dataDir('elsewhere') }));
    expect(error).toBeInstanceOf(LockedError);
    expect((error as LockedError).message).toMatch(/the journal is in use by stacker pid 4242 on host-a/);
    expect((error as LockedError).message).toMatch(/PostgreSQL releases this lock/);
    await first.close();
    opened.splice(opened.indexOf(first), 1);
    const second = await open({ dir: dataDir('elsewhere') });
    expect(await second.journal.claimSlot({ ...SLOT, runId: null })).toBe(false);
  });

  it("locks every account key beside the journal: another daemon on one of them is refused before it opens anything", async () => {
    const url = await world.pgUrl();
    const userLockDir = join(world.dir, 'locks');
    const first = await openStore({ dataDir: dataDir(), mode: 'live', databaseUrl: url, userLockDir, apiKeys: ['key-main', 'key-side'] });
    opened.push(first);
    // Another journal (the dry-run schema), so only the key's lock can refuse it.
    const error = await failure(openStore({ dataDir: dataDir('elsewhere'), mode: 'dry-run', databaseUrl: url, userLockDir, apiKeys: ['key-side'] }));
    expect(error).toBeInstanceOf(LockedError);
    expect(error).toMatchObject({ scope: 'api-key' });
  });

  it('keeps each mode in a schema of its own: a dry-run beside live never consumes a live slot', async () => {
    const live = await open({ mode: 'live' });
    const dry = await open({ mode: 'dry-run' });
    expect(live.journal.path).toMatch(/\(schema stacker_live\)$/);
    expect(dry.journal.path).toMatch(/\(schema stacker_dry_run\)$/);
    expect(await dry.journal.claimSlot({ ...SLOT, runId: null })).toBe(true);
    expect(await live.journal.claimSlot({ ...SLOT, runId: null })).toBe(true);
  });

  it('frees the lock the moment its daemon is killed -9: the next daemon starts at once', async () => {
    const url = await world.pgUrl();
    const script = `
      import { openStore } from ${JSON.stringify(join(import.meta.dirname, '../../src/store/open-store.ts'))};
      await openStore({ dataDir: ${JSON.stringify(dataDir('child'))}, mode: 'live', databaseUrl: ${JSON.stringify(url)} });
      process.stdout.write('locked\\n');
      setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => (chunk.toString().includes('locked') ? resolve() : undefined));
      child.once('exit', (code) => reject(new Error(`the child ended (${code}) before locking`)));
    });
    await expect(open()).rejects.toBeInstanceOf(LockedError);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    const started = Date.now();
    let store: OpenedStore | null = null;
    while (store === null) {
      store = await open().catch((error: unknown) => {
        if (!(error instanceof LockedError) || Date.now() - started > 5_000) throw error;
        return null;
      });
    }
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('refuses to start when the database lost the journal this data dir used, and rebuilds only on request, keeping the old schema', async () => {
    const first = await open();
    await first.journal.claimSlot({ ...SLOT, runId: null });
    await first.close();
    opened.splice(opened.indexOf(first), 1);
    await sql('DROP SCHEMA stacker_live CASCADE');
    const error = await failure(open());
    expect(error).toMatchObject({ reason: 'journal-lost' });
    expect((error as Error).message).toMatch(/the journal postgres:\/\/.*\(schema stacker_live\) is missing, but .*stacker-pg-live\.id says journal/);
    // The commands that only read it say it is lost too, not that stacker never ran on this database.
    const reading = await failure(openStoreForReading({ dataDir: dataDir(), mode: 'live', databaseUrl: await world.pgUrl() }));
    expect(reading).toMatchObject({ code: 'E_STORE', reason: 'journal-lost' });
    expect((reading as Error).message).toMatch(/the journal postgres:\/\/.*\(schema stacker_live\) is missing, but .*stacker-pg-live\.id says journal .*Restore the database from a backup, or rebuild it/);
    await expect(open({ onLostJournal: 'rebuild' })).resolves.toMatchObject({ rebuilt: { movedAside: [] } });
  });

  it('moves a swapped journal aside under a dated schema name when rebuilding', async () => {
    const first = await open();
    await first.close();
    opened.splice(opened.indexOf(first), 1);
    await sql("UPDATE stacker_live.journal_meta SET value = 'someone-else' WHERE key = 'journal_id'");
    await expect(open()).rejects.toMatchObject({ reason: 'journal-lost', message: expect.stringMatching(/holds journal someone-else, not the one that was here/) });
    // The readers (orders, journal, report, check) refuse it as the start does: they reported from another journal as this daemon's.
    await expect(openStoreForReading({ dataDir: dataDir(), mode: 'live', databaseUrl: await world.pgUrl() })).rejects.toMatchObject({ reason: 'journal-lost', message: expect.stringMatching(/holds journal someone-else, not the one that was here/) });
    const rebuilt = await open({ onLostJournal: 'rebuild' });
    expect(rebuilt.rebuilt?.movedAside).toEqual([expect.stringMatching(/\(schema stacker_live_lost_\d{14}\)$/)]);
    expect(await rebuilt.journal.getSlot(SLOT)).toBeNull();
  });

  it('remembers a journal found behind (rebuilt, or lost as the history showed) across a restart, as the SQLite journal does beside its file', async () => {
    const first = await open();
    await first.close();
    opened.splice(opened.indexOf(first), 1);
    await sql('DROP SCHEMA stacker_live CASCADE');
    const rebuilt = await open({ onLostJournal: 'rebuild' });
    expect(rebuilt.behind).toMatchObject({ reason: expect.stringContaining('rebuilt') });
    const rebuiltAt = rebuilt.behind?.sinceMs;
    await rebuilt.close();
    opened.splice(opened.indexOf(rebuilt), 1);
    const again = await open();
    expect(again.behind).toEqual({ sinceMs: rebuiltAt, reason: expect.stringContaining('rebuilt') });
    again.noteBehind({ sinceMs: 42, reason: 'a new journal, but the history holds its orders' });
    await again.close();
    opened.splice(opened.indexOf(again), 1);
    expect((await open()).behind).toEqual({ sinceMs: 42, reason: 'a new journal, but the history holds its orders' });
  });

  it('lets readers open a journal beside its daemon, and says when there is none yet', async () => {
    await expect(openStoreForReading({ dataDir: dataDir(), mode: 'live', databaseUrl: await world.pgUrl() })).rejects.toMatchObject({ reason: 'not-found' });
    const daemon = await open();
    await daemon.journal.claimSlot({ ...SLOT, runId: null });
    const reader = await openStoreForReading({ dataDir: dataDir(), mode: 'live', databaseUrl: await world.pgUrl() });
    expect(await reader.getSlot(SLOT)).toMatchObject({ status: 'claimed' });
    await reader.close();
  });

  it('hot standby: waits while the owner runs, takes over when the owner\'s session ends, and the replaced owner journals nothing more', async () => {
    const owner = await open({ pid: 1111 });
    await owner.journal.claimSlot({ ...SLOT, runId: null });
    let waitingFor = '';
    const standby = open({ dir: dataDir('standby-host'), pid: 2222, standby: { pollMs: 100, onWaiting: (held) => (waitingFor = held.message) } });
    await expect.poll(() => waitingFor).toMatch(/in use by stacker pid 1111 on host-a/);
    // The owner's lock session ends (its host vanished, say) while its process goes on.
    await sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE 'stacker pid 1111 %'");
    const started = Date.now();
    const successor = await standby;
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(await successor.journal.claimSlot({ ...SLOT, runId: null })).toBe(false);
    expect(await successor.journal.claimSlot({ ...SLOT, slotTimeMs: SLOT.slotTimeMs + 60_000, runId: null })).toBe(true);
    // The stale owner can neither journal nor pass the check made before every send.
    await expect(owner.journal.claimSlot({ ...SLOT, slotTimeMs: SLOT.slotTimeMs + 120_000, runId: null })).rejects.toMatchObject({ reason: 'not-owner', message: expect.stringMatching(/taken over by stacker pid 2222 on host-a/) });
    await expect(owner.journal.assertIntact()).rejects.toMatchObject({ reason: 'not-owner' });
    expect(await successor.journal.getSlot({ ...SLOT, slotTimeMs: SLOT.slotTimeMs + 120_000 })).toBeNull();
  });

  it("keeps its lock when the server ends the lock's session under a running daemon: taken again, a second daemon is still refused", async () => {
    const told: string[] = [];
    const owner = await open({ pid: 1111, keep: { pollMs: 100, onLost: () => told.push('lost'), onRetaken: () => told.push('retaken') } });
    await sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE 'stacker pid 1111 %'");
    // Under a loaded machine the retake can take longer than poll's default second.
    await expect.poll(() => told, { timeout: 10_000 }).toEqual(['lost', 'retaken']);
    const second = await failure(open({ dir: dataDir('elsewhere') }));
    expect((second as LockedError).message).toMatch(/the journal is in use by stacker pid 1111 on host-a/);
    // Still the journal's owner: nobody took the lease in between.
    expect(await owner.journal.claimSlot({ ...SLOT, runId: null })).toBe(true);
  });

  it('a standby told to stop while waiting gives up, naming the holder', async () => {
    await open({ pid: 1111 });
    const stop = new AbortController();
    const standby = failure(open({ dir: dataDir('standby-host'), standby: { pollMs: 100, signal: stop.signal, onWaiting: () => stop.abort() } }));
    expect(await standby).toBeInstanceOf(LockedError);
  });

  it('refuses a standby on a SQLite journal: a file serves one host', async () => {
    await expect(openStore({ dataDir: dataDir(), mode: 'live', standby: {} })).rejects.toMatchObject({ reason: 'invalid-argument' });
  });
});
