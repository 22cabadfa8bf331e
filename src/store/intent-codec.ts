import type { Intent, IntentKind } from '../domain/intent.ts';
import { INTENT_KINDS } from '../domain/intent.ts';
import { type Decimal, formatDecimal, isDecimal, parseDecimalStrict } from '../domain/money.ts';
import { readStp } from '../domain/order.ts';
import { StoreError } from './errors.ts';

/**
 * Intents as stored: the kind in its own column, the other fields as a JSON object whose money
 * is decimal text (`{"market":"BTC_USDT","amount":"0.0005"}`), readable in a `sqlite3` shell and
 * read back into the exact same Decimal. Decoding is strict: a row edited into another shape is
 * reported, never guessed at.
 */
export function encodeIntentParams(intent: Intent): string {
  const { kind: _kind, ...fields } = canonicalIntent(intent);
  return JSON.stringify('amount' in fields ? { ...fields, amount: formatDecimal(fields.amount) } : fields);
}

/**
 * The intent as the journal keeps it: only the fields it stores, checked as they are written
 * (money finite, note and refusal data text only), so an intent reads back the same from any journal.
 */
export function canonicalIntent(intent: Intent): Intent {
  switch (intent.kind) {
    case 'buy-stock-market':
      return {
        kind: intent.kind,
        market: intent.market,
        amount: money(intent.amount, 'amount'),
        ...(intent.stp === undefined ? {} : { stp: intent.stp }),
        ...(intent.tag === undefined ? {} : { tag: intent.tag }),
        ...group(intent.group),
      };
    case 'flex-withdraw':
      return { kind: intent.kind, plan: intent.plan, amount: money(intent.amount, 'amount'), ...group(intent.group) };
    case 'transfer':
      return { kind: intent.kind, ticker: intent.ticker, amount: money(intent.amount, 'amount'), from: intent.from, to: intent.to, ...group(intent.group) };
    case 'note':
      return { kind: intent.kind, level: intent.level, message: intent.message, ...(intent.data === undefined ? {} : { data: textData(intent.data) }) };
    case 'refusal':
      return { kind: intent.kind, reason: intent.reason, message: intent.message, ...(intent.data === undefined ? {} : { data: textData(intent.data) }) };
    case 'set-state':
      return { kind: intent.kind, key: intent.key, value: intent.value };
    default:
      throw new StoreError('invalid-argument', `cannot journal an intent of kind ${JSON.stringify((intent as { kind?: unknown }).kind)}`);
  }
}

function group(value: string | undefined): { group?: string } {
  if (value === undefined) return {};
  if (typeof value !== 'string' || value === '') throw new StoreError('invalid-argument', 'an intent group must be non-empty text');
  return { group: value };
}

function textData(data: Readonly<Record<string, string>>): Readonly<Record<string, string>> {
  encodeTextMap(data, 'data');
  return { ...data };
}

export function decodeIntent(kind: string, paramsJson: string, where: string): Intent {
  const read = new FieldReader(parseObject(paramsJson, where), where);
  switch (asKind(kind, where)) {
    case 'buy-stock-market': {
      // Journals written before the short spellings hold the long ones: both read as today's mode.
      const text = read.optionalText('stp');
      const stp = text === undefined ? undefined : readStp(text);
      if (stp === null) throw corrupt(where, `stp ${JSON.stringify(text)} is not an STP mode`);
      const tag = read.optionalText('tag');
      return {
        kind: 'buy-stock-market',
        market: read.text('market'),
        amount: read.decimal('amount'),
        ...(stp === undefined ? {} : { stp }),
        ...(tag === undefined ? {} : { tag }),
        ...group(read.optionalText('group')),
      };
    }
    case 'flex-withdraw':
      return { kind: 'flex-withdraw', plan: read.text('plan'), amount: read.decimal('amount'), ...group(read.optionalText('group')) };
    case 'transfer': {
      if (read.text('from') !== 'main' || read.text('to') !== 'spot') throw corrupt(where, 'only main → spot transfers are journalled');
      return { kind: 'transfer', ticker: read.text('ticker'), amount: read.decimal('amount'), from: 'main', to: 'spot', ...group(read.optionalText('group')) };
    }
    case 'note': {
      const level = read.text('level');
      if (level !== 'info' && level !== 'warn') throw corrupt(where, `note level ${JSON.stringify(level)}`);
      const data = read.optionalTextMap('data');
      return { kind: 'note', level, message: read.text('message'), ...(data === undefined ? {} : { data }) };
    }
    case 'refusal': {
      const data = read.optionalTextMap('data');
      return { kind: 'refusal', reason: read.text('reason'), message: read.text('message'), ...(data === undefined ? {} : { data }) };
    }
    case 'set-state':
      return { kind: 'set-state', key: read.text('key'), value: read.nullableText('value') };
  }
}

/** JSON of text values only (intent results): money arrives already formatted. */
export function encodeTextMap(map: Readonly<Record<string, string>>, field: string): string {
  checkTextMap(map, field);
  return JSON.stringify(map);
}

/** Every value is text: money is formatted before it reaches a text map. */
export function checkTextMap(map: Readonly<Record<string, string>>, field: string): void {
  for (const key of Object.keys(map)) {
    if (typeof map[key] !== 'string') throw new StoreError('invalid-argument', `${field}.${key} must be text (format money with formatDecimal)`);
  }
}

export function decodeTextMap(json: string, where: string): Readonly<Record<string, string>> {
  const object = parseObject(json, where);
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(object)) {
    if (typeof value !== 'string') throw corrupt(where, `${key} is not text`);
    out[key] = value;
  }
  return out;
}

function money(value: Decimal, field: string): Decimal {
  if (!isDecimal(value) || !value.isFinite()) throw new StoreError('invalid-argument', `intent ${field} must be a finite Decimal`);
  return value;
}

function asKind(kind: string, where: string): IntentKind {
  if ((INTENT_KINDS as readonly string[]).includes(kind)) return kind as IntentKind;
  throw corrupt(where, `unknown intent kind ${JSON.stringify(kind)}`);
}

function parseObject(json: string, where: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw corrupt(where, 'not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw corrupt(where, 'not a JSON object');
  return value as Record<string, unknown>;
}

function corrupt(where: string, what: string): StoreError {
  return new StoreError('corrupt', `${where}: ${what}`);
}

class FieldReader {
  readonly #object: Record<string, unknown>;
  readonly #where: string;
  constructor(object: Record<string, unknown>, where: string) {
    this.#object = object;
    this.#where = where;
  }
  text(key: string): string {
    const value = this.#object[key];
    if (typeof value !== 'string') throw corrupt(this.#where, `${key} is not text`);
    return value;
  }
  optionalText(key: string): string | undefined {
    return this.#object[key] === undefined ? undefined : this.text(key);
  }
  nullableText(key: string): string | null {
    return this.#object[key] === null ? null : this.text(key);
  }
  decimal(key: string): Decimal {
    const text = this.text(key);
    try {
      return parseDecimalStrict(text, key);
    } catch {
      throw corrupt(this.#where, `${key} ${JSON.stringify(text)} is not a plain decimal`);
    }
  }
  optionalTextMap(key: string): Readonly<Record<string, string>> | undefined {
    const value = this.#object[key];
    if (value === undefined) return undefined;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw corrupt(this.#where, `${key} is not an object`);
    return decodeTextMap(JSON.stringify(value), `${this.#where}.${key}`);
  }
}
