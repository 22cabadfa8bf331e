import { setTimeout as sleep } from 'node:timers/promises';

/** What the loop needs of the engine: one pass over the open orders. */
export interface OrderTracking {
  track(): Promise<void>;
}

/**
 * Follows open orders every `intervalMs` until `stop` aborts. The wait is timers/promises'
 * abortable sleep, which removes its abort listener when it wakes: this loop runs for the
 * daemon's whole life, and a listener left behind per pass (one every 5 s) grows without end.
 */
export async function trackLoop(engine: OrderTracking, intervalMs: number, stop: AbortSignal): Promise<void> {
  while (!stop.aborted) {
    try {
      await sleep(intervalMs, undefined, { signal: stop });
    } catch {
      return; // aborted: the daemon is stopping
    }
    await engine.track();
  }
}
