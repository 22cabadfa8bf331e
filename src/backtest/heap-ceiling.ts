import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Keeps a long backtest's memory flat. What a run keeps is small and does not grow with its
 * slots (the journal in memory retires settled slots, the report is a fold), but it allocates
 * fast, and V8 sizes the old generation by the allocation rate, not by what survives: a run over
 * years of hourly slots held 60–100 MB of dead objects at its peak, more or less depending on
 * when V8 happened to collect. Every `checkEvery` slots the heap in use is read; past the
 * ceiling, one full collection brings it back to what is alive (~15 MB, a few tens of ms). A
 * short run never reaches the ceiling and never pays for it.
 */
export class HeapCeiling {
  readonly #ceilingBytes: number;
  readonly #checkEvery: number;
  readonly #collect: () => void;
  readonly #usedBytes: () => number;
  #slots = 0;
  #collections = 0;

  constructor(options: { readonly ceilingMb?: number; readonly checkEvery?: number; readonly collect?: () => void; readonly usedBytes?: () => number } = {}) {
    this.#ceilingBytes = (options.ceilingMb ?? 48) * 1024 * 1024;
    this.#checkEvery = options.checkEvery ?? 1024;
    this.#collect = options.collect ?? fullCollection();
    this.#usedBytes = options.usedBytes ?? (() => getHeapStatistics().used_heap_size);
  }

  /** Told once per slot. */
  slotRan(): void {
    this.#slots += 1;
    if (this.#slots % this.#checkEvery !== 0 || this.#usedBytes() <= this.#ceilingBytes) return;
    this.#collect();
    this.#collections += 1;
  }

  /** How many full collections the run asked for. */
  get collections(): number {
    return this.#collections;
  }
}

let collector: (() => void) | null = null;

/**
 * V8's full collection as a function. Node gives it only with `--expose-gc`, which installs `gc`
 * on the global of every context made once the flag is set: a fresh context made here hands it
 * over (the flag changes nothing else of the running process).
 */
function fullCollection(): () => void {
  if (collector === null) {
    const given = (globalThis as { gc?: () => void }).gc;
    if (typeof given === 'function') collector = given;
    else {
      setFlagsFromString('--expose-gc');
      collector = runInNewContext('gc') as () => void;
    }
  }
  return collector;
}
