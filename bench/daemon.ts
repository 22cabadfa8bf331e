import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandbox } from '../src/sandbox/server.ts';
import { median, percentile } from './child.ts';

export interface DaemonFigures {
  readonly seconds: number;
  readonly rssMedianMb: number;
  readonly rssMaxMb: number;
  readonly slots: number;
  /** Scheduled slot time → the first request of that slot reaching the exchange. */
  readonly firstRequestP50Ms: number;
  readonly firstRequestP99Ms: number;
  /** Scheduled slot time → the order request reaching the exchange (snapshot reads included). */
  readonly orderP50Ms: number;
  readonly orderP99Ms: number;
}

const CLI = new URL('../src/cli.ts', import.meta.url).pathname;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function rssMb(pid: number): number | null {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
    return line === undefined ? null : Number(line.replace(/\D+/g, '')) / 1024;
  } catch {
    return null;
  }
}

/**
 * The daemon as users run it (`stacker run --live`, its own process) against the sandbox, one
 * dca instance firing every second. RSS is read from /proc after a warm-up; latency is measured
 * where it matters, at the exchange: the sandbox notes when each request arrives, and the
 * scheduled slot time is the whole second it belongs to.
 */
export async function benchDaemon(options: { warmupS: number; measureS: number }): Promise<DaemonFigures> {
  const arrivals: Array<{ path: string; at: number }> = [];
  const sandbox = await startSandbox({ rateLimits: false, onRequest: (r) => arrivals.push({ path: r.path, at: r.receivedAtMs }) });
  const root = mkdtempSync(join(tmpdir(), 'stacker-bench-daemon-'));
  const strategies = join(root, 'strategies');
  mkdirSync(strategies);
  writeFileSync(join(strategies, 'dca-btc.env'), 'STRATEGY=dca\nSCHEDULE="* * * * * *"\nMARKET=BTC_USDT\nAMOUNT=0.0001\n');
  sandbox.exchange.seedSpot('USDT', new (await import('../src/domain/money.ts')).Decimal('1000000'));
  const child = spawn(process.execPath, [CLI, 'run', '--live', '--strategies', strategies, '--data-dir', join(root, 'data')], {
    env: { PATH: process.env['PATH'] ?? '', HOME: root, STACKER_MODE: 'live', STACKER_BASE_URL: sandbox.url, STACKER_API_KEY: sandbox.apiKey, STACKER_API_SECRET: sandbox.apiSecret, STACKER_LOG_LEVEL: 'warn', ...(process.env['NODE_OPTIONS'] === undefined ? {} : { NODE_OPTIONS: process.env['NODE_OPTIONS'] }) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
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
    for (let second = Math.ceil(from / 1000) * 1000; second + 1000 <= to; second += 1000) {
      const inSlot = arrivals.filter((a) => a.at >= second && a.at < second + 1000);
      const first = inSlot[0];
      if (first !== undefined) firsts.push(first.at - second);
      const order = inSlot.find((a) => a.path === '/api/v4/order/stock_market');
      if (order !== undefined) orders.push(order.at - second);
    }
    return {
      seconds: options.measureS,
      rssMedianMb: median(samples),
      rssMaxMb: Math.max(...samples),
      slots: orders.length,
      firstRequestP50Ms: median(firsts),
      firstRequestP99Ms: percentile(firsts, 99),
      orderP50Ms: median(orders),
      orderP99Ms: percentile(orders, 99),
    };
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    await sandbox.stop();
    rmSync(root, { recursive: true, force: true });
  }
}
