import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const folder = mkdtempSync(join(tmpdir(), 'stacker-module-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));
const REPORT_ERROR = pathToFileURL(join(import.meta.dirname, '../../src/cli/report-error.ts')).href;

/**
 * What stacker prints for a module Node refuses to load: Node itself loads the source (its type
 * stripping, not the test runner's transform), and the CLI's reportError writes the error.
 */
function reported(name: string, source: string, json = false): string {
  const file = join(folder, name);
  writeFileSync(file, source);
  const script = `
    const { reportError } = await import(${JSON.stringify(REPORT_ERROR)});
    const error = await import(${JSON.stringify(pathToFileURL(file).href)}).then(() => new Error('loaded'), (e) => e);
    reportError(error, { out: () => {}, err: (text) => process.stdout.write(text) }, { json: ${json} });`;
  return execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
}

describe('a strategy module Node cannot load', () => {
  it('is reported with its file, line and the line itself, not as a bare parser message', () => {
    expect(reported('typo.ts', 'export const x = { a: 1 b: 2 };\n')).toBe(
      `error: a module could not be loaded: ${join(folder, 'typo.ts')}:1: Expected ',', got 'ident'\n  export const x = { a: 1 b: 2 };\n                          ^\n`,
    );
  });

  it('says why an enum is refused and which command names every such place', () => {
    const text = reported('enum.ts', 'enum Side { Buy }\nexport const side = Side.Buy;\n');
    expect(text).toContain(`error: a module could not be loaded: ${join(folder, 'enum.ts')}:1: TypeScript enum is not supported in strip-only mode\n`);
    expect(text).toContain('`npm run typecheck` names each one');
  });

  it('carries the place in --json too', () => {
    expect(JSON.parse(reported('typo2.ts', 'export const = 1;\n', true))).toMatchObject({ error: { code: 'E_UNEXPECTED', module: `${join(folder, 'typo2.ts')}:1` } });
  });
});
