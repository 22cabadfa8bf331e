import type { Logger } from 'pino';
import type { RequestEvent } from '../api/requester.ts';
import { throttled } from './throttled-log.ts';

/** A clock that disagrees refuses every request until it is measured again: one line a minute says so. */
const NONCE_REFUSAL_LOG_INTERVAL_MS = 60_000;

const WHY: Readonly<Record<NonNullable<RequestEvent['nonceRefusal']>, string>> = {
  window: "its nonce was outside the exchange's ±5 s window: this machine's clock and the exchange's disagree",
  reused: 'its nonce was one the exchange had seen: another client may be using this API key',
};

/**
 * The line for a request the exchange refused for its nonce. The client signs a read afresh and
 * sends it again by itself, and a write when the clocks explain the refusal (an order after
 * looking it up; otherwise a lost answer), so the slot usually goes on as if nothing happened; without this line a skewed clock or a second client on the
 * key showed only in a metric until the refusals became fatal. Throttled apart per account and
 * kind: one throttle for all said "another client" of refusals that were a clock's.
 */
export function logNonceRefusals(logger: Pick<Logger, 'warn'>, nowMs: () => number = Date.now): (event: RequestEvent & { readonly account?: string }) => void {
  const writers = new Map<string, (event: RequestEvent & { readonly account?: string }, refusal: NonNullable<RequestEvent['nonceRefusal']>) => void>();
  const writer = () => throttled(
    NONCE_REFUSAL_LOG_INTERVAL_MS,
    (count: number, event: RequestEvent & { readonly account?: string }, refusal: NonNullable<RequestEvent['nonceRefusal']>) => {
      const since = count === 1 ? '' : ` (${count} such refusals since the last line)`;
      logger.warn(
        { event: 'nonce-refused', ...(event.account === undefined ? {} : { account: event.account }), path: event.path, refusal, attempt: event.attempt, count },
        `the exchange refused ${event.method} ${event.path} for its nonce: ${WHY[refusal]}; ` +
          `stacker signs a read afresh and sends it again; a write only when the clocks explain the refusal (an order after looking it up), ` +
          `and otherwise takes it for a lost answer, since a throttle or a gateway may answer so after the write was done; a refusal that persists fails the slot with its own error${since}`,
      );
    },
    nowMs,
  );
  return (event) => {
    if (event.nonceRefusal === undefined) return;
    const key = `${event.account ?? ''}\0${event.nonceRefusal}`;
    let write = writers.get(key);
    if (write === undefined) writers.set(key, (write = writer()));
    write(event, event.nonceRefusal);
  };
}
