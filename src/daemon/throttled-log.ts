/**
 * A log line for something that can happen at every request or every second (a refused control,
 * a status page polling a journal that cannot be read, a standby's database out of reach): at most
 * one per `intervalMs`, each told how many times it happened since the last line (itself
 * included), so that a burst neither fills the log nor goes unseen.
 */
export function throttled<A extends unknown[]>(intervalMs: number, write: (count: number, ...args: A) => void, nowMs: () => number = Date.now): (...args: A) => void {
  let lastMs = Number.NEGATIVE_INFINITY;
  let count = 0;
  return (...args) => {
    count += 1;
    const now = nowMs();
    if (now - lastMs < intervalMs) return;
    write(count, ...args);
    lastMs = now;
    count = 0;
  };
}
