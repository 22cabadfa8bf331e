import { availableParallelism } from 'node:os';
import { extname } from 'node:path';
import { Worker } from 'node:worker_threads';
import { ConfigError, InputError, type InputProblem } from '../../domain/errors.ts';
import { type CommonInput, type RunResult, runJob } from './job.ts';
import type { RunSpec } from './plan.ts';

/**
 * Every run of a comparison, results in the order of the runs. With more than one run and more
 * than one CPU the runs go to worker threads (each backtest is independent CPU work: two cores
 * halve a sweep); `workers: 1` runs them one after another here. Either way the results are the
 * same bytes.
 */
export async function runAll(common: CommonInput, specs: readonly RunSpec[], workers = availableParallelism()): Promise<RunResult[]> {
  const runs = startRuns(specs.length, workers);
  try {
    return await runs.run(common, specs);
  } finally {
    await runs.close();
  }
}

/** Runs whose threads are already starting: see startRuns. */
export interface Runs {
  /** Every run, results in the order of the runs. */
  run(common: CommonInput, specs: readonly RunSpec[]): Promise<RunResult[]>;
  /** Ends the threads; always call it, whether `run` was called or not. */
  close(): Promise<void>;
}

/**
 * runAll in two steps, so that the worker threads start (and load the backtest's modules, a few
 * hundred milliseconds each) while the caller still reads the candles and the rules: the threads
 * for `count` runs, at most `workers` of them; none when that is one.
 */
export function startRuns(count: number, workers = availableParallelism()): Runs {
  const threads = Math.min(workers, count);
  if (threads <= 1) {
    return {
      async run(common, specs) {
        const results: RunResult[] = [];
        for (const spec of specs) results.push(await runJob(common, spec));
        return results;
      },
      async close() {},
    };
  }
  // The worker is a sibling module: worker.ts from the sources, worker.js from the compiled build.
  const script = new URL(`./worker${extname(new URL(import.meta.url).pathname)}`, import.meta.url);
  // The young generation the command's own Node gets (--max-semi-space-size=8: three semi-spaces' worth).
  const pool = Array.from({ length: threads }, () => new Worker(script, { resourceLimits: { maxYoungGenerationSizeMb: 24 } }));
  // A thread that fails before the runs are given (out of memory while loading) is told then:
  // an 'error' nobody listens for would end the whole process.
  let failed: unknown = null;
  for (const worker of pool) worker.on('error', (error) => (failed ??= error));
  return {
    async run(common, specs) {
      if (failed !== null) throw failed;
      const results: Array<RunResult | undefined> = new Array(specs.length);
      let next = 0;
      await Promise.all(
        pool.map(
          (worker) =>
            new Promise<void>((resolve, reject) => {
              const send = (): void => {
                if (next >= specs.length) return resolve();
                const index = next++;
                worker.postMessage({ index, common, spec: specs[index] });
              };
              worker.on('message', (message: RunAnswer) => {
                if (message.error !== undefined) return reject(runError(message, specs[message.index]?.label ?? String(message.index)));
                results[message.index] = message.result;
                send();
              });
              worker.on('error', reject);
              send();
            }),
        ),
      );
      return results as RunResult[];
    },
    async close() {
      await Promise.all(pool.map((worker) => worker.terminate()));
    },
  };
}

/** What a worker answers for one run. */
interface RunAnswer {
  readonly index: number;
  readonly result?: RunResult;
  readonly error?: string;
  /** Set when the run refused its input: the problems, and which error said so. */
  readonly problems?: readonly InputProblem[];
  readonly kind?: 'config' | 'input';
}

/** The error of a run that failed in a thread: its input refused is still bad input, each problem naming the run. */
function runError(answer: RunAnswer, label: string): Error {
  if (answer.problems === undefined) return new Error(`backtest ${label}: ${answer.error ?? 'failed'}`);
  const problems = answer.problems.map((problem) => ({ ...problem, source: problem.source === undefined ? `run ${label}` : `${problem.source} (run ${label})` }));
  return answer.kind === 'input' ? new InputError(problems) : new ConfigError(problems);
}
