/**
 * `npm run bench`: prints the figures the issues set targets for. Nothing here is asserted:
 * targets are read by people, not by tests.
 */
import { startSandboxProcess } from './child.ts';
import { benchClientCpu } from './client-cpu.ts';
import { benchColdStart } from './cold-start.ts';

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
