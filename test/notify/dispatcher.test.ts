import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { NotifyEvent } from '../../src/domain/notification.ts';
import { NOTIFY_EVENTS } from '../../src/domain/notification.ts';
import type { Channel } from '../../src/notify/channel.ts';
import { NotifyDeliveryError } from '../../src/notify/delivery-error.ts';
import { type DispatcherOptions, NOTIFY_DEFAULTS, NotifyDispatcher } from '../../src/notify/dispatcher.ts';
import { AT_MS, filled, refusal, stopped, stuck } from './events.ts';

/** A channel whose every send is decided by the test: `outcomes` in order, then success. */
function scriptedChannel(name: string, outcomes: Array<'ok' | 'retryable' | 'refused' | 'hang'> = []): Channel & { sent: NotifyEvent[]; attempts: number; closed: boolean } {
  const channel = {
    name,
    sent: [] as NotifyEvent[],
    attempts: 0,
    closed: false,
    async send(event: NotifyEvent, signal: AbortSignal): Promise<void> {
      channel.attempts += 1;
      const outcome = outcomes.shift() ?? 'ok';
      if (outcome === 'hang') {
        await new Promise<void>((_, reject) => signal.addEventListener('abort', () => reject(new NotifyDeliveryError(name, 'aborted', { retryable: false })), { once: true }));
      }
      if (outcome === 'retryable') throw new NotifyDeliveryError(name, 'the receiver answered HTTP 503', { retryable: true, httpStatus: 503 });
      if (outcome === 'refused') throw new NotifyDeliveryError(name, 'the receiver answered HTTP 400', { retryable: false, httpStatus: 400 });
      channel.sent.push(event);
    },
    close() {
      channel.closed = true;
    },
  };
  return channel;
}

interface Recorder {
  readonly counts: Record<string, number>;
  readonly warnings: Array<Record<string, unknown>>;
  readonly sleeps: number[];
}

function dispatcher(channels: Channel[], overrides: Partial<DispatcherOptions> = {}): { dispatcher: NotifyDispatcher; seen: Recorder } {
  const seen: Recorder = { counts: {}, warnings: [], sleeps: [] };
  const count = (outcome: string) => (channel: string) => {
    const key = `${channel}:${outcome}`;
    seen.counts[key] = (seen.counts[key] ?? 0) + 1;
  };
  return {
    seen,
    dispatcher: new NotifyDispatcher({
      channels,
      events: new Set(NOTIFY_EVENTS),
      logger: { warn: (fields) => seen.warnings.push(fields), debug: () => undefined },
      metrics: { notificationSent: count('sent'), notificationFailed: count('failed'), notificationDropped: count('dropped') },
      retry: { attempts: 4, baseDelayMs: 1000, maxDelayMs: 5000 },
      // Time is the test's: a retry's wait is recorded, not spent.
      sleep: async (ms) => {
        seen.sleeps.push(ms);
      },
      random: () => 0.5,
      ...overrides,
    }),
  };
}

