import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { COMPILE_CACHE_DIR, privateFolder } from '../../bin/compile-cache.js';
import { finished, startCli } from './run-cli.ts';

const scratch = mkdtempSync(join(tmpdir(), 'stacker-compile-cache-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("Node's compile cache of commands run from the sources", () => {
  it('is kept in the checkout, in a folder only this user can open, never in the shared temp folder where another user could plant code in it', async () => {
    const sharedTemp = join(scratch, 'shared-tmp');
    mkdirSync(sharedTemp, { mode: 0o1777 });
    const result = await finished(startCli(['--version'], { TMPDIR: sharedTemp }));
    expect(result.code).toBe(0);
    expect(readdirSync(sharedTemp)).toEqual([]);
    expect(COMPILE_CACHE_DIR).toMatch(/node_modules[\\/]\.cache[\\/]stacker-compile$/);
    expect(readdirSync(COMPILE_CACHE_DIR).length).toBeGreaterThan(0);
    if (process.platform !== 'win32') expect(lstatSync(COMPILE_CACHE_DIR).mode & 0o777).toBe(0o700);
  });

  it.skipIf(process.platform === 'win32')('makes a missing folder 0700 whatever the umask, and refuses one that others can write, a link or a file', () => {
    const made = join(scratch, 'made', 'cache');
    const before = process.umask(0o022);
    try {
      expect(privateFolder(made)).toBe(made);
    } finally {
      process.umask(before);
    }
    expect(lstatSync(made).mode & 0o777).toBe(0o700);
    // The folders above it keep the umask's mode: node_modules/.cache is other tools' too.
    expect(lstatSync(join(scratch, 'made')).mode & 0o777).toBe(0o755);

    const open = join(scratch, 'open');
    mkdirSync(open);
    chmodSync(open, 0o777);
    expect(privateFolder(open)).toBeNull();
    chmodSync(open, 0o770);
    expect(privateFolder(open)).toBeNull();

    const link = join(scratch, 'link');
    symlinkSync(made, link);
    expect(privateFolder(link)).toBeNull();

    const file = join(scratch, 'file');
    writeFileSync(file, '');
    expect(privateFolder(file)).toBeNull();
  });

  it.runIf(process.getuid?.() === 0)("refuses a folder another user owns, though only its owner can write it", () => {
    const theirs = join(scratch, 'theirs');
    mkdirSync(theirs, { mode: 0o700 });
    chownSync(theirs, 65534, 65534);
    expect(privateFolder(theirs)).toBeNull();
    expect(existsSync(theirs)).toBe(true);
  });
});
