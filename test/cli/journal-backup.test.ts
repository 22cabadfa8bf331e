import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { backup } from '../../src/cli/commands/journal-backup.ts';
import { CommandContext, type GlobalFlags, type RunState } from '../../src/cli/context.ts';
import type { Io } from '../../src/cli/output.ts';
import { Decimal } from '../../src/domain/money.ts';
import { openStore } from '../../src/store/open-store.ts';
import { SqliteJournal } from '../../src/store/sqlite-journal.ts';
import { order } from '../store/helpers.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function context(): { readonly ctx: CommandContext; readonly out: string[] } {
  const out: string[] = [];
  const io: Io = { out: (text) => void out.push(text), err: (text) => void out.push(text) };
  const state: RunState = { json: false, verbose: false, lookupHint: undefined };
  return { ctx: new CommandContext('journal', { json: false } satisfies GlobalFlags, io, state), out };
}

describe('stacker journal backup', () => {
  it('copies the journal of a running daemon consistently, while it writes, to a new file of its owner only that reads back as the journal', async () => {
    const root = mkdtempSync(join(tmpdir(), 'stacker-backup-'));
    dirs.push(root);
    const dataDir = join(root, 'data');
    // The daemon: it holds the journal and keeps writing while the copy is taken.
    const store = await openStore({ dataDir, mode: 'live', userLockDir: join(root, 'locks') });
    const filled = (i: number) => order({ orderId: String(1_000 + i), clientOrderId: `c${i}`, status: 'FILLED', left: new Decimal(0), filledBase: new Decimal('0.0001'), filledQuote: new Decimal('6.5'), fee: new Decimal('0.0065'), feeAsset: 'USDT' });
    try {
      for (let i = 0; i < 200; i += 1) await store.journal.recordOrderSnapshot(filled(i), { intentId: null });
      const { ctx, out } = context();
      const to = join(root, 'stacker-backup.db');
      const copying = backup(ctx, { dataDir, mode: 'live', to }, { env: {} });
      for (let i = 200; i < 220; i += 1) await store.journal.recordOrderSnapshot(filled(i), { intentId: null });
      await copying;
      expect(out.join('')).toMatch(/^copied the live journal .*stacker\.db \(journal [0-9a-f-]+\) to .*stacker-backup\.db: [\d.]+ MB, checked, yours alone\. Put it back only with the daemon stopped/);
      expect((statSync(to).mode & 0o777).toString(8)).toBe('600');
      const copy = new SqliteJournal({ path: to, readOnly: true, migrate: false });
      await copy.open();
      try {
        const count = (await copy.listOrders({ limit: -1 })).length;
        // Consistent: all of the orders before it, and of those written meanwhile none, some or all, never a torn file.
        expect(count).toBeGreaterThanOrEqual(200);
        expect(count).toBeLessThanOrEqual(220);
        expect(await copy.journalId()).toBe(await store.journal.journalId());
      } finally {
        await copy.close();
      }
      // Never over a file: it could be the journal itself, or a backup still needed.
      await expect(backup(context().ctx, { dataDir, mode: 'live', to }, { env: {} })).rejects.toMatchObject({ code: 'E_INPUT', problems: [{ field: '--to', rule: expect.stringContaining('already exists') }] });
    } finally {
      await store.close();
    }
  });

  it('points a PostgreSQL journal to pg_dump, and says when there is no journal to copy', async () => {
    const root = mkdtempSync(join(tmpdir(), 'stacker-backup-'));
    dirs.push(root);
    await expect(backup(context().ctx, { dataDir: join(root, 'data'), mode: 'live', to: join(root, 'a.db') }, { env: { STACKER_DATABASE_URL: 'postgres://stacker@127.0.0.1/stacker' } })).rejects.toMatchObject({
      code: 'E_INPUT',
      problems: [{ field: '--to', rule: expect.stringContaining('pg_dump') }],
    });
    mkdirSync(join(root, 'data'));
    await expect(backup(context().ctx, { dataDir: join(root, 'data'), mode: 'live', to: join(root, 'b.db') }, { env: {} })).rejects.toMatchObject({ code: 'E_STORE', reason: 'not-found', message: expect.stringContaining('nothing to back up') });
  });
});
