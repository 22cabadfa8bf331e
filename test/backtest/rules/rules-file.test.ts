import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findMarket, parseRulesText, readRulesFile, rulesToJson } from '../../../src/backtest/rules/rules-file.ts';
import { InputError } from '../../../src/domain/errors.ts';
import { SOL as SOL_RULES } from './sol-market.ts';

const dir = mkdtempSync(join(tmpdir(), 'stacker-rules-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** One entry as `stacker markets --json` prints it. */
const SOL = rulesToJson(SOL_RULES);

function problemsOf(text: string, source = 'rules.json'): string[] {
  try {
    parseRulesText(text, source);
  } catch (error) {
    if (error instanceof InputError) return error.problems.map((p) => `${p.source}: ${p.field}: ${p.rule}`);
    throw error;
  }
  return [];
}

const withSol = (changes: Record<string, unknown>): string => JSON.stringify([{ ...SOL, ...changes }]);
const without = (field: string): string => JSON.stringify([Object.fromEntries(Object.entries(SOL).filter(([key]) => key !== field))]);

describe('a rules file in the shape `stacker markets --json` prints', () => {
  it('reads every field, money as decimals and no upper limit as null', () => {
    const [rules] = parseRulesText(JSON.stringify([SOL, { ...SOL, name: 'SOL_BTC', quote: 'BTC', maxQuoteTotal: '25.5', tradesEnabled: false }]), 'rules.json');
    expect(rules).toEqual(SOL_RULES);
    expect(parseRulesText(JSON.stringify([{ ...SOL, maxQuoteTotal: '25.5' }]), 'f')[0]?.maxQuoteTotal?.toString()).toBe('25.5');
  });

  it('writes back exactly what it read (the cache stores lists this way)', () => {
    const read = parseRulesText(JSON.stringify([SOL]), 'rules.json');
    expect(read.map(rulesToJson)).toEqual([SOL]);
  });

  it('takes a file without tradesEnabled and type as a tradable spot market', () => {
    const { tradesEnabled: _t, type: _y, ...bare } = SOL;
    expect(parseRulesText(JSON.stringify([bare]), 'f')[0]).toMatchObject({ tradesEnabled: true, type: 'spot' });
  });

  it('reads the markets cache of the data dir (the list under `markets`) as a rules file', () => {
    const cache = { fetchedAt: '2025-01-31T09:00:00.000Z', baseUrl: 'https://example.test', markets: [SOL] };
    expect(parseRulesText(JSON.stringify(cache), 'f').map((m) => m.name)).toEqual(['SOL_USDT']);
  });

  it("reads the exchange's own answer of /api/v4/public/markets, as recorded with curl", () => {
    const wire = [{ name: 'SOL_USDT', stock: 'SOL', money: 'USDT', stockPrec: '2', moneyPrec: '3', feePrec: '4', makerFee: '0.15', takerFee: '0.2', minAmount: '0.01', minTotal: '5', maxTotal: '0', tradesEnabled: true, type: 'spot' }];
    expect(parseRulesText(JSON.stringify(wire), 'f')).toEqual(parseRulesText(JSON.stringify([SOL]), 'f'));
  });
});

describe('a rules file that is wrong', () => {
  it('is not JSON', () => {
    expect(problemsOf('[{"name": "SOL_USDT",')).toEqual([expect.stringMatching(/^rules\.json: JSON: is not valid JSON \(.+\); give the output of `stacker markets --json`$/)]);
  });

  it('is not an array of markets', () => {
    expect(problemsOf('{"name": "SOL_USDT"}')).toEqual(['rules.json: top level: must be a JSON array of markets, the output of `stacker markets --json` (got an object)']);
    expect(problemsOf('42')).toEqual(['rules.json: top level: must be a JSON array of markets, the output of `stacker markets --json` (got 42)']);
  });

  it('has an entry that is not an object', () => {
    expect(problemsOf(JSON.stringify([SOL, 'BTC_USDT']))).toEqual(['rules.json: entry 2: must be an object with the fields of the output of `stacker markets --json` (got "BTC_USDT")']);
  });

  it('lacks a field, naming the entry, its market and the field', () => {
    expect(problemsOf(without('takerFeePct'))).toEqual(['rules.json: entry 1 (SOL_USDT), takerFeePct: is missing: it must be a percent from 0 to 100 as a decimal string, such as "0.1"']);
    expect(problemsOf(without('maxQuoteTotal'))).toEqual(['rules.json: entry 1 (SOL_USDT), maxQuoteTotal: is missing: it must be a decimal string above 0, or null for no upper limit']);
    expect(problemsOf(without('name'))).toEqual(['rules.json: entry 1, name: is missing: it must be a string']);
  });

  it("names a spot market other than BASE_QUOTE of its own base and quote: it would trade and report in the wrong assets", () => {
    expect(problemsOf(withSol({ base: 'ETH', quote: 'EUR' }))).toEqual(['rules.json: entry 1 (SOL_USDT), name: is SOL_USDT, but base ETH and quote EUR make ETH_EUR: a spot market is named BASE_QUOTE']);
    // A futures market's name is its own (BTC_PERP holds BTC against USDT).
    expect(problemsOf(withSol({ name: 'SOL_PERP', type: 'futures' }))).toEqual([]);
  });

  it('has a bad decimal: exponent, words, a sign, a JSON number, out of range', () => {
    expect(problemsOf(withSol({ minBaseAmount: '1e-3' }))).toEqual(['rules.json: entry 1 (SOL_USDT), minBaseAmount: must be a decimal string of zero or more, such as "0.001" (got "1e-3")']);
    expect(problemsOf(withSol({ minQuoteTotal: 'five' }))).toEqual(['rules.json: entry 1 (SOL_USDT), minQuoteTotal: must be a decimal string of zero or more, such as "0.001" (got "five")']);
    expect(problemsOf(withSol({ minQuoteTotal: '-5' }))).toEqual(['rules.json: entry 1 (SOL_USDT), minQuoteTotal: must be a decimal string of zero or more, such as "0.001" (got "-5")']);
    expect(problemsOf(withSol({ takerFeePct: 0.1 }))).toEqual([
      'rules.json: entry 1 (SOL_USDT), takerFeePct: must be a percent from 0 to 100 as a decimal string, such as "0.1", not a JSON number: a number has been through a binary float (got 0.1)',
    ]);
    expect(problemsOf(withSol({ makerFeePct: '150' }))).toEqual(['rules.json: entry 1 (SOL_USDT), makerFeePct: must be a percent from 0 to 100 as a decimal string, such as "0.1" (got "150")']);
    expect(problemsOf(withSol({ maxQuoteTotal: '0' }))).toEqual(['rules.json: entry 1 (SOL_USDT), maxQuoteTotal: must be a decimal string above 0, or null for no upper limit (got "0")']);
  });

  it('has a bad precision, name or flag', () => {
    expect(problemsOf(withSol({ basePrecision: '2' }))).toEqual(['rules.json: entry 1 (SOL_USDT), basePrecision: must be a whole number of decimals from 0 to 30 (got "2")']);
    expect(problemsOf(withSol({ feePrecision: 2.5 }))).toEqual(['rules.json: entry 1 (SOL_USDT), feePrecision: must be a whole number of decimals from 0 to 30 (got 2.5)']);
    expect(problemsOf(withSol({ quotePrecision: 31 }))).toEqual(['rules.json: entry 1 (SOL_USDT), quotePrecision: must be a whole number of decimals from 0 to 30 (got 31)']);
    expect(problemsOf(withSol({ base: '' }))).toEqual(['rules.json: entry 1 (SOL_USDT), base: must be a non-empty string (got "")']);
    expect(problemsOf(withSol({ tradesEnabled: 'yes' }))).toEqual(['rules.json: entry 1 (SOL_USDT), tradesEnabled: must be true or false (got "yes")']);
  });

  it('reports every problem at once, and at most 20 of a file of the wrong shape', () => {
    expect(problemsOf(withSol({ basePrecision: -1, takerFeePct: 'x' }))).toHaveLength(2);
    const wrongShape = JSON.stringify(Array.from({ length: 30 }, (_, i) => ({ market: `M${i}_USDT` })));
    const problems = problemsOf(wrongShape);
    expect(problems).toHaveLength(21);
    expect(problems.at(-1)).toMatch(/^rules\.json: more: \d+ more problem\(s\) not shown; is this the output of `stacker markets --json`\?$/);
  });

  it('lists a market twice', () => {
    expect(problemsOf(JSON.stringify([SOL, SOL]))).toEqual(['rules.json: entry 2 (SOL_USDT), name: SOL_USDT is also entry 1: one entry per market']);
  });

  it("is the exchange's answer with a bad field, named as the exchange names it", () => {
    const wire = [{ name: 'SOL_USDT', stock: 'SOL', money: 'USDT', stockPrec: 'two', moneyPrec: '3', feePrec: '6', makerFee: '0.1', takerFee: '0.1', minAmount: '0.01', minTotal: '5' }];
    expect(problemsOf(JSON.stringify(wire))).toEqual([expect.stringMatching(/^rules\.json: markets\[0\]\.stockPrec: .+ \(read as the exchange's own markets answer, since an entry has stockPrec\)$/)]);
  });

  it('is missing or a folder: named by the flag', () => {
    expect(() => readRulesFile(join(dir, 'nope.json'))).toThrow(`--rules: file not found: ${join(dir, 'nope.json')}`);
    expect(() => readRulesFile(dir)).toThrow('--rules: is a folder: give a JSON file, the output of `stacker markets --json`');
  });

  it('is read from disk like its text', () => {
    const path = join(dir, 'ok.json');
    writeFileSync(path, JSON.stringify([SOL]));
    expect(readRulesFile(path).map((m) => m.name)).toEqual(['SOL_USDT']);
  });
});

describe('finding the market in a list', () => {
  const markets = parseRulesText(JSON.stringify([SOL, { ...SOL, name: 'SOL_BTC', quote: 'BTC' }, { ...SOL, name: 'ETH_USDT', base: 'ETH' }]), 'rules.json');

  it('returns its rules', () => {
    expect(findMarket(markets, 'SOL_BTC', { field: '--market', what: 'this rules file' }).quote).toBe('BTC');
  });

  it('names the list and what it holds when the market is not there', () => {
    expect(() => findMarket(markets, 'SOL_EUR', { source: 'rules.json', field: '--market', what: 'this rules file' })).toThrow(
      'rules.json: --market: SOL_EUR is not in this rules file; SOL markets there: SOL_BTC, SOL_USDT',
    );
    expect(() => findMarket(markets, 'ADA_USDT', { field: '--market', what: 'this rules file' })).toThrow('--market: ADA_USDT is not in this rules file; it lists 3: ETH_USDT, SOL_BTC, SOL_USDT');
  });
});
