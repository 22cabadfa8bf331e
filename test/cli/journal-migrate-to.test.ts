import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrate } from '../../src/cli/commands/journal.ts';
import { CommandContext } from '../../src/cli/context.ts';
import { failure } from '../support/thrown.ts';

/**
 * `journal migrate --to URL`: a password on the command line stays in the shell history and in
 * `ps`, which the README's rule (never a flag) is there to prevent. It is too late to refuse it,
 * so the copy goes ahead and the warning says where the URL goes next time. The database here is
 * out of reach: the warning comes before any copy.
 */

let dir: string;
let err: string[];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'stacker-migrate-to-'));
  err = [];
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const PASSWORD = 'typed-on-the-command-line';
const context = (): CommandContext => new CommandContext('journal', { json: false }, { out: () => undefined, err: (text) => void err.push(text) }, { json: false, verbose: false, lookupHint: undefined });

describe('journal migrate --to with a password', () => {
  it('warns on stderr and points to STACKER_DATABASE_URL, never repeating the password', async () => {
    for (const to of [`postgres://stacker:${PASSWORD}@127.0.0.1:1/stacker`, `postgres://stacker@127.0.0.1:1/stacker?password=${PASSWORD}`]) {
      err = [];
      await failure(migrate(context(), { dataDir: dir, mode: 'live', to }, { env: {} }));
      expect(err.join('')).toContain(
        'warning: --to carries a password, which the shell history and ps keep: next time set STACKER_DATABASE_URL (in the environment or the --env-file file) and leave --to out\n',
      );
      expect(err.join('')).not.toContain(PASSWORD);
    }
  });

  it('says nothing of a URL without one', async () => {
    await failure(migrate(context(), { dataDir: dir, mode: 'live', to: 'postgres://stacker@127.0.0.1:1/stacker' }, { env: {} }));
    expect(err.join('')).not.toContain('warning');
  });
});
