import { inspect } from 'node:util';
import type { InputProblem } from '../domain/errors.ts';
import { NOTIFY_EVENTS, type NotifyEventName, isNotifyEventName } from '../domain/notification.ts';
import type { EnvLayers, EnvValue } from './settings.ts';

/**
 * Where the daemon's notifications go (README "Notifications"), read from the environment
 * layers with the rules of every setting. Every channel is optional; none set means no
 * notifier. The webhook secret, the bot token and the URLs (a webhook URL often carries a token
 * of its own) are kept out of JSON and inspect, like the API secret.
 */
export const NOTIFY_ENV_KEYS = {
  webhookUrl: 'STACKER_NOTIFY_WEBHOOK_URL',
  webhookSecret: 'STACKER_NOTIFY_WEBHOOK_SECRET',
  telegramBotToken: 'STACKER_TELEGRAM_BOT_TOKEN',
  telegramChatId: 'STACKER_TELEGRAM_CHAT_ID',
  telegramApiUrl: 'STACKER_TELEGRAM_API_URL',
  ntfyUrl: 'STACKER_NOTIFY_NTFY_URL',
  events: 'STACKER_NOTIFY_EVENTS',
} as const;

export const TELEGRAM_API_DEFAULT = 'https://api.telegram.org';

export interface NotifySettings {
  readonly webhook: { readonly url: URL; readonly secret: string | null } | null;
  readonly telegram: { readonly apiUrl: URL; readonly botToken: string; readonly chatId: string } | null;
  readonly ntfy: { readonly url: URL } | null;
  /** STACKER_NOTIFY_EVENTS; every event when unset. */
  readonly events: ReadonlySet<NotifyEventName>;
}

/** Bot API tokens are `<bot id>:<secret part>`. */
const BOT_TOKEN = /^\d{1,20}:[A-Za-z0-9_-]{20,100}$/;
/** A numeric chat id (negative for groups) or a public channel's @username. */
const CHAT_ID = /^(?:-?\d{1,20}|@[A-Za-z][A-Za-z0-9_]{3,31})$/;

export function readNotifySettings(layers: EnvLayers, problems: InputProblem[]): NotifySettings {
  const look = (key: string): EnvValue | null => layers.lookup(key);
  const problem = (key: string, found: EnvValue | null, rule: string): void => {
    problems.push(found === null ? { field: key, rule } : { source: found.source, field: key, rule });
  };

  const webhookUrl = look(NOTIFY_ENV_KEYS.webhookUrl);
  const webhookSecret = look(NOTIFY_ENV_KEYS.webhookSecret);
  let webhook: NotifySettings['webhook'] = null;
  if (webhookUrl !== null) {
    const url = receiverUrl(webhookUrl, (rule) => problem(NOTIFY_ENV_KEYS.webhookUrl, webhookUrl, rule));
    if (url !== null) webhook = { url, secret: webhookSecret?.value ?? null };
  } else if (webhookSecret !== null) {
    problem(NOTIFY_ENV_KEYS.webhookSecret, webhookSecret, `is set, but ${NOTIFY_ENV_KEYS.webhookUrl} is not: the secret signs webhook bodies; set the URL too, or remove the secret`);
  }

  const token = look(NOTIFY_ENV_KEYS.telegramBotToken);
  const chat = look(NOTIFY_ENV_KEYS.telegramChatId);
  const apiUrlFound = look(NOTIFY_ENV_KEYS.telegramApiUrl);
  let telegram: NotifySettings['telegram'] = null;
  if (token !== null || chat !== null) {
    let ok = true;
    // The token's value is never quoted back: the rule says what is wrong with it.
    if (token === null) ok = fail(() => problem(NOTIFY_ENV_KEYS.telegramBotToken, null, `is not set, but ${NOTIFY_ENV_KEYS.telegramChatId} is; set both to send Telegram messages`));
    else if (!BOT_TOKEN.test(token.value.trim())) ok = fail(() => problem(NOTIFY_ENV_KEYS.telegramBotToken, token, 'must be the token @BotFather gave, like 123456789:AAH… (digits, a colon, then letters, digits, _ or -)'));
    if (chat === null) ok = fail(() => problem(NOTIFY_ENV_KEYS.telegramChatId, null, `is not set, but ${NOTIFY_ENV_KEYS.telegramBotToken} is; set the chat to send to (a number such as 123456789 or -100123456789, or @channelname)`));
    else if (!CHAT_ID.test(chat.value.trim())) ok = fail(() => problem(NOTIFY_ENV_KEYS.telegramChatId, chat, `must be a chat id such as 123456789 or -100123456789, or @channelname (got ${JSON.stringify(chat.value)})`));
    const apiUrl = apiUrlFound === null ? new URL(TELEGRAM_API_DEFAULT) : receiverUrl(apiUrlFound, (rule) => problem(NOTIFY_ENV_KEYS.telegramApiUrl, apiUrlFound, rule), false);
    if (ok && apiUrl !== null && token !== null && chat !== null) telegram = { apiUrl, botToken: token.value.trim(), chatId: chat.value.trim() };
  } else if (apiUrlFound !== null) {
    problem(NOTIFY_ENV_KEYS.telegramApiUrl, apiUrlFound, `is set, but ${NOTIFY_ENV_KEYS.telegramBotToken} and ${NOTIFY_ENV_KEYS.telegramChatId} are not`);
  }

  const ntfyFound = look(NOTIFY_ENV_KEYS.ntfyUrl);
  let ntfy: NotifySettings['ntfy'] = null;
  if (ntfyFound !== null) {
    const url = receiverUrl(ntfyFound, (rule) => problem(NOTIFY_ENV_KEYS.ntfyUrl, ntfyFound, rule));
    if (url !== null && (url.pathname === '/' || url.pathname === '')) problem(NOTIFY_ENV_KEYS.ntfyUrl, ntfyFound, 'must name a topic, such as https://ntfy.sh/my-stacker-7f3a9c');
    else if (url !== null) ntfy = { url };
  }

  const events = readEvents(look(NOTIFY_ENV_KEYS.events), (found, rule) => problem(NOTIFY_ENV_KEYS.events, found, rule));
  return hideSecrets({ webhook, telegram, ntfy, events });
}

