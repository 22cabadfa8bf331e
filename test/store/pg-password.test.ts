import { describe, expect, it } from 'vitest';
import { EXIT, exitCodeFor } from '../../src/domain/errors.ts';
import { PgJournal } from '../../src/store/pg-journal.ts';
import { inspectPgJournal, openPgStoreForReading } from '../../src/store/pg-store.ts';
import { clusterUrl } from '../support/pg-cluster.ts';
import { ownClusterPerFile } from '../support/pg-own-cluster.ts';
import { failure } from '../support/thrown.ts';

/**
 * What the operator reads when the journal's database refuses or cannot be reached: a server
 * that asks for a password the URL does not carry is named as such (node-postgres says "client
 * password must be a string"), and a reader is told its database cannot be read, not "written".
 * A cluster of this file's own that asks every connection for a password (SCRAM).
 */
const PASSWORD = 'p/a#s@s?w%rd:x';
const own = ownClusterPerFile(() => ({ password: PASSWORD }));

describe.skipIf(!own.available)('a journal database that asks for a password', () => {
  it('without one in the URL, says the URL has none and where it goes (exit 3); with it, percent-encoded, opens', async () => {
    const bare = clusterUrl(own.cluster(), 'postgres');
    for (const attempt of [() => inspectPgJournal(bare, 'stacker_live'), () => new PgJournal({ url: bare, schema: 'stacker_live' }).open()]) {
      const error = await failure(attempt());
      expect(error).toMatchObject({
        code: 'E_STORE',
        reason: 'open-failed',
        message: expect.stringMatching(/: the server asks for a password and the URL has none: write it in STACKER_DATABASE_URL as postgres:\/\/user:PASSWORD@host\/database, percent-encoded$/),
      });
      expect(exitCodeFor(error)).toBe(EXIT.refused);
    }
    const withPassword = bare.replace('postgres@', `postgres:${encodeURIComponent(PASSWORD)}@`);
    const journal = new PgJournal({ url: withPassword, schema: 'stacker_live' });
    await journal.open();
    await journal.close();
    const wrong = await failure(inspectPgJournal(bare.replace('postgres@', 'postgres:wrong@'), 'stacker_live'));
    expect(wrong).toMatchObject({ reason: 'open-failed', message: expect.stringContaining('password authentication failed for user "postgres" (check the user, password and database in STACKER_DATABASE_URL)') });
  });
});

describe("a reader's database out of reach", () => {
  it('is said to be one that cannot be read', async () => {
    const error = await failure(openPgStoreForReading({ url: 'postgres://stacker:secret@127.0.0.1:1/stacker', mode: 'live' }));
    expect(error).toMatchObject({ reason: 'unwritable', message: expect.stringMatching(/^looking for the journal postgres:\/\/stacker:\*\*\*@127\.0\.0\.1:1\/stacker \(schema stacker_live\): the journal's database cannot be read: connect ECONNREFUSED 127\.0\.0\.1:1$/) });
    expect(exitCodeFor(error)).toBe(EXIT.transient);
  });
});
