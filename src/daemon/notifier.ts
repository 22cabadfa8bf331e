import type { NotifySettings } from '../config/notify-settings.ts';
import type { Channel } from '../notify/channel.ts';
import { type NotifyLogger, type NotifyMetrics, NotifyDispatcher } from '../notify/dispatcher.ts';
import { ntfyChannel } from '../notify/ntfy.ts';
import { telegramChannel } from '../notify/telegram.ts';
import { webhookChannel } from '../notify/webhook.ts';

/** How long a stopping daemon waits for queued notifications before it leaves without them. */
export const NOTIFY_FLUSH_MS = 3000;

/**
 * The channels the settings name, behind one dispatcher; null when none is set (the engine then
 * gets `noNotifier` and no timer or connection exists for notifications).
 */
export function createNotifier(settings: NotifySettings, logger: NotifyLogger, metrics: NotifyMetrics): NotifyDispatcher | null {
  const channels: Channel[] = [];
  if (settings.webhook !== null) channels.push(webhookChannel({ url: settings.webhook.url, secret: settings.webhook.secret }));
  if (settings.telegram !== null) channels.push(telegramChannel(settings.telegram));
  if (settings.ntfy !== null) channels.push(ntfyChannel({ url: settings.ntfy.url }));
  if (channels.length === 0) return null;
  return new NotifyDispatcher({ channels, events: settings.events, logger, metrics });
}
