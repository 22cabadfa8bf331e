import { ExchangeError, StackerError } from '../domain/errors.ts';

export interface RetryPolicy {
  /** Attempts in total, the first one included. */
  readonly maxAttempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 4, baseDelayMs: 250, maxDelayMs: 8000 };

/**
 * The longest `Retry-After` (on a 429 or a 503) a read waits out before trying again: the
 * exchange's own advice caps its backoff at 30 s. An answer asking for longer is not retried
 * here: its caller hears the failure (a slot's reads are tried again on the daemon's schedule,
 * a command exits 4), where waiting longer would hold a slot, or a stop, for it.
 */
export const MAX_RETRY_AFTER_MS = 30_000;

export interface BackoffDeps {
  readonly sleep: (ms: number) => Promise<void>;
  /** [0, 1), like Math.random. */
  readonly random: () => number;
  /**
   * True once the process is stopping: a read that failed is then not tried again. A stopping
   * daemon lets the slot in flight finish, and retries against a hanging exchange would hold the
   * stop for every attempt's time limit (Docker kills a container 10 s after SIGTERM).
   */
  readonly stopped?: () => boolean;
}

/**
 * "Full jitter": a uniform delay between 0 and the capped exponential step. Spreads the retries
 * of many clients after one outage instead of synchronising them.
 * `attempt` is the attempt that just failed, 1-based.
 */
export function backoffDelayMs(attempt: number, policy: RetryPolicy, random: () => number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  const r = random();
  const unit = Number.isFinite(r) ? Math.min(Math.max(r, 0), 1) : 0;
  return Math.floor(unit * ceiling);
}

/** Only transient failures are retried: network, timeout, 5xx, rate limit (`retryable` on the error). */
export function isRetryable(error: unknown): boolean {
  return error instanceof StackerError && error.retryable;
}

/**
 * Run `attempt` until it succeeds, fails with a non-retryable error, or `maxAttempts` is
 * reached. Only for reads: a write whose answer was lost may have happened, and resending it is
 * the engine's decision after a lookup, never the transport's.
 */
export async function withRetry<T>(
  attempt: (attemptNo: number) => Promise<T>,
  policy: RetryPolicy | false,
  deps: BackoffDeps,
): Promise<T> {
  const maxAttempts = policy === false ? 1 : policy.maxAttempts;
  for (let n = 1; ; n++) {
    try {
      return await attempt(n);
    } catch (error) {
      if (policy === false || n >= maxAttempts || !isRetryable(error) || deps.stopped?.() === true) throw error;
      // A gateway that says how long to stay away is believed: retrying sooner is what gets an IP
      // or a key restricted after repeated 429s.
      const asked = error instanceof ExchangeError ? error.retryAfterMs : null;
      if (asked !== null && asked > MAX_RETRY_AFTER_MS) throw error;
      await deps.sleep(Math.max(backoffDelayMs(n, policy, deps.random), asked ?? 0));
      if (deps.stopped?.() === true) throw error;
    }
  }
}

/** Option check at construction: a policy that cannot work is a programming error worth naming. */
export function validateRetryPolicy(policy: RetryPolicy): string | null {
  if (!Number.isSafeInteger(policy.maxAttempts) || policy.maxAttempts < 1) return 'retry.maxAttempts must be an integer of at least 1';
  if (!Number.isFinite(policy.baseDelayMs) || policy.baseDelayMs < 0) return 'retry.baseDelayMs must be a number of ms, 0 or more';
  if (!Number.isFinite(policy.maxDelayMs) || policy.maxDelayMs < policy.baseDelayMs) return 'retry.maxDelayMs must be a number of ms, at least baseDelayMs';
  return null;
}
