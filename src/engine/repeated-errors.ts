/**
 * How often the same engine error is logged: at most a line a minute per instance and error, each
 * told how many times it happened since the last line (itself included). A journal that cannot be
 * written (a full disk, a stopped database) fails every slot attempt and every tracking round with
 * the same words, and a line each filled the log hundreds of times a minute; a first occurrence,
 * and any other error or instance, is written at once.
 */
export class RepeatedErrors {
  readonly #intervalMs: number;
  readonly #nowMs: () => number;
  /** Per key: when its last line was written, and how many came since. */
  readonly #seen = new Map<string, { lastMs: number; count: number }>();

  constructor(intervalMs: number, nowMs: () => number) {
    this.#intervalMs = intervalMs;
    this.#nowMs = nowMs;
  }

  /** How many times `key` happened since its last line, when a line is due now; null when it is not. */
  due(key: string): number | null {
    const now = this.#nowMs();
    const seen = this.#seen.get(key);
    if (seen !== undefined && now - seen.lastMs < this.#intervalMs) {
      seen.count += 1;
      return null;
    }
    const count = (seen?.count ?? 0) + 1;
    // Errors whose words change (an id, a time) must not keep a key each for the whole run.
    if (seen === undefined && this.#seen.size >= MAX_KEYS) this.#forgetQuiet(now);
    this.#seen.set(key, { lastMs: now, count: 0 });
    return count;
  }

  #forgetQuiet(now: number): void {
    for (const [key, seen] of this.#seen) if (now - seen.lastMs >= this.#intervalMs) this.#seen.delete(key);
  }
}

const MAX_KEYS = 256;
