import type { NotifyEvent, OrderRefusedEvent } from '../domain/notification.ts';

/** A refusal held back is sent again at least this often, with how many like it were not sent. */
export const REFUSAL_RESEND_MS = 24 * 3_600_000;

/**
 * Which refusals are news. An instance over its budget, or behind a kill switch, is refused at
 * every slot, every second on a schedule of seconds, all day: one message each buried the fills
 * and lost answers that matter. A refusal is sent the first time for its instance, intent and
 * reason, then again only once the instance has bought since (an order-filled, a lost answer or
 * a stuck order of its own: it got past its guards), or a day after the last one sent; that one
 * says how many like it were not sent. A different reason is news at once.
 */
export class RefusalGate {
  /** Per instance, per intent and reason: the last refusal sent, and what was held back since. */
  readonly #seen = new Map<string, Map<string, { sentAtMs: number; withheld: number; reopened: boolean }>>();

  /** The event to queue (a refusal saying what it stands for), or null for one held back. */
  admit(event: NotifyEvent): NotifyEvent | null {
    if (event.kind !== 'order-refused') {
      const instance = 'instance' in event ? event.instance : null;
      if (instance !== null) for (const seen of this.#seen.get(instance)?.values() ?? []) seen.reopened = true;
      return event;
    }
    let kinds = this.#seen.get(event.instance);
    if (kinds === undefined) {
      kinds = new Map();
      this.#seen.set(event.instance, kinds);
    }
    const key = `${event.intent}\0${event.reason}`;
    const seen = kinds.get(key);
    if (seen !== undefined && !seen.reopened && event.atMs - seen.sentAtMs < REFUSAL_RESEND_MS) {
      seen.withheld += 1;
      return null;
    }
    kinds.set(key, { sentAtMs: event.atMs, withheld: 0, reopened: false });
    return seen === undefined || seen.withheld === 0 ? event : ({ ...event, withheld: { count: seen.withheld, sinceMs: seen.sentAtMs } } satisfies OrderRefusedEvent);
  }
}
