/**
 * `node bench/soak.ts [seconds]` (default 600): the daemon as the Docker image runs it (compiled
 * fresh, started by the Dockerfile's ENTRYPOINT) trading once a second against the sandbox, with a
 * balance report every 5 s and /metrics on; prints its RSS every 30 s, so a leak shows as a
 * slope. Not part of `npm run bench`: it takes minutes by design.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { Decimal } from '../src/domain/money.ts';
import { startSandbox } from '../src/sandbox/server.ts';
import { buildImageApp, imageEntry } from '../scripts/image-app.ts';

const seconds = Number(process.argv[2] ?? 600);
if (!Number.isInteger(seconds) || seconds < 30) {
  console.error('usage: node bench/soak.ts [seconds >= 30]');
  process.exit(2);
}

const app = buildImageApp(new URL('../node_modules/.cache/stacker-soak-app', import.meta.url).pathname);
const [program, ...entry] = imageEntry(app);

const sandbox = await startSandbox({ rateLimits: false });
sandbox.exchange.seedSpot('USDT', new Decimal('100000000'));
const root = mkdtempSync(join(tmpdir(), 'stacker-soak-'));
mkdirSync(join(root, 'strategies'));
writeFileSync(join(root, 'strategies', 'dca-btc.env'), 'STRATEGY=dca\nSCHEDULE="* * * * * *"\nMARKET=BTC_USDT\nAMOUNT=0.0001\n');
writeFileSync(join(root, 'strategies', 'report.env'), 'STRATEGY=balance-report\nSCHEDULE="*/5 * * * * *"\n');
const child = spawn(program, [...entry, 'run', '--live', '--strategies', join(root, 'strategies'), '--data-dir', join(root, 'data')], {
  env: {
    PATH: `${dirname(process.execPath)}${delimiter}${process.env['PATH'] ?? ''}`,
    HOME: root,
    STACKER_MODE: 'live',
    STACKER_BASE_URL: sandbox.url,
    STACKER_API_KEY: sandbox.apiKey,
    STACKER_API_SECRET: sandbox.apiSecret,
    STACKER_LOG_LEVEL: 'warn',
    STACKER_METRICS_PORT: '0',
    STACKER_METRICS_HOST: '127.0.0.1',
  },
  stdio: ['ignore', 'ignore', 'inherit'],
});
try {
  const started = Date.now();
  for (let at = 30; at <= seconds; at += 30) {
    await new Promise((resolve) => setTimeout(resolve, started + at * 1000 - Date.now()));
    const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1]) / 1024;
    console.log(`${String(at).padStart(5)} s  RSS ${rss.toFixed(1)} MB  orders ${sandbox.exchange.orderHistory({}).length}`);
  }
} finally {
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  await sandbox.stop();
  rmSync(root, { recursive: true, force: true });
  rmSync(app, { recursive: true, force: true });
}
