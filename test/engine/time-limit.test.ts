import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { withinTimeLimit } from '../../src/engine/time-limit.ts';

const never = (): Promise<never> => new Promise<never>(() => {});

describe('withinTimeLimit: work that may never settle, watched by one timer', () => {
  it('gives the value or the error of work that settles in time', async () => {
    await expect(withinTimeLimit(Promise.resolve(42), 1000, 'decide')).resolves.toBe(42);
    await expect(withinTimeLimit(Promise.reject(new RangeError('bad')), 1000, 'decide')).rejects.toThrow(RangeError);
  });

  it('fails work that has not settled at its limit with a TypeError naming it', async () => {
    const started = performance.now();
    await expect(withinTimeLimit(never(), 50, 'decide')).rejects.toThrow(new TypeError('decide did not answer within 0.05 s'));
    expect(performance.now() - started).toBeGreaterThanOrEqual(49);
  });

  it('fails a short limit on time although a longer one was armed first, and the longer one at its own', async () => {
    const started = performance.now();
    const long = withinTimeLimit(never(), 400, 'long');
    const longFailed = long.catch((error: unknown) => ({ error, afterMs: performance.now() - started }));
    await expect(withinTimeLimit(never(), 30, 'short')).rejects.toThrow('short did not answer within 0.03 s');
    expect(performance.now() - started).toBeLessThan(350);
    const { error, afterMs } = await longFailed;
    expect(String(error)).toContain('long did not answer within 0.4 s');
    expect(afterMs).toBeGreaterThanOrEqual(399);
  });

  it('fails only the work past its limit: work that settled in time keeps its value', async () => {
    let answer: (value: string) => void = () => {};
    const late = withinTimeLimit(new Promise<string>((resolve) => (answer = resolve)), 200, 'answered');
    const hung = withinTimeLimit(never(), 60, 'hung');
    await expect(hung).rejects.toThrow('hung did not answer');
    answer('in time');
    await expect(late).resolves.toBe('in time');
  });

  it('does not keep a program alive once its work settled (the timer is armed for 30 s)', async () => {
    const script = `import { withinTimeLimit } from ${JSON.stringify(new URL('../../src/engine/time-limit.ts', import.meta.url).href)};
      const value = await withinTimeLimit(Promise.resolve('done'), 30_000, 'decide');
      console.log(value);`;
    const started = performance.now();
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { timeout: 20_000 });
    expect(stdout.trim()).toBe('done');
    expect(performance.now() - started).toBeLessThan(15_000);
  });

  it('keeps a program alive while work is pending, until the limit fails it', async () => {
    const script = `import { withinTimeLimit } from ${JSON.stringify(new URL('../../src/engine/time-limit.ts', import.meta.url).href)};
      await withinTimeLimit(Promise.resolve(1), 30_000, 'first');
      withinTimeLimit(new Promise(() => {}), 300, 'decide').catch((error) => console.log(error.message));`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { timeout: 20_000 });
    expect(stdout.trim()).toBe('decide did not answer within 0.3 s');
  });
});
