import { ConfigError, type InputProblem } from '../domain/errors.ts';
import { Decimal, ZERO } from '../domain/money.ts';
import { CLIENT_ORDER_PREFIX_MAX, CLIENT_ORDER_PREFIX_PATTERN, COMMON_KEYS, type ParamSpec, type Strategy } from './contract.ts';

/**
 * Readers for instance env files that collect problems instead of throwing at the first, so a
 * user fixes every key in one go:
 *
 *   const p = new ParamReader(env, source);
 *   const market = p.market('MARKET');
 *   const amount = p.decimal('AMOUNT', { positive: true });
 *   return p.done({ market, amount });   // throws one ConfigError naming every bad key
 *
 * A reader that found a problem returns a placeholder (zero, '', the first choice); `done`
 * throws before any placeholder can be used. A key set to the empty string counts as absent,
 * so `CLIENT_ORDER_PREFIX=` in an example file means "not set".
 */

const PLAIN_DECIMAL = /^-?(?:0|[1-9]\d*)(?:\.\d+)?$/;
const MARKET = /^[A-Z0-9]{1,20}_[A-Z0-9]{1,20}$/;
const TICKER = /^[A-Z0-9]{1,20}$/;
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export interface DecimalRules {
  /** Must be > 0. */
  readonly positive?: boolean;
  /** Must be ≥ 0. */
  readonly nonNegative?: boolean;
  /** Inclusive bounds, as decimal text. */
  readonly min?: string;
  readonly max?: string;
  readonly maxDecimals?: number;
}

export interface IntegerRules {
  readonly min: number;
  readonly max: number;
}

/** A value quoted back in a message: short, and JSON-quoted so blanks show. */
function shown(value: string): string {
  return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
}

export class ParamReader {
  readonly #env: Readonly<Record<string, string>>;
  readonly #source: string;
  readonly #problems: InputProblem[] = [];

  constructor(env: Readonly<Record<string, string>>, source: string) {
    this.#env = env;
    this.#source = source;
  }

