import type { CronSchedule } from './cron.ts';

export interface ScheduledInstance {
  readonly instance: string;
  readonly schedule: CronSchedule;
}

/** Runs one slot; the scheduler awaits it. The engine's handler never throws; if one does, the scheduler carries on. */
export type SlotHandler = (instance: string, slotTimeMs: number) => Promise<void>;

export interface Scheduler {
  start(instances: readonly ScheduledInstance[], handler: SlotHandler): void;
  /** Stop firing; resolves once every handler in flight has settled. Idempotent. */
  stop(): Promise<void>;
}
