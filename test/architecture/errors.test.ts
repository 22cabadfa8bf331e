import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Every error class stacker defines descends from StackerError, so every failure that reaches a
 * caller has a stable `code` (README "Errors") and says whether a read may be retried. Built-in
 * errors thrown for programming mistakes (a RangeError for time going back) are not classes of
 * ours and stay as they are.
 */
const ROOT = join(import.meta.dirname, '../..');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

const CLASS = /class\s+(\w+)\s+extends\s+(\w+)/g;

function errorClasses(): Map<string, { base: string; file: string }> {
  const classes = new Map<string, { base: string; file: string }>();
  for (const file of [...sources(join(ROOT, 'src')), ...sources(join(ROOT, 'strategies'))]) {
    for (const match of readFileSync(file, 'utf8').matchAll(CLASS)) {
      const [, name, base] = match;
      if (name !== undefined && base !== undefined) classes.set(name, { base, file: relative(ROOT, file) });
    }
  }
  return classes;
}

describe('error classes', () => {
  it('all descend from StackerError, which alone extends Error', () => {
    const classes = errorClasses();
    /** Whether the class's chain of bases reaches Error without passing StackerError. */
    const bypasses = (name: string): boolean => {
      for (let current = name, steps = 0; steps < 20; steps += 1) {
        const base = classes.get(current)?.base;
        if (base === undefined || base === 'StackerError') return false;
        if (base === 'Error') return true;
        current = base;
      }
      return false;
    };
    const strays = [...classes.entries()]
      .filter(([name]) => name !== 'StackerError' && bypasses(name))
      .map(([name, { base, file }]) => `${file}: ${name} extends ${base}`);
    expect(strays).toEqual([]);
    expect(classes.get('StackerError')?.base).toBe('Error');
  });
});
