import type { ResponseBody } from './json.ts';

/** What an error body says, whatever envelope it came in. */
export interface ErrorFacts {
  readonly code: number | null;
  readonly message: string;
  readonly fieldErrors: Record<string, string[]>;
  /** `status` inside a legacy envelope `{response:null,status:422,errors:{…}}`. */
  readonly bodyStatus: number | null;
  readonly parsed: boolean;
}

const ENVELOPE_KEYS = new Set(['code', 'message', 'errors', 'error', 'success', 'status', 'response', 'params', 'result', 'notification', 'warning', '_token']);
const SNIPPET_CHARS = 200;

/**
 * Reads every error envelope seen on this API (docs/exchange-api.md §4, §7, §10):
 * - private            {"code":30,"message":"Validation failed","errors":{"amount":["…"]}}   (`errors` may be {} or [] or absent)
 * - public             {"success":false,"message":"ERROR MESSAGE","params":[]}
 * - public, kline      {"success":false,"message":{"end":["End field must be greater then start."]},"result":null}
 * - public, flat       {"market":["Market is not available."]}
 * - server error       {"error":["Internal server error."]}
 * - legacy             {"response":null,"status":422,"errors":{"orderId":["…"]},"notification":null,"warning":"…","_token":null}
 * - non-JSON           a 503 HTML page, a gateway's 429 text, an empty 404
 */
export function readErrorFacts(body: ResponseBody): ErrorFacts {
  if (body.kind === 'empty') return { code: null, message: '', fieldErrors: {}, bodyStatus: null, parsed: false };
  if (body.kind === 'text') return { code: null, message: snippet(body.text), fieldErrors: {}, bodyStatus: null, parsed: false };
  const value = body.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { code: null, message: typeof value === 'string' ? snippet(value) : '', fieldErrors: {}, bodyStatus: null, parsed: true };
  }
  const o = value as Record<string, unknown>;
  const fieldErrors: Record<string, string[]> = {};
  let message = typeof o['message'] === 'string' ? o['message'] : '';
  if (isPlainObject(o['message'])) mergeFieldErrors(fieldErrors, o['message']);
  if (isPlainObject(o['errors'])) mergeFieldErrors(fieldErrors, o['errors']);
  const errorTexts = messagesOf(o['error']);
  if (message === '' && errorTexts.length > 0) message = errorTexts.join(' ');
  if (Object.keys(o).length > 0 && Object.keys(o).every((key) => !ENVELOPE_KEYS.has(key)) && Object.values(o).every(isMessageList)) {
    mergeFieldErrors(fieldErrors, o);
  }
  // Legacy 503 puts its only text in errors.message: surface it as the message.
  const legacyMessage = fieldErrors['message'];
  if (message === '' && legacyMessage !== undefined && legacyMessage.length > 0) message = legacyMessage.join(' ');
  return { code: integerOrNull(o['code']), message, fieldErrors, bodyStatus: integerOrNull(o['status']), parsed: true };
}

/** All the texts a rule table should look at: the message, then every field message. */
export function textsOf(facts: ErrorFacts): string[] {
  const texts = facts.message === '' ? [] : [facts.message];
  for (const messages of Object.values(facts.fieldErrors)) texts.push(...messages);
  return texts;
}

function mergeFieldErrors(into: Record<string, string[]>, source: Record<string, unknown>): void {
  for (const [field, raw] of Object.entries(source)) {
    const messages = messagesOf(raw);
    if (messages.length > 0) into[field] = [...(into[field] ?? []), ...messages];
  }
}

function messagesOf(raw: unknown): string[] {
  if (typeof raw === 'string') return raw === '' ? [] : [raw];
  if (Array.isArray(raw)) return raw.filter((m): m is string => typeof m === 'string' && m !== '');
  return [];
}

function isMessageList(raw: unknown): boolean {
  return Array.isArray(raw) && raw.every((m) => typeof m === 'string');
}

function isPlainObject(raw: unknown): raw is Record<string, unknown> {
  return typeof raw === 'object' && raw !== null && !Array.isArray(raw);
}

function integerOrNull(raw: unknown): number | null {
  if (typeof raw === 'number' && Number.isSafeInteger(raw)) return raw;
  if (typeof raw === 'string' && /^-?\d{1,9}$/.test(raw)) return Number(raw);
  return null;
}

/** A non-JSON body as one short line: tags dropped, blanks collapsed, cut at 200 characters. */
function snippet(text: string): string {
  const flat = text.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim();
  return flat.length > SNIPPET_CHARS ? `${flat.slice(0, SNIPPET_CHARS)}…` : flat;
}
