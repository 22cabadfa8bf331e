import { describe, expect, it } from 'vitest';
import { configProblems } from '../../strategies/sdk-testing.ts';
import { ConfigError, type InputProblem } from '../../src/domain/errors.ts';
import { Decimal, formatDecimal } from '../../src/domain/money.ts';
import { ParamReader, closestName, parseInstanceParams, unknownKeyProblems } from '../../src/engine/params.ts';
import { dca } from '../../strategies/dca.ts';
import { flexSweep } from '../../strategies/flex-sweep.ts';
import { defineStrategy, param } from '../../strategies/sdk.ts';

const SOURCE = 'config/strategies/dca-btc.env';
const COMMON = { STRATEGY: 'dca', SCHEDULE: '0 9 * * *' };

const problemsOf = configProblems;

describe('instance params', () => {
  it('reports every bad key at once, each with the file, the key and the rule', () => {
    const problems = problemsOf(() =>
      parseInstanceParams(dca, { ...COMMON, MARKET: 'btc-usdt', AMOUNT: '5e-4', STP: 'maybe', ALLOW_TRANSFER: 'yes' }, SOURCE),
    );
    expect(problems).toEqual([
      { source: SOURCE, field: 'MARKET', rule: expect.stringContaining('BASE_QUOTE') },
      { source: SOURCE, field: 'AMOUNT', rule: expect.stringContaining('plain decimal') },
      { source: SOURCE, field: 'STP', rule: 'must be no, cb (cancel both), cn (cancel new) or co (cancel old); the long forms cancel_both, cancel_new and cancel_old are read too (got "maybe")' },
      { source: SOURCE, field: 'ALLOW_TRANSFER', rule: 'must be true or false (got "yes")' },
    ]);
  });

  it('puts every problem in the message, one per line, as file: key: rule', () => {
    try {
      parseInstanceParams(dca, { ...COMMON, AMOUNT: '-1' }, SOURCE);
      expect.unreachable();
    } catch (error) {
      expect((error as Error).message).toBe(`${SOURCE}: MARKET: is required\n${SOURCE}: AMOUNT: must be greater than 0 (got -1)`);
    }
  });

  it('catches a typo as an unknown key and suggests the key it meant, next to the missing one', () => {
    const problems = problemsOf(() => parseInstanceParams(dca, { ...COMMON, MARKET: 'BTC_USDT', AMOUTN: '0.0005' }, SOURCE));
    expect(problems).toEqual([
      { source: SOURCE, field: 'AMOUTN', rule: 'is not a key of strategy dca or of the engine; did you mean AMOUNT?' },
      { source: SOURCE, field: 'AMOUNT', rule: 'is required unless AMOUNT_QUOTE is given: AMOUNT=0.0005 buys 0.0005 base per slot, AMOUNT_QUOTE=50 spends about 50 quote per slot' },
    ]);
  });

  it('catches a key written in lower case and a misspelt engine key', () => {
    const problems = unknownKeyProblems({ amount: '1', SCHEDUEL: '0 9 * * *', BUDGET_QUOTE_PER_WEK: '1' }, 'dca', dca.params, SOURCE);
    expect(problems.map((p) => p.rule.split('did you mean ')[1])).toEqual(['AMOUNT?', 'SCHEDULE?', 'BUDGET_QUOTE_PER_WEEK?']);
  });

  it('lists the known keys when a stray key resembles none, and never quotes its value', () => {
    const [problem] = unknownKeyProblems({ STACKER_API_SECRET: 'do-not-print-me' }, 'dca', dca.params, SOURCE);
    expect(problem?.rule).toContain('the keys are STRATEGY, SCHEDULE');
    expect(JSON.stringify(problem)).not.toContain('do-not-print-me');
  });

  it('accepts the engine keys without the strategy declaring them', () => {
    const env = {
      ...COMMON,
      TIMEZONE: 'UTC',
      ENABLED: 'true',
      CATCH_UP: 'last',
      CATCH_UP_WINDOW: '1h',
      BUDGET_QUOTE_PER_DAY: '10',
      BUDGET_QUOTE_PER_WEEK: '50',
      BUDGET_QUOTE_PER_MONTH: '200',
      MAX_ORDER_QUOTE: '40',
      MARKET: 'BTC_USDT',
      AMOUNT: '0.0005',
    };
    expect(formatDecimal(parseInstanceParams(dca, env, SOURCE).AMOUNT ?? new Decimal(0))).toBe('0.0005');
  });

  it('treats an empty value as not set', () => {
    const params = parseInstanceParams(dca, { ...COMMON, MARKET: 'BTC_USDT', AMOUNT: '1', CLIENT_ORDER_PREFIX: '', STP: '' }, SOURCE);
    expect(params.CLIENT_ORDER_PREFIX).toBeNull();
    expect(params.STP).toBe('no');
  });

  it('suggests capitals for a market written in lower case', () => {
    const problems = problemsOf(() => parseInstanceParams(dca, { ...COMMON, MARKET: 'btc_usdt', AMOUNT: '1' }, SOURCE));
    expect(problems).toEqual([{ source: SOURCE, field: 'MARKET', rule: expect.stringContaining('write it in capitals: BTC_USDT') }]);
  });

  it('takes a CLIENT_ORDER_PREFIX of 24 characters and refuses 25, leaving room for the engine suffix', () => {
    const env = { ...COMMON, MARKET: 'BTC_USDT', AMOUNT: '1' };
    expect(parseInstanceParams(dca, { ...env, CLIENT_ORDER_PREFIX: 'a'.repeat(24) }, SOURCE).CLIENT_ORDER_PREFIX).toBe('a'.repeat(24));
    for (const bad of ['a'.repeat(25), 'dca btc', 'dca/btc']) {
      expect(problemsOf(() => parseInstanceParams(dca, { ...env, CLIENT_ORDER_PREFIX: bad }, SOURCE))).toEqual([
        { source: SOURCE, field: 'CLIENT_ORDER_PREFIX', rule: expect.stringContaining('1 to 24 letters') },
      ]);
    }
  });

  it('bounds TRANSFER_BUFFER_PCT to 0..50', () => {
    const env = { ...COMMON, MARKET: 'BTC_USDT', AMOUNT: '1', ALLOW_TRANSFER: 'true' };
    expect(problemsOf(() => parseInstanceParams(dca, { ...env, TRANSFER_BUFFER_PCT: '51' }, SOURCE))).toEqual([
      { source: SOURCE, field: 'TRANSFER_BUFFER_PCT', rule: 'must be at most 50 (got 51)' },
    ]);
    expect(problemsOf(() => parseInstanceParams(dca, { ...env, TRANSFER_BUFFER_PCT: '-1' }, SOURCE))).toEqual([
      { source: SOURCE, field: 'TRANSFER_BUFFER_PCT', rule: 'must be 0 or more (got -1)' },
    ]);
  });

  it('flex-sweep: refuses PLAN with TICKER, a bad UUID, a missing MODE, and RESERVE without MODE=reserve', () => {
    const source = 'config/strategies/flex-sweep-usdt.env';
    const base = { STRATEGY: 'flex-sweep', SCHEDULE: '0 8 * * *' };
    expect(problemsOf(() => parseInstanceParams(flexSweep, { ...base, PLAN: 'not-a-uuid', TICKER: 'usdt', RESERVE: '1' }, source))).toEqual([
      { source, field: 'PLAN', rule: expect.stringContaining('must be a UUID') },
      { source, field: 'TICKER', rule: expect.stringContaining('write it in capitals: USDT') },
      { source, field: 'MODE', rule: 'is required' },
      { source, field: 'PLAN', rule: 'give PLAN or TICKER, not both' },
    ]);
    expect(problemsOf(() => parseInstanceParams(flexSweep, { ...base, TICKER: 'USDT', MODE: 'all', RESERVE: '1' }, source))).toEqual([
      { source, field: 'RESERVE', rule: expect.stringContaining('only used with MODE=reserve') },
    ]);
    expect(problemsOf(() => parseInstanceParams(flexSweep, { ...base, TICKER: 'USDT', MODE: 'reserve' }, source))).toEqual([
      { source, field: 'RESERVE', rule: 'is required with MODE=reserve' },
    ]);
    expect(problemsOf(() => parseInstanceParams(flexSweep, { ...base, MODE: 'all' }, source))).toEqual([
      { source, field: 'PLAN', rule: expect.stringContaining('is required unless TICKER is given') },
    ]);
  });
});

