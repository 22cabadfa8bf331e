import { abortableSleep } from '../domain/abortable-sleep.ts';
import type { NotifyEvent, NotifyEventName } from '../domain/notification.ts';
import type { Channel } from './channel.ts';
import { NotifyDeliveryError } from './delivery-error.ts';
import { RefusalGate } from './refusal-gate.ts';

/** The subset of pino's Logger the dispatcher uses. */
export interface NotifyLogger {
  warn(fields: Record<string, unknown>, message: string): void;
  debug(fields: Record<string, unknown>, message: string): void;
}

/** Counted per channel; src/observability/metrics.ts turns them into Prometheus counters. */
export interface NotifyMetrics {
  notificationSent(channel: string): void;
  notificationFailed(channel: string): void;
  notificationDropped(channel: string): void;
}

export interface RetryPolicy {
  /** Attempts in total, the first included. */
  readonly attempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

export interface DispatcherOptions {
  readonly channels: readonly Channel[];
  /** The events to deliver (STACKER_NOTIFY_EVENTS); others are not queued. */
  readonly events: ReadonlySet<NotifyEventName>;
  readonly logger: NotifyLogger;
  readonly metrics: NotifyMetrics;
  /** Messages waiting per channel; beyond it the oldest is dropped and counted. */
  readonly queueLimit?: number;
  readonly retry?: RetryPolicy;
  /** Injected by tests: a sleep that ends early (rejecting or resolving) when the signal aborts. */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** [0, 1), like Math.random. */
  readonly random?: () => number;
}

export const NOTIFY_DEFAULTS = {
  queueLimit: 100,
  /** Waits of 1 + 2 + 4 + 8 + 16 s, each cut by up to half (equal jitter): 15.5 to 31 s in all, beside the attempts' own deadlines. */
  retry: { attempts: 6, baseDelayMs: 1000, maxDelayMs: 30_000 },
} as const satisfies { queueLimit: number; retry: RetryPolicy };

/** What flush() left behind when its deadline came. */
export interface FlushResult {
  /** Messages still queued or in flight at the deadline: dropped and counted. */
  readonly abandoned: number;
}

/**
 * The one notifier of a daemon: `notify` puts an event on every channel's own queue and returns
 * at once, so a slow or dead receiver never holds up a slot, and a failing channel never holds
 * up another. Each channel sends its queue in order, one message at a time, retrying what may
 * succeed later with exponential backoff and jitter; a message that still fails is a warning and
 * a counted failure, and the queue moves on. A refusal the operator was already told of is not
 * sent again until something changed (RefusalGate). A full queue drops a refusal first, else its
 * oldest message (counted): the newest news is what the operator needs.
 */
export class NotifyDispatcher {
  readonly #lanes: Lane[];
  readonly #events: ReadonlySet<NotifyEventName>;
  readonly #logger: NotifyLogger;
  readonly #metrics: NotifyMetrics;
  readonly #limit: number;
  readonly #retry: RetryPolicy;
  readonly #sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  readonly #random: () => number;
  readonly #stop = new AbortController();
  readonly #refusals = new RefusalGate();

  constructor(options: DispatcherOptions) {
    this.#lanes = options.channels.map((channel) => ({ channel, queue: [], busy: false, idle: [], dropping: false }));
    this.#events = options.events;
    this.#logger = options.logger;
    this.#metrics = options.metrics;
    this.#limit = Math.max(1, options.queueLimit ?? NOTIFY_DEFAULTS.queueLimit);
    this.#retry = options.retry ?? NOTIFY_DEFAULTS.retry;
    this.#sleep = options.sleep ?? abortableSleep;
    this.#random = options.random ?? Math.random;
  }

  /** The channels' names, for the start-up log line. */
  get channels(): readonly string[] {
    return this.#lanes.map((lane) => lane.channel.name);
  }

