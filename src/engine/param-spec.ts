import { type Decimal, parseDecimalStrict } from '../domain/money.ts';
import { STP_INPUT_HELP, type Stp, readStp } from '../domain/order.ts';
import { CLIENT_ORDER_PREFIX_MAX, COMMON_KEYS, type ParamSpec } from './contract.ts';

const ENV_KEY = /^[A-Z][A-Z0-9_]*$/;
import { type DecimalRules, ParamReader } from './params.ts';
import { ConfigError, type InputProblem } from '../domain/errors.ts';

/**
 * A strategy's parameters, declared once: each key's type, rule, default, description and
 * example. From the declaration come the parser (every bad key reported at once, naming the
 * file and the key), the rule text of the error messages, `stacker strategies` and the example
 * env file `stacker strategies describe` prints.
 *
 *   params: {
 *     MARKET: param.market({ description: 'The market to buy on.', example: 'BTC_USDT' }),
 *     AMOUNT: param.decimal({ positive: true, optional: true, description: 'Base per slot.', example: '0.0005' }),
 *   }
 *
 * gives `params.MARKET: string` and `params.AMOUNT: Decimal | null` in `decide`.
 */
export interface ParamDeclaration<T> extends Omit<ParamSpec, 'key'> {
  readonly read: (reader: ParamReader, key: string) => T;
  /** What is wrong with the declaration itself (bounds no value passes, a bound that is no number): defineStrategy refuses it. */
  readonly mistake?: string;
}

export type ParamShape = Readonly<Record<string, ParamDeclaration<unknown>>>;

/** The parsed params of a declaration: one field per key, typed by its declaration. */
export type ParamsOf<S extends ParamShape> = { readonly [K in keyof S]: S[K] extends ParamDeclaration<infer T> ? T : never };

interface Described {
  readonly description: string;
  readonly example?: string;
  /** Added to the generated rule, e.g. "give PLAN or TICKER, not both". */
  readonly note?: string;
  /** Show the example commented out in `stacker strategies describe` (the other of two exclusive keys). */
  readonly exampleCommented?: boolean;
}

type Optional<T, O> = O extends { readonly optional: true } ? T | null : T;

function declare<T>(base: Described, rule: string, required: boolean, read: (reader: ParamReader, key: string) => T, defaultText?: string, mistake?: string): ParamDeclaration<T> {
  return {
    ...(mistake === undefined ? {} : { mistake }),
    required,
    description: base.description,
    rule: base.note === undefined ? rule : `${rule}; ${base.note}`,
    ...(defaultText === undefined ? {} : { default: defaultText }),
    ...(base.example === undefined ? {} : { example: base.example }),
    ...(base.exampleCommented === true ? { exampleCommented: true } : {}),
    read,
  };
}

/** Every bound a decimal param checks, as `stacker strategies` shows it. */
function decimalRule(rules: DecimalRules): string {
  const bounds: string[] = [];
  if (rules.positive === true) bounds.push('> 0');
  else if (rules.nonNegative === true) bounds.push('≥ 0');
  if (rules.min !== undefined) bounds.push(`at least ${rules.min}`);
  if (rules.max !== undefined) bounds.push(`at most ${rules.max}`);
  if (rules.maxDecimals !== undefined) bounds.push(`at most ${rules.maxDecimals} decimals`);
  if (rules.maxDecimals === undefined && rules.positive !== true && rules.max !== undefined) {
    // Two bounds read best as a range.
    if (rules.min !== undefined && rules.nonNegative !== true) return `decimal from ${rules.min} to ${rules.max}`;
    if (rules.min === undefined && rules.nonNegative === true) return `decimal from 0 to ${rules.max}`;
  }
  return bounds.length === 0 ? 'decimal' : `decimal ${bounds.join(', ')}`;
}

/** A decimal bound that is not a plain decimal, or bounds no value could pass. */
function decimalBoundsMistake(rules: DecimalRules): string | undefined {
  const bound = (name: 'min' | 'max'): Decimal | null | undefined => {
    const text: unknown = rules[name];
    if (text === undefined) return undefined;
    try {
      return parseDecimalStrict(String(text), name);
    } catch {
      return null;
    }
  };
  const [min, max] = [bound('min'), bound('max')];
  if (min === null) return `its min must be a plain decimal such as "0.5" (got ${JSON.stringify(rules.min)})`;
  if (max === null) return `its max must be a plain decimal such as "100" (got ${JSON.stringify(rules.max)})`;
  if (min !== undefined && max !== undefined && min.gt(max)) return `its min ${rules.min} is above its max ${rules.max}: no value could pass`;
  if (max !== undefined && rules.positive === true && max.lte(0)) return `it must be > 0 and at most ${rules.max}: no value could pass`;
  if (max !== undefined && rules.nonNegative === true && max.lt(0)) return `it must be ≥ 0 and at most ${rules.max}: no value could pass`;
  if (rules.maxDecimals !== undefined && (!Number.isInteger(rules.maxDecimals) || rules.maxDecimals < 0)) return `its maxDecimals must be a whole number ≥ 0 (got ${String(rules.maxDecimals)})`;
  return undefined;
}

