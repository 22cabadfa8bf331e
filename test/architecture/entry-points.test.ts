import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * A command runs with the same Node flags however it is started: `npm start --`, `npx stacker`
 * (bin/stacker.js's shebang) or the image's bin/daemon.sh. The young generation is capped at
 * 8 MB for commands (a backtest's peak memory, README "Benchmarks"); the daemon's own flags are
 * tested where it runs (test/e2e/compiled-daemon.test.ts).
 */
const ROOT = join(import.meta.dirname, '../..');
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');
const COMMAND_FLAGS = '--max-semi-space-size=8 --';

describe('entry points', () => {
  it('give every command the same Node flags, ending with -- so Node never takes a flag of ours', () => {
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    // Through bin/stacker.js, not src/cli.ts: a JavaScript entry turns Node's compile cache on
    // before the first TypeScript file loads, so a warm start skips loading the type stripper.
    // exec: Node takes npm's shell's place, so a SIGTERM to npm reaches it (test/cli/npm-scripts.test.ts).
    expect(scripts['start']).toBe(`exec node ${COMMAND_FLAGS} bin/stacker.js`);
    expect(scripts['stacker']).toBe(`exec node ${COMMAND_FLAGS} bin/stacker.js`);
    expect(read('bin/stacker.js').split('\n')[0]).toBe(`#!/usr/bin/env -S node ${COMMAND_FLAGS}`);
    const daemon = read('bin/daemon.sh').split('\n').filter((line) => line.trim().startsWith('exec node'));
    expect(daemon.at(-1)?.trim()).toBe(`exec node ${COMMAND_FLAGS} "$cli" "$@"`);
  });
});