describe('ParamReader', () => {
  const read = <T>(env: Record<string, string>, use: (p: ParamReader) => T): { value: T; problems: readonly InputProblem[] } => {
    const p = new ParamReader(env, 'f.env');
    const value = use(p);
    return { value, problems: p.problems };
  };

  it('reads whole numbers within bounds and refuses decimals, blanks and out-of-range values', () => {
    expect(read({ N: '100' }, (p) => p.integer('N', { min: 1, max: 100 })).value).toBe(100);
    expect(read({}, (p) => p.integer('N', { min: 1, max: 100, default: 50 })).value).toBe(50);
    for (const bad of ['0', '101', '1.5', ' 7', '07', '1e2']) {
      expect(read({ N: bad }, (p) => p.integer('N', { min: 1, max: 100 })).problems).toEqual([
        { source: 'f.env', field: 'N', rule: `must be a whole number from 1 to 100 (got ${JSON.stringify(bad)})` },
      ]);
    }
  });

  it('reads booleans as exactly true or false', () => {
    expect(read({ B: 'false' }, (p) => p.boolean('B', true)).value).toBe(false);
    expect(read({ B: 'TRUE' }, (p) => p.boolean('B', false)).problems).toHaveLength(1);
  });

  it('reads a ticker list with blanks around commas and refuses repeats', () => {
    expect(read({ T: 'USDT, BTC' }, (p) => p.optionalTickerList('T')).value).toEqual(['USDT', 'BTC']);
    expect(read({ T: 'USDT,USDT' }, (p) => p.optionalTickerList('T')).problems[0]?.rule).toBe('names a ticker twice');
    expect(read({ T: 'USDT,,BTC' }, (p) => p.optionalTickerList('T')).problems).toHaveLength(1);
  });

  it('shortens a long bad value in the message', () => {
    const { problems } = read({ AMOUNT: 'x'.repeat(200) }, (p) => p.decimal('AMOUNT'));
    expect(problems[0]?.rule.length).toBeLessThan(160);
  });

  it('done() returns the value when every read was good and throws one ConfigError otherwise', () => {
    const good = new ParamReader({ A: '1' }, 'f.env');
    expect(good.done({ a: good.decimal('A') }).a.toString()).toBe('1');
    const bad = new ParamReader({}, 'f.env');
    bad.decimal('A');
    bad.market('M');
    expect(() => bad.done({})).toThrow(ConfigError);
  });

  it('suggests the nearest name within two edits, or nothing', () => {
    expect(closestName('BTC_USDX', ['BTC_USDT', 'ETH_USDT'])).toBe('BTC_USDT');
    expect(closestName('DOGE_EUR', ['BTC_USDT', 'ETH_USDT'])).toBeUndefined();
  });
});

