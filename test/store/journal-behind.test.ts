import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('a SQLite journal found behind after it opened', () => {
  it('is remembered beside the file: a restart within the settle window still knows since when and why', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'stacker-behind-'));
    dirs.push(dataDir);
    const first = await openStore({ dataDir, mode: 'live' });
    expect(first.behind).toBeNull();
    first.noteBehind({ sinceMs: 1_795_000_000_000, reason: "a new journal, but the exchange's history holds orders of its instances" });
    await first.close();
    const again = await openStore({ dataDir, mode: 'live' });
    try {
      expect(again.behind).toEqual({ sinceMs: 1_795_000_000_000, reason: "a new journal, but the exchange's history holds orders of its instances" });
    } finally {
      await again.close();
    }
  });
});
