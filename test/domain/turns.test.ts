import { describe, expect, it } from 'vitest';
import { Turns } from '../../src/domain/turns.ts';

const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 5));

describe('turns by key', () => {
  it('runs the work of one key one at a time, in the order asked, and different keys side by side', async () => {
    const turns = new Turns();
    const seen: string[] = [];
    const work = (name: string) => async () => {
      seen.push(`${name} starts`);
      await tick();
      seen.push(`${name} ends`);
      return name;
    };
    const results = await Promise.all([turns.take('main', work('a')), turns.take('main', work('b')), turns.take('side', work('c'))]);
    expect(results).toEqual(['a', 'b', 'c']);
    const at = (event: string): number => seen.indexOf(event);
    expect(at('b starts')).toBeGreaterThan(at('a ends'));
    expect(at('c starts')).toBeLessThan(at('a ends'));
  });

  it('a failed turn hands on to the next, and the failure goes to its own caller only', async () => {
    const turns = new Turns();
    const failed = turns.take('main', () => Promise.reject(new Error('refused')));
    const next = turns.take('main', () => Promise.resolve('ran'));
    await expect(failed).rejects.toThrow('refused');
    await expect(next).resolves.toBe('ran');
  });
});