/** Whether any channel is set: without one, the daemon builds no notifier at all. */
export function hasChannels(settings: NotifySettings): boolean {
  return settings.webhook !== null || settings.telegram !== null || settings.ntfy !== null;
}

function fail(report: () => void): false {
  report();
  return false;
}

/**
 * An http(s) URL a message is POSTed to. The value is not quoted back in the rule: a webhook URL
 * may carry a token. `withPath` false: an API base whose paths stacker adds.
 */
function receiverUrl(found: EnvValue, report: (rule: string) => void, withPath = true): URL | null {
  let url: URL;
  try {
    url = new URL(found.value.trim());
  } catch {
    report('must be an http(s) URL such as https://example.com/hooks/stacker');
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    report(`must use http or https (got ${url.protocol.replace(/:$/, '')})`);
    return null;
  }
  if (url.hash !== '') {
    report('must not have a #fragment (it is never sent)');
    return null;
  }
  if (!withPath && (url.search !== '' || url.username !== '' || url.password !== '')) {
    report('must be a plain base URL such as https://api.telegram.org, without a query or credentials');
    return null;
  }
  return url;
}

function readEvents(found: EnvValue | null, report: (found: EnvValue, rule: string) => void): ReadonlySet<NotifyEventName> {
  if (found === null) return new Set(NOTIFY_EVENTS);
  const names = found.value.split(',').map((name) => name.trim().toLowerCase()).filter((name) => name !== '');
  const unknown = names.filter((name) => !isNotifyEventName(name));
  if (names.length === 0 || unknown.length > 0) {
    const what = names.length === 0 ? 'names no event' : `has unknown event(s) ${unknown.map((name) => JSON.stringify(name)).join(', ')}`;
    report(found, `${what}; give a comma-separated list of ${NOTIFY_EVENTS.join(', ')} (unset: all of them)`);
    return new Set(NOTIFY_EVENTS);
  }
  return new Set(names.filter(isNotifyEventName));
}

/**
 * The settings as they may be shown: which channels are on, where (origin only), and which
 * events; never the secret, the token or a URL's path (which may hold a token).
 */
function hideSecrets(settings: NotifySettings): NotifySettings {
  const shown = (): Record<string, unknown> => ({
    webhook: settings.webhook === null ? null : { origin: settings.webhook.url.origin, signed: settings.webhook.secret !== null },
    telegram: settings.telegram === null ? null : { apiUrl: settings.telegram.apiUrl.origin, chatId: settings.telegram.chatId, botToken: '[redacted]' },
    ntfy: settings.ntfy === null ? null : { origin: settings.ntfy.url.origin },
    events: [...settings.events],
  });
  const copy = { ...settings };
  Object.defineProperty(copy, 'toJSON', { value: shown, enumerable: false });
  Object.defineProperty(copy, inspect.custom, { value: shown, enumerable: false });
  return Object.freeze(copy);
}
