import type { NotifyEvent } from '../domain/notification.ts';
import { type Channel, REQUEST_TIMEOUT_MS } from './channel.ts';
import { messageOf } from './format.ts';
import { agentFor, checkAnswer, postOnce } from './http-post.ts';

export interface NtfyOptions {
  /** The topic's URL, such as https://ntfy.sh/my-stacker-topic (a long random topic is its only secret). */
  readonly url: URL;
  readonly timeoutMs?: number;
}

/** What needs a person soon rings louder on the phone. */
const PRIORITY: Readonly<Record<NotifyEvent['kind'], string>> = {
  'order-filled': 'default',
  'order-refused': 'default',
  'intent-unknown': 'high',
  'order-stuck': 'high',
  'strategy-disabled': 'high',
  'trading-stopped': 'urgent',
  'daemon-stopped': 'high',
  'daily-summary': 'low',
};

const TAGS: Readonly<Record<NotifyEvent['kind'], string>> = {
  'order-filled': 'moneybag',
  'order-refused': 'no_entry',
  'intent-unknown': 'warning',
  'order-stuck': 'hourglass',
  'strategy-disabled': 'x',
  'trading-stopped': 'rotating_light',
  'daemon-stopped': 'stop_sign',
  'daily-summary': 'bar_chart',
};

/**
 * ntfy (https://ntfy.sh or a self-hosted server): POST the message body to the topic URL, the
 * title, priority and tags as headers. Header values must be plain ASCII, so anything else in
 * the title becomes `?`; the body is UTF-8.
 */
export function ntfyChannel(options: NtfyOptions): Channel {
  const agent = agentFor(options.url);
  return {
    name: 'ntfy',
    async send(event: NotifyEvent, signal: AbortSignal): Promise<void> {
      const message = messageOf(event);
      const headers = {
        'content-type': 'text/plain; charset=utf-8',
        title: message.title.replace(/[^\x20-\x7e]/g, '?'),
        priority: PRIORITY[event.kind],
        tags: TAGS[event.kind],
      };
      const answer = await postOnce('ntfy', agent, { url: options.url, headers, body: message.body, timeoutMs: options.timeoutMs ?? REQUEST_TIMEOUT_MS, signal });
      checkAnswer('ntfy', answer);
    },
    close() {
      agent.destroy();
    },
  };
}
