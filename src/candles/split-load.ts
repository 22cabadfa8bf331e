import { statSync } from 'node:fs';
import { extname } from 'node:path';
import { Worker } from 'node:worker_threads';
import { type CandleSeries, type LoadOptions, bodyStart, parseCandleBytes, periodOf, readShared, seriesOf, sourceOf } from './index.ts';
import { mostCommonStep, scanPart } from './part.ts';

/**
 * Below this size a file is read by one thread: starting a second one (a few tens of
 * milliseconds) costs more than half of such a file takes to scan.
 */
export const SPLIT_FROM_BYTES = 8 * 1024 * 1024;

/** A load begun (startLoadingCandles): its series, once asked for. */
export interface CandleLoad {
  finish(): Promise<CandleSeries>;
  /** How many threads read the file, once finished: 2 when split, 1 when read whole (small, or read again for its errors). */
  readonly threads: 1 | 2 | null;
  /**
   * The same bytes cut to another period, read in this thread: a file is read once, so a pipe
   * (`--data <(xzcat …)`), which gives its bytes only once, serves a second series too.
   */
  again(period: { readonly fromMs?: number | undefined; readonly toMs?: number | undefined }): CandleLoad;
}

type Period = Parameters<CandleLoad['again']>[0];

/** LoadOptions with the period's bounds in place of its own. */
function withPeriod(options: LoadOptions, period: Period): LoadOptions {
  const { fromMs: _from, toMs: _to, ...rest } = options;
  return { ...rest, ...(period.fromMs === undefined ? {} : { fromMs: period.fromMs }), ...(period.toMs === undefined ? {} : { toMs: period.toMs }) };
}

/** A load that fails as reading the file failed, whatever period is asked. */
function failed(error: unknown): CandleLoad {
  const load: CandleLoad = { threads: null, finish: () => Promise.reject(error), again: () => load };
  return load;
}

/** What the second thread is asked: its half of the bytes, in shared memory. */
export interface HalfAsked {
  readonly buffer: SharedArrayBuffer;
  readonly byteOffset: number;
  readonly byteLength: number;
  readonly start: number;
  readonly end: number;
  readonly period: { readonly fromSec: number; readonly toSec: number };
}

/** What it answers: ScannedPart's figures, its columns' buffers moved across, its problems counted only. */
export interface HalfAnswer {
  readonly count: number;
  readonly times: ArrayBuffer;
  readonly rowStarts: ArrayBuffer;
  readonly closes: ArrayBuffer;
  readonly rows: number;
  readonly firstTime: number;
  readonly lastTime: number;
  readonly steps: ReadonlyArray<readonly [number, number]>;
  readonly problems: number;
}

/**
 * Begin loading a candle file as loadCandles does, the series and every error the same. A large
 * file is read into shared memory and its second half scanned by a worker thread at once, while
 * the caller goes on (a backtest loads its modules and strategies meanwhile); finish() scans the
 * first half and joins the two. A file with any bad row, or whose halves do not follow each
 * other in time, is read again whole in one thread, so that its errors are exactly loadCandles'.
 * Errors reading the file come from finish(), not from here.
 */
export function startLoadingCandles(path: string, options: LoadOptions, splitFromBytes = SPLIT_FROM_BYTES): CandleLoad {
  const loadOptions: LoadOptions = { ...options, source: options.source ?? path };
  // Started before the file is read: the thread's own start (tens of milliseconds) and the read overlap.
  const scanner = sizeOf(path) >= splitFromBytes ? startScanner() : null;
  let bytes: Buffer;
  try {
    bytes = readShared(path);
  } catch (error) {
    scanner?.stop();
    return failed(error);
  }
  const split = scanner === null || bytes.length < splitFromBytes ? null : splitPoint(bytes, sourceOf(loadOptions));
  if (scanner === null || split === null) {
    scanner?.stop();
    return new FileLoad(bytes, loadOptions, null);
  }
  const period = periodOf(loadOptions);
  const second = scanner.scan({ buffer: bytes.buffer as SharedArrayBuffer, byteOffset: bytes.byteOffset, byteLength: bytes.length, start: split.at, end: bytes.length, period });
  return new FileLoad(bytes, loadOptions, { ...split, second });
}

/** Where the file splits (the rows' start, the second half's first row) and the second half's scan. */
interface Split {
  readonly start: number;
  readonly at: number;
  readonly second: () => Promise<HalfAnswer | null>;
}

