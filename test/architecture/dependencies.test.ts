import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const lock = JSON.parse(readFileSync(join(import.meta.dirname, '../../package-lock.json'), 'utf8')) as {
  packages: Record<string, { dev?: boolean; hasInstallScript?: boolean; version?: string }>;
};

describe('the production dependencies', () => {
  it('need no install script (the image installs them with --ignore-scripts)', () => {
    const scripted = Object.entries(lock.packages).filter(([path, p]) => path !== '' && p.dev !== true && p.hasInstallScript === true);
    expect(scripted.map(([path]) => path)).toEqual([]);
  });

  it('leave the pinned Node binary out: it is a development dependency only', () => {
    expect(lock.packages['node_modules/node']?.dev).toBe(true);
  });
});
