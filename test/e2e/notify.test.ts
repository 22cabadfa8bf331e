import { createHmac, timingSafeEqual } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteJournal } from '../../src/store/sqlite-journal.ts';
import { type Receiver, startFakeTelegram, startReceiver } from '../support/notify-receivers.ts';
import { sandboxPerTest, startDaemon } from './daemon-process.ts';

// `stacker run` as a user starts it, trading live on the sandbox every second, with the webhook
// and Telegram channels pointed at real servers on 127.0.0.1: what reaches them is compared
// with the orders the sandbox filled and the journal holds.
const t = sandboxPerTest();

const WEBHOOK_SECRET = 'whsec-canary-5e1d9b7a3c2f4e6d8b0a1c3e5f7a9b1d';
const BOT_TOKEN = '987654321:AAHcanaryTokenPart7f3a9c1e5b2d4f6a8c0e';
const CHAT_ID = '-1001234567890';

/** What a receiver does with X-Stacker-Signature (README "Notifications"). */
function validSignature(body: string, header: string | string[] | undefined): boolean {
  if (typeof header !== 'string' || !header.startsWith('sha256=')) return false;
  const expected = Buffer.from(createHmac('sha256', WEBHOOK_SECRET).update(body, 'utf8').digest('hex'));
  const given = Buffer.from(header.slice('sha256='.length));
  return given.length === expected.length && timingSafeEqual(given, expected);
}

async function stopAll(...receivers: Array<Receiver | null>): Promise<void> {
  await Promise.all(receivers.map((receiver) => receiver?.stop()));
}

