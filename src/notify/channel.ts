import type { NotifyEvent } from '../domain/notification.ts';

/**
 * One place notifications go (a webhook, a Telegram chat, an ntfy topic). `send` delivers one
 * event or throws a NotifyDeliveryError saying whether trying again may help; the dispatcher
 * owns queueing, retries and time limits around it.
 */
export interface Channel {
  /** For metrics and logs: `webhook`, `telegram`, `ntfy`. Never a URL. */
  readonly name: string;
  send(event: NotifyEvent, signal: AbortSignal): Promise<void>;
  /** Ends the channel's kept-alive connections. */
  close(): void;
}

/** Each request's deadline: connect, send and answer together. */
export const REQUEST_TIMEOUT_MS = 10_000;
