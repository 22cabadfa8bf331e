/**
 * `npm run bench`: prints the figures the issues set targets for. Nothing here is asserted:
 * targets are read by people, not by tests.
 */
import { startSandboxProcess } from './child.ts';
import { benchClientCpu } from './client-cpu.ts';
import { benchColdStart } from './cold-start.ts';
import { benchResidents } from './daemon.ts';
import { benchBacktests } from './backtest-workloads.ts';
import { benchJournalDurability, benchPgJournal } from './journal-durability.ts';
import { benchStatusOrders } from './status-orders.ts';
import { tmpdir } from 'node:os';

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

const durability = await benchJournalDurability();
console.log(`journal writes of one live buy slot (8 commits; ${durability.slots} slots on a file in ${tmpdir()}; median of 3)`);
console.log(`  synchronous=FULL       ${fmt(durability.fullMs, 2)} ms per slot   (what stacker runs: each commit is on disk before the order leaves)`);
console.log(`  synchronous=NORMAL     ${fmt(durability.normalMs, 2)} ms per slot   (may lose the last commits on power loss)`);
console.log(`  FULL / NORMAL          ${fmt(durability.fullMs / durability.normalMs, 2)}x`);
const postgres = await benchPgJournal();
console.log(
  postgres === null
    ? '  PostgreSQL             skipped (PostgreSQL not installed)'
    : `  PostgreSQL             ${fmt(postgres.ms, 2)} ms per slot   (a local throwaway cluster over loopback TCP, fsync on, synchronous_commit=on, SERIALIZABLE)`,
);

const status = await benchStatusOrders();
console.log(`/api/status over a journal of ${status.orders} filled orders (a per-minute schedule's five weeks; SQLite; median of 3)`);
console.log(`  read every order       ${fmt(status.readMs, 0)} ms`);
console.log(`  positions per market   ${fmt(status.positionsMs, 0)} ms   (exact decimals; read and sum run on the daemon's thread)`);
console.log(`  first document         ${fmt(status.firstDocumentMs, 0)} ms   (two instances on it; every order read a page of 500 at a time)`);
console.log(`  longest stall          ${fmt(status.longestStallMs, 0)} ms   (the daemon's thread without a turn for its timers during the first document)`);
const kept = status.heapKeptMb === null ? 'not measured (run with --expose-gc)' : status.heapKeptMb < 0.1 ? '< 0.1 MB' : `${fmt(status.heapKeptMb)} MB`;
console.log(`  memory kept            ${kept}   (heap the document holds between refreshes, after a full collection: open orders and the last minute's, not every order)`);
console.log(`  a later refresh        ${fmt(status.refreshMs, 1)} ms   (one order more: only what changed is read, and put in place of what its order added before)`);

const residents = await benchResidents({ warmupS: 30, measureS: 20 });
const [image, , bareBot, cronBot] = residents;
if (image === undefined || bareBot === undefined || cronBot === undefined) throw new Error('resident bench incomplete');
const ms = (value: number | null): string => (value === null ? '   -' : fmt(value).padStart(4));
console.log('long-running programs trading once a second against the sandbox (same machine, same Node; RSS from /proc after a 30 s warm-up, 20 s measured; stacker also runs a balance report every 5 s)');
console.log('  program                                                    RSS median (max)    fire -> first request p50/p99   fire -> order p50/p99');
for (const r of residents) {
  console.log(`  ${r.label.padEnd(58)} ${fmt(r.rssMedianMb).padStart(6)} MB (${fmt(r.rssMaxMb)})   ${ms(r.firstRequestP50Ms)} / ${ms(r.firstRequestP99Ms)} ms              ${ms(r.orderP50Ms)} / ${ms(r.orderP99Ms)} ms`);
}
console.log(`  stacker (image) / bare undici bot      ${fmt(image.rssMedianMb / bareBot.rssMedianMb, 2)}x   (target: 80 MB where a bare undici bot is 75 MB, i.e. <= ${fmt(80 / 75, 2)}x)`);
console.log(`  stacker (image) / undici + node-cron   ${fmt(image.rssMedianMb / cronBot.rssMedianMb, 2)}x`);
console.log(`  fire -> first request target: p99 <= 5 ms (from the scheduled second)`);
for (const r of residents) console.log(`  ${r.label}: ${r.command}`);

const backtests = benchBacktests();
console.log('backtest, whole process (`stacker backtest --json` as a user runs it: Node start, parse, run, report), median of 3, beside the bare floor (bench/peers/bare-dca.mjs: parse + decimal DCA loop, nothing else) on the same candles');
console.log('  workload                                                     candles    slots   time       candles/s   slots/s   peak RSS   bare floor          target');
for (const m of backtests.measured) {
  const seconds = m.wallMs / 1000;
  console.log(
    `  ${m.workload.label.padEnd(60)} ${String(m.candles).padStart(8)} ${String(m.slots).padStart(7)}   ${fmt(seconds, 2).padStart(5)} s   ${fmt(m.candles / seconds / 1e6, 2).padStart(5)} M   ${fmt(m.slots / seconds / 1e3, 1).padStart(5)} k   ${fmt(m.peakRssMb, 0).padStart(4)} MB   ${fmt(m.bare.wallMs / 1000, 2)} s, ${fmt(m.bare.peakRssMb, 0)} MB   ${m.workload.target}`,
  );
}
if (backtests.missing !== null) console.log(`  (${backtests.missing})`);