describe('notifications from a daemon trading on the sandbox', () => {
  it('one signed webhook POST and one Telegram message per filled order; no secret in the output', async () => {
    const webhook = await startReceiver();
    const telegram = await startFakeTelegram(BOT_TOKEN);
    try {
      t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '* * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001' });
      const daemon = startDaemon(['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data], {
        ...t.live(),
        STACKER_NOTIFY_WEBHOOK_URL: `${webhook.url}/hooks/stacker`,
        STACKER_NOTIFY_WEBHOOK_SECRET: WEBHOOK_SECRET,
        STACKER_TELEGRAM_BOT_TOKEN: BOT_TOKEN,
        STACKER_TELEGRAM_CHAT_ID: CHAT_ID,
        STACKER_TELEGRAM_API_URL: telegram.url,
      });
      await daemon.waitFor('"event":"scheduled"');
      await webhook.waitFor(3, 15_000);
      daemon.child.kill('SIGTERM');
      expect(await daemon.exited).toBe(0);

      const filled = t.sandbox.exchange.orderHistory({}).filter((order) => order.filledBase.gt(0));
      expect(filled.length).toBeGreaterThanOrEqual(3);
      const journal = new SqliteJournal({ path: join(t.dir.data, 'stacker.db'), readOnly: true });
      await journal.open();
      const stored = await journal.listOrders({ limit: 1000 }).finally(() => journal.close());
      expect(stored.map((order) => order.clientOrderId).sort()).toEqual(filled.map((order) => order.clientOrderId).sort());

      // Exactly one POST per filled order, each signed over its exact body.
      const posts = webhook.received.map((request) => ({ request, json: JSON.parse(request.body) as Record<string, unknown> }));
      expect(posts.every(({ request }) => request.method === 'POST' && request.path === '/hooks/stacker')).toBe(true);
      expect(posts.every(({ request }) => request.headers['content-type'] === 'application/json')).toBe(true);
      expect(posts.every(({ request }) => validSignature(request.body, request.headers['x-stacker-signature']))).toBe(true);
      const fills = posts.filter(({ json }) => json['event'] === 'order-filled').map(({ json }) => json);
      expect(fills.map((fill) => fill['clientOrderId']).sort()).toEqual(filled.map((order) => order.clientOrderId).sort());

      // The payload: the sandbox's figures as decimal strings.
      for (const order of filled) {
        const fill = fills.find((f) => f['clientOrderId'] === order.clientOrderId);
        expect(fill).toMatchObject({
          event: 'order-filled',
          mode: 'live',
          instance: 'dca-btc',
          orderId: order.orderId,
          market: 'BTC_USDT',
          status: 'FILLED',
          filledBase: order.filledBase.toFixed(),
          filledQuote: order.filledQuote.toFixed(),
          fee: order.fee.toFixed(),
          feeAsset: order.feeAsset,
          averagePrice: order.filledQuote.div(order.filledBase).toDecimalPlaces(8).toFixed(),
        });
        expect(typeof fill?.['at']).toBe('string');
        expect(fill?.['text']).toContain(order.clientOrderId);
      }

      // One sendMessage per fill, to the configured chat, naming the order.
      const messages = telegram.received.map((request) => ({ request, json: JSON.parse(request.body) as { chat_id: string; text: string } }));
      expect(messages.every(({ request }) => request.path === `/bot${BOT_TOKEN}/sendMessage`)).toBe(true);
      expect(messages.every(({ json }) => json.chat_id === CHAT_ID)).toBe(true);
      const filledTexts = messages.filter(({ json }) => json.text.startsWith('Bought '));
      expect(filledTexts).toHaveLength(filled.length);
      for (const order of filled) expect(filledTexts.filter(({ json }) => json.text.includes(order.clientOrderId))).toHaveLength(1);

      // Secrets: never in what the daemon wrote, never in a payload.
      const output = daemon.output();
      for (const secret of [WEBHOOK_SECRET, BOT_TOKEN, BOT_TOKEN.split(':')[1] ?? BOT_TOKEN, t.sandbox.apiSecret]) {
        expect(output).not.toContain(secret);
        expect(webhook.received.map((r) => r.body).join('\n')).not.toContain(secret);
        expect(telegram.received.map((r) => r.body).join('\n')).not.toContain(secret);
      }
      expect(output).toContain('"event":"notify"');
    } finally {
      await stopAll(webhook, telegram);
    }
  }, 40_000);

  it('a hung webhook and a dead Telegram hold up no slot, and the stop waits for them 3 s at most', async () => {
    // Accepts the request and never answers.
    const hung = await startReceiver(() => undefined);
    const dead = await startReceiver();
    const deadUrl = dead.url;
    await dead.stop();
    try {
      t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '* * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001' });
      const daemon = startDaemon(['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data], {
        ...t.live(),
        STACKER_NOTIFY_WEBHOOK_URL: hung.url,
        STACKER_TELEGRAM_BOT_TOKEN: BOT_TOKEN,
        STACKER_TELEGRAM_CHAT_ID: CHAT_ID,
        STACKER_TELEGRAM_API_URL: deadUrl,
      });
      await daemon.waitFor('"event":"scheduled"');
      const scheduledAt = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 4500));
      const filledIn4s = t.sandbox.exchange.orderHistory({}).filter((order) => order.filledBase.gt(0)).length;
      const stopAt = Date.now();
      daemon.child.kill('SIGTERM');
      expect(await daemon.exited).toBe(0);
      const stopMs = Date.now() - stopAt;

      // A slot a second, as without notifications (a slot that waited for the hung webhook would
      // wait its 10 s timeout): nothing waited for a receiver.
      expect(filledIn4s).toBeGreaterThanOrEqual(3);
      expect(Date.now() - scheduledAt).toBeGreaterThan(4000);
      // The flush deadline (3 s) plus the daemon's own stop.
      expect(stopMs).toBeLessThan(6000);
      expect(hung.received.length).toBeGreaterThanOrEqual(1);
      const output = daemon.output();
      expect(output).toContain('"event":"notify-abandoned"');
      expect(output).not.toContain(BOT_TOKEN);
      expect(output).not.toContain(BOT_TOKEN.split(':')[1]);
    } finally {
      await stopAll(hung);
    }
  }, 40_000);

  it('trading-stopped reaches the webhook before the daemon exits, when the exchange refuses the key', async () => {
    const webhook = await startReceiver();
    try {
      t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '* * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001' });
      const daemon = startDaemon(['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data], {
        ...t.live(),
        STACKER_API_SECRET: 'wrong-secret-value-0123456789',
        STACKER_NOTIFY_WEBHOOK_URL: webhook.url,
        STACKER_NOTIFY_EVENTS: 'trading-stopped',
      });
      expect(await daemon.exited).not.toBe(0);
      const events = webhook.received.map((request) => JSON.parse(request.body) as Record<string, unknown>);
      expect(events).toEqual([expect.objectContaining({ event: 'trading-stopped', code: 'E_AUTH', mode: 'live' })]);
      expect(webhook.received[0]?.body).not.toContain('wrong-secret-value');
    } finally {
      await webhook.stop();
    }
  }, 30_000);

  it('a start refused for a bad instance file (E_CONFIG) sends trading-stopped naming the file and the rule, never a secret; with notification settings that are wrong themselves, nothing is sent', async () => {
    const webhook = await startReceiver();
    try {
      t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '0 9 * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001' });
      writeFileSync(join(t.dir.strategies, 'topup.env'), 'STRATEGY=top-up\nSCHEDULE="0 * * * *"\nTICKER=USDT\nTARGET=100\nTHIS IS BROKEN\n');
      const args = ['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data];
      const env = { ...t.live(), STACKER_NOTIFY_WEBHOOK_URL: webhook.url, STACKER_NOTIFY_WEBHOOK_SECRET: WEBHOOK_SECRET };
      const refused = startDaemon(args, env);
      expect(await refused.exited).toBe(2);
      expect(refused.output()).toContain('"event":"start-failed","mode":"live","code":"E_CONFIG"');
      const events = webhook.received.map((request) => JSON.parse(request.body) as Record<string, unknown>);
      expect(events).toEqual([expect.objectContaining({ event: 'trading-stopped', code: 'E_CONFIG', mode: 'live' })]);
      expect(events[0]?.['reason']).toBe(`stacker did not start, so no instance trades: ${join(t.dir.strategies, 'topup.env')}: line 5: is not KEY=value, a comment or blank, so dotenv skips it (a missing "="?)`);
      expect(validSignature(webhook.received[0]?.body ?? '', webhook.received[0]?.headers['x-stacker-signature'])).toBe(true);
      for (const secret of [WEBHOOK_SECRET, t.sandbox.apiSecret]) {
        expect(webhook.received[0]?.body).not.toContain(secret);
        expect(refused.output()).not.toContain(secret);
      }

      // The global notification settings wrong themselves: the refusal names them, and nothing is sent anywhere.
      const badSettings = startDaemon(args, { ...env, STACKER_NOTIFY_EVENTS: 'trading-stoped' });
      expect(await badSettings.exited).toBe(2);
      expect(badSettings.output()).toContain('STACKER_NOTIFY_EVENTS');
      expect(webhook.received).toHaveLength(1);
    } finally {
      await webhook.stop();
    }
  }, 30_000);

  it('a second daemon refused the data dir (E_LOCKED) says so; the first one stopped by SIGTERM says daemon-stopped', async () => {
    const webhook = await startReceiver();
    try {
      t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '0 9 * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001' });
      const env = { ...t.live(), STACKER_NOTIFY_WEBHOOK_URL: webhook.url };
      const args = ['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data];
      const first = startDaemon(args, env);
      await first.waitFor('"event":"scheduled"');
      const second = startDaemon(args, env);
      expect(await second.exited).not.toBe(0);
      expect(second.output()).toContain('E_LOCKED');
      first.child.kill('SIGTERM');
      expect(await first.exited).toBe(0);
      const events = webhook.received.map((request) => JSON.parse(request.body) as Record<string, unknown>);
      expect(events).toEqual([expect.objectContaining({ event: 'trading-stopped', code: 'E_LOCKED' }), expect.objectContaining({ event: 'daemon-stopped', mode: 'live', reason: 'SIGTERM' })]);
      expect(String(events[1]?.['text']).split('\n')[0]).toBe('stacker stopped (SIGTERM)');
      // Not "stacker stopped": the first one trades on, and the message says so.
      expect(String(events[0]?.['reason'])).toMatch(new RegExp(`^a second stacker was refused start: the data dir is in use by stacker pid ${first.child.pid} .*; the running one trades on$`));
      expect(String(events[0]?.['text']).split('\n')[0]).toBe('Second stacker refused (E_LOCKED)');
    } finally {
      await webhook.stop();
    }
  }, 30_000);
});
