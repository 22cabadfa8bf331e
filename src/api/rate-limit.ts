import { RATE_LIMITS, type RateLimit, type RateScope } from './paths.ts';

export type { RateLimit } from './paths.ts';
/** The client's limits: the exchange's own, from the one table in paths.ts. */
export const DEFAULT_RATE_LIMITS = RATE_LIMITS;

export interface LimiterDeps {
  readonly nowMs: () => number;
  readonly sleep: (ms: number) => Promise<void>;
}

/**
 * Sliding-window log: admits a request when fewer than `limit` were admitted in the last
 * `windowMs`, otherwise waits until the oldest one leaves the window. Waiters are served in
 * arrival order (a promise chain), so a burst cannot starve an early caller.
 */
export class SlidingWindowLimiter {
  readonly #rule: RateLimit;
  readonly #deps: LimiterDeps;
  /** Admission times, oldest first; never longer than `limit`. */
  readonly #admitted: number[] = [];
  #lastNow = Number.NEGATIVE_INFINITY;
  #queue: Promise<void> = Promise.resolve();

  constructor(rule: RateLimit, deps: LimiterDeps) {
    if (!Number.isSafeInteger(rule.limit) || rule.limit < 1) throw new RangeError('rate limit must be a positive integer');
    if (!Number.isFinite(rule.windowMs) || rule.windowMs <= 0) throw new RangeError('rate window must be a positive number of ms');
    this.#rule = rule;
    this.#deps = deps;
  }

  /** Resolves when the caller may send; records the admission at that moment. */
  acquire(): Promise<void> {
    const turn = this.#queue.then(() => this.#waitForSlot());
    // The chain must survive a failing sleep, or every later caller would be rejected too.
    this.#queue = turn.catch(() => undefined);
    return turn;
  }

  async #waitForSlot(): Promise<void> {
    const { limit, windowMs } = this.#rule;
    for (;;) {
      const now = this.#deps.nowMs();
      if (now < this.#lastNow) this.#rebase(now - this.#lastNow);
      this.#lastNow = now;
      while (this.#admitted.length > 0 && this.#admitted[0]! <= now - windowMs) this.#admitted.shift();
      if (this.#admitted.length < limit) {
        this.#admitted.push(now);
        return;
      }
      const waitMs = Math.max(1, this.#admitted[0]! + windowMs - now);
      await this.#deps.sleep(waitMs);
    }
  }

  /**
   * The wall clock stepped backwards: move the log with it, keeping the spacing between
   * admissions, so a step of an hour does not turn into an hour of waiting.
   */
  #rebase(deltaMs: number): void {
    for (let i = 0; i < this.#admitted.length; i++) this.#admitted[i]! += deltaMs;
  }
}

/** One limiter per scope; `false` turns limiting off (the sandbox's tests, a caller with its own). */
export class RateLimiters {
  readonly #limiters: Map<RateScope, SlidingWindowLimiter> | null;

  constructor(overrides: Partial<Record<RateScope, RateLimit>> | false | undefined, deps: LimiterDeps) {
    if (overrides === false) {
      this.#limiters = null;
      return;
    }
    this.#limiters = new Map();
    for (const scope of Object.keys(DEFAULT_RATE_LIMITS) as RateScope[]) {
      this.#limiters.set(scope, new SlidingWindowLimiter(overrides?.[scope] ?? DEFAULT_RATE_LIMITS[scope], deps));
    }
  }

  acquire(scope: RateScope): Promise<void> {
    return this.#limiters?.get(scope)?.acquire() ?? Promise.resolve();
  }
}
