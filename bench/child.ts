import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

export interface SandboxProcess {
  readonly url: string;
  readonly apiKey: string;
  readonly apiSecret: string;
  stop(): Promise<void>;
}

/** Start bench/sandbox-child.ts and read the credentials from its first line. */
export async function startSandboxProcess(): Promise<SandboxProcess> {
  const child: ChildProcess = spawn(process.execPath, [new URL('./sandbox-child.ts', import.meta.url).pathname], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (!child.stdout) throw new Error('sandbox child has no stdout');
  const lines = createInterface({ input: child.stdout });
  const [first] = (await once(lines, 'line')) as [string];
  lines.close();
  const info = JSON.parse(first) as { url: string; apiKey: string; apiSecret: string };
  return {
    ...info,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, index)] ?? 0;
}
