import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { buildImageApp, imageEntry } from '../scripts/image-app.ts';
import { Decimal } from '../src/domain/money.ts';
import { startSandbox } from '../src/sandbox/server.ts';
import { median, percentile } from './child.ts';

export interface ResidentFigures {
  readonly label: string;
  readonly command: string;
  readonly rssMedianMb: number;
  readonly rssMaxMb: number;
  /** Slots (seconds) in which the program's request reached the exchange. */
  readonly slots: number;
  /** Scheduled second → the first request of that slot reaching the exchange; null when the program keeps no schedule. */
  readonly firstRequestP50Ms: number | null;
  readonly firstRequestP99Ms: number | null;
  /** Scheduled second → the order request (stacker only: its snapshot reads come first). */
  readonly orderP50Ms: number | null;
  readonly orderP99Ms: number | null;
}

const ROOT = new URL('..', import.meta.url).pathname;
const ORDER_PATH = '/api/v4/order/stock_market';
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function rssMb(pid: number): number | null {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
    return line === undefined ? null : Number(line.replace(/\D+/g, '')) / 1024;
  } catch {
    return null;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * Steady resident memory and schedule latency of long-running programs that trade against the
 * sandbox once a second: stacker as the Docker image runs it, stacker from its sources (`npm
 * start -- run`), and two peers measured the same way on the same machine and Node: a bare
 * undici bot, and one on node-cron. RSS is read from /proc after a warm-up; latency is measured
 * where it matters, at the exchange: the sandbox notes when each request arrives, and the
 * scheduled slot is the whole second it belongs to.
 */
export async function benchResidents(options: { warmupS: number; measureS: number }): Promise<ResidentFigures[]> {
  const app = buildImageApp(join(ROOT, 'node_modules/.cache/stacker-bench-app'));
  const node = process.execPath;
  try {
    return [
      await measure('stacker run --live, as the Docker image runs it', imageEntry(app), 'stacker', options),
      await measure('stacker run --live, from the sources (npm start -- run)', [node, join(ROOT, 'bin/stacker.js')], 'stacker', options),
      await measure('peer: bare undici bot (setInterval, signed POST)', [node, join(ROOT, 'bench/peers/undici-bot.mjs')], 'peer', options),
      await measure('peer: undici + node-cron bot (signed POST)', [node, join(ROOT, 'bench/peers/undici-cron-bot.mjs')], 'peer-cron', options),
    ];
  } finally {
    rmSync(app, { recursive: true, force: true });
  }
}

async function measure(label: string, launcher: readonly [string, ...string[]], kind: 'stacker' | 'peer' | 'peer-cron', options: { warmupS: number; measureS: number }): Promise<ResidentFigures> {
  const arrivals: Array<{ path: string; at: number }> = [];
  const sandbox = await startSandbox({ rateLimits: false, onRequest: (r) => arrivals.push({ path: r.path, at: r.receivedAtMs }) });
  const root = mkdtempSync(join(tmpdir(), 'stacker-bench-daemon-'));
  const [program, ...entry] = launcher;
  let args: string[];
  let env: Record<string, string>;
  if (kind === 'stacker') {
    const strategies = join(root, 'strategies');
    mkdirSync(strategies);
    writeFileSync(join(strategies, 'dca-btc.env'), 'STRATEGY=dca\nSCHEDULE="* * * * * *"\nMARKET=BTC_USDT\nAMOUNT=0.0001\n');
    // A second instance, so more than one strategy's code is warm, as in a real configuration.
    writeFileSync(join(strategies, 'report.env'), 'STRATEGY=balance-report\nSCHEDULE="*/5 * * * * *"\n');
    sandbox.exchange.seedSpot('USDT', new Decimal('1000000'));
    args = [...entry, 'run', '--live', '--strategies', strategies, '--data-dir', join(root, 'data')];
    // Metrics on, as in the image (STACKER_METRICS_PORT is set there), on loopback here.
    env = { STACKER_MODE: 'live', STACKER_BASE_URL: sandbox.url, STACKER_API_KEY: sandbox.apiKey, STACKER_API_SECRET: sandbox.apiSecret, STACKER_LOG_LEVEL: 'warn', STACKER_METRICS_PORT: String(await freePort()), STACKER_METRICS_HOST: '127.0.0.1' };
  } else {
    args = entry;
    env = { PEER_URL: sandbox.url, PEER_KEY: sandbox.apiKey, PEER_SECRET: sandbox.apiSecret };
  }
  // The image's script runs the `node` on PATH: make it this Node.
  const PATH = `${dirname(process.execPath)}${delimiter}${process.env['PATH'] ?? ''}`;
  const child = spawn(program, args, { env: { PATH, HOME: root, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  try {
    await sleep(options.warmupS * 1000);
    const from = Date.now();
    const samples: number[] = [];
    while (Date.now() - from < options.measureS * 1000) {
      const rss = rssMb(child.pid ?? -1);
      if (rss !== null) samples.push(rss);
      await sleep(500);
    }
    const to = Date.now();
    const firsts: number[] = [];
    const orders: number[] = [];
    let slots = 0;
    for (let second = Math.ceil(from / 1000) * 1000; second + 1000 <= to; second += 1000) {
      const inSlot = arrivals.filter((a) => a.at >= second && a.at < second + 1000);
      const first = inSlot[0];
      if (first !== undefined) {
        slots += 1;
        firsts.push(first.at - second);
      }
      const order = inSlot.find((a) => a.path === ORDER_PATH);
      if (order !== undefined) orders.push(order.at - second);
    }
    const scheduled = kind !== 'peer';
    return {
      label,
      command: [program === process.execPath ? 'node' : program, ...args].map((arg) => arg.replace(ROOT, '').replace(root, '<tmp>')).join(' '),
      rssMedianMb: median(samples),
      rssMaxMb: Math.max(...samples),
      slots,
      firstRequestP50Ms: scheduled ? median(firsts) : null,
      firstRequestP99Ms: scheduled ? percentile(firsts, 99) : null,
      orderP50Ms: kind === 'stacker' ? median(orders) : null,
      orderP99Ms: kind === 'stacker' ? percentile(orders, 99) : null,
    };
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    await sandbox.stop();
    rmSync(root, { recursive: true, force: true });
  }
}
