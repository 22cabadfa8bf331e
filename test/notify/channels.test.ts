import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { NotifyDeliveryError } from '../../src/notify/delivery-error.ts';
import { ntfyChannel } from '../../src/notify/ntfy.ts';
import { telegramChannel } from '../../src/notify/telegram.ts';
import { webhookChannel } from '../../src/notify/webhook.ts';
import type { Channel } from '../../src/notify/channel.ts';
import { type Receiver, startFakeTelegram, startReceiver } from '../support/notify-receivers.ts';
import { filled, stopped, stuck } from './events.ts';

const TOKEN = '123456789:AAHsecretPartOfTheTokenabcdefghij';
const receivers: Receiver[] = [];
const channels: Channel[] = [];
const never = new AbortController().signal;

async function receiver(answer?: Parameters<typeof startReceiver>[0]): Promise<Receiver> {
  const started = await startReceiver(answer);
  receivers.push(started);
  return started;
}

function keep<C extends Channel>(channel: C): C {
  channels.push(channel);
  return channel;
}

async function failure(promise: Promise<unknown>): Promise<NotifyDeliveryError> {
  const error = await promise.then(() => null, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(NotifyDeliveryError);
  return error as NotifyDeliveryError;
}

afterEach(async () => {
  for (const channel of channels.splice(0)) channel.close();
  await Promise.all(receivers.splice(0).map((r) => r.stop()));
});

describe('the webhook channel', () => {
  it('POSTs the event as JSON with decimals as strings, signed with HMAC-SHA256 over the exact body', async () => {
    const hook = await receiver();
    const channel = keep(webhookChannel({ url: new URL(`${hook.url}/in?team=ops`), secret: 'shh' }));
    await channel.send(filled(), never);
    const [request] = hook.received;
    expect(request?.path).toBe('/in?team=ops');
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers['x-stacker-event']).toBe('order-filled');
    await channel.send(filled(), never);
    // The same message again (a retry): the same delivery id, for the receiver to drop.
    expect(hook.received[1]?.headers['x-stacker-delivery']).toMatch(/^[0-9a-f]{32}$/);
    expect(hook.received[1]?.headers['x-stacker-delivery']).toBe(request?.headers['x-stacker-delivery']);
    const expected = `sha256=${createHmac('sha256', 'shh').update(request?.body ?? '').digest('hex')}`;
    expect(request?.headers['x-stacker-signature']).toBe(expected);
    expect(JSON.parse(request?.body ?? '')).toMatchObject({ event: 'order-filled', at: '2026-01-02T09:00:00.000Z', filledBase: '0.001', filledQuote: '65.12', fee: '0.06512', averagePrice: '65120' });
  });

  it('sends no signature header without a secret', async () => {
    const hook = await receiver();
    await keep(webhookChannel({ url: new URL(hook.url), secret: null })).send(stopped, never);
    expect(hook.received[0]?.headers['x-stacker-signature']).toBeUndefined();
  });

  it('a 4xx is a refusal not worth retrying; a 5xx or 429 may be retried, after Retry-After', async () => {
    let status = 400;
    const hook = await receiver((_, res) => res.writeHead(status, status === 429 ? { 'retry-after': '12' } : {}).end());
    const channel = keep(webhookChannel({ url: new URL(hook.url), secret: null }));
    expect(await failure(channel.send(stopped, never))).toMatchObject({ code: 'E_NOTIFY', retryable: false, httpStatus: 400 });
    status = 503;
    expect(await failure(channel.send(stopped, never))).toMatchObject({ retryable: true, httpStatus: 503, retryAfterMs: null });
    status = 429;
    expect(await failure(channel.send(stopped, never))).toMatchObject({ retryable: true, httpStatus: 429, retryAfterMs: 12_000 });
  });

  it('honours Retry-After given as an HTTP date, counted from the receiver\'s own Date (its clock, not ours)', async () => {
    // A receiver whose clock is a day behind ours: only its own Date makes the wait 30 s.
    const receiverNow = Date.now() - 86_400_000;
    let retryAfter = new Date(receiverNow + 30_000).toUTCString();
    let date: string | null = new Date(receiverNow).toUTCString();
    const hook = await receiver((_, res) => res.writeHead(429, { 'retry-after': retryAfter, ...(date === null ? {} : { date }) }).end());
    const channel = keep(webhookChannel({ url: new URL(hook.url), secret: null }));
    expect(await failure(channel.send(stopped, never))).toMatchObject({ retryable: true, httpStatus: 429, retryAfterMs: 30_000 });
    // A date already past: try again now.
    retryAfter = new Date(receiverNow - 5_000).toUTCString();
    expect(await failure(channel.send(stopped, never))).toMatchObject({ retryAfterMs: 0 });
    // Without a Date of its own (or with one that is not a date), our clock is the reference.
    retryAfter = new Date(Date.now() + 600_000).toUTCString();
    date = 'yesterday';
    const ours = (await failure(channel.send(stopped, never))).retryAfterMs;
    expect(ours).toBeGreaterThan(590_000);
    expect(ours).toBeLessThanOrEqual(600_000);
    // Neither seconds nor a date: ignored, the dispatcher's own backoff decides.
    retryAfter = 'in a minute';
    expect(await failure(channel.send(stopped, never))).toMatchObject({ retryAfterMs: null });
  });

  it('gives up on a receiver that does not answer in time, and on a refused connection; never naming the URL', async () => {
    const hung = await receiver(() => undefined);
    const slow = await failure(keep(webhookChannel({ url: new URL(`${hung.url}/t0ken-in-path`), secret: null, timeoutMs: 200 })).send(stopped, never));
    expect(slow).toMatchObject({ retryable: true, httpStatus: null });
    expect(slow.message).toBe('webhook: no answer within 200 ms');
    const gone = await receiver();
    const url = new URL(`${gone.url}/t0ken-in-path`);
    await gone.stop();
    const refused = await failure(keep(webhookChannel({ url, secret: null })).send(stopped, never));
    expect(refused.message).toBe('webhook: could not deliver (ECONNREFUSED)');
  });
});