/** A file's bytes, read, and the series to make of them: in one thread, or with the second half's scan from a worker. */
class FileLoad implements CandleLoad {
  threads: 1 | 2 | null = null;
  readonly #bytes: Buffer;
  readonly #options: LoadOptions;
  readonly #split: Split | null;

  constructor(bytes: Buffer, options: LoadOptions, split: Split | null) {
    this.#bytes = bytes;
    this.#options = options;
    this.#split = split;
  }

  async finish(): Promise<CandleSeries> {
    const split = this.#split;
    if (split === null) return this.#whole();
    const bytes = this.#bytes;
    const first = scanPart(bytes, split.start, split.at, periodOf(this.#options), 1, 1);
    const other = await split.second();
    if (other === null || first.problems.length > 0 || other.problems > 0 || first.rows + other.rows === 0) return this.#whole();
    const both = first.rows > 0 && other.rows > 0;
    if (both && other.firstTime <= first.lastTime) return this.#whole();
    const steps = new Map(first.steps);
    for (const [step, count] of other.steps) steps.set(step, (steps.get(step) ?? 0) + count);
    // The step across the seam, which neither half saw.
    if (both) steps.set(other.firstTime - first.lastTime, (steps.get(other.firstTime - first.lastTime) ?? 0) + 1);
    const shared = this.#options.shared === true;
    const times = joined(new Float64Array(first.times.buffer, 0, first.count), new Float64Array(other.times, 0, other.count), shared);
    const rowStarts = joined(new Uint32Array(first.rowStarts.buffer, 0, first.count), new Uint32Array(other.rowStarts, 0, other.count), shared);
    const closes = joined(new Float64Array(first.closes.buffer, 0, first.count), new Float64Array(other.closes, 0, other.count), shared);
    this.threads = 2;
    return seriesOf(this.#options, bytes, { count: first.count + other.count, times, rowStarts, closes }, mostCommonStep(steps));
  }

  again(period: Period): CandleLoad {
    return new FileLoad(this.#bytes, withPeriod(this.#options, period), null);
  }

  /** In this thread, from the header on: what loadCandles gives, its errors included. */
  #whole(): CandleSeries {
    this.threads = 1;
    return parseCandleBytes(this.#bytes, this.#options);
  }
}

/** The file's size; 0 when it cannot be read (the read then says why). */
function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** Where the rows start, and the start of the row the second thread begins at; null when the file does not split (a bad header: one thread says what is wrong). */
function splitPoint(bytes: Buffer, source: string): { readonly start: number; readonly at: number } | null {
  let start: number;
  try {
    start = bodyStart(bytes, source);
  } catch {
    return null;
  }
  const lineEnd = bytes.indexOf(10, start + Math.floor((bytes.length - start) / 2));
  const at = lineEnd === -1 ? bytes.length : lineEnd + 1;
  return at < bytes.length ? { start, at } : null;
}

/** A thread that scans one half once asked; stopped when there is nothing to ask. */
interface Scanner {
  /** Ask for the half's scan: its answer, waited for (the thread then holds the process open), or null when the thread could not do it (the file is then read whole here). */
  scan(asked: HalfAsked): () => Promise<HalfAnswer | null>;
  stop(): void;
}

function startScanner(): Scanner | null {
  // The worker is a sibling module: parse-worker.ts from the sources, parse-worker.js from the compiled build.
  const script = new URL(`./parse-worker${extname(new URL(import.meta.url).pathname)}`, import.meta.url);
  let worker: Worker;
  try {
    worker = new Worker(script);
  } catch {
    return null;
  }
  // A load nobody finishes (bad input found meanwhile) must not hold the process open; one waited for does.
  worker.unref();
  const answer = new Promise<HalfAnswer | null>((resolve) => {
    worker.once('message', (message: HalfAnswer) => resolve(message));
    worker.once('error', () => resolve(null));
    worker.once('exit', () => resolve(null));
  });
  return {
    scan(asked) {
      worker.postMessage(asked);
      return () => {
        worker.ref();
        return answer;
      };
    },
    stop: () => void worker.terminate(),
  };
}

/** Two columns end to end, in shared memory when the series is to be shared with threads. */
function joined<T extends Float64Array | Uint32Array>(a: T, b: T, shared: boolean): T {
  const length = a.length + b.length;
  const make = (buffer: ArrayBufferLike): T => (a instanceof Float64Array ? new Float64Array(buffer) : new Uint32Array(buffer)) as T;
  const out = shared ? make(new SharedArrayBuffer(length * a.BYTES_PER_ELEMENT)) : make(new ArrayBuffer(length * a.BYTES_PER_ELEMENT));
  out.set(a);
  out.set(b, a.length);
  return out;
}
