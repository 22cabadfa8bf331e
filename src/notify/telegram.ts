import type { NotifyEvent } from '../domain/notification.ts';
import { type Channel, REQUEST_TIMEOUT_MS } from './channel.ts';
import { messageOf, textOf } from './format.ts';
import { type PostAnswer, agentFor, checkAnswer, postOnce } from './http-post.ts';

export interface TelegramOptions {
  /** https://api.telegram.org, or a local Bot API server (tests, self-hosted). */
  readonly apiUrl: URL;
  readonly botToken: string;
  readonly chatId: string;
  readonly timeoutMs?: number;
}

/** Telegram cuts a message at 4096 characters; a longer daily summary is cut with a mark. */
const MAX_TEXT = 4096;

/**
 * Telegram's Bot API `sendMessage`: POST /bot<token>/sendMessage with `{chat_id, text}`, plain
 * text (no parse_mode: nothing in a message needs escaping). The token is in the path, so no
 * message of this channel ever names the URL; Telegram's own error description (which never
 * repeats the token) explains a refusal, and its `retry_after` is honoured on 429.
 */
export function telegramChannel(options: TelegramOptions): Channel {
  const agent = agentFor(options.apiUrl);
  const base = options.apiUrl.pathname.replace(/\/+$/, '');
  const url = new URL(`${base}/bot${options.botToken}/sendMessage`, options.apiUrl);
  return {
    name: 'telegram',
    async send(event: NotifyEvent, signal: AbortSignal): Promise<void> {
      let text = textOf(messageOf(event));
      if (text.length > MAX_TEXT) text = `${text.slice(0, MAX_TEXT - 2)}\n…`;
      const body = JSON.stringify({ chat_id: options.chatId, text, disable_web_page_preview: true });
      const answer = await postOnce('telegram', agent, { url, headers: { 'content-type': 'application/json' }, body, timeoutMs: options.timeoutMs ?? REQUEST_TIMEOUT_MS, signal });
      checkAnswer('telegram', answer, { explain: (refused) => describe(refused, options.botToken), retryAfterMs: retryAfter });
    },
    close() {
      agent.destroy();
    },
  };
}

/** Telegram's `description` ("Bad Request: chat not found"), cut short, and never the token even if a proxy echoed it. */
function describe(answer: PostAnswer, token: string): string {
  const parsed = parseJson(answer.body);
  const description = typeof parsed?.['description'] === 'string' ? parsed['description'] : '';
  return description.slice(0, 200).replaceAll(token, '[bot token]');
}

function retryAfter(answer: PostAnswer): number | null {
  const parameters = parseJson(answer.body)?.['parameters'];
  const seconds = typeof parameters === 'object' && parameters !== null ? (parameters as Record<string, unknown>)['retry_after'] : undefined;
  return typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : null;
}

function parseJson(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
