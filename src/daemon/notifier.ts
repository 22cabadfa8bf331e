import type { NotifySettings } from '../config/notify-settings.ts';
import { hasChannels } from '../config/notify-settings.ts';
import { ConfigError, StackerError } from '../domain/errors.ts';
import type { RunMode } from '../domain/run-mode.ts';
import { type EngineNotifier, noNotifier } from '../engine/observer.ts';
import { type AccountRouting, budgetLeft } from '../engine/runtime.ts';
import type { Clock } from '../engine/schedule/clock.ts';
import type { InstanceRuntime } from '../engine/slot-runner.ts';
import type { NotifyLogger, NotifyMetrics } from '../notify/dispatcher.ts';
import { LockedError } from '../store/errors.ts';
import type { Journal } from '../store/journal.ts';

/** How long a stopping daemon waits for queued notifications before it leaves without them. */
export const NOTIFY_FLUSH_MS = 3000;

/** The daemon's side of notifications: the engine's port, the daily summary, the stop. */
export interface DaemonNotifications {
  /** What the engine is given: the dispatcher, or `noNotifier` when no channel is set. */
  readonly notifier: EngineNotifier;
  /** The daemon could not start or went down with an error of its own (not the engine's stop, which it tells itself). */
  failed(error: unknown, mode: RunMode, atMs: number): void;
  /** The daemon stopped as asked (`reason`: the signal): a trading daemon that stops tells its owner, who may not have asked. */
  stopped(reason: string, mode: RunMode, atMs: number): void;
  /** The daily summary of the configured instances (disabled ones too: they show on a day they bought), from now on. */
  startSummaries(journal: Journal, instances: readonly SummarisedInstance[], mode: RunMode, clock: Clock, accounts?: AccountRouting): void;
  /** Stop the summary and send what is queued, for NOTIFY_FLUSH_MS at most. */
  close(): Promise<void>;
}

/** A configured instance, as the daily summary reads it. */
export interface SummarisedInstance {
  readonly runtime: InstanceRuntime;
  readonly account: string;
  readonly enabled: boolean;
}

/**
 * A start refused for its configuration, before the daemon could open its channels: told on the
 * channels the global env names (loadRefusalNotify), then closed.
 */
export async function tellRefusedStart(settings: NotifySettings, error: ConfigError, mode: RunMode, atMs: number, logger: Parameters<typeof openNotifications>[1], metrics: NotifyMetrics): Promise<void> {
  const notifications = await openNotifications(settings, logger, metrics);
  notifications.failed(error, mode, atMs);
  await notifications.close();
}

/**
 * What a stop tells: its first line; for a configuration every instance waits on, the first
 * problem (file, key, rule) and how many more; for a second stacker refused the lock, that the
 * one holding it trades on (read on a phone, "stacker stopped" said the live daemon went down).
 */
function failureReason(error: unknown): string {
  if (error instanceof LockedError) return `a second stacker was refused start: ${error.message}; the running one trades on`;
  if (error instanceof ConfigError && error.problems.length > 0) {
    const more = error.problems.length - 1;
    return `stacker did not start, so no instance trades: ${error.message.split('\n')[0] ?? ''}${more === 0 ? '' : ` (and ${more} more problem(s): \`stacker check\` lists them)`}`;
  }
  const reason = error instanceof Error ? (error.message.split('\n')[0] ?? error.message) : String(error);
  return `stacker stopped: ${reason}`;
}

const SILENT: DaemonNotifications = {
  notifier: noNotifier,
  failed() {},
  stopped() {},
  startSummaries() {},
  async close() {},
};

/**
 * The channels the settings name behind one dispatcher. Without a channel nothing of src/notify/
 * is even loaded: no timer, no connection, no memory for a feature not asked for.
 */
export async function openNotifications(settings: NotifySettings, logger: NotifyLogger & { info(fields: Record<string, unknown>, message: string): void }, metrics: NotifyMetrics): Promise<DaemonNotifications> {
  if (!hasChannels(settings)) return SILENT;
  const [{ NotifyDispatcher }, { webhookChannel }, { telegramChannel }, { ntfyChannel }, { scheduleDailySummary, accountCapsLeft }] = await Promise.all([
    import('../notify/dispatcher.ts'),
    import('../notify/webhook.ts'),
    import('../notify/telegram.ts'),
    import('../notify/ntfy.ts'),
    import('./daily-summary.ts'),
  ]);
  const channels = [
    ...(settings.webhook === null ? [] : [webhookChannel({ url: settings.webhook.url, secret: settings.webhook.secret })]),
    ...(settings.telegram === null ? [] : [telegramChannel(settings.telegram)]),
    ...(settings.ntfy === null ? [] : [ntfyChannel({ url: settings.ntfy.url })]),
  ];
  const dispatcher = new NotifyDispatcher({ channels, events: settings.events, logger, metrics });
  logger.info({ event: 'notify', channels: dispatcher.channels, events: [...settings.events] }, `notifications to ${dispatcher.channels.join(', ')}`);
  let summaries: { stop(): void } | null = null;
  return {
    notifier: dispatcher,
    failed(error, mode, atMs) {
      const code = error instanceof StackerError ? error.code : 'E_UNEXPECTED';
      dispatcher.notify({ kind: 'trading-stopped', atMs, mode, code, reason: failureReason(error) });
    },
    stopped(reason, mode, atMs) {
      dispatcher.notify({ kind: 'daemon-stopped', atMs, mode, reason });
    },
    startSummaries(journal, instances, mode, clock, accounts) {
      const byName = new Map(instances.map(({ runtime }) => [runtime.instance, runtime]));
      summaries = scheduleDailySummary({
        journal,
        instances: instances.map(({ runtime, account, enabled }) => ({ instance: runtime.instance, budgetAsset: runtime.budgetAsset, account, enabled, budgetTimeZone: runtime.timezone })),
        mode,
        clock,
        budgetLeft: async (instance, atMs) => {
          const runtime = byName.get(instance);
          return runtime === undefined ? null : budgetLeft(journal, runtime, atMs);
        },
        ...(accounts === undefined ? {} : { accountCaps: (readAtMs: (timeZone: string) => number) => accountCapsLeft(journal, accounts, readAtMs) }),
        notify: (event) => dispatcher.notify(event),
        onError: (error) => logger.warn({ event: 'daily-summary-failed', error: error instanceof Error ? error.message : String(error) }, 'could not read the daily summary from the journal'),
      });
    },
    async close() {
      summaries?.stop();
      await dispatcher.flush(NOTIFY_FLUSH_MS);
    },
  };
}
