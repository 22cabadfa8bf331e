import type { Clock } from '../domain/clock.ts';
import { RATE_LIMITS, type RateLimit, type RateScope } from '../api/paths.ts';
/** The sandbox limits what the client limits, from the same table: a scope per endpoint family, a stricter one where the exchange has it. */
export type SandboxRateScope = RateScope;
export type { RateLimit };
export const SANDBOX_RATE_LIMITS: Readonly<Record<SandboxRateScope, RateLimit>> = RATE_LIMITS;

/** The gateway's refusal: HTTP 429 with a non-JSON body, unlike the nonce 429 (docs/exchange-api.md §4, §7). */
export const RATE_LIMITED_TEXT = '<html><head><title>429 Too Many Requests</title></head><body>429 Too Many Requests</body></html>';

/**
 * The exchange's gate, per (scope, caller): a request is admitted when fewer than `limit`
 * requests were admitted in the last `windowMs` (a sliding-window log), and refused otherwise:
 * refused requests do not count ("rejected, not queued"), unlike the client's limiter, which
 * waits (src/api/rate-limit.ts). Time comes from the injected clock; no timers.
 */
export class RateGate {
  readonly #limits: Readonly<Record<SandboxRateScope, RateLimit>>;
  readonly #clock: Clock;
  readonly #logs = new Map<string, { times: number[]; head: number }>();

  constructor(limits: Readonly<Record<SandboxRateScope, RateLimit>>, clock: Clock) {
    this.#limits = limits;
    this.#clock = clock;
  }

  /** Admit (and count) one request, or answer false. `caller` is the API key or the client IP. */
  admit(scope: SandboxRateScope, caller: string): boolean {
    const { limit, windowMs } = this.#limits[scope];
    const now = this.#clock.nowMs();
    const id = `${scope}\u0000${caller}`;
    let log = this.#logs.get(id);
    if (!log) {
      log = { times: [], head: 0 };
      this.#logs.set(id, log);
    }
    while (log.head < log.times.length && (log.times[log.head] as number) <= now - windowMs) log.head += 1;
    if (log.head > 1024 && log.head * 2 > log.times.length) {
      log.times = log.times.slice(log.head);
      log.head = 0;
    }
    if (log.times.length - log.head >= limit) return false;
    log.times.push(now);
    return true;
  }
}
