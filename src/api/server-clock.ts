import type { Clock } from './nonce.ts';

/** One reading of the exchange's clock: its time, and how coarse it is (1000 ms when it answers in seconds). */
export interface ServerTimeReading {
  readonly timeMs: number;
  readonly resolutionMs: number;
}

export interface ServerClockOptions {
  /** Read the exchange's time (`GET /api/v4/public/time`). */
  readonly read: () => Promise<ServerTimeReading>;
  /** How long a measured offset is trusted before it is measured again. */
  readonly refreshMs?: number;
}

/** A clock drifts slowly; ten minutes keeps a corrected nonce well inside the exchange's ±5 s. */
export const SERVER_CLOCK_REFRESH_MS = 10 * 60_000;

/**
 * Smaller offsets are left alone: a whole-second reading cannot tell them from noise, they sit
 * well inside the ±5 s window, and correcting them would make two processes on one machine draw
 * nonces from two different guesses of the same clock (and collide).
 */
export const SERVER_CLOCK_MIN_CORRECTION_MS = 2_000;

/**
 * The exchange's clock as this machine can know it: local time plus the offset measured from
 * the exchange's time endpoint. With `nonceWindow` the exchange accepts a nonce only within
 * ±5 s of its own clock, so nonces are drawn from here: a host clock a minute off still signs
 * requests the exchange takes.
 *
 * The offset is the exchange's time minus the local time at the middle of the request. The
 * exchange answers in whole seconds, so its time lies somewhere in that second: the middle of
 * it is taken, which keeps the error within half a second plus half the round trip.
 *
 * Reading the time can fail (the exchange is down, the network is out): the last offset is kept
 * (none at first: local time) and the failure remembered, so a nonce refusal that follows can say
 * why it could not be corrected.
 */
export class ServerClock implements Clock {
  readonly #local: Clock;
  readonly #read: () => Promise<ServerTimeReading>;
  readonly #refreshMs: number;
  #offsetMs: number | null = null;
  #measuredAtMs = Number.NEGATIVE_INFINITY;
  #lastFailure: unknown = null;
  #measuring: Promise<number> | null = null;

  constructor(local: Clock, options: ServerClockOptions) {
    this.#local = local;
    this.#read = options.read;
    this.#refreshMs = options.refreshMs ?? SERVER_CLOCK_REFRESH_MS;
  }

  nowMs(): number {
    return this.#local.nowMs() + this.correctionMs;
  }

  /** What nowMs() adds to local time: the measured offset, or 0 while it is unknown or too small to trust. */
  get correctionMs(): number {
    const offset = this.#offsetMs ?? 0;
    return Math.abs(offset) >= SERVER_CLOCK_MIN_CORRECTION_MS ? offset : 0;
  }

  /** The exchange's clock minus this machine's, in ms; null before a first successful reading. */
  get offsetMs(): number | null {
    return this.#offsetMs;
  }

  /** Why the last reading failed; null when it succeeded. */
  get lastFailure(): unknown {
    return this.#lastFailure;
  }

  /** Measure unless a recent measurement holds; never throws (a failure keeps the last offset). */
  async ensureFresh(): Promise<void> {
    if (this.#local.nowMs() - this.#measuredAtMs < this.#refreshMs) return;
    try {
      await this.measure();
    } catch {
      // Remembered in lastFailure; the request goes on with the offset there is.
    }
  }

  /** Measure now (callers arriving meanwhile share the reading); throws when the time cannot be read. */
  measure(): Promise<number> {
    this.#measuring ??= this.#measureOnce().finally(() => {
      this.#measuring = null;
    });
    return this.#measuring;
  }

  async #measureOnce(): Promise<number> {
    const before = this.#local.nowMs();
    try {
      const reading = await this.#read();
      const after = this.#local.nowMs();
      const exchangeMs = reading.timeMs + reading.resolutionMs / 2;
      this.#offsetMs = Math.round(exchangeMs - (before + after) / 2);
      this.#measuredAtMs = after;
      this.#lastFailure = null;
      return this.#offsetMs;
    } catch (error) {
      // Not tried again before the refresh interval: a down endpoint must not cost a request per call.
      this.#measuredAtMs = this.#local.nowMs();
      this.#lastFailure = error;
      throw error;
    }
  }
}