function integerBoundsMistake(min: unknown, max: unknown): string | undefined {
  if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max)) return `its min and max must be whole numbers (got ${String(min)} and ${String(max)})`;
  if ((min as number) > (max as number)) return `its min ${String(min)} is above its max ${String(max)}: no value could pass`;
  return undefined;
}

/** The declarations made by param.market: defineStrategy checks at start that the exchange lists their values. */
const MARKET_PARAMS = new WeakSet<ParamDeclaration<unknown>>();

/** The keys of a shape declared with param.market. */
export function marketKeysOf(shape: ParamShape): string[] {
  return Object.entries(shape)
    .filter(([, declaration]) => MARKET_PARAMS.has(declaration))
    .map(([key]) => key);
}

export const param = {
  /** A market BASE_QUOTE in capitals; that the exchange lists it is checked at start, for every strategy (defineStrategy). */
  market<O extends Described & { readonly optional?: boolean }>(options: O): ParamDeclaration<Optional<string, O>> {
    const optional = options.optional === true;
    const declaration = declare(options, 'a market BASE_QUOTE in capitals that the exchange lists', !optional, (r, key) =>
      (optional && !r.has(key) ? null : r.market(key)) as Optional<string, O>,
    );
    MARKET_PARAMS.add(declaration as ParamDeclaration<unknown>);
    return declaration;
  },

  /** A plain decimal (no exponent). With `default` it is never null; with `optional` it is null when absent. */
  decimal<O extends Described & DecimalRules & { readonly default?: string; readonly optional?: boolean }>(options: O): ParamDeclaration<Optional<Decimal, O>> {
    const optional = options.optional === true && options.default === undefined;
    return declare(
      options,
      decimalRule(options),
      !optional && options.default === undefined,
      (r, key) => (optional ? (r.optionalDecimal(key, options) ?? null) : r.decimal(key, options)) as Optional<Decimal, O>,
      options.default,
      decimalBoundsMistake(options),
    );
  },

  integer(options: Described & { readonly min: number; readonly max: number; readonly default?: number }): ParamDeclaration<number> {
    return declare(
      options,
      `whole number from ${options.min} to ${options.max}`,
      options.default === undefined,
      (r, key) => r.integer(key, options),
      options.default?.toString(),
      integerBoundsMistake(options.min, options.max),
    );
  },

  boolean(options: Described & { readonly default: boolean }): ParamDeclaration<boolean> {
    return declare(options, 'true or false', false, (r, key) => r.boolean(key, options.default), String(options.default));
  },

  oneOf<const V extends string>(choices: readonly V[], options: Described & { readonly default?: V }): ParamDeclaration<V> {
    const mistake =
      choices.length === 0
        ? 'it offers no choice: no value could pass'
        : choices.some((choice) => typeof choice !== 'string' || !/^\S+$/.test(choice))
          ? 'each choice must be a word an env file can write (no blanks, not empty)'
          : new Set(choices).size < choices.length
            ? 'it offers a choice twice'
            : undefined;
    return declare(options, `one of ${choices.join(', ')}`, options.default === undefined, (r, key) => r.oneOf(key, choices, options.default), options.default, mistake);
  },

  /** Self-trade prevention: the short forms, the long ones read too. */
  stp(options: Described & { readonly default: Stp }): ParamDeclaration<Stp> {
    return declare(
      options,
      STP_INPUT_HELP,
      false,
      (r, key) => {
        const text = r.raw(key);
        if (text === undefined) return options.default;
        const stp = readStp(text);
        if (stp === null) r.problem(key, `must be ${STP_INPUT_HELP} (got ${JSON.stringify(text)})`);
        return stp ?? options.default;
      },
      options.default,
    );
  },

  /** The start of the clientOrderIds; null leaves it to the engine. */
  clientOrderPrefix(options: Described): ParamDeclaration<string | null> {
    return declare(options, `1 to ${CLIENT_ORDER_PREFIX_MAX} letters, digits, dots, dashes or underscores`, false, (r, key) => r.clientOrderPrefix(key) ?? null);
  },

  ticker(options: Described): ParamDeclaration<string> {
    return declare(options, 'an asset ticker in capitals', true, (r, key) => r.ticker(key));
  },

  optionalTicker(options: Described): ParamDeclaration<string | null> {
    return declare(options, 'an asset ticker in capitals', false, (r, key) => r.optionalTicker(key) ?? null);
  },

  optionalTickerList(options: Described): ParamDeclaration<readonly string[] | null> {
    return declare(options, 'tickers in capitals separated by commas', false, (r, key) => r.optionalTickerList(key) ?? null);
  },

  optionalUuid(options: Described): ParamDeclaration<string | null> {
    return declare(options, 'a UUID', false, (r, key) => r.optionalUuid(key) ?? null);
  },

  /** A duration such as 30d, 12h, 90m: milliseconds, within bounds. */
  duration(options: Described & { readonly min: string; readonly max: string; readonly default?: string }): ParamDeclaration<number> {
    const min = parseDuration(options.min);
    const max = parseDuration(options.max);
    const mistake =
      min === null || max === null
        ? `its min and max must be durations such as 30d or 12h (got ${JSON.stringify(options.min)} and ${JSON.stringify(options.max)})`
        : min > max
          ? `its min ${options.min} is above its max ${options.max}: no value could pass`
          : undefined;
    return declare(
      options,
      `a duration from ${options.min} to ${options.max} (a whole number and m, h or d)`,
      options.default === undefined,
      (r, key) => {
        const text = r.raw(key) ?? options.default;
        if (text === undefined) {
          r.problem(key, 'is required');
          return min ?? 0;
        }
        const ms = parseDuration(text);
        if (ms === null || min === null || max === null || ms < min || ms > max) {
          r.problem(key, `must be a duration from ${options.min} to ${options.max}, such as 30d or 12h (got ${JSON.stringify(text)})`);
          return min ?? 0;
        }
        return ms;
      },
      options.default,
      mistake,
    );
  },
};

