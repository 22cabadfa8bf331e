// A worker thread of a comparison: runs the backtests it is sent, one at a time, and answers
// each with its index, so the results keep the order of the runs whatever finishes first.
import { parentPort } from 'node:worker_threads';
import { type CommonInput, runJob } from './job.ts';
import type { RunSpec } from './plan.ts';

if (parentPort === null) throw new Error('compare/worker.ts runs as a worker thread');
const port = parentPort;
port.on('message', (message: { index: number; common: CommonInput; spec: RunSpec }) => {
  runJob(message.common, message.spec).then(
    (result) => port.postMessage({ index: message.index, result }),
    (error: unknown) => port.postMessage({ index: message.index, error: error instanceof Error ? error.message : String(error) }),
  );
});
