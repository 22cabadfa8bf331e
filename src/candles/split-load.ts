import { statSync } from 'node:fs';
import { extname } from 'node:path';
import { Worker } from 'node:worker_threads';
import { bodyStart, readCandleBytes, readCandleBytesLater } from './file-bytes.ts';
import { type CandleSeries, type LoadOptions, parseCandleBytes, periodOf, seriesOf, sourceOf } from './index.ts';
import { mostCommonStep, scanPart } from './part.ts';

/**
 * Below this size a file is read and scanned by one thread, when asked for: starting a second
 * one (a few tens of milliseconds) costs more than half of such a file takes to scan.
 */
export const SPLIT_FROM_BYTES = 8 * 1024 * 1024;

/** A load begun (startLoadingCandles): its series, once asked for. */
export interface CandleLoad {
  finish(): Promise<CandleSeries>;
  /** How many threads scanned the file, once finished: 2 when split, 1 when scanned whole (small, or again for its errors). */
  readonly threads: 1 | 2 | null;
  /**
   * The same bytes cut to another period, scanned in this thread: a file is read once, so a pipe
   * (`--data <(xzcat …)`), which gives its bytes only once, serves a second series too.
   */
  again(period: Period): CandleLoad;
  /** The background read and thread ended, for a load that will not be finished (its command stopped first); harmless after finish(). */
  close(): void;
}

type Period = { readonly fromMs?: number | undefined; readonly toMs?: number | undefined };

/** What the scanning thread is asked: the file's bytes (in shared memory), where its half starts, and the period. */
export interface HalfAsked {
  readonly buffer: SharedArrayBuffer;
  readonly byteOffset: number;
  readonly byteLength: number;
  readonly start: number;
  readonly period: { readonly fromSec: number; readonly toSec: number };
}

/** What it answers: ScannedPart's figures for its half, its columns' buffers moved across, its problems counted only. */
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
 * file is read into shared memory in Node's thread pool, and a worker thread started to scan the
 * second half of its rows once it is read, while the caller goes on (a backtest loads its
 * modules and strategies meanwhile); finish() scans the first half and joins the two. A file
 * with any bad row, or whose halves do not follow each other in time, is scanned again whole in
 * one thread, so that its errors are exactly loadCandles'. A smaller file, or a pipe, is read
 * when finish() is called. Errors reading the file come from finish(), not from here.
 */
export function startLoadingCandles(path: string, options: LoadOptions, splitFromBytes = SPLIT_FROM_BYTES): CandleLoad {
  const loadOptions: LoadOptions = { ...options, source: options.source ?? path };
  const size = regularFileSize(path);
  if (size === null || size < splitFromBytes) return new FileLoad(new FileBytes(path), loadOptions, null);
  const scanner = startScanner();
  const read = readCandleBytesLater(path);
  const period = periodOf(loadOptions);
  const split: Background['split'] = read.bytes.then(
    (bytes) => {
      const at = splitPoint(bytes, sourceOf(loadOptions));
      if (at === null || scanner === null) {
        scanner?.stop();
        return { bytes, at: null, half: null };
      }
      const half = scanner.scan({ buffer: bytes.buffer as SharedArrayBuffer, byteOffset: bytes.byteOffset, byteLength: bytes.length, start: at.second, period });
      return { bytes, at, half };
    },
    () => {
      // Read again here, which says what is wrong.
      scanner?.stop();
      return null;
    },
  );
  return new FileLoad(new FileBytes(path), loadOptions, {
    split,
    close: () => {
      read.stop();
      scanner?.stop();
    },
  });
}

/** The file's bytes, read once (here, or in the background) for every series made of them. */
class FileBytes {
  readonly #path: string;
  #bytes: Buffer | null = null;

  constructor(path: string) {
    this.#path = path;
  }

  read(): Buffer {
    this.#bytes ??= readCandleBytes(this.#path);
    return this.#bytes;
  }

  adopt(bytes: Buffer): void {
    this.#bytes ??= bytes;
  }
}

/** Where the rows start (`first`) and the row the second half starts at (`second`). */
interface SplitAt {
  readonly first: number;
  readonly second: number;
}

/** A large file's background read: its bytes, where they split and the second half's scan; null when the read failed (the file is then read here, which says why). */
interface Background {
  readonly split: Promise<{ readonly bytes: Buffer; readonly at: SplitAt | null; readonly half: (() => Promise<HalfAnswer | null>) | null } | null>;
  close(): void;
}

/** A series to make of a file: in one thread, or with the scanning thread's half. */
class FileLoad implements CandleLoad {
  threads: 1 | 2 | null = null;
  readonly #file: FileBytes;
  readonly #options: LoadOptions;
  readonly #background: Background | null;

  constructor(file: FileBytes, options: LoadOptions, background: Background | null) {
    this.#file = file;
    this.#options = options;
    this.#background = background;
  }

  async finish(): Promise<CandleSeries> {
    const read = this.#background === null ? null : await this.#background.split;
    if (read === null) return this.#whole();
    this.#file.adopt(read.bytes);
    if (read.at === null || read.half === null) return this.#whole();
    const bytes = read.bytes;
    const first = scanPart(bytes, read.at.first, read.at.second, periodOf(this.#options), 1, 1);
    const other = await read.half();
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
    const { fromMs: _from, toMs: _to, ...rest } = this.#options;
    const cut = { ...rest, ...(period.fromMs === undefined ? {} : { fromMs: period.fromMs }), ...(period.toMs === undefined ? {} : { toMs: period.toMs }) };
    return new FileLoad(this.#file, cut, null);
  }

  close(): void {
    this.#background?.close();
  }

  /** In this thread, from the header on: what loadCandles gives, its errors (reading the file's included) too. */
  #whole(): CandleSeries {
    this.threads = 1;
    return parseCandleBytes(this.#file.read(), this.#options);
  }
}

/** The size of a regular file; null for anything else (a pipe, a folder, a path that cannot be read: read when asked for, which says what is wrong). */
function regularFileSize(path: string): number | null {
  try {
    const stat = statSync(path);
    return stat.isFile() ? stat.size : null;
  } catch {
    return null;
  }
}

/** Where the rows start, and the first row of the second half; null when the file does not split (a bad header, a single row: one thread then says what is wrong). */
function splitPoint(bytes: Buffer, source: string): SplitAt | null {
  let first: number;
  try {
    first = bodyStart(bytes, source);
  } catch {
    return null;
  }
  const lineEnd = bytes.indexOf(10, first + Math.floor((bytes.length - first) / 2));
  const second = lineEnd === -1 ? bytes.length : lineEnd + 1;
  return second < bytes.length ? { first, second } : null;
}

/** A thread that scans one half once asked (its modules loaded meanwhile); stopped when there is nothing to ask. */
interface Scanner {
  /** Ask for the half's scan: its answer, waited for (the thread then holds the process open), or null when the thread could not give it (the file is then scanned whole here). */
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
  const answer = new Promise<HalfAnswer | null>((resolve) => {
    worker.once('message', (message: HalfAnswer) => resolve(message));
    worker.once('error', () => resolve(null));
    worker.once('exit', () => resolve(null));
  });
  // A load nobody finishes (a bad strategy file found meanwhile) must not hold the process open;
  // one waited for does. After the listeners: adding a 'message' listener refs the thread again.
  worker.unref();
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
