import { readFileSync } from 'node:fs';
import { parseMarkets } from '../../api/parse.ts';
import { WireShapeError } from '../../api/read.ts';
import { InputError, type InputProblem } from '../../domain/errors.ts';
import type { MarketRules } from '../../domain/market.ts';
import { type Decimal, DecimalFormatError, formatDecimal, parseDecimalStrict } from '../../domain/money.ts';

/**
 * Market rules in a file: the JSON array `stacker markets --json` prints (our field names, money
 * as decimal strings, no upper limit as null). The markets cache of the data dir, an object
 * whose `markets` holds that array, reads the same; so does the exchange's own answer of
 * GET /api/v4/public/markets (`stockPrec`, `minAmount`, …), read by the API client's parser.
 * Every problem of every entry is reported at once, naming the file, the entry and the field.
 */

/** Most problems listed for one file: a file of the wrong shape would list one per field of every entry. */
const MAX_PROBLEMS = 20;
/** Precisions the exchange can state (the API client reads the same range). */
const MAX_PRECISION = 30;
const HOW = 'the output of `stacker markets --json`';

/** Read and check a rules file; InputError (exit 2) naming the file for anything wrong with it. */
export function readRulesFile(path: string, flag = '--rules'): MarketRules[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    if (code === 'ENOENT') throw InputError.one(flag, `file not found: ${path}`);
    if (code === 'EISDIR') throw InputError.one(flag, `is a folder: give a JSON file, ${HOW}`);
    throw InputError.one(flag, `cannot be read (${code}): ${path}`);
  }
  return parseRulesText(text, path);
}

/** The rules in a file's text; `source` (the file) names every problem. */
export function parseRulesText(text: string, source: string): MarketRules[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InputError([{ source, field: 'JSON', rule: `is not valid JSON (${(error as Error).message}); give ${HOW}` }]);
  }
  return parseRulesList(value, source);
}

/** A parsed rules document: the array itself, or an object holding it under `markets` (the cache). */
export function parseRulesList(value: unknown, source: string): MarketRules[] {
  const list = isObject(value) && Array.isArray(value['markets']) ? value['markets'] : value;
  if (!Array.isArray(list)) {
    throw new InputError([{ source, field: 'top level', rule: `must be a JSON array of markets, ${HOW} (got ${kind(list)})` }]);
  }
  if (list.some((entry) => isObject(entry) && 'stockPrec' in entry)) return exchangeAnswer(list, source);

  const problems: InputProblem[] = [];
  const markets: MarketRules[] = [];
  const seen = new Map<string, number>();
  list.forEach((entry, index) => {
    const read = new EntryReader(entry, index, source, problems);
    const rules = read.rules();
    if (rules === null) return;
    const earlier = seen.get(rules.name);
    if (earlier !== undefined) read.problem('name', `${rules.name} is also entry ${earlier + 1}: one entry per market`);
    seen.set(rules.name, index);
    markets.push(rules);
  });
  if (problems.length > MAX_PROBLEMS) {
    const more = problems.length - MAX_PROBLEMS;
    throw new InputError([...problems.slice(0, MAX_PROBLEMS), { source, field: 'more', rule: `${more} more problem(s) not shown; is this ${HOW}?` }]);
  }
  if (problems.length > 0) throw new InputError(problems);
  return markets;
}

/** The rules of one market from a list, or an InputError naming the list and what it does hold. */
export function findMarket(markets: readonly MarketRules[], market: string, where: { readonly source?: string; readonly field: string; readonly what: string }): MarketRules {
  const found = markets.find((m) => m.name === market);
  if (found !== undefined) return found;
  const names = markets.map((m) => m.name).sort();
  const near = names.filter((name) => name.split('_')[0] === market.split('_')[0]);
  const hint = near.length > 0 ? `; ${market.split('_')[0]} markets there: ${near.slice(0, 10).join(', ')}` : names.length === 0 ? '; it lists none' : `; it lists ${names.length}: ${names.slice(0, 10).join(', ')}${names.length > 10 ? ', …' : ''}`;
  const problem = { field: where.field, rule: `${market} is not in ${where.what}${hint}` };
  throw new InputError([where.source === undefined ? problem : { source: where.source, ...problem }]);
}

/** The same list as `stacker markets --json` prints it: what the cache stores. */
export function rulesToJson(rules: MarketRules): Record<string, unknown> {
  return {
    name: rules.name,
    base: rules.base,
    quote: rules.quote,
    basePrecision: rules.basePrecision,
    quotePrecision: rules.quotePrecision,
    feePrecision: rules.feePrecision,
    makerFeePct: formatDecimal(rules.makerFeePct),
    takerFeePct: formatDecimal(rules.takerFeePct),
    minBaseAmount: formatDecimal(rules.minBaseAmount),
    minQuoteTotal: formatDecimal(rules.minQuoteTotal),
    maxQuoteTotal: rules.maxQuoteTotal === null ? null : formatDecimal(rules.maxQuoteTotal),
    tradesEnabled: rules.tradesEnabled,
    type: rules.type,
  };
}

function exchangeAnswer(list: readonly unknown[], source: string): MarketRules[] {
  try {
    return parseMarkets(list);
  } catch (error) {
    if (error instanceof WireShapeError || error instanceof DecimalFormatError) {
      throw new InputError([{ source, field: error.field, rule: `${error.message.slice(error.field.length + 2)} (read as the exchange's own markets answer, since an entry has stockPrec)` }]);
    }
    throw error;
  }
}

