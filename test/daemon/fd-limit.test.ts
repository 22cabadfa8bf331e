import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { FD_LIMIT_FLOOR, softFdLimit, warnOfLowFdLimit } from '../../src/daemon/fd-limit.ts';

/** prlimit(1) (util-linux) on Linux; elsewhere the real limit is not set here. */
const hasPrlimit = process.platform === 'linux' && spawnSync('prlimit', ['--version']).status === 0;

const LIMITS = (soft: string, hard: string): string =>
  ['Limit                     Soft Limit           Hard Limit           Units     ', 'Max processes             96364                96364                processes ', `Max open files            ${soft.padEnd(20)} ${hard.padEnd(20)} files     `, ''].join('\n');

describe('the open-files limit a daemon starts under', () => {
  it('is read from /proc/self/limits as its soft limit; unlimited or unreadable is no limit', () => {
    expect(softFdLimit(LIMITS('32', '1048576'))).toBe(32);
    expect(softFdLimit(LIMITS('unlimited', 'unlimited'))).toBeNull();
    expect(softFdLimit('')).toBeNull();
  });

  it(`is said at warn, with how to raise it, below ${FD_LIMIT_FLOOR}; nothing is said at or above it, or where it cannot be read`, () => {
    const lines: Array<{ fields: Record<string, unknown>; message: string }> = [];
    const logger = { warn: (fields: Record<string, unknown>, message: string) => void lines.push({ fields, message }) };
    warnOfLowFdLimit(logger, () => LIMITS('32', '32'));
    expect(lines).toEqual([{ fields: { event: 'fd-limit-low', limit: 32, floor: FD_LIMIT_FLOOR }, message: expect.stringMatching(/may open only 32 files \(ulimit -n\): past it the status page resets connections .*EMFILE.*docker run --ulimit nofile/) }]);
    warnOfLowFdLimit(logger, () => LIMITS(String(FD_LIMIT_FLOOR), '4096'));
    warnOfLowFdLimit(logger, () => {
      throw new Error('ENOENT');
    });
    expect(lines).toHaveLength(1);
  });

  it.skipIf(!hasPrlimit)('reads this process’s real limit, as prlimit sets it', () => {
    const probe = spawnSync('prlimit', ['--nofile=40:40', process.execPath, '-e', "process.stdout.write(require('node:fs').readFileSync('/proc/self/limits', 'utf8'))"], { encoding: 'utf8' });
    expect(probe.status, probe.stderr).toBe(0);
    expect(softFdLimit(probe.stdout)).toBe(40);
  });
});
