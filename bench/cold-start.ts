/** Wall time of a cold `stacker ping` (a new process each time), next to a bare `node -e ''`. */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { median, percentile, type SandboxProcess } from './child.ts';

const BIN = fileURLToPath(new URL('../bin/stacker.js', import.meta.url));

function timeOnce(args: readonly string[]): number {
  const started = process.hrtime.bigint();
  const result = spawnSync(process.execPath, args, { encoding: 'utf8' });
  const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0) throw new Error(`${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  return elapsedMs;
}

export interface ColdStartResult {
  readonly runs: number;
  readonly pingMedianMs: number;
  readonly pingP90Ms: number;
  readonly bareNodeMedianMs: number;
}

export function benchColdStart(sandbox: SandboxProcess, runs = 15): ColdStartResult {
  const ping = [BIN, 'ping', '--base-url', sandbox.url];
  timeOnce(ping);
  const pings: number[] = [];
  const bare: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    pings.push(timeOnce(ping));
    bare.push(timeOnce(['-e', '']));
  }
  return { runs, pingMedianMs: median(pings), pingP90Ms: percentile(pings, 90), bareNodeMedianMs: median(bare) };
}