describe('a market param, checked at start for every strategy', () => {
  const buyer = defineStrategy({
    name: 'own-buyer',
    describe: 'An author\'s strategy with two markets and no start-time check of its own.',
    params: {
      MARKET: param.market({ description: 'Where to buy.', example: 'BTC_USDT' }),
      HEDGE: param.market({ description: 'Where else.', example: 'ETH_USDT', optional: true }),
    },
    async decide() {
      return [];
    },
  });
  const context = (listed: readonly string[]) => ({
    market: (name: string) => (listed.includes(name) ? ({ name } as never) : undefined),
    marketNames: () => listed,
    unlisted: (name: string) => `the exchange does not list ${name}`,
  });

  it('is refused when the exchange does not list it, naming the key, though the author wrote no check', () => {
    const params = buyer.parseParams({ MARKET: 'ETH_USDT', HEDGE: 'DOGE_USDT' }, 'own.env');
    expect(buyer.checkParams?.(params, context(['BTC_USDT', 'ETH_USDT']), 'own.env')).toEqual([{ source: 'own.env', field: 'HEDGE', rule: 'the exchange does not list DOGE_USDT' }]);
    expect(buyer.checkParams?.(buyer.parseParams({ MARKET: 'BTC_USDT' }, 'own.env'), context(['BTC_USDT']), 'own.env')).toEqual([]);
  });

  it("leaves the author's own start-time check for when every market is listed (it may read their rules without looking)", () => {
    const seen: string[] = [];
    const checked = defineStrategy({
      name: 'checked-buyer',
      describe: 'Checks its own market.',
      params: { MARKET: param.market({ description: 'Where to buy.', example: 'BTC_USDT' }) },
      checkParams(params) {
        seen.push(params.MARKET);
        return [];
      },
      async decide() {
        return [];
      },
    });
    expect(checked.checkParams?.(checked.parseParams({ MARKET: 'SOL_USDT' }, 'c.env'), context(['BTC_USDT']), 'c.env')).toHaveLength(1);
    expect(checked.checkParams?.(checked.parseParams({ MARKET: 'BTC_USDT' }, 'c.env'), context(['BTC_USDT']), 'c.env')).toEqual([]);
    expect(seen).toEqual(['BTC_USDT']);
  });
});
