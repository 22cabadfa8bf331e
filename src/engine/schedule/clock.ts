import type { Clock } from '../../domain/clock.ts';

export type { Clock } from '../../domain/clock.ts';

export const systemClock: Clock = { nowMs: () => Date.now() };

/** Time that moves only when told to, and never backwards (a backtest's slots are in order). */
export class VirtualClock implements Clock {
  #nowMs: number;

  constructor(startMs: number) {
    this.#nowMs = startMs;
  }

  nowMs(): number {
    return this.#nowMs;
  }

  set(ms: number): void {
    if (ms < this.#nowMs) throw new RangeError(`virtual time cannot go back from ${new Date(this.#nowMs).toISOString()} to ${new Date(ms).toISOString()}`);
    this.#nowMs = ms;
  }
}
