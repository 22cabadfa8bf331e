import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Secrets stay out of git: the env file and every local variant of it (`.env.live`,
 * `.env.prod`, in any folder) are ignored, as .dockerignore keeps them out of the image, so a
 * `git add .` cannot commit an API secret. The commented example and the strategy instance
 * files (which hold no secrets) stay tracked.
 */
const ROOT = join(import.meta.dirname, '../..');

function ignored(path: string): boolean {
  // --no-index: the rule itself, whether or not the path is tracked or exists.
  const result = spawnSync('git', ['check-ignore', '--no-index', '--quiet', path], { cwd: ROOT });
  if (result.status !== 0 && result.status !== 1) throw new Error(`git check-ignore ${path}: ${String(result.stderr)}`);
  return result.status === 0;
}

describe.skipIf(!existsSync(join(ROOT, '.git')))('git', () => {
  it('ignores the env file and its local variants, anywhere', () => {
    for (const path of ['.env', '.env.live', '.env.prod', '.env.local', 'config/.env', 'deploy/.env.production']) expect({ path, ignored: ignored(path) }).toEqual({ path, ignored: true });
  });

  it('tracks the commented example and the strategy instance files', () => {
    for (const path of ['.env.example', 'config/strategies/dca-btc.env', 'config/backtest/dca-btc-daily.env']) expect({ path, ignored: ignored(path) }).toEqual({ path, ignored: false });
  });
});
