import { chmodSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildVersion } from '../../src/daemon/build-version.ts';
import { SCHEMA_VERSION } from '../../src/store/migrations.ts';
import { SqliteJournal } from '../../src/store/sqlite-journal.ts';
import { olderJournal, schemaOf } from '../support/older-journal.ts';
import { sandboxPerTest, startDaemon } from './daemon-process.ts';

// Upgrading in place: a newer stacker started on the data dir an older build left.
const t = sandboxPerTest();
const args = (...more: string[]): string[] => ['--strategies', t.dir.strategies, '--data-dir', t.dir.data, ...more];

/** A data dir holding a journal of an older build's schema, and an instance that sends nothing: its path. */
function olderJournalInDataDir(schema: number): string {
  t.dir.writeStrategy('report', { STRATEGY: 'balance-report', SCHEDULE: '0 0 1 1 *' });
  mkdirSync(t.dir.data);
  const path = join(t.dir.data, 'stacker.db');
  olderJournal(path, schema);
  return path;
}

describe('stacker run on a journal an older build left', () => {
  it('names its build (the package version and the commit) in its starting line and in the run it journals', async () => {
    t.dir.writeStrategy('report', { STRATEGY: 'balance-report', SCHEDULE: '0 0 1 1 *' });
    const daemon = startDaemon(args('--live', '--once'), t.live());
    expect(await daemon.exited).toBe(0);
    const version = buildVersion();
    expect(daemon.output()).toContain(`"version":"${version}"`);
    expect(daemon.output()).toContain(`stacker ${version} starting in live mode`);
    const journal = new SqliteJournal({ path: join(t.dir.data, 'stacker.db'), readOnly: true });
    await journal.open();
    try {
      expect((await journal.listRuns(1))[0]?.version).toBe(version);
    } finally {
      await journal.close();
    }
  }, 30_000);

  it('says it migrated the journal, from which schema to which, that it is one-way, and where the copy of the file as it was is', async () => {
    const path = olderJournalInDataDir(4);
    const daemon = startDaemon(args('--live', '--once'), t.live());
    expect(await daemon.exited).toBe(0);
    const line = daemon
      .output()
      .split('\n')
      .find((text) => text.includes('"event":"journal-migrated"'));
    expect(line).toBeDefined();
    const logged = JSON.parse(line ?? '{}') as Record<string, unknown>;
    expect(logged).toMatchObject({ from: 4, to: SCHEMA_VERSION, backup: `${path}.schema-4.bak` });
    expect(String(logged['msg'])).toContain(`migrated the journal ${path} from schema 4 to ${SCHEMA_VERSION} (5 accounts, 6 account kill switch,`);
    expect(String(logged['msg'])).toContain(`one-way, a stacker older than this one refuses it from now on; the file as it was is kept as ${path}.schema-4.bak`);
    expect(schemaOf(`${path}.schema-4.bak`)).toBe(4);
    expect(statSync(`${path}.schema-4.bak`).mode & 0o777).toBe(0o600);

    const again = startDaemon(args('--live', '--once'), t.live());
    expect(await again.exited).toBe(0);
    expect(again.output()).not.toContain('journal-migrated');
  }, 30_000);

  it("makes the journal's files its user's alone when an older build left them readable by others, and says so once", async () => {
    const path = olderJournalInDataDir(1);
    chmodSync(path, 0o644);
    const daemon = startDaemon(args('--live', '--once'), t.live());
    expect(await daemon.exited).toBe(0);
    expect(daemon.output()).toContain('"event":"journal-mode-narrowed"');
    expect(daemon.output()).toContain(`made them yours alone (0600): ${path} (was 0644)`);
    for (const file of [path, `${path}.id`]) expect(statSync(file).mode & 0o777).toBe(0o600);
    const again = startDaemon(args('--live', '--once'), t.live());
    expect(await again.exited).toBe(0);
    expect(again.output()).not.toContain('journal-mode-narrowed');
  }, 30_000);
});
