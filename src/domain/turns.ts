/**
 * Work that must not overlap, queued by key: each piece starts once the one before it under the
 * same key has ended (however it ended), in the order asked; different keys run side by side.
 * A key is held only while its work runs or waits, so the map holds nothing else.
 */
export class Turns {
  /** Per key taken, who waits for it, in order; no entry: the key is free. */
  readonly #waiting = new Map<string, Array<() => void>>();

  async take<T>(key: string, work: () => Promise<T>): Promise<T> {
    const queue = this.#waiting.get(key);
    // Free: taken at once, with no promise made for the turn itself (a backtest asks thousands of times).
    if (queue === undefined) this.#waiting.set(key, []);
    else await new Promise<void>((resolve) => queue.push(resolve));
    try {
      return await work();
    } finally {
      const next = this.#waiting.get(key)?.shift();
      if (next === undefined) this.#waiting.delete(key);
      else next();
    }
  }
}
