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