const settled = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('NotifyDispatcher', () => {
  it('notify returns at once, before any channel has sent, and delivers in order', async () => {
    const channel = scriptedChannel('webhook');
    const { dispatcher: d, seen } = dispatcher([channel]);
    d.notify(filled({ orderId: '1' }));
    d.notify(filled({ orderId: '2' }));
    expect(channel.sent).toHaveLength(0);
    await d.flush(1000);
    expect(channel.sent.map((event) => (event.kind === 'order-filled' ? event.orderId : ''))).toEqual(['1', '2']);
    expect(seen.counts).toEqual({ 'webhook:sent': 2 });
  });

  it('retries what may succeed later with exponential backoff and jitter, then delivers', async () => {
    const channel = scriptedChannel('webhook', ['retryable', 'retryable', 'retryable']);
    const { dispatcher: d, seen } = dispatcher([channel]);
    d.notify(stopped);
    await d.flush(1000);
    expect(channel.attempts).toBe(4);
    // Equal jitter with random 0.5: three quarters of 1, 2, 4 s.
    expect(seen.sleeps).toEqual([750, 1500, 3000]);
    expect(seen.counts).toEqual({ 'webhook:sent': 1 });
  });

  it('caps the backoff at maxDelayMs and gives up after the last attempt: a warning and a failure counted', async () => {
    const channel = scriptedChannel('telegram', ['retryable', 'retryable', 'retryable', 'retryable']);
    const { dispatcher: d, seen } = dispatcher([channel], { retry: { attempts: 4, baseDelayMs: 2000, maxDelayMs: 3000 }, random: () => 1 });
    d.notify(stopped);
    await d.flush(1000);
    expect(seen.sleeps).toEqual([2000, 3000, 3000]);
    expect(channel.sent).toHaveLength(0);
    expect(seen.counts).toEqual({ 'telegram:failed': 1 });
    expect(seen.warnings).toEqual([expect.objectContaining({ event: 'notify-failed', channel: 'telegram', kind: 'trading-stopped', attempts: 4, code: 'E_NOTIFY' })]);
  });

  it('does not retry a refusal (4xx): one attempt, a failure, and the queue moves on', async () => {
    const channel = scriptedChannel('webhook', ['refused']);
    const { dispatcher: d, seen } = dispatcher([channel]);
    d.notify(filled({ orderId: '1' }));
    d.notify(filled({ orderId: '2' }));
    await d.flush(1000);
    expect(channel.attempts).toBe(2);
    expect(seen.sleeps).toEqual([]);
    expect(seen.counts).toEqual({ 'webhook:failed': 1, 'webhook:sent': 1 });
  });

  it('waits at least as long as a receiver asked (Retry-After), within a cap', async () => {
    let attempts = 0;
    const channel: Channel = {
      name: 'telegram',
      async send() {
        attempts += 1;
        if (attempts === 1) throw new NotifyDeliveryError('telegram', 'the receiver answered HTTP 429', { retryable: true, httpStatus: 429, retryAfterMs: 7000 });
      },
      close() {},
    };
    const { dispatcher: d, seen } = dispatcher([channel]);
    d.notify(stopped);
    await d.flush(1000);
    expect(seen.sleeps).toEqual([7000]);
    expect(seen.counts).toEqual({ 'telegram:sent': 1 });
  });

  it('a hung channel holds up neither notify nor the other channels', async () => {
    const hung = scriptedChannel('webhook', ['hang']);
    const fine = scriptedChannel('telegram');
    const { dispatcher: d } = dispatcher([hung, fine]);
    d.notify(filled({ orderId: '1' }));
    d.notify(filled({ orderId: '2' }));
    await settled();
    expect(fine.sent).toHaveLength(2);
    expect(hung.sent).toHaveLength(0);
    d.close();
  });

  it('a full queue drops its oldest message, counts each drop and warns once per run of drops', async () => {
    const hung = scriptedChannel('webhook', ['hang']);
    const { dispatcher: d, seen } = dispatcher([hung], { queueLimit: 2 });
    d.notify(filled({ orderId: '1' }));
    await settled();
    for (const orderId of ['2', '3', '4', '5']) d.notify(filled({ orderId }));
    // '1' is in flight; the queue holds two: '2' and '3' were dropped for '4' and '5'.
    expect(seen.counts['webhook:dropped']).toBe(2);
    expect(seen.warnings.filter((w) => w['event'] === 'notify-dropped')).toHaveLength(1);
    const result = await d.flush(20);
    // At the deadline: '1' in flight and '4', '5' queued are abandoned and counted.
    expect(result).toEqual({ abandoned: 3 });
    expect(seen.counts['webhook:dropped']).toBe(5);
    expect(hung.closed).toBe(true);
  });

  it('a full queue drops refusals first, the newest one too: a fill, a stuck order or a stop is never pushed out by one', async () => {
    let answer = (): void => undefined;
    const slow = scriptedChannel('webhook');
    const send = slow.send.bind(slow);
    // The first message waits for the test: the queue fills behind it.
    slow.send = async (event, signal) => {
      if (slow.attempts === 0) await new Promise<void>((resolve) => (answer = resolve));
      return send(event, signal);
    };
    const { dispatcher: d, seen } = dispatcher([slow], { queueLimit: 3 });
    d.notify(stopped);
    await settled();
    d.notify(filled({ orderId: '1' }));
    d.notify(refusal({ instance: 'a' }));
    d.notify(stuck());
    d.notify(filled({ orderId: '2' }));
    d.notify(refusal({ instance: 'b' }));
    expect(seen.counts['webhook:dropped']).toBe(2);
    expect(seen.warnings.filter((w) => w['event'] === 'notify-dropped')).toHaveLength(1);
    answer();
    await d.flush(1000);
    expect(slow.sent.map((event) => (event.kind === 'order-filled' ? `filled ${event.orderId}` : event.kind))).toEqual(['trading-stopped', 'filled 1', 'order-stuck', 'filled 2']);
  });

  it('sends a refusal once per instance, intent and reason; again once the instance bought, or a day later saying how many were not sent; another reason or instance at once', async () => {
    const channel = scriptedChannel('webhook');
    const { dispatcher: d } = dispatcher([channel], { events: new Set(['order-refused'] as const) });
    const at = (seconds: number): number => AT_MS + seconds * 1000;
    // A second-level schedule over budget: a refusal every second.
    for (let s = 0; s < 10; s += 1) d.notify(refusal({ atMs: at(s) }));
    d.notify(refusal({ atMs: at(10), reason: 'kill-switch', message: 'the kill switch is on' }));
    d.notify(refusal({ atMs: at(10), instance: 'dca-eth' }));
    // It bought (its order-filled is not even among the events chosen): the next refusal is news again.
    d.notify(filled({ atMs: at(11) }));
    d.notify(refusal({ atMs: at(12) }));
    d.notify(refusal({ atMs: at(13) }));
    // A day after the last one sent, without a change: sent, saying how many like it were not.
    d.notify(refusal({ atMs: at(12 + 86_400) }));
    await d.flush(1000);
    const sent = channel.sent.map((event) => (event.kind === 'order-refused' ? [event.instance, event.reason, (event.atMs - AT_MS) / 1000, event.withheld ?? null] : [event.kind]));
    expect(sent).toEqual([
      ['dca-btc', 'over-budget', 0, null],
      ['dca-btc', 'kill-switch', 10, null],
      ['dca-eth', 'over-budget', 10, null],
      ['dca-btc', 'over-budget', 12, { count: 9, sinceMs: at(0) }],
      ['dca-btc', 'over-budget', 12 + 86_400, { count: 1, sinceMs: at(12) }],
    ]);
  });

  it("waits what the README says between the default retries: 15.5 to 31 s in all", async () => {
    const waited = async (random: number): Promise<number> => {
      const failing = scriptedChannel('webhook', Array<'retryable'>(NOTIFY_DEFAULTS.retry.attempts).fill('retryable'));
      const { dispatcher: d, seen } = dispatcher([failing], { retry: NOTIFY_DEFAULTS.retry, random: () => random });
      d.notify(stopped);
      await d.flush(1000);
      expect(failing.attempts).toBe(NOTIFY_DEFAULTS.retry.attempts);
      return seen.sleeps.reduce((sum, ms) => sum + ms, 0) / 1000;
    };
    const readme = readFileSync(join(import.meta.dirname, '../../README.md'), 'utf8').replace(/\s+/g, ' ');
    const said = `${await waited(0)} to ${await waited(1)} s of waiting in all`;
    expect(readme.includes(said), `README "Notifications" says "${said}"`).toBe(true);
  });

  it('flush gives up at its deadline, so a dead receiver never holds the exit', async () => {
    const hung = scriptedChannel('webhook', ['hang']);
    const { dispatcher: d, seen } = dispatcher([hung]);
    d.notify(stopped);
    const started = Date.now();
    expect(await d.flush(100)).toEqual({ abandoned: 1 });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(seen.warnings).toContainEqual(expect.objectContaining({ event: 'notify-abandoned', channel: 'webhook', count: 1 }));
    // Closed: later events are ignored, not queued.
    d.notify(stopped);
    expect(hung.attempts).toBe(1);
  });

  it('a retry waiting out its backoff is cut short by the stop', async () => {
    const channel = scriptedChannel('webhook', ['retryable']);
    // The real (abortable) sleep: a 60 s backoff that close() must end.
    const { dispatcher: d } = dispatcher([channel], { sleep: undefined as never, retry: { attempts: 3, baseDelayMs: 60_000, maxDelayMs: 60_000 } });
    d.notify(stopped);
    await settled();
    const started = Date.now();
    expect(await d.flush(50)).toEqual({ abandoned: 1 });
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('queues only the events chosen (STACKER_NOTIFY_EVENTS)', async () => {
    const channel = scriptedChannel('ntfy');
    const { dispatcher: d } = dispatcher([channel], { events: new Set(['trading-stopped'] as const) });
    d.notify(filled());
    d.notify(stopped);
    await d.flush(1000);
    expect(channel.sent.map((event) => event.kind)).toEqual(['trading-stopped']);
  });
});
