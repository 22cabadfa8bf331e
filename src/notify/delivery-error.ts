import { StackerError } from '../domain/errors.ts';

/**
 * A notification channel did not take a message. `retryable` says whether the same message may
 * be offered again (a timeout, a refused connection, 5xx, 429); a 4xx other than 429 is the
 * receiver refusing this message or our credentials, and retrying will not change its mind.
 * The message names the channel and what happened, never the URL: Telegram's bot token is part
 * of its path, and a webhook URL may carry a token of its own.
 */
export class NotifyDeliveryError extends StackerError {
  readonly code = 'E_NOTIFY' as const;
  readonly retryable: boolean;
  readonly channel: string;
  /** The receiver's HTTP status; null when none came (network, timeout). */
  readonly httpStatus: number | null;
  /** How long the receiver asked us to wait (Retry-After, Telegram's retry_after); null when it did not say. */
  readonly retryAfterMs: number | null;
  constructor(channel: string, message: string, options: { readonly retryable: boolean; readonly httpStatus?: number | null; readonly retryAfterMs?: number | null }) {
    super(`${channel}: ${message}`);
    this.name = 'NotifyDeliveryError';
    this.channel = channel;
    this.retryable = options.retryable;
    this.httpStatus = options.httpStatus ?? null;
    this.retryAfterMs = options.retryAfterMs ?? null;
  }
}