  /** The text of a key; undefined when absent or empty. */
  raw(key: string): string | undefined {
    const value = Object.hasOwn(this.#env, key) ? this.#env[key] : undefined;
    return value === undefined || value === '' ? undefined : value;
  }

  has(key: string): boolean {
    return this.raw(key) !== undefined;
  }

  /** Record a problem the readers cannot see (two keys that exclude each other, a key that needs another). */
  problem(key: string, rule: string): void {
    this.#problems.push({ source: this.#source, field: key, rule });
  }

  get problems(): readonly InputProblem[] {
    return this.#problems;
  }

  /** `value` when every read was good; otherwise one ConfigError with every problem. */
  done<T>(value: T): T {
    if (this.#problems.length > 0) throw new ConfigError([...this.#problems]);
    return value;
  }

  string(key: string, rules: { pattern?: RegExp; rule?: string; default?: string } = {}): string {
    const value = this.raw(key) ?? rules.default;
    if (value === undefined) return this.#missing(key, '');
    if (rules.pattern !== undefined && !rules.pattern.test(value)) {
      this.problem(key, `${rules.rule ?? `must match ${rules.pattern}`} (got ${shown(value)})`);
      return '';
    }
    return value;
  }

  optionalString(key: string, rules: { pattern?: RegExp; rule?: string } = {}): string | undefined {
    return this.has(key) ? this.string(key, rules) : undefined;
  }

  /** A plain decimal (0.0005; no exponent, no plus sign, no leading zeros, no blanks). `default` is decimal text. */
  decimal(key: string, rules: DecimalRules & { default?: string } = {}): Decimal {
    const text = this.raw(key) ?? rules.default;
    if (text === undefined) return this.#missing(key, ZERO);
    return this.#decimal(key, text, rules) ?? ZERO;
  }

  optionalDecimal(key: string, rules: DecimalRules = {}): Decimal | undefined {
    const text = this.raw(key);
    return text === undefined ? undefined : this.#decimal(key, text, rules);
  }

  /** A whole number within inclusive bounds. */
  integer(key: string, rules: IntegerRules & { default?: number }): number {
    const text = this.raw(key);
    if (text === undefined) return rules.default ?? this.#missing(key, rules.min);
    const value = /^-?(?:0|[1-9]\d*)$/.test(text) ? Number(text) : Number.NaN;
    if (!Number.isSafeInteger(value) || value < rules.min || value > rules.max) {
      this.problem(key, `must be a whole number from ${rules.min} to ${rules.max} (got ${shown(text)})`);
      return rules.min;
    }
    return value;
  }

  /** Exactly `true` or `false`. */
  boolean(key: string, defaultValue: boolean): boolean {
    const text = this.raw(key);
    if (text === undefined) return defaultValue;
    if (text === 'true') return true;
    if (text === 'false') return false;
    this.problem(key, `must be true or false (got ${shown(text)})`);
    return defaultValue;
  }

  oneOf<T extends string>(key: string, choices: readonly T[], defaultValue?: T): T {
    const text = this.raw(key);
    const fallback = defaultValue ?? (choices[0] as T);
    if (text === undefined) return defaultValue ?? this.#missing(key, fallback);
    if ((choices as readonly string[]).includes(text)) return text as T;
    this.problem(key, `must be one of ${choices.join(', ')} (got ${shown(text)})`);
    return fallback;
  }

  /** A market name BASE_QUOTE in capitals, e.g. BTC_USDT. Whether the exchange lists it is checked at start (checkParams). */
  market(key: string): string {
    const text = this.raw(key);
    if (text === undefined) return this.#missing(key, '');
    if (MARKET.test(text)) return text;
    const hint = MARKET.test(text.toUpperCase()) ? `; write it in capitals: ${text.toUpperCase()}` : '';
    this.problem(key, `must be a market name BASE_QUOTE such as BTC_USDT (got ${shown(text)})${hint}`);
    return '';
  }

  /** An asset ticker in capitals, e.g. USDT. */
  ticker(key: string): string {
    const text = this.raw(key);
    if (text === undefined) return this.#missing(key, '');
    return this.#ticker(key, text);
  }

  optionalTicker(key: string): string | undefined {
    const text = this.raw(key);
    return text === undefined ? undefined : this.#ticker(key, text);
  }

  /** Comma-separated tickers (blanks around commas allowed), no repeats; undefined when absent. */
  optionalTickerList(key: string): string[] | undefined {
    const text = this.raw(key);
    if (text === undefined) return undefined;
    const items = text.split(',').map((item) => item.trim());
    const bad = items.filter((item) => !TICKER.test(item));
    if (bad.length > 0) {
      this.problem(key, `must be tickers in capitals separated by commas, such as USDT,BTC (bad: ${bad.map(shown).join(', ')})`);
      return [];
    }
    if (new Set(items).size !== items.length) {
      this.problem(key, 'names a ticker twice');
      return [];
    }
    return items;
  }

  optionalUuid(key: string): string | undefined {
    const text = this.raw(key);
    if (text === undefined) return undefined;
    if (UUID.test(text)) return text.toLowerCase();
    this.problem(key, `must be a UUID such as 0b7b4a47-9a4f-4c4e-8d0e-2f1b6a7c9d11 (got ${shown(text)})`);
    return '';
  }

  /**
   * Optional prefix of the clientOrderIds of this instance. At most CLIENT_ORDER_PREFIX_MAX
   * characters, because the engine appends a derived suffix and the exchange takes 64.
   */
  clientOrderPrefix(key: string): string | undefined {
    const text = this.raw(key);
    if (text === undefined) return undefined;
    if (CLIENT_ORDER_PREFIX_PATTERN.test(text)) return text;
    this.problem(key, `must be 1 to ${CLIENT_ORDER_PREFIX_MAX} letters, digits, dots, dashes or underscores (got ${shown(text)})`);
    return undefined;
  }

  #missing<T>(key: string, placeholder: T): T {
    this.problem(key, 'is required');
    return placeholder;
  }

  #ticker(key: string, text: string): string {
    if (TICKER.test(text)) return text;
    const hint = TICKER.test(text.toUpperCase()) ? `; write it in capitals: ${text.toUpperCase()}` : '';
    this.problem(key, `must be an asset ticker such as USDT (got ${shown(text)})${hint}`);
    return '';
  }

