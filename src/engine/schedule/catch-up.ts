import type { CronSchedule } from './cron.ts';

/** CATCH_UP: what happens to slots that fell while stacker was not running. */
export type CatchUpPolicy = { readonly policy: 'skip' } | { readonly policy: 'last'; readonly windowMs: number };

export interface CatchUpPlan {
  /** The one missed slot to run late, or null. */
  readonly run: number | null;
  /** Missed slots to journal as missed, newest first, at most `maxListed`. */
  readonly skip: readonly number[];
  /** How many slots were missed in all (not counting `run`), up to the counting limit. */
  readonly skippedTotal: number;
}

const COUNT_LIMIT = 100_000;

/**
 * The slots strictly after `fromMs` and at or before now. `fromMs` is the last journalled slot,
 * or for an instance with none yet, when the daemon first scheduled it (Engine.catchUp); null
 * (never scheduled) has missed nothing: it starts with the next slot. With `last`, the newest
 * missed slot runs if it is within the window; everything else is journalled as missed, so a
 * second restart never catches the same slot up again. Only the newest `maxListed` are
 * journalled one by one (a schedule every second, down for a week, misses 600 000).
 */
export function planCatchUp(schedule: CronSchedule, fromMs: number | null, nowMs: number, policy: CatchUpPolicy, maxListed = 100): CatchUpPlan {
  if (fromMs === null) return { run: null, skip: [], skippedTotal: 0 };
  const missed: number[] = [];
  let total = 0;
  for (let slot = schedule.next(fromMs); slot <= nowMs && total < COUNT_LIMIT; slot = schedule.next(slot)) {
    total += 1;
    missed.push(slot);
    if (missed.length > maxListed + 1) missed.shift();
  }
  missed.reverse();
  let run: number | null = null;
  if (policy.policy === 'last' && missed[0] !== undefined && nowMs - missed[0] <= policy.windowMs) {
    run = missed[0];
    missed.shift();
    total -= 1;
  }
  return { run, skip: missed.slice(0, maxListed), skippedTotal: total };
}

const DURATION = /^([1-9]\d{0,6})(s|m|h|d)$/;
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** '45s', '30m', '6h', '1d' → milliseconds; null when not such a duration. */
export function parseDuration(text: string): number | null {
  const match = DURATION.exec(text.trim());
  if (match === null) return null;
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
}
