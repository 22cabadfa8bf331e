import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.ts';

// A journal another user made (root, before the image's user ran it) is a setting to fix: said
// once, naming the file, its owner and the way on, and not retried as a full disk would be. Run
// as a real second user, which only root can start (skipped otherwise).
const OPEN_STORE = resolve(import.meta.dirname, '../../src/store/open-store.ts');
const OTHER_UID = 1000;
const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** openStore on `dataDir` in a child process running as OTHER_UID: the StoreError it ended with. */
async function openAsOtherUser(dataDir: string): Promise<{ code?: string; reason?: string; retryable?: boolean; message?: string; opened?: boolean }> {
  const script = `import(${JSON.stringify(OPEN_STORE)}).then((m) => m.openStore({ dataDir: ${JSON.stringify(dataDir)}, mode: 'live' })).then(
    async (store) => { await store.close(); console.log(JSON.stringify({ opened: true })); },
    (e) => console.log(JSON.stringify({ code: e.code, reason: e.reason, retryable: e.retryable, message: e.message })));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { uid: OTHER_UID, gid: OTHER_UID, env: { PATH: process.env.PATH ?? '' } });
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as { code?: string };
}

describe.runIf(asRoot)('a journal of another user', () => {
  it('is refused at open with E_STORE, not retried, naming the file, its owner and the way on', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'stacker-owner-'));
    dirs.push(dataDir);
    const store = await openStore({ dataDir, mode: 'live' });
    await store.close();
    // The folder is everyone's; the journal and its lock stay root's.
    chmodSync(dataDir, 0o777);

    const lock = await openAsOtherUser(dataDir);
    expect(lock).toMatchObject({ code: 'E_STORE', reason: 'open-failed', retryable: false });
    expect(lock.message).toMatch(new RegExp(`cannot be written by this user \\(uid ${OTHER_UID}\\); it belongs to uid 0: give the user stacker runs write access`));

    // With the lock free to take, the journal's identity file, which this user cannot read.
    for (const name of readdirSync(dataDir).filter((file) => file.includes('run-lock'))) rmSync(join(dataDir, name), { force: true });
    const marker = await openAsOtherUser(dataDir);
    expect(marker).toMatchObject({ code: 'E_STORE', reason: 'open-failed', retryable: false });
    expect(marker.message).toMatch(new RegExp(`stacker\\.db\\.id cannot be read by this user \\(uid ${OTHER_UID}\\); it belongs to uid 0: give the user stacker runs read access`));

    // That one readable, the journal itself, which it cannot read (a new journal is its user's alone)...
    chmodSync(join(dataDir, 'stacker.db.id'), 0o644);
    for (const name of readdirSync(dataDir).filter((file) => file.includes('run-lock'))) rmSync(join(dataDir, name), { force: true });
    const unreadable = await openAsOtherUser(dataDir);
    expect(unreadable).toMatchObject({ code: 'E_STORE', reason: 'open-failed', retryable: false });
    expect(unreadable.message).toMatch(new RegExp(`stacker\\.db cannot be read by this user \\(uid ${OTHER_UID}\\); it belongs to uid 0`));

    // ...and, readable, cannot write.
    chmodSync(join(dataDir, 'stacker.db'), 0o644);
    for (const name of readdirSync(dataDir).filter((file) => file.includes('run-lock'))) rmSync(join(dataDir, name), { force: true });
    const journal = await openAsOtherUser(dataDir);
    expect(journal).toMatchObject({ code: 'E_STORE', reason: 'open-failed', retryable: false });
    expect(journal.message).toMatch(new RegExp(`^cannot write the journal ${dataDir}/stacker\\.db \\(.*stacker\\.db cannot be written by this user \\(uid ${OTHER_UID}\\); it belongs to uid 0`));
  });
});

describe('a new journal', () => {
  it('is readable by its user alone, and so are its -wal and -shm, in a data dir others may read', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'stacker-mode-'));
    dirs.push(dataDir);
    chmodSync(dataDir, 0o755);
    const store = await openStore({ dataDir, mode: 'live' });
    try {
      await store.journal.claimSlot({ instance: 'dca-btc', slotTimeMs: Date.UTC(2026, 10, 27, 9), runId: null });
      for (const file of ['stacker.db', 'stacker.db-wal', 'stacker.db-shm']) expect((statSync(join(dataDir, file)).mode & 0o777).toString(8), file).toBe('600');
    } finally {
      await store.close();
    }
  });
});
