import type { Logger } from 'pino';
import { wallTimeText } from '../domain/zone.ts';
import type { CronSchedulerOptions } from '../engine/schedule/cron-scheduler.ts';

/**
 * The line that says a slot of a schedule never runs, its wall time skipped when the clocks go
 * forward (CronSchedulerOptions.onSkippedByClockChange): by design, but without it a live
 * daemon lost the slot without a trace while a backtest of the same schedule reports it.
 */
export function logSkippedByClockChange(logger: Pick<Logger, 'info'>): NonNullable<CronSchedulerOptions['onSkippedByClockChange']> {
  return (instance, skipped, schedule) => {
    const wallTime = wallTimeText(skipped.first, schedule.hasSeconds);
    const one = skipped.count === 1;
    logger.info(
      { event: 'slot-skipped-by-clock-change', instance, wallTime, timezone: schedule.timezone, count: skipped.count },
      `${instance}: ${one ? 'the slot at' : `${skipped.count} slots from`} ${wallTime} ${schedule.timezone} never run${one ? 's' : ''}: the clocks go forward there and skip ${one ? 'that wall time' : 'those wall times'} (a backtest reports them too)`,
    );
  };
}

/**
 * The line that says a schedule has slots in the hour its zone repeats when the clocks go back
 * (CronSchedulerOptions.onRepeatedByClockChange): each runs at its first occurrence only, so
 * there is no slot for that long after the change, by design, and said.
 */
export function logRepeatedByClockChange(logger: Pick<Logger, 'info'>): NonNullable<CronSchedulerOptions['onRepeatedByClockChange']> {
  return (instance, repeated, schedule) => {
    const wallTime = wallTimeText(repeated.first, schedule.hasSeconds);
    const one = repeated.count === 1;
    const minutes = Math.round(repeated.spanMs / 60_000);
    logger.info(
      { event: 'slot-not-repeated-by-clock-change', instance, wallTime, timezone: schedule.timezone, count: repeated.count, minutes },
      `${instance}: ${one ? 'the slot at' : `${repeated.count} slots from`} ${wallTime} ${schedule.timezone} run${one ? 's' : ''} once although the clocks go back and bring ${one ? 'that wall time' : 'those wall times'} round again: a wall time is one slot, at its first occurrence, so the ${minutes} minutes after the change have none of them`,
    );
  };
}
