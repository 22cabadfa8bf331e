import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import pkg from '../../package.json' with { type: 'json' };
import { buildVersion } from '../../src/daemon/build-version.ts';

// Every build said "0.1.0": the version names the commit it was built from, read from the
// checkout's .git as files, or from the COMMIT file the image's build stage writes.
const SHA = '4742248a0b1c2d3e4f5061728394a5b6c7d8e9f0';
const OTHER = '963822c0000000000000000000000000000000aa';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'stacker-build-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function file(path: string, text: string): void {
  mkdirSync(join(root, path, '..'), { recursive: true });
  writeFileSync(join(root, path), text);
}

describe('the build a version names', () => {
  it('is the package version alone where no commit is known', () => {
    expect(buildVersion(join(root, 'app'))).toBe(pkg.version);
  });

  it('names the commit of a branch, loose or packed, and of a detached HEAD', () => {
    file('.git/HEAD', 'ref: refs/heads/main\n');
    file('.git/refs/heads/main', `${SHA}\n`);
    expect(buildVersion(root)).toBe(`${pkg.version}+4742248`);
    rmSync(join(root, '.git/refs/heads/main'));
    file('.git/packed-refs', `# pack-refs with: peeled fully-peeled sorted\n${OTHER} refs/heads/other\n${SHA} refs/heads/main\n`);
    expect(buildVersion(root)).toBe(`${pkg.version}+4742248`);
    file('.git/HEAD', `${OTHER}\n`);
    expect(buildVersion(root)).toBe(`${pkg.version}+963822c`);
  });

  it("reads a worktree's .git file, its HEAD in the worktree's folder and its refs in the common one", () => {
    file('main/.git/refs/heads/feature', `${SHA}\n`);
    file('main/.git/worktrees/wt/HEAD', 'ref: refs/heads/feature\n');
    file('main/.git/worktrees/wt/commondir', '../..\n');
    file('wt/.git', `gitdir: ${join(root, 'main/.git/worktrees/wt')}\n`);
    expect(buildVersion(join(root, 'wt'))).toBe(`${pkg.version}+4742248`);
  });

  it('reads the checkout above dist/ (npm run daemon), and prefers the COMMIT file a build wrote', () => {
    file('.git/HEAD', `${OTHER}\n`);
    mkdirSync(join(root, 'dist'));
    expect(buildVersion(join(root, 'dist'))).toBe(`${pkg.version}+963822c`);
    file('dist/COMMIT', `${SHA}\n`);
    expect(buildVersion(join(root, 'dist'))).toBe(`${pkg.version}+4742248`);
  });

  it('says nothing of a commit it cannot read (a damaged HEAD, a COMMIT file that is not a commit)', () => {
    file('.git/HEAD', 'ref: refs/heads/gone\n');
    file('COMMIT', 'not a commit\n');
    expect(buildVersion(root)).toBe(pkg.version);
  });
});
