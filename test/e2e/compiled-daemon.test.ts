import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxPerTest, startDaemon } from './daemon-process.ts';

// The daemon as the Docker image runs it: compiled by tsconfig.build.json (the image's build
// stage) and started as its ENTRYPOINT starts it. The output goes under node_modules/.cache so
// the compiled files resolve the repository's packages exactly as dist/ does.
const ROOT = resolve(import.meta.dirname, '../..');
const TRACE_HOOK = join(ROOT, 'test/fixtures/node/module-trace.mjs');
let out: string;

beforeAll(() => {
  const cache = join(ROOT, 'node_modules', '.cache');
  execFileSync('mkdir', ['-p', cache]);
  out = mkdtempSync(join(cache, 'stacker-compiled-'));
  execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', out], { cwd: ROOT });
}, 60_000);
afterAll(() => rmSync(out, { recursive: true, force: true }));

const t = sandboxPerTest();

const filesUnder = (folder: string): string[] =>
  readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(out, join(entry.parentPath, entry.name)));

describe('the compiled daemon (the Docker image\'s dist/)', () => {
  it('holds every source module and strategy as JavaScript, and no TypeScript', () => {
    const files = filesUnder(out);
    expect(files.filter((file) => file.endsWith('.ts'))).toEqual([]);
    expect(existsSync(join(out, 'src/cli.js'))).toBe(true);
    for (const strategy of ['index', 'dca', 'flex-sweep', 'balance-report']) expect(files).toContain(`strategies/${strategy}.js`);
    // Every relative import was rewritten from .ts to .js.
    const cli = readFileSync(join(out, 'src/cli.js'), 'utf8');
    expect(cli).toMatch(/from ["']\.\/cli\/main\.js["']/);
  });

  it('trades live on the sandbox, started as the image starts it, and stops with SIGTERM', async () => {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '* * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001', STP: 'cancel_new', ALLOW_TRANSFER: 'true' });
    const trace = join(t.dir.root, 'modules.txt');
    const daemon = startDaemon(['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data], { ...t.live(), STACKER_MODULE_TRACE: trace }, [
      '--max-semi-space-size=1',
      '--import',
      TRACE_HOOK,
      join(out, 'src/cli.js'),
    ]);
    await daemon.waitFor('"to":"FILLED"');
    daemon.child.kill('SIGTERM');
    expect(await daemon.exited).toBe(0);
    expect(t.sandbox.exchange.orderHistory({}).length).toBeGreaterThanOrEqual(1);

    // What a live daemon keeps resident is what it loaded. Not Node's TypeScript stripper (no
    // .ts module), not undici's index (fetch, WebSocket, mocks: see src/api/undici-core.ts), and
    // none of the simulation, sandbox or backtest code.
    const loaded = readFileSync(trace, 'utf8').split('\n').filter((line) => line !== '');
    expect(loaded.length).toBeGreaterThan(50);
    expect(loaded.filter((url) => url.endsWith('.ts'))).toEqual([]);
    expect(loaded.filter((url) => url.endsWith('/node_modules/undici/index.js'))).toEqual([]);
    expect(loaded.filter((url) => /\/node_modules\/undici\/lib\/(web|mock|cache)\//.test(url))).toEqual([]);
    expect(loaded.filter((url) => /\/src\/(sim|sandbox|backtest|demo)\//.test(url))).toEqual([]);
  }, 30_000);
});
