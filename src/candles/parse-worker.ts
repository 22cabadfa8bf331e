// The scanning thread of a split load (split-load.ts): scans the rows of the second half of a
// candle file's bytes, in shared memory, and answers with its columns (moved, not copied) and
// its steps.
import { parentPort } from 'node:worker_threads';
import type { HalfAnswer, HalfAsked } from './split-load.ts';

if (parentPort === null) throw new Error('candles/parse-worker.ts runs as a worker thread');
const port = parentPort;
// The scanner loaded through the compile cache the command's own thread uses (a worker has its
// own, off unless asked), while the file is still being read: stripping its modules' types
// again cost the thread more than its scan.
if (import.meta.url.endsWith('.ts')) (await import('../../bin/compile-cache.js')).enablePrivateCompileCache();
const { scanPart } = await import('./part.ts');
port.once('message', (asked: HalfAsked) => {
  // One problem is enough: the file is then scanned again whole, in one thread, to name every one.
  const part = scanPart(Buffer.from(asked.buffer, asked.byteOffset, asked.byteLength), asked.start, asked.byteLength, asked.period, 0, 1);
  const answer: HalfAnswer = {
    count: part.count,
    times: part.times.buffer as ArrayBuffer,
    rowStarts: part.rowStarts.buffer as ArrayBuffer,
    closes: part.closes.buffer as ArrayBuffer,
    rows: part.rows,
    firstTime: part.firstTime,
    lastTime: part.lastTime,
    steps: [...part.steps],
    problems: part.problems.length,
  };
  port.postMessage(answer, [answer.times, answer.rowStarts, answer.closes]);
});
