import { setTimeout as sleep } from 'node:timers/promises';
import type { CatchUpPolicy } from './schedule/catch-up.ts';

/**
 * When a scheduled slot whose snapshot failed for now (a maintenance 503, a blip, a 429, a
 * timeout) is tried again. Nothing was sent before the snapshot (the claim comes after it), so
 * another attempt cannot buy twice; the journal's claim still decides which attempt runs.
 */

/** Backoff between attempts: doubles from `firstDelayMs`, never above `maxDelayMs`. */
export interface SnapshotRetryTiming {
  readonly firstDelayMs: number;
  readonly maxDelayMs: number;
}

export const LIVE_SNAPSHOT_RETRY: SnapshotRetryTiming = { firstDelayMs: 30_000, maxDelayMs: 4 * 60_000 };

/**
 * How late a slot may still be tried with CATCH_UP=skip. That user said "never run a slot
 * missed while stopped"; a slot of a running daemon that met a two-minute outage is another
 * case, and a few minutes late still buys at that slot's price in all but name.
 */
export const SKIP_POLICY_RETRY_WINDOW_MS = 5 * 60_000;

/** How long after its time a slot may still be tried: CATCH_UP_WINDOW with CATCH_UP=last. */
export function retryWindowMs(catchUp: CatchUpPolicy): number {
  return catchUp.policy === 'last' ? catchUp.windowMs : SKIP_POLICY_RETRY_WINDOW_MS;
}

export interface RetryPlan {
  readonly slotTimeMs: number;
  /** The instance's next slot: it wins over a late one. */
  readonly nextSlotMs: number;
  readonly windowMs: number;
  /** Attempts that failed so far (at least 1). */
  readonly failed: number;
  readonly nowMs: number;
  readonly timing: SnapshotRetryTiming;
}

/**
 * When the next attempt starts, or null when the slot must give up: past the window, or too
 * close to the next slot. One first delay is left before the next slot because an attempt can
 * itself hang for the client's timeouts, and the scheduler skips a slot that fires while the
 * previous one of its instance still runs.
 */
export function nextAttemptAt(plan: RetryPlan): number | null {
  const delay = Math.min(plan.timing.firstDelayMs * 2 ** (plan.failed - 1), plan.timing.maxDelayMs);
  const at = plan.nowMs + delay;
  if (at > plan.slotTimeMs + plan.windowMs) return null;
  if (at + plan.timing.firstDelayMs > plan.nextSlotMs) return null;
  return at;
}

/**
 * Waits `ms`; false at once when `signal` aborts (a stop must not wait out a backoff). The timer
 * and its abort listener go with the wait, as the tracking loop's do (timers/promises).
 */
export async function waitUnlessStopped(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  try {
    await sleep(Math.max(0, ms), undefined, signal === undefined ? {} : { signal });
    return true;
  } catch {
    return false;
  }
}
