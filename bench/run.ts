/**
 * `npm run bench`: prints the figures the issues set targets for. Nothing here is asserted:
 * targets are read by people, not by tests.
 */
import { startSandboxProcess } from './child.ts';
import { benchClientCpu } from './client-cpu.ts';
import { benchColdStart } from './cold-start.ts';
import { benchDaemon } from './daemon.ts';
import { spawnSync } from 'node:child_process';

const fmt = (n: number, digits = 1): string => n.toFixed(digits);

const sandbox = await startSandboxProcess();
try {
  const cpu = await benchClientCpu(sandbox);
  console.log('client CPU per signed request (POST /api/v4/trade-account/balance, 8 concurrent, sandbox in another process)');
  console.log(`  stacker ApiClient      ${fmt(cpu.stackerMicros)} µs`);
  console.log(`  bare undici + HMAC     ${fmt(cpu.baselineMicros)} µs`);
  console.log(`  ratio                  ${fmt(cpu.ratio, 2)}x   (target <= 1.2x; median of ${cpu.rounds} rounds x ${cpu.requestsPerRound} requests)`);

  const cold = benchColdStart(sandbox);
  console.log('cold start of `stacker ping` (new process each run)');
  console.log(`  median                 ${fmt(cold.pingMedianMs)} ms   (target <= 250 ms)`);
  console.log(`  p90                    ${fmt(cold.pingP90Ms)} ms`);
  console.log(`  bare node -e ''        ${fmt(cold.bareNodeMedianMs)} ms   (ratio ${fmt(cold.pingMedianMs / cold.bareNodeMedianMs, 2)}x)`);
} finally {
  await sandbox.stop();
}

const daemon = await benchDaemon({ warmupS: 5, measureS: 15 });
console.log(`daemon (stacker run --live, one dca slot a second, against the sandbox; ${daemon.slots} slots measured)`);
console.log(`  steady RSS median      ${fmt(daemon.rssMedianMb)} MB   (max ${fmt(daemon.rssMaxMb)} MB; target <= 80 MB; bare undici bot 75 MB, ccxt bot 167 MB)`);
console.log(`  fire -> first request  p50 ${fmt(daemon.firstRequestP50Ms)} ms, p99 ${fmt(daemon.firstRequestP99Ms)} ms   (target p99 <= 5 ms; from the scheduled second)`);
console.log(`  fire -> order request  p50 ${fmt(daemon.orderP50Ms)} ms, p99 ${fmt(daemon.orderP99Ms)} ms   (snapshot reads included)`);

const runs = [0, 1, 2].map(() => {
  const child = spawnSync(process.execPath, [new URL('./backtest-child.ts', import.meta.url).pathname], { encoding: 'utf8' });
  if (child.status !== 0) throw new Error(`backtest bench failed: ${child.stderr}`);
  return JSON.parse(child.stdout) as { file: string; rows: number; copies: number; candles: number; slots: number; parseMs: number; runMs: number; peakRssMb: number };
});
const best = runs.map((r) => ({ ...r, perSecond: r.candles / ((r.parseMs + r.runMs) / 1000) })).sort((a, b) => a.perSecond - b.perSecond);
const mid = best[1] as (typeof best)[number];
console.log(`backtest end to end (${mid.file}: ${mid.rows} rows parsed, replayed x${mid.copies} = ${mid.candles} candles, daily dca, ${mid.slots} slots; median of 3 processes)`);
console.log(`  throughput             ${fmt(mid.perSecond / 1e6, 2)} M candles/s   (target >= 2 M; Jesse ~0.5 M; parse ${fmt(mid.parseMs)} ms + run ${fmt(mid.runMs)} ms)`);
console.log(`  peak RSS               ${fmt(mid.peakRssMb)} MB   (target <= 150 MB)`);
