import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

// stacker runs on Node 22.18 or newer. Started by an older one (the system's, first on PATH), it
// says which versions it needs and how to get one, instead of failing on a missing export.
const ROOT = join(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'stacker-old-node-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A `node` on PATH that says it is `version` (and runs nothing). */
function nodeSaying(version: string): string {
  const bin = join(dir, version);
  execFileSync('mkdir', ['-p', bin]);
  writeFileSync(join(bin, 'node'), `#!/bin/sh\necho ${version}\n`);
  chmodSync(join(bin, 'node'), 0o755);
  return bin;
}

const systemNode = (() => {
  const found = spawnSync('/usr/bin/node', ['--version'], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : null;
})();
/** Whether a `vMAJOR.MINOR.PATCH` is older than 22.18. */
function older(version: string | null): boolean {
  const match = version === null ? null : /^v(\d+)\.(\d+)\./.exec(version);
  if (match === null) return false;
  const [major, minor] = [Number(match[1]), Number(match[2])];
  return major < 22 || (major === 22 && minor < 18);
}

describe('started by a Node older than 22.18', () => {
  it('bin/daemon.sh (the image and service units) names the versions and the node it found, exit 1', () => {
    for (const version of ['v20.19.0', 'v22.17.1']) {
      const result = spawnSync('sh', [join(ROOT, 'bin/daemon.sh'), 'run'], { env: { PATH: `${nodeSaying(version)}:/usr/bin:/bin` }, encoding: 'utf8' });
      // Checked before dist/ is looked for: the message is about Node whatever was built.
      expect([result.status, result.stderr]).toEqual([1, `stacker needs Node.js 22.18 or newer; the node on PATH is ${version} (${join(dir, version, 'node')}). Install Node 24, or put it first on PATH.\n`]);
    }
  });

  it.skipIf(!older(systemNode))('bin/stacker.js names the versions and the way to the pinned Node, exit 1', () => {
    const result = spawnSync('/usr/bin/node', [join(ROOT, 'bin/stacker.js'), 'ping'], { encoding: 'utf8' });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`stacker needs Node.js 22.18 or newer; this is Node.js ${systemNode?.slice(1)}.`);
    expect(result.stderr).toContain('npm start -- <command>');
  });
});
