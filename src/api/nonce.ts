import type { Clock } from '../domain/clock.ts';

export type { Clock } from '../domain/clock.ts';

/**
 * Nonces are Unix milliseconds (the exchange's recommendation, and what `nonceWindow: true`
 * requires: within ±5 s of server time). Strictly increasing within the process: when the clock
 * has not advanced — several requests in one millisecond, or the clock stepped backwards — the
 * next nonce is the last one plus 1. `next()` is synchronous, so concurrent callers on the one
 * JS thread can never draw the same value (docs/exchange-api.md §3, ccxt#25796: two orders in one ms).
 *
 * The exchange wants the nonce as a string of digits (ccxt and JKorf send strings).
 */
export class NonceSource {
  readonly #clock: Clock;
  #last = 0;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  next(): string {
    const now = Math.floor(this.#clock.nowMs());
    const nonce = Number.isFinite(now) && now > this.#last ? now : this.#last + 1;
    this.#last = nonce;
    return String(nonce);
  }

  /**
   * Make the next nonce land more than `ms` past both the last one and now. For a nonce the
   * exchange refused as already seen: another process on the key drew it, and concurrent
   * requests there took the values right after it too, so the next value would be refused
   * again.
   */
  skip(ms: number): void {
    const now = Math.floor(this.#clock.nowMs());
    this.#last = Math.max(this.#last, Number.isFinite(now) ? now : 0) + ms;
  }
}
