import type { Clock } from '../domain/clock.ts';

export type { Clock } from '../domain/clock.ts';

/** With `nonceWindow`, the exchange takes a nonce within this many ms of its own clock (docs/exchange-api.md §3). */
export const NONCE_WINDOW_MS = 5_000;

export interface NonceOptions {
  /**
   * The exchange's window, when nonces are checked against its clock (`nonceWindow`) rather than
   * against the key's last one: order then does not matter, only that a value is not reused.
   */
  readonly windowMs?: number;
}

/**
 * Nonces are Unix milliseconds (the exchange's recommendation, and what `nonceWindow: true`
 * requires: within ±5 s of server time). Strictly increasing within the process: when the clock
 * has not advanced — several requests in one millisecond, or the clock stepped backwards — the
 * next nonce is the last one plus 1. `next()` is synchronous, so concurrent callers on the one
 * JS thread can never draw the same value (docs/exchange-api.md §3, ccxt#25796: two orders in one ms).
 *
 * With the exchange's window, a last nonce further ahead of the clock than the window is left
 * behind: the clock was corrected back (a host clock behind the exchange's, then stepped forward
 * by NTP after a VM resumed), and counting on from there would sign every request past the
 * window, refused however often the exchange's clock is measured again. Nothing that far ahead
 * was ever taken, so starting again from the clock reuses no nonce the exchange has seen.
 *
 * The exchange wants the nonce as a string of digits (ccxt and JKorf send strings).
 */
export class NonceSource {
  readonly #clock: Clock;
  readonly #windowMs: number | null;
  #last = 0;

  constructor(clock: Clock, options: NonceOptions = {}) {
    this.#clock = clock;
    this.#windowMs = options.windowMs ?? null;
  }

  next(): string {
    const now = Math.floor(this.#clock.nowMs());
    const pastWindow = this.#windowMs !== null && this.#last - now > this.#windowMs;
    const nonce = Number.isFinite(now) && (now > this.#last || pastWindow) ? now : this.#last + 1;
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
