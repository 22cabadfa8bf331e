export { type CatchUpPlan, type CatchUpPolicy, parseDuration, planCatchUp } from './catch-up.ts';
export { type Clock, VirtualClock, systemClock } from './clock.ts';
export { type CronProblem, CronError, type CronSchedule, cronProblems, parseCron } from './cron.ts';
export { CronScheduler, type CronSchedulerOptions } from './cron-scheduler.ts';
export type { ScheduledInstance, Scheduler, SlotHandler } from './scheduler.ts';
export { VirtualScheduler, type VirtualSchedulerOptions } from './virtual-scheduler.ts';
