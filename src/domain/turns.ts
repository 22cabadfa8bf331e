/**
 * Work that must not overlap, queued by key: each piece starts once the one before it under the
 * same key has ended (however it ended), in the order asked; different keys run side by side.
 * A key is forgotten once its queue is empty, so the map holds only what is waiting or running.
 */
export class Turns {
  readonly #last = new Map<string, Promise<unknown>>();

  async take<T>(key: string, work: () => Promise<T>): Promise<T> {
    const before = this.#last.get(key);
    // Nothing ahead: started at once (a backtest asks for thousands of turns, always free).
    const run = before === undefined ? work() : before.then(work);
    const ended = run.then(
      () => undefined,
      () => undefined,
    );
    this.#last.set(key, ended);
    try {
      return await run;
    } finally {
      if (this.#last.get(key) === ended) this.#last.delete(key);
    }
  }
}
