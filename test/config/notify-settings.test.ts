import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { readNotifySettings } from '../../src/config/notify-settings.ts';
import { readEnvLayers } from '../../src/config/settings.ts';
import { ConfigError, type InputProblem } from '../../src/domain/errors.ts';
import { loadDaemonConfig } from '../../src/config/daemon-config.ts';
import { ConfigWorld, DCA, configErrorOf } from './helpers.ts';

const TOKEN = '123456789:AAHsecretPartOfTheTokenabcdefghij';
const SECRET = 'whsec-7f3a9c1e5b2d';

async function read(env: Record<string, string>): Promise<{ settings: ReturnType<typeof readNotifySettings>; problems: string[] }> {
  const problems: InputProblem[] = [];
  const settings = readNotifySettings(await readEnvLayers(null, { env }), problems);
  return { settings, problems: problems.map((p) => `${p.field}: ${p.rule}`) };
}

describe('notification settings', () => {
  it('none set: no channel, every event', async () => {
    const { settings, problems } = await read({});
    expect(problems).toEqual([]);
    expect([settings.webhook, settings.telegram, settings.ntfy]).toEqual([null, null, null]);
    expect([...settings.events]).toEqual(['order-filled', 'order-refused', 'intent-unknown', 'order-stuck', 'strategy-disabled', 'trading-stopped', 'daemon-stopped', 'daily-summary']);
  });

  it('reads every channel, the default Telegram API and a chosen list of events', async () => {
    const { settings, problems } = await read({
      STACKER_NOTIFY_WEBHOOK_URL: 'https://hooks.example.com/in/T0KEN?x=1',
      STACKER_NOTIFY_WEBHOOK_SECRET: SECRET,
      STACKER_TELEGRAM_BOT_TOKEN: TOKEN,
      STACKER_TELEGRAM_CHAT_ID: '-1001234567890',
      STACKER_NOTIFY_NTFY_URL: 'https://ntfy.sh/stacker-7f3a',
      STACKER_NOTIFY_EVENTS: ' order-filled , Trading-Stopped',
    });
    expect(problems).toEqual([]);
    expect(settings.webhook?.url.href).toBe('https://hooks.example.com/in/T0KEN?x=1');
    expect(settings.webhook?.secret).toBe(SECRET);
    expect(settings.telegram).toEqual({ apiUrl: new URL('https://api.telegram.org'), botToken: TOKEN, chatId: '-1001234567890' });
    expect(settings.ntfy?.url.href).toBe('https://ntfy.sh/stacker-7f3a');
    expect([...settings.events]).toEqual(['order-filled', 'trading-stopped']);
  });

  it('shows neither the secret, the token nor a URL path in JSON or inspect', async () => {
    const { settings } = await read({ STACKER_NOTIFY_WEBHOOK_URL: 'https://hooks.example.com/in/T0KEN', STACKER_NOTIFY_WEBHOOK_SECRET: SECRET, STACKER_TELEGRAM_BOT_TOKEN: TOKEN, STACKER_TELEGRAM_CHAT_ID: '42' });
    for (const shown of [JSON.stringify(settings), inspect(settings, { depth: 5 })]) {
      expect(shown).not.toContain(SECRET);
      expect(shown).not.toContain('AAHsecretPart');
      expect(shown).not.toContain('T0KEN');
      expect(shown).toContain('hooks.example.com');
    }
  });

  it('an unknown event name is refused, naming the key and listing the valid names', async () => {
    const { problems } = await read({ STACKER_NOTIFY_EVENTS: 'order-filled,order-filed' });
    expect(problems).toEqual(['STACKER_NOTIFY_EVENTS: has unknown event(s) "order-filed"; give a comma-separated list of order-filled, order-refused, intent-unknown, order-stuck, strategy-disabled, trading-stopped, daemon-stopped, daily-summary (unset: all of them)']);
    expect((await read({ STACKER_NOTIFY_EVENTS: ' , ' })).problems[0]).toMatch(/^STACKER_NOTIFY_EVENTS: names no event; /);
  });

  it('refuses URLs that are not http(s), without quoting them back', async () => {
    const { problems } = await read({ STACKER_NOTIFY_WEBHOOK_URL: 'hooks.example.com/T0KEN', STACKER_NOTIFY_NTFY_URL: 'ftp://ntfy.sh/topic', STACKER_TELEGRAM_BOT_TOKEN: TOKEN, STACKER_TELEGRAM_CHAT_ID: '1', STACKER_TELEGRAM_API_URL: 'https://api.telegram.org?x=1' });
    expect(problems).toEqual([
      'STACKER_NOTIFY_WEBHOOK_URL: must be an http(s) URL such as https://example.com/hooks/stacker',
      'STACKER_TELEGRAM_API_URL: must be a plain base URL such as https://api.telegram.org, without a query or credentials',
      'STACKER_NOTIFY_NTFY_URL: must use http or https (got ftp)',
    ]);
    expect((await read({ STACKER_NOTIFY_NTFY_URL: 'https://ntfy.sh/' })).problems).toEqual(['STACKER_NOTIFY_NTFY_URL: must name a topic, such as https://ntfy.sh/my-stacker-7f3a9c']);
  });

  it('Telegram needs both the token and the chat, each well formed; the token is never quoted', async () => {
    expect((await read({ STACKER_TELEGRAM_BOT_TOKEN: TOKEN })).problems).toEqual([
      'STACKER_TELEGRAM_CHAT_ID: is not set, but STACKER_TELEGRAM_BOT_TOKEN is; set the chat to send to (a number such as 123456789 or -100123456789, or @channelname)',
    ]);
    const bad = await read({ STACKER_TELEGRAM_BOT_TOKEN: 'AAHsecretPart-without-id', STACKER_TELEGRAM_CHAT_ID: 'my chat' });
    expect(bad.problems).toEqual([
      'STACKER_TELEGRAM_BOT_TOKEN: must be the token @BotFather gave, like 123456789:AAH… (digits, a colon, then letters, digits, _ or -)',
      'STACKER_TELEGRAM_CHAT_ID: must be a chat id such as 123456789 or -100123456789, or @channelname (got "my chat")',
    ]);
    expect(bad.settings.telegram).toBeNull();
  });

  it('a secret or an API URL without its channel is a mistake worth naming', async () => {
    expect((await read({ STACKER_NOTIFY_WEBHOOK_SECRET: SECRET, STACKER_TELEGRAM_API_URL: 'http://127.0.0.1:8081' })).problems).toEqual([
      'STACKER_NOTIFY_WEBHOOK_SECRET: is set, but STACKER_NOTIFY_WEBHOOK_URL is not: the secret signs webhook bodies; set the URL too, or remove the secret',
      'STACKER_TELEGRAM_API_URL: is set, but STACKER_TELEGRAM_BOT_TOKEN and STACKER_TELEGRAM_CHAT_ID are not',
    ]);
  });

  it('a bad notification setting stops the daemon config like any other (ConfigError, exit 2), the secret unquoted', async () => {
    const world = new ConfigWorld();
    try {
      world.instance('dca-btc', DCA);
      const error = await configErrorOf(loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: { STACKER_NOTIFY_EVENTS: 'fills', STACKER_TELEGRAM_BOT_TOKEN: `${TOKEN} ` , STACKER_TELEGRAM_CHAT_ID: 'x y' } }));
      expect(error).toBeInstanceOf(ConfigError);
      expect(error.problems.map((p) => p.field)).toEqual(['STACKER_TELEGRAM_CHAT_ID', 'STACKER_NOTIFY_EVENTS']);
      expect(error.message).not.toContain('AAHsecretPart');
      const ok = await loadDaemonConfig({ strategiesDir: world.strategiesDir }, { env: { STACKER_NOTIFY_NTFY_URL: 'http://127.0.0.1:1/topic' } });
      expect(ok.notify.ntfy?.url.pathname).toBe('/topic');
    } finally {
      world.cleanup();
    }
  });
});
