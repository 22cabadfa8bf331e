/**
 * The backtest workloads the README's benchmark table names, each run as a user runs it (`stacker
 * backtest` in a process of its own, Node's start, the candle parse and the report included),
 * beside the floor any DCA backtest has (bench/peers/bare-dca.mjs: parse and a decimal loop,
 * nothing else) on the same candles and schedule.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const HOURLY_7Y = new URL('../data/BTCUSDT_1h_binance_2017-08-17_2024-04-21.csv', import.meta.url).pathname;
/**
 * 90 days of real 1-minute candles (130,708 rows, data/SOURCES.md says where they come from):
 * not committed (its host states no licence), so the path comes from STACKER_BENCH_MINUTE_CSV,
 * else the file of that name in data/; without it the 1-minute workloads are skipped, and said so.
 */
const MINUTE_90D = process.env['STACKER_BENCH_MINUTE_CSV'] ?? new URL('../data/BTCUSDT_1m_binance_2025-05-20_2025-08-18.csv', import.meta.url).pathname;
const REPLAY_TARGET = 1_000_000;

export interface Workload {
  readonly label: string;
  readonly file: string;
  readonly schedule: 'minute' | 'hour' | 'day';
  readonly amount: string;
  readonly target: string;
  /** AMOUNT values of a --sweep: the workload is one `stacker backtest --sweep` of that many runs. */
  readonly sweep?: readonly string[];
}

export interface Measured {
  readonly workload: Workload;
  readonly candles: number;
  readonly slots: number;
  readonly wallMs: number;
  readonly peakRssMb: number;
  readonly bare: { readonly wallMs: number; readonly peakRssMb: number };
}

const CRON = { minute: '* * * * *', hour: '0 * * * *', day: '0 9 * * *' } as const;

/** Runs each workload `runs` times (median by time) and its bare peer once per run. */
export function benchBacktests(runs = 3): { measured: Measured[]; missing: string | null } {
  const dir = mkdtempSync(join(tmpdir(), 'stacker-bench-bt-'));
  try {
    const workloads: Workload[] = [
      { label: 'daily DCA, 7 years of 1h candles', file: HOURLY_7Y, schedule: 'day', amount: '0.001', target: '<= 1 s' },
      { label: 'hourly DCA, 7 years of 1h candles, every slot fills', file: HOURLY_7Y, schedule: 'hour', amount: '0.002', target: '<= 3 s, <= 200 MB' },
    ];
    let missing: string | null = null;
    if (existsSync(MINUTE_90D)) {
      const replay = join(dir, `replay-${REPLAY_TARGET}.csv`);
      const rows = writeReplay(MINUTE_90D, replay);
      workloads.push(
        { label: 'per-minute schedule, 130k 1m candles (one slot each)', file: MINUTE_90D, schedule: 'minute', amount: '0.0001', target: '<= 6 s' },
        { label: `hourly DCA, ${(rows / 1e6).toFixed(2)} M 1m candles (90 days replayed)`, file: replay, schedule: 'hour', amount: '0.001', target: '>= 2 M candles/s' },
        { label: `daily DCA, ${(rows / 1e6).toFixed(2)} M 1m candles (90 days replayed)`, file: replay, schedule: 'day', amount: '0.001', target: '>= 2 M candles/s' },
        {
          label: `--sweep of 6 daily DCA runs, the same ${(rows / 1e6).toFixed(2)} M candles`,
          file: replay,
          schedule: 'day',
          amount: '0.001',
          sweep: ['0.001', '0.002', '0.003', '0.004', '0.005', '0.006'],
          target: 'one parse for all runs',
        },
      );
    } else missing = `${MINUTE_90D} is absent: the 1-minute workloads were not run`;
    const measured = workloads.map((workload) => {
      const env = join(dir, `${workload.schedule}.env`);
      writeFileSync(env, `STRATEGY=dca\nSCHEDULE="${CRON[workload.schedule]}"\nTIMEZONE=UTC\nMARKET=BTC_USDT\nAMOUNT=${workload.amount}\nSTP=cn\n`);
      const samples = Array.from({ length: runs }, () => ({ ...runCli(workload, env), bare: runBare(workload) }));
      return samples.sort((a, b) => a.wallMs - b.wallMs)[Math.floor(samples.length / 2)] as Measured;
    });
    return { measured, missing };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function runCli(workload: Workload, env: string): Omit<Measured, 'bare'> {
  const child = spawnSync(
    process.execPath,
    // The Node flag every entry point gives a command (package.json's start script, bin/stacker.js, bin/daemon.sh).
    [
      '--max-semi-space-size=8',
      new URL('./measured-cli.mjs', import.meta.url).pathname,
      'backtest',
      '--json',
      '--data',
      workload.file,
      '--market',
      'BTC_USDT',
      '--strategy',
      env,
      '--wallet',
      'USDT=100000000000',
      ...(workload.sweep === undefined ? [] : ['--sweep', `AMOUNT=${workload.sweep.join(',')}`]),
    ],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  if (child.status !== 0) throw new Error(`backtest bench (${workload.label}) failed: ${child.stderr}`);
  const cost = JSON.parse(child.stderr.trim().split('\n').pop() ?? '{}') as { wallMs: number; peakRssMb: number };
  type Report = { slots: number; data: { candles: number } };
  if (workload.sweep !== undefined) {
    // A comparison: its runs' slots added up, and the candles each of them replayed.
    const { runs } = JSON.parse(child.stdout) as { runs: Array<{ report: Report }> };
    const candles = runs.reduce((sum, run) => sum + run.report.data.candles, 0);
    return { workload, candles, slots: runs.reduce((sum, run) => sum + run.report.slots, 0), ...cost };
  }
  const report = JSON.parse(child.stdout) as Report;
  return { workload, candles: report.data.candles, slots: report.slots, ...cost };
}

/** The bare floor of one run (of a sweep: one parse, and the loop once per run). */
function runBare(workload: Workload): { wallMs: number; peakRssMb: number } {
  const started = performance.now();
  const loops = String(workload.sweep?.length ?? 1);
  const child = spawnSync(process.execPath, [new URL('./peers/bare-dca.mjs', import.meta.url).pathname, workload.file, workload.schedule, '1', workload.amount, loops], { encoding: 'utf8' });
  if (child.status !== 0) throw new Error(`bare DCA failed: ${child.stderr}`);
  const wallMs = performance.now() - started;
  return { wallMs, peakRssMb: (JSON.parse(child.stdout) as { peakRssMb: number }).peakRssMb };
}

/** The file replayed end to end until it passes REPLAY_TARGET rows, each copy shifted by the file's span. */
function writeReplay(source: string, target: string): number {
  const lines = readFileSync(source, 'latin1').split('\n');
  const header = lines[0] as string;
  const rows = lines.slice(1).filter((line) => line !== '');
  const timeOf = (row: string): number => Number(row.slice(0, row.indexOf(',')));
  const first = timeOf(rows[0] as string);
  const step = timeOf(rows[1] as string) - first;
  const span = timeOf(rows[rows.length - 1] as string) - first + step;
  const copies = Math.ceil(REPLAY_TARGET / rows.length);
  const out: string[] = [header];
  for (let c = 0; c < copies; c += 1) {
    for (const row of rows) out.push(`${timeOf(row) + c * span}${row.slice(row.indexOf(','))}`);
  }
  writeFileSync(target, `${out.join('\n')}\n`);
  return rows.length * copies;
}