describe('the Telegram channel', () => {
  it('calls sendMessage at /bot<token>/ with {chat_id, text}: the phone-readable message', async () => {
    const api = await startFakeTelegram(TOKEN);
    receivers.push(api);
    await keep(telegramChannel({ apiUrl: new URL(api.url), botToken: TOKEN, chatId: '-100123' })).send(filled(), never);
    const [request] = api.received;
    expect(request?.path).toBe(`/bot${TOKEN}/sendMessage`);
    const body = JSON.parse(request?.body ?? '') as { chat_id: string; text: string };
    expect(body.chat_id).toBe('-100123');
    expect(body.text.split('\n')[0]).toBe('Bought 0.001 BTC for 65.12 USDT');
  });

  it("explains a refusal with Telegram's description, honours retry_after, and never names the token", async () => {
    let answer = { status: 400, body: { ok: false, error_code: 400, description: 'Bad Request: chat not found' } as Record<string, unknown> };
    let retryAfterDate: string | null = null;
    const api = await receiver((_, res) =>
      res.writeHead(answer.status, { 'content-type': 'application/json', ...(retryAfterDate === null ? {} : { 'retry-after': retryAfterDate }) }).end(JSON.stringify(answer.body)),
    );
    const channel = keep(telegramChannel({ apiUrl: new URL(api.url), botToken: TOKEN, chatId: '1' }));
    const refused = await failure(channel.send(stopped, never));
    expect(refused.message).toBe('telegram: the receiver answered HTTP 400: Bad Request: chat not found');
    expect(refused.retryable).toBe(false);
    answer = { status: 429, body: { ok: false, error_code: 429, description: 'Too Many Requests: retry after 3', parameters: { retry_after: 3 } } };
    expect(await failure(channel.send(stopped, never))).toMatchObject({ retryable: true, retryAfterMs: 3000 });
    // A proxy in front of the Bot API answers 429 in its own words: its Retry-After date is honoured.
    answer = { status: 429, body: { error: 'slow down' } };
    retryAfterDate = new Date(Date.now() + 3_600_000).toUTCString();
    const proxied = (await failure(channel.send(stopped, never))).retryAfterMs;
    expect(proxied).toBeGreaterThan(3_590_000);
    expect(proxied).toBeLessThanOrEqual(3_600_000);
    retryAfterDate = null;
    answer = { status: 401, body: { ok: false, description: `Unauthorized for ${TOKEN}` } };
    const echoed = await failure(channel.send(stopped, never));
    expect(echoed.message).not.toContain(TOKEN.split(':')[1]);
    expect(echoed.message).toContain('[bot token]');
  });
});

describe('the ntfy channel', () => {
  it('honours a Retry-After date on 429, as ntfy.sh and proxies in front of it may send', async () => {
    const server = await receiver((_, res) => {
      const now = Date.now();
      res.writeHead(429, { date: new Date(now).toUTCString(), 'retry-after': new Date(now + 42_000).toUTCString() }).end();
    });
    const refused = await failure(keep(ntfyChannel({ url: new URL(`${server.url}/stacker-topic`) })).send(stopped, never));
    expect(refused).toMatchObject({ retryable: true, httpStatus: 429, retryAfterMs: 42_000 });
  });


  it('POSTs the body to the topic with an ASCII title, a priority and tags', async () => {
    const server = await receiver();
    await keep(ntfyChannel({ url: new URL(`${server.url}/stacker-topic`) })).send(stopped, never);
    const [request] = server.received;
    expect(request?.path).toBe('/stacker-topic');
    expect(request?.headers['title']).toBe('Trading stopped (E_AUTH)');
    expect(request?.headers['priority']).toBe('urgent');
    expect(request?.body).toContain('the exchange refused the key');
  });

  it('rings a stuck order high: a person should look at the exchange soon', async () => {
    const server = await receiver();
    await keep(ntfyChannel({ url: new URL(`${server.url}/stacker-topic`) })).send(stuck(), never);
    const [request] = server.received;
    expect(request?.headers['title']).toBe('Order stuck: dca-btc - check the exchange');
    expect(request?.headers['priority']).toBe('high');
    expect(request?.headers['tags']).toBe('hourglass');
  });
});