/** Reads the fields of one entry, recording a problem for each bad one instead of stopping at the first. */
class EntryReader {
  readonly #entry: Record<string, unknown>;
  readonly #label: string;
  readonly #source: string;
  readonly #problems: InputProblem[];
  readonly #isObject: boolean;

  constructor(entry: unknown, index: number, source: string, problems: InputProblem[]) {
    this.#isObject = isObject(entry);
    this.#entry = this.#isObject ? (entry as Record<string, unknown>) : {};
    const name = this.#entry['name'];
    this.#label = `entry ${index + 1}${typeof name === 'string' && name !== '' ? ` (${name})` : ''}`;
    this.#source = source;
    this.#problems = problems;
    if (!this.#isObject) problems.push({ source, field: this.#label, rule: `must be an object with the fields of ${HOW} (got ${kind(entry)})` });
  }

  problem(field: string, rule: string): void {
    this.#problems.push({ source: this.#source, field: `${this.#label}, ${field}`, rule });
  }

  rules(): MarketRules | null {
    if (!this.#isObject) return null;
    const before = this.#problems.length;
    const rules = {
      name: this.#text('name'),
      base: this.#text('base'),
      quote: this.#text('quote'),
      basePrecision: this.#precision('basePrecision'),
      quotePrecision: this.#precision('quotePrecision'),
      feePrecision: this.#precision('feePrecision'),
      makerFeePct: this.#decimal('makerFeePct', 'percent', 100),
      takerFeePct: this.#decimal('takerFeePct', 'percent', 100),
      minBaseAmount: this.#decimal('minBaseAmount', 'zero or more'),
      minQuoteTotal: this.#decimal('minQuoteTotal', 'zero or more'),
      maxQuoteTotal: this.#maxTotal(),
      tradesEnabled: this.#flag('tradesEnabled'),
      type: this.#optionalText('type') ?? 'spot',
    };
    // A spot market is named BASE_QUOTE; a name naming other assets than base and quote is a slip
    // that would trade, value and report in the wrong assets (futures names such as BTC_PERP differ by design).
    if (rules.type === 'spot' && rules.name !== undefined && rules.base !== undefined && rules.quote !== undefined && rules.name !== `${rules.base}_${rules.quote}`) {
      this.problem('name', `is ${rules.name}, but base ${rules.base} and quote ${rules.quote} make ${rules.base}_${rules.quote}: a spot market is named BASE_QUOTE`);
    }
    return this.#problems.length > before ? null : (rules as MarketRules);
  }

  #missing(field: string, what: string): undefined {
    this.problem(field, `is missing: it must be ${what}`);
    return undefined;
  }

  #text(field: string): string | undefined {
    const value = this.#entry[field];
    if (value === undefined) return this.#missing(field, 'a string');
    if (typeof value === 'string' && value.trim() !== '') return value;
    this.problem(field, `must be a non-empty string (got ${kind(value)})`);
    return undefined;
  }

  #optionalText(field: string): string | undefined {
    return this.#entry[field] === undefined ? undefined : this.#text(field);
  }

  #precision(field: string): number | undefined {
    const value = this.#entry[field];
    const what = `a whole number of decimals from 0 to ${MAX_PRECISION}`;
    if (value === undefined) return this.#missing(field, what);
    if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_PRECISION) return value;
    this.problem(field, `must be ${what} (got ${kind(value)})`);
    return undefined;
  }

  #decimal(field: string, range: 'percent' | 'zero or more', max?: number): Decimal | undefined {
    const value = this.#entry[field];
    const what = range === 'percent' ? `a percent from 0 to ${max} as a decimal string, such as "0.1"` : 'a decimal string of zero or more, such as "0.001"';
    if (value === undefined) return this.#missing(field, what);
    if (typeof value === 'number') {
      this.problem(field, `must be ${what}, not a JSON number: a number has been through a binary float (got ${kind(value)})`);
      return undefined;
    }
    const parsed = typeof value === 'string' ? plainDecimal(value) : null;
    if (parsed === null || parsed.isNegative() || (max !== undefined && parsed.gt(max))) {
      this.problem(field, `must be ${what} (got ${kind(value)})`);
      return undefined;
    }
    return parsed;
  }

  #maxTotal(): Decimal | null | undefined {
    const field = 'maxQuoteTotal';
    const value = this.#entry[field];
    const what = 'a decimal string above 0, or null for no upper limit';
    if (value === undefined) return this.#missing(field, what);
    if (value === null) return null;
    const parsed = typeof value === 'string' ? plainDecimal(value) : null;
    if (parsed !== null && parsed.gt(0)) return parsed;
    this.problem(field, `must be ${what} (got ${kind(value)})`);
    return undefined;
  }

  #flag(field: string): boolean {
    const value = this.#entry[field];
    if (value === undefined) return true;
    if (typeof value === 'boolean') return value;
    this.problem(field, `must be true or false (got ${kind(value)})`);
    return true;
  }
}

function plainDecimal(text: string): Decimal | null {
  try {
    return parseDecimalStrict(text, 'value');
  } catch (error) {
    if (error instanceof DecimalFormatError) return null;
    throw error;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A short, safe description of a JSON value for a message. */
function kind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}
