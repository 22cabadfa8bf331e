import type { Logger } from 'pino';

/** How often the watch looks, and how long a gap between looks counts as a pause. */
const LOOK_EVERY_MS = 1_000;
const PAUSE_MS = 5_000;

/**
 * Tells when this process itself did not run for a while: stopped (SIGSTOP, a container
 * paused), its VM paused or migrated, or swapped out. Everything that was waiting then times
 * out at once on waking: an order's answer is "lost", the database "did not answer in time", and
 * an operator goes looking at the exchange and the database when the pause was this process's.
 *
 * A timer that should fire every second fires late by the pause; on waking, timers run in the
 * order they were due, so this one, due first, says so before the timeouts of the same wake.
 */
export function watchForPauses(logger: Pick<Logger, 'warn'>, monotonicMs: () => number = () => performance.now()): () => void {
  let last = monotonicMs();
  const timer = setInterval(() => {
    const now = monotonicMs();
    const gapMs = now - last - LOOK_EVERY_MS;
    last = now;
    if (gapMs < PAUSE_MS) return;
    const seconds = Math.round(gapMs / 1000);
    logger.warn(
      { event: 'process-paused', seconds },
      `this process did not run for ${seconds} s (stopped with SIGSTOP, a paused container or VM, heavy swapping): a timeout or lost answer logged now is this pause's, not the exchange's or the database's`,
    );
  }, LOOK_EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}
