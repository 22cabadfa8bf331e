import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { delimiter, dirname, join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { buildImageApp, imageFacts } from '../../scripts/image-app.ts';
import { sandboxPerTest, startDaemon } from './daemon-process.ts';

// The daemon as the Docker image runs it: compiled by tsconfig.build.json (the image's build
// stage) into dist/, started through bin/daemon.sh (the image's ENTRYPOINT). Both are laid out
// under node_modules/.cache, so the compiled files resolve the repository's packages exactly as
// the image's /app/dist does.
const ROOT = resolve(import.meta.dirname, '../..');
const TRACE_HOOK = join(ROOT, 'test/fixtures/node/module-trace.mjs');
const DAEMON_FLAGS = ['--max-semi-space-size=1', '--single-threaded', '--no-opt', '--no-maglev', '--no-sparkplug', '--liftoff-only'];
let app: string;
let dist: string;
let script: string;

beforeAll(() => {
  const cache = join(ROOT, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  app = buildImageApp(mkdtempSync(join(cache, 'stacker-compiled-')));
  dist = join(app, 'dist');
  script = join(app, 'bin', 'daemon.sh');
}, 60_000);
afterAll(() => rmSync(app, { recursive: true, force: true }));

// bin/daemon.sh runs the `node` on PATH: make it this Node.
const PATH = `${dirname(process.execPath)}${delimiter}${process.env['PATH'] ?? ''}`;
const t = sandboxPerTest();

const filesUnder = (folder: string): string[] =>
  readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(folder, join(entry.parentPath, entry.name)));

describe('the compiled daemon (the Docker image\'s dist/ and entrypoint)', () => {
  it('holds every source module and strategy as JavaScript, and no TypeScript', () => {
    const files = filesUnder(dist);
    expect(files.filter((file) => file.endsWith('.ts'))).toEqual([]);
    expect(existsSync(join(dist, 'src/cli.js'))).toBe(true);
    for (const strategy of ['index', 'dca', 'flex-sweep', 'balance-report']) expect(files).toContain(`strategies/${strategy}.js`);
    // Every relative import was rewritten from .ts to .js, dynamic ones too.
    const cli = readFileSync(join(dist, 'src/cli.js'), 'utf8');
    expect(cli).toMatch(/import\(["']\.\/cli\/main\.js["']\)/);
  });

  it('trades live on the sandbox, started as the image starts it, with the daemon\'s Node flags, and stops with SIGTERM', async () => {
    t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '* * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001', STP: 'cancel_new', ALLOW_TRANSFER: 'true' });
    const trace = join(t.dir.root, 'modules.txt');
    const daemon = startDaemon(['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data], { ...t.live(), PATH, STACKER_MODULE_TRACE: trace, NODE_OPTIONS: `--import=${TRACE_HOOK}` }, ['sh', script]);
    await daemon.waitFor('"to":"FILLED"');
    // The script exec'd Node: same process, now Node with the daemon's flags.
    const argv = readFileSync(`/proc/${daemon.child.pid}/cmdline`, 'utf8').split('\0');
    expect(argv.slice(1, 1 + DAEMON_FLAGS.length)).toEqual(DAEMON_FLAGS);
    // `--` ends Node's own options: stacker's --env-file is stacker's.
    expect(argv[1 + DAEMON_FLAGS.length]).toBe('--');
    expect(argv[2 + DAEMON_FLAGS.length]).toMatch(/dist\/src\/cli\.js$/);
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

  it("runs as the image runs it: the image's ENV with the README's .env (.env.example as `docker run --env-file` passes it), as its user, from its WORKDIR; healthy by its HEALTHCHECK; SIGTERM exits 0 with the journal in the volume", async () => {
    const image = imageFacts();
    // `docker run --env-file .env`: every KEY=value line taken literally, over the image's ENV.
    const dotEnv = Object.fromEntries(
      readFileSync(join(ROOT, '.env.example'), 'utf8')
        .split('\n')
        .filter((line) => /^[A-Z_][A-Z0-9_]*=/.test(line))
        .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
    );
    const env: Record<string, string> = { ...image.env, ...dotEnv };
    // The README's .env leaves the data dir to the image: the journal goes to the volume.
    expect(env['STACKER_DATA_DIR']).toBe('/data');
    // The API-key locks in the volume too: a --user without a home could not make ~/.stacker.
    expect(env['STACKER_LOCK_DIR']).toBe('/data/locks');
    const volume = join(t.dir.root, 'volume');
    mkdirSync(volume);
    const port = await freePort();
    const asRoot = process.getuid?.() === 0;
    const uid = image.user === 'node' ? 1000 : 0;
    if (asRoot) {
      chownSync(volume, uid, uid);
      chmodSync(t.dir.root, 0o755);
    }
    const child = spawn(image.entrypoint[0] as string, [...image.entrypoint.slice(1), ...image.cmd], {
      cwd: app,
      env: {
        ...env,
        PATH: env['PATH']?.replace('/app/bin', join(app, 'bin')).replace('$PATH', PATH) ?? PATH,
        HOME: t.dir.root,
        // What the test moves: the volume's place, the port, and the exchange the dry-run reads prices from.
        STACKER_DATA_DIR: volume,
        STACKER_LOCK_DIR: join(volume, 'locks'),
        STACKER_METRICS_PORT: String(port),
        STACKER_BASE_URL: t.sandbox.url,
      },
      ...(asRoot ? { uid, gid: uid } : {}),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // Stopped whatever the test's end: a failed assertion must not leave the daemon running.
    onTestFinished(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const health = async (): Promise<number> => {
      const run = spawnSync(image.healthcheck[0] as string, image.healthcheck.slice(1), { env: { PATH, STACKER_METRICS_PORT: String(port) }, encoding: 'utf8' });
      return run.status ?? -1;
    };
    let healthy = -1;
    for (let i = 0; i < 100 && healthy !== 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      healthy = await health();
    }
    expect(healthy, output).toBe(0);
    // Listening on 0.0.0.0, it answers only requests that name localhost: a page that points a
    // domain of its own at the published port (DNS rebinding) reads nothing.
    const rebound = spawnSync(process.execPath, ['-e', `require('node:http').get({ host: '127.0.0.1', port: ${port}, path: '/api/status', headers: { host: 'attacker.example:${port}' } }, (r) => { console.log(r.statusCode); r.resume(); })`], { encoding: 'utf8' });
    expect(rebound.stdout.trim()).toBe('421');
    child.kill('SIGTERM');
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code, output).toBe(0);
    expect(existsSync(join(volume, 'stacker-dry-run.db'))).toBe(true);
  }, 30_000);

  it('runs every other command with Node\'s defaults', () => {
    const result = spawnSync('sh', [script, '--version'], { env: { PATH }, encoding: 'utf8' });
    expect(result.status).toBe(0);
    expect(result.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('says what to do when nothing is built, and exits 1', () => {
    const bare = mkdtempSync(join(app, 'unbuilt-'));
    mkdirSync(join(bare, 'bin'));
    copyFileSync(join(ROOT, 'bin', 'daemon.sh'), join(bare, 'bin', 'daemon.sh'));
    const result = spawnSync('sh', [join(bare, 'bin', 'daemon.sh'), 'run'], { env: { PATH }, encoding: 'utf8' });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('run `npm run build` first');
  });
});

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolvePort(address.port) : reject(new Error('no port'))));
    });
  });
}