const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

function parseDuration(text: string): number | null {
  const match = /^([1-9]\d{0,4})([mhd])$/.exec(text);
  if (match === null) return null;
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
}

/** The ParamSpec list of a declaration, in declaration order: what `stacker strategies` and the unknown-key check read. */
export function specsOf(shape: ParamShape): ParamSpec[] {
  return Object.entries(shape).map(([key, { read: _read, ...spec }]) => ({ key, ...spec }));
}

/**
 * Parse an instance's env by its declaration, then the rules across keys: every problem of
 * every key in one ConfigError.
 */
/**
 * The declaration checked when the strategy is defined, every mistake at once (a ConfigError:
 * exit 2, each naming its key): bounds no value could pass, a bound that is no number, and each
 * default read as if an env file wrote it. A default its own rule refuses (a decimal above its
 * max, an integer outside its bounds) was otherwise reported against every user's env file that
 * leaves the key out (or, for an integer, passed to decide unchecked); a bad bound, only once a
 * user set the key, and then against STRATEGY.
 */
export function checkDeclaration(strategy: string, shape: ParamShape): void {
  const source = `strategy ${strategy}`;
  const problems: InputProblem[] = [];
  for (const [key, declaration] of Object.entries(shape)) {
    // An env file's keys: an instance file could never set another, and the engine's own are every strategy's already.
    if (!ENV_KEY.test(key)) {
      problems.push({ source, field: key, rule: 'the declaration is wrong: a key is capitals, digits and _, starting with a capital, as an env file writes it' });
      continue;
    }
    if (key.startsWith('STACKER_')) {
      problems.push({ source, field: key, rule: "the declaration is wrong: STACKER_ keys are stacker's own settings, read from the environment before any instance file" });
      continue;
    }
    if (COMMON_KEYS.has(key)) {
      problems.push({ source, field: key, rule: `the declaration is wrong: ${key} is the engine's own key, which every instance file has already (stacker strategies lists them)` });
      continue;
    }
    if (declaration.mistake !== undefined) {
      problems.push({ source, field: key, rule: `the declaration is wrong: ${declaration.mistake}` });
      continue;
    }
    if (declaration.default === undefined) continue;
    const reader = new ParamReader({ [key]: declaration.default }, source);
    const value = declaration.read(reader, key);
    try {
      reader.done(value);
    } catch (error) {
      const rules = error instanceof ConfigError ? error.problems.map((p) => p.rule).join('; ') : String(error);
      problems.push({ source, field: key, rule: `the default (${JSON.stringify(declaration.default)}) breaks its own rule: ${rules}` });
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
}

export function parseDeclared<S extends ParamShape>(
  shape: S,
  env: Readonly<Record<string, string>>,
  source: string,
  check?: (params: ParamsOf<S>, problem: (key: keyof S & string, rule: string) => void, given: (key: keyof S & string) => boolean) => void,
): ParamsOf<S> {
  const reader = new ParamReader(env, source);
  const values: Record<string, unknown> = {};
  for (const [key, declaration] of Object.entries(shape)) values[key] = declaration.read(reader, key);
  const params = values as ParamsOf<S>;
  // Cross-key rules run even when a key read badly, so every problem is reported at once; a key
  // that read badly holds a placeholder, which is what `given` is for.
  if (check !== undefined) check(params, (key, rule) => reader.problem(key, rule), (key) => reader.has(key));
  return reader.done(params);
}