  /** Queue the event on every channel; never waits, never throws. Ignored once closed. */
  notify(given: NotifyEvent): void {
    if (this.#stop.signal.aborted) return;
    // Every event, chosen or not: an order-filled left out still tells that the instance bought.
    const event = this.#refusals.admit(given);
    if (event === null || !this.#events.has(event.kind)) return;
    for (const lane of this.#lanes) {
      if (lane.queue.length >= this.#limit) {
        // A refusal goes first, the newest included: a fill or a lost answer is never pushed out by one.
        const refusal = lane.queue.findIndex((queued) => queued.kind === 'order-refused');
        const dropNew = refusal === -1 && event.kind === 'order-refused';
        if (!dropNew) lane.queue.splice(Math.max(refusal, 0), 1);
        this.#metrics.notificationDropped(lane.channel.name);
        // One warning per run of drops, not one per message: a dead channel must not flood the log.
        if (!lane.dropping) {
          lane.dropping = true;
          this.#logger.warn({ event: 'notify-dropped', channel: lane.channel.name, queueLimit: this.#limit }, `${lane.channel.name}: ${this.#limit} notifications waiting; dropping refusals first, then the oldest`);
        }
        if (dropNew) continue;
      }
      lane.queue.push(event);
      if (!lane.busy) {
        lane.busy = true;
        // Not even the channel's first bytes (JSON, HMAC) are made on the caller's stack: that is a slot's.
        setImmediate(() => void this.#drain(lane));
      }
    }
  }

  /**
   * Wait until every queue is empty, or `deadlineMs` has passed; then stop: what is still queued
   * or in flight is abandoned and counted as dropped, and the channels' connections close.
   * Shutdown calls it with a few seconds: a dead receiver must never hold the exit.
   */
  async flush(deadlineMs: number): Promise<FlushResult> {
    const idle = Promise.all(this.#lanes.map((lane) => (lane.busy ? new Promise<void>((resolve) => lane.idle.push(resolve)) : Promise.resolve())));
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, Math.max(0, deadlineMs));
    });
    await Promise.race([idle, deadline]);
    clearTimeout(timer);
    return this.close();
  }

  /** Stop at once: abandon what is queued or in flight (counted as dropped), close the channels. */
  close(): FlushResult {
    let abandoned = 0;
    if (!this.#stop.signal.aborted) {
      this.#stop.abort();
      for (const lane of this.#lanes) {
        const left = lane.queue.length + (lane.busy ? 1 : 0);
        for (let i = 0; i < left; i += 1) this.#metrics.notificationDropped(lane.channel.name);
        if (left > 0) this.#logger.warn({ event: 'notify-abandoned', channel: lane.channel.name, count: left }, `${lane.channel.name}: ${left} notification(s) not delivered before stopping`);
        abandoned += left;
        lane.queue.length = 0;
        lane.channel.close();
      }
    }
    return { abandoned };
  }

  async #drain(lane: Lane): Promise<void> {
    try {
      for (let event = lane.queue.shift(); event !== undefined && !this.#stop.signal.aborted; event = lane.queue.shift()) {
        await this.#deliver(lane.channel, event);
      }
    } finally {
      lane.busy = false;
      lane.dropping = false;
      for (const resolve of lane.idle.splice(0)) resolve();
    }
  }

  async #deliver(channel: Channel, event: NotifyEvent): Promise<void> {
    const signal = this.#stop.signal;
    for (let attempt = 1; ; attempt += 1) {
      try {
        await channel.send(event, signal);
        this.#metrics.notificationSent(channel.name);
        return;
      } catch (error) {
        // Stopping: close() counts this message as abandoned.
        if (signal.aborted) return;
        const retryable = error instanceof NotifyDeliveryError ? error.retryable : false;
        const message = error instanceof Error ? error.message : String(error);
        if (!retryable || attempt >= this.#retry.attempts) {
          this.#metrics.notificationFailed(channel.name);
          this.#logger.warn(
            { event: 'notify-failed', channel: channel.name, kind: event.kind, attempts: attempt, code: error instanceof NotifyDeliveryError ? error.code : 'E_UNEXPECTED', error: message },
            `${channel.name}: the ${event.kind} notification was not delivered after ${attempt} attempt(s): ${message}`,
          );
          return;
        }
        const waitMs = this.#delayMs(attempt, error instanceof NotifyDeliveryError ? error.retryAfterMs : null);
        this.#logger.debug({ event: 'notify-retry', channel: channel.name, kind: event.kind, attempt, waitMs, error: message }, `${channel.name}: trying again in ${waitMs} ms`);
        await this.#sleep(waitMs, signal).catch(() => undefined);
        if (signal.aborted) return;
      }
    }
  }

  /**
   * "Equal jitter": half the capped exponential step, plus a random part of the other half, so
   * retries never come back at once and never wait nothing. A receiver's own Retry-After wins
   * when it asks for longer (capped, so one answer cannot park a channel for hours).
   */
  #delayMs(attempt: number, askedMs: number | null): number {
    const step = Math.min(this.#retry.maxDelayMs, this.#retry.baseDelayMs * 2 ** (attempt - 1));
    const r = Math.min(Math.max(this.#random(), 0), 1);
    const jittered = Math.floor(step / 2 + (r * step) / 2);
    return askedMs === null ? jittered : Math.max(jittered, Math.min(askedMs, this.#retry.maxDelayMs * 4));
  }
}

interface Lane {
  readonly channel: Channel;
  readonly queue: NotifyEvent[];
  busy: boolean;
  /** flush() waiting for this lane to empty. */
  readonly idle: Array<() => void>;
  /** Dropping since the queue last emptied (one warning per run of drops). */
  dropping: boolean;
}


