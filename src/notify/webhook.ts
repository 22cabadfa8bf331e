import { createHash, createHmac } from 'node:crypto';
import type { NotifyEvent } from '../domain/notification.ts';
import { type Channel, REQUEST_TIMEOUT_MS } from './channel.ts';
import { messageOf, textOf } from './format.ts';
import { agentFor, checkAnswer, postOnce } from './http-post.ts';
import { payloadOf } from './payload.ts';

export interface WebhookOptions {
  readonly url: URL;
  /** Signs each body (X-Stacker-Signature); null sends unsigned. */
  readonly secret: string | null;
  readonly timeoutMs?: number;
}

export const SIGNATURE_HEADER = 'x-stacker-signature';
/**
 * The same for every attempt of one message: a retry after a lost answer may bring a receiver
 * the same body twice, and this is what it deduplicates on.
 */
export const DELIVERY_HEADER = 'x-stacker-delivery';

/**
 * The generic JSON webhook: one POST per event, the body `payloadOf(event)` plus `text` (the
 * phone-readable message, which is what Slack- and Mattermost-style incoming webhooks show).
 * With a secret, `X-Stacker-Signature: sha256=<hex HMAC-SHA256 of the exact body bytes>` lets
 * the receiver check that the body came from this stacker and was not changed; the body's `at`
 * lets it refuse old replays, X-Stacker-Delivery lets it drop a retried duplicate.
 */
export function webhookChannel(options: WebhookOptions): Channel {
  const agent = agentFor(options.url);
  return {
    name: 'webhook',
    async send(event: NotifyEvent, signal: AbortSignal): Promise<void> {
      const body = JSON.stringify({ ...payloadOf(event), text: textOf(messageOf(event)) });
      const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'stacker', 'x-stacker-event': event.kind, [DELIVERY_HEADER]: deliveryId(body) };
      if (options.secret !== null) headers[SIGNATURE_HEADER] = signBody(options.secret, body);
      const answer = await postOnce('webhook', agent, { url: options.url, headers, body, timeoutMs: options.timeoutMs ?? REQUEST_TIMEOUT_MS, signal });
      checkAnswer('webhook', answer);
    },
    close() {
      agent.destroy();
    },
  };
}

/** A digest of the body: it holds the event's time and identity, so equal ids are the same message. */
function deliveryId(body: string): string {
  return createHash('sha256').update(body, 'utf8').digest('hex').slice(0, 32);
}

/** `sha256=` and the hex HMAC-SHA256 of the body as sent (UTF-8), keyed with the secret. */
export function signBody(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}
