import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pkg from '../../package.json' with { type: 'json' };

/**
 * Which build of stacker this is: package.json's version, which stays the same from build to
 * build, and the git commit it was built from, so an operator can tell builds apart in
 * `--version`, the start's log line, the journal's runs and /api/status (`0.1.0+4742248`). The
 * commit comes from a `COMMIT` file beside the package.json the code runs with (the Docker
 * image's build stage writes it from its STACKER_COMMIT build argument), else from the git
 * checkout the code runs from (.git read as files: no git is spawned). Without either, the
 * package version alone.
 */
export function buildVersion(root: string = packageRoot()): string {
  const commit = bakedCommit(root) ?? checkoutCommit(root) ?? checkoutCommit(dirname(root));
  return commit === null ? pkg.version : `${pkg.version}+${commit.slice(0, 7)}`;
}

let cached: string | null = null;

/** buildVersion() of this process, read once. */
export function stackerVersion(): string {
  cached ??= buildVersion();
  return cached;
}

/** Where package.json is: the repository (sources), or dist/ (compiled: tsc emits the JSON it imports there). */
function packageRoot(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), '../..');
}

const SHA = /^[0-9a-f]{40}$/;

function bakedCommit(root: string): string | null {
  const text = readText(join(root, 'COMMIT'));
  return text !== null && /^[0-9a-f]{7,40}$/.test(text) ? text : null;
}

/** The commit HEAD names in a checkout at `dir`: a worktree's `.git` file, a detached HEAD, loose or packed refs. */
function checkoutCommit(dir: string): string | null {
  let gitDir = join(dir, '.git');
  const pointer = readText(gitDir);
  if (pointer !== null) {
    // A worktree or submodule: `.git` is a file naming the real one.
    const match = /^gitdir: (.+)$/m.exec(pointer);
    if (match?.[1] === undefined) return null;
    gitDir = isAbsolute(match[1]) ? match[1] : resolve(dir, match[1]);
  }
  const head = readText(join(gitDir, 'HEAD'));
  if (head === null) return null;
  if (SHA.test(head)) return head;
  const ref = /^ref: (refs\/[^\s]+)$/.exec(head)?.[1];
  if (ref === undefined) return null;
  const common = readText(join(gitDir, 'commondir'));
  const dirs = common === null ? [gitDir] : [gitDir, isAbsolute(common) ? common : resolve(gitDir, common)];
  for (const where of dirs) {
    const loose = readText(join(where, ref));
    if (loose !== null && SHA.test(loose)) return loose;
    const packed = readText(join(where, 'packed-refs'));
    const line = packed?.split('\n').find((entry) => entry.endsWith(` ${ref}`));
    const sha = line?.slice(0, 40);
    if (sha !== undefined && SHA.test(sha)) return sha;
  }
  return null;
}

/** A small file's text, trimmed; null when it is missing, a folder or unreadable. */
function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return null;
  }
}
