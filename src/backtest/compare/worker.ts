// A worker thread of a comparison: runs the backtests it is sent, one at a time, and answers
// each with its index, so the results keep the order of the runs whatever finishes first.
import { parentPort } from 'node:worker_threads';
import { ConfigError, InputError } from '../../domain/errors.ts';
import { type CommonInput, loadJobModules, runJob } from './job.ts';
import type { RunSpec } from './plan.ts';

if (parentPort === null) throw new Error('compare/worker.ts runs as a worker thread');
const port = parentPort;
// Loaded now, while the main thread still reads the candles, and from the compile cache the
// command's own thread uses (a worker has its own, off unless asked): the first run does not wait.
if (import.meta.url.endsWith('.ts')) (await import('../../../bin/compile-cache.js')).enablePrivateCompileCache();
void loadJobModules().catch(() => {});
port.on('message', (message: { index: number; common: CommonInput; spec: RunSpec }) => {
  runJob(message.common, message.spec).then(
    (result) => port.postMessage({ index: message.index, result }),
    // Bad input stays bad input across the thread (exit 2, every problem named), not an unexpected failure.
    (error: unknown) =>
      port.postMessage({
        index: message.index,
        error: error instanceof Error ? error.message : String(error),
        ...(error instanceof ConfigError || error instanceof InputError ? { problems: error.problems, kind: error instanceof ConfigError ? 'config' : 'input' } : {}),
      }),
  );
});