  #decimal(key: string, text: string, rules: DecimalRules): Decimal | undefined {
    if (!PLAIN_DECIMAL.test(text)) {
      this.problem(key, `must be a plain decimal number such as 0.0005, without exponent, plus sign or blanks (got ${shown(text)})`);
      return undefined;
    }
    const value = new Decimal(text);
    const broken: string[] = [];
    if (rules.positive === true && value.lte(0)) broken.push('greater than 0');
    if (rules.nonNegative === true && value.isNegative()) broken.push('0 or more');
    if (rules.min !== undefined && value.lt(rules.min)) broken.push(`at least ${rules.min}`);
    if (rules.max !== undefined && value.gt(rules.max)) broken.push(`at most ${rules.max}`);
    if (rules.maxDecimals !== undefined && value.decimalPlaces() > rules.maxDecimals) broken.push(`given with at most ${rules.maxDecimals} decimals`);
    if (broken.length > 0) {
      this.problem(key, `must be ${broken.join(' and ')} (got ${text})`);
      return undefined;
    }
    return value;
  }
}

/**
 * Keys of an env file that neither the strategy nor the engine declares: almost always a typo
 * (`AMOUTN`), which would otherwise silently fall back to a default. Values are never quoted:
 * a misplaced secret must not end up in a log.
 */
export function unknownKeyProblems(env: Readonly<Record<string, string>>, strategyName: string, specs: readonly ParamSpec[], source: string): InputProblem[] {
  const known = [...COMMON_KEYS, ...specs.map((spec) => spec.key)];
  const knownSet = new Set(known);
  const problems: InputProblem[] = [];
  for (const key of Object.keys(env)) {
    if (knownSet.has(key)) continue;
    const guess = closestName(key, known);
    const hint = guess === undefined ? `; the keys are ${known.join(', ')}` : `; did you mean ${guess}?`;
    problems.push({ source, field: key, rule: `is not a key of strategy ${strategyName} or of the engine${hint}` });
  }
  return problems;
}

/**
 * Parse an instance's params the way the engine does at start: unknown keys and the strategy's
 * own problems together, in one ConfigError.
 */
export function parseInstanceParams<P>(strategy: Strategy<P>, env: Readonly<Record<string, string>>, source: string): P {
  const unknown = unknownKeyProblems(env, strategy.name, strategy.params, source);
  let params: P;
  try {
    params = strategy.parseParams(env, source);
  } catch (error) {
    if (error instanceof ConfigError) throw new ConfigError([...unknown, ...error.problems]);
    throw error;
  }
  if (unknown.length > 0) throw new ConfigError(unknown);
  return params;
}

/** The known name a typo most likely meant: the same letters in capitals, or at most 2 edits away. */
export function closestName(name: string, known: readonly string[]): string | undefined {
  const upper = name.toUpperCase();
  let best: string | undefined;
  let bestDistance = 3;
  for (const candidate of known) {
    if (candidate === upper) return candidate;
    const distance = editDistance(upper, candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and swaps of neighbours. */
function editDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    rows.push(Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  }
  const at = (i: number, j: number): number => rows[i]?.[j] ?? Number.POSITIVE_INFINITY;
  for (let i = 1; i <= a.length; i++) {
    const row = rows[i] as number[];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, at(i - 2, j - 2) + 1);
      row[j] = value;
    }
  }
  return at(a.length, b.length);
}
