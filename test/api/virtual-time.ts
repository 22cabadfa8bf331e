/**
 * Virtual time for concurrency tests: `sleep` parks a task until `run()` moves the clock to its
 * wake-up time. Between wake-ups every pending microtask runs, so all tasks that can make progress
 * at the current instant do so before time moves on.
 */
export class VirtualTime {
  #now: number;
  #seq = 0;
  readonly #timers: Array<{ at: number; seq: number; wake: () => void }> = [];

  constructor(startMs = 0) {
    this.#now = startMs;
  }

  nowMs = (): number => this.#now;

  sleep = (ms: number): Promise<void> =>
    new Promise((wake) => {
      this.#timers.push({ at: this.#now + Math.max(0, ms), seq: this.#seq++, wake });
    });

  /** Run until no task is parked; returns when every task has settled. */
  async run(): Promise<void> {
    for (;;) {
      await new Promise((resolve) => setImmediate(resolve));
      if (this.#timers.length === 0) return;
      this.#timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.#timers.shift()!;
      this.#now = Math.max(this.#now, next.at);
      next.wake();
    }
  }
}
