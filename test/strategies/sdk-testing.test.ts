import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/domain/errors.ts';
import { DEFAULT_READS, checkDecision } from '../../src/engine/contract.ts';
import { Decimal, type SnapshotPart, defineStrategy, intent, param } from '../../strategies/sdk.ts';
import { dca } from '../../strategies/dca.ts';
import { decidePurely, decideWith, judgeWith, marketRules } from '../../strategies/sdk-testing.ts';

// The SDK's test helpers judge a strategy's answer by the engine's own rule (checkDecision): an
// answer a live slot would reject, and disable the instance for, fails the author's test too
// instead of passing as an ordinary guard refusal.

/** A strategy answering whatever `answer` gives for the slot. */
function answering(answer: () => unknown) {
  return defineStrategy({
    name: 'answering',
    describe: 'Answers what the test gives.',
    params: { MARKET: param.market({ description: 'Where to buy.', example: 'BTC_USDT' }) },
    reads: () => ['markets', 'prices', 'balances'],
    async decide() {
      return answer() as never;
    },
  });
}

const ENV = { MARKET: 'BTC_USDT' };

describe('the SDK test helpers judge an answer as the engine does', () => {
  it.each([
    ['not an array', () => ({ kind: 'note' }), /decide must return an array of intents \(got object\)/],
    ['undefined', () => undefined, /decide must return an array of intents \(got undefined\)/],
    ['a null intent', () => [null], /intent #0 must be an object \(got null\)/],
    ['a negative amount', () => [intent.buy('BTC_USDT', new Decimal('-1'))], /intent #0 \(buy-stock-market\): amount must be greater than 0/],
    ['a NaN amount', () => [intent.buy('BTC_USDT', new Decimal(Number.NaN))], /intent #0 \(buy-stock-market\): amount must be a finite number \(got NaN\)/],
    ['a number for an amount', () => [{ kind: 'buy-stock-market', market: 'BTC_USDT', amount: 0.001 }], /intent #0 \(buy-stock-market\): amount must be a Decimal/],
    ['an object that says it is a Decimal', () => [{ kind: 'buy-stock-market', market: 'BTC_USDT', amount: { toStringTag: '[object Decimal]', s: 1, e: -2, d: [1000] } }], /intent #0 \(buy-stock-market\): amount must be a Decimal/],
    ['a good buy beside a bad one', () => [intent.buy('BTC_USDT', new Decimal('0.001')), intent.buy('BTC_USDT', new Decimal('0'))], /intent #1 \(buy-stock-market\): amount must be greater than 0/],
  ])('rejects %s in decideWith and judgeWith, naming the intent', async (_name, answer, message) => {
    await expect(decideWith(answering(answer), ENV)).rejects.toThrow(message);
    await expect(judgeWith(answering(answer), ENV)).rejects.toThrow(message);
    expect(() => checkDecision(answer(), DEFAULT_READS)).toThrow(TypeError);
  });

  it('passes a valid answer through, judged by the guards', async () => {
    const funded = { markets: [marketRules()], prices: { BTC_USDT: '65000' }, trade: { USDT: { available: '1000' } } };
    const buy = answering(() => [intent.buy('BTC_USDT', new Decimal('0.001'))]);
    expect((await judgeWith(buy, ENV, funded)).map((j) => [j.intent.kind, j.refused])).toEqual([['buy-stock-market', null]]);
    expect((await judgeWith(buy, ENV, { ...funded, trade: { USDT: { available: '1' } } })).map((j) => j.refused)).toEqual(['insufficient-funds']);
  });
});

describe('a strategy that buys without naming what the guards read', () => {
  const buyingOn = (reads: readonly SnapshotPart[]) =>
    defineStrategy({
      name: 'forgetful',
      describe: 'Buys without reading markets or prices.',
      params: { MARKET: param.market({ description: 'Where to buy.', example: 'BTC_USDT' }) },
      reads: () => reads,
      async decide(_view, params) {
        return [intent.buy(params.MARKET, new Decimal('0.001'))];
      },
    });

  it("is a bug in the strategy, said as such: not a market the exchange does not list, or one without a price", async () => {
    const says = (missing: string) =>
      `intent #0 (buy-stock-market): a buy needs 'markets' and 'prices' in the strategy's reads(), which names no ${missing}: the engine checks every buy against its market's rules and price, read for a slot only when named`;
    await expect(decideWith(buyingOn(['balances']), ENV)).rejects.toThrow(says("'markets' or 'prices'"));
    await expect(judgeWith(buyingOn(['balances', 'markets']), ENV)).rejects.toThrow(says("'prices'"));
    expect(await decideWith(buyingOn(['markets', 'prices']), ENV)).toHaveLength(1);
  });
});

describe("a strategy's amounts made by a Decimal constructor of its own (Decimal.clone)", () => {
  // One significant digit, rounding down: 0.0046 × 4308 would be 10 in it, under a limit of 15.
  const Rough = Decimal.clone({ precision: 1, rounding: Decimal.ROUND_DOWN });
  const funded = { markets: [marketRules()], prices: { BTC_USDT: '4308' }, trade: { USDT: { available: '1000' } } };

  it('are judged in the engine\'s own Decimal: an order worth 19.8168 is above a MAX_ORDER_QUOTE of 15', async () => {
    const rough = answering(() => [intent.buy('BTC_USDT', new Rough('0.0046'))]);
    expect((await judgeWith(rough, ENV, { ...funded, maxOrderQuote: '15' })).map((j) => j.refused)).toEqual(['above-max-order']);
    expect((await judgeWith(rough, ENV, { ...funded, remainingQuote: '19.81' })).map((j) => j.refused)).toEqual(['over-budget']);
    expect((await judgeWith(rough, ENV, { ...funded, maxOrderQuote: '20' })).map((j) => j.refused)).toEqual([null]);
  });

  it("are judged by their digits alone: a program Decimal given a `mul` of its own, or a Proxy lending it the clone's, is above the limit too", async () => {
    const lying = new Decimal('0.0046');
    Object.defineProperty(lying, 'mul', { value: (other: Decimal) => new Rough('0.0046').mul(other) });
    Object.defineProperty(lying, 'times', { value: (other: Decimal) => new Rough('0.0046').times(other) });
    const proxied = new Proxy(new Decimal('0.0046'), {
      get: (target, property, receiver) => (property === 'mul' || property === 'times' ? (other: Decimal) => new Rough('0.0046').mul(other) : Reflect.get(target, property, receiver)),
    });
    // An object that only says it is a Decimal: its digit words made a value whose text said 0.0046 and whose products were a hundredth of it.
    const lookalike = { toStringTag: '[object Decimal]', s: 1, e: -3, d: [46], toString: () => '0.0046' } as unknown as Decimal;
    for (const amount of [lying, proxied, lookalike]) {
      const buy = answering(() => [intent.buy('BTC_USDT', amount)]);
      expect((await judgeWith(buy, ENV, { ...funded, maxOrderQuote: '15' })).map((j) => j.refused)).toEqual(['above-max-order']);
    }
  });

  it('are read once: an intent whose amount is a getter is judged and sent with the one value read', () => {
    let reads = 0;
    const shifty = { kind: 'buy-stock-market', market: 'BTC_USDT', get amount() {
      reads += 1;
      return new Decimal(reads === 1 ? '0.001' : '5');
    } };
    const [buy] = checkDecision([shifty], DEFAULT_READS);
    expect(buy?.kind === 'buy-stock-market' && [buy.amount.toString(), buy.amount.toString()]).toEqual(['0.001', '0.001']);
    expect(reads).toBe(1);
  });

  it('keep their digits, in the program\'s Decimal', () => {
    const [buy] = checkDecision([intent.buy('BTC_USDT', new Rough('0.00461234'))], DEFAULT_READS);
    expect(buy?.kind === 'buy-stock-market' && buy.amount.constructor).toBe(Decimal);
    expect(buy?.kind === 'buy-stock-market' && buy.amount.toString()).toBe('0.00461234');
  });
});

describe('the SDK test helpers build the view a strategy declares', () => {
  // Candles of the declared window, as the engine hands them: none given is none kept, not a fault.
  const windowed = defineStrategy({
    name: 'windowed',
    describe: 'Notes how many candles it got.',
    params: { MARKET: param.market({ description: 'Where to look.', example: 'BTC_USDT' }) },
    reads: () => ['candles'],
    candleWindows: (params) => [{ market: params.MARKET, lookbackSec: 86_400 }],
    async decide(view, params) {
      return [intent.note(`${view.candles(params.MARKET).length} candles`)];
    },
  });

  it('hands a strategy that declared a candle window an empty list when the test gives no candles, as the engine would', async () => {
    expect(await decideWith(windowed, ENV)).toEqual([expect.objectContaining({ kind: 'note', message: '0 candles' })]);
    expect(await decideWith(windowed, ENV, { candles: { BTC_USDT: [{ timeSec: 1_714_550_400, close: '65000' }] } })).toEqual([expect.objectContaining({ message: '1 candles' })]);
    // A market it declared no window for still throws, naming it.
    await expect(decideWith(windowed, { MARKET: 'ETH_USDT' }, { candleMarkets: ['BTC_USDT'] })).rejects.toThrow(/no candles of ETH_USDT: the strategy declared no candleWindows entry for it/);
  });
});

describe('a strategy definition', () => {
  const withParam = (params: Parameters<typeof defineStrategy>[0]['params']) => () =>
    defineStrategy({ name: 'defaults', describe: 'Defaults.', params, reads: () => [], decide: async () => [] });

  it.each([
    ['a decimal above its max', { D: param.decimal({ description: 'd', max: '10', default: '50' }) }, 'D: the default ("50") breaks its own rule: must be at most 10 (got 50)'],
    ['an integer outside its bounds', { N: param.integer({ description: 'n', min: 1, max: 10, default: 50 }) }, 'N: the default ("50") breaks its own rule: must be a whole number from 1 to 10'],
    ['a duration outside its bounds', { W: param.duration({ description: 'w', min: '1h', max: '7d', default: '30d' }) }, 'W: the default ("30d") breaks its own rule'],
    ['integer bounds no value passes', { N: param.integer({ description: 'n', min: 10, max: 1 }) }, 'N: the declaration is wrong: its min 10 is above its max 1: no value could pass'],
    ['integer bounds that are not whole', { N: param.integer({ description: 'n', min: 0.5, max: 3 }) }, 'N: the declaration is wrong: its min and max must be whole numbers (got 0.5 and 3)'],
    ['a decimal bound that is no number', { Z: param.decimal({ description: 'z', min: 'abc', optional: true }) }, 'Z: the declaration is wrong: its min must be a plain decimal such as "0.5" (got "abc")'],
    ['decimal bounds no value passes', { D: param.decimal({ description: 'd', min: '5', max: '1' }) }, 'D: the declaration is wrong: its min 5 is above its max 1: no value could pass'],
    ['a positive decimal at most 0', { D: param.decimal({ description: 'd', positive: true, max: '0' }) }, 'D: the declaration is wrong: it must be > 0 and at most 0: no value could pass'],
    ['duration bounds no value passes', { W: param.duration({ description: 'w', min: '7d', max: '1h' }) }, 'W: the declaration is wrong: its min 7d is above its max 1h: no value could pass'],
    ['duration bounds that do not read', { W: param.duration({ description: 'w', min: '1 hour', max: '7d' }) }, 'W: the declaration is wrong: its min and max must be durations such as 30d or 12h (got "1 hour" and "7d")'],
    ['a choice of none', { M: param.oneOf([], { description: 'm' }) }, 'M: the declaration is wrong: it offers no choice: no value could pass'],
    ['an empty choice', { M: param.oneOf(['', 'b'], { description: 'm' }) }, 'M: the declaration is wrong: each choice must be a word an env file can write (no blanks, not empty)'],
    ['a choice twice', { M: param.oneOf(['a', 'a'], { description: 'm' }) }, 'M: the declaration is wrong: it offers a choice twice'],
    ["one of stacker's settings", { STACKER_MODE: param.decimal({ description: 's' }) }, "STACKER_MODE: the declaration is wrong: STACKER_ keys are stacker's own settings, read from the environment before any instance file"],
    ['a key an env file cannot write', { amount: param.decimal({ description: 'a' }) }, 'amount: the declaration is wrong: a key is capitals, digits and _, starting with a capital, as an env file writes it'],
    ["one of the engine's own keys", { SCHEDULE: param.decimal({ description: 's' }) }, "SCHEDULE: the declaration is wrong: SCHEDULE is the engine's own key, which every instance file has already (stacker strategies lists them)"],
  ])('refuses %s when it is defined, naming the strategy and the key (exit 2): an author mistake is not blamed on the env file', (_name, params, message) => {
    expect(withParam(params)).toThrow(ConfigError);
    expect(withParam(params)).toThrow(`strategy defaults: ${message}`);
  });

  it('names every mistake of the declaration at once', () => {
    const both = withParam({ A: param.integer({ description: 'a', min: 3, max: 2 }), B: param.decimal({ description: 'b', max: '1', default: '2' }) });
    expect(both).toThrow(/^strategy defaults: A: .*\nstrategy defaults: B: /);
  });

  it('takes defaults within their rules', () => {
    expect(withParam({ D: param.decimal({ description: 'd', max: '10', default: '5' }), N: param.integer({ description: 'n', min: 1, max: 10, default: 3 }) })).not.toThrow();
  });
});

describe('a decimal param as `stacker strategies` shows it', () => {
  const ruleOf = (options: Parameters<typeof param.decimal>[0]) =>
    defineStrategy({ name: 'rules', describe: 'Rules.', params: { D: param.decimal(options) }, reads: () => [], decide: async () => [] }).params.find((p) => p.key === 'D')?.rule;

  it('names every bound it checks: a max alone, a min alone, the decimals allowed', () => {
    expect(ruleOf({ description: 'd', max: '10' })).toBe('decimal at most 10');
    expect(ruleOf({ description: 'd', min: '2' })).toBe('decimal at least 2');
    expect(ruleOf({ description: 'd', positive: true, maxDecimals: 2 })).toBe('decimal > 0, at most 2 decimals');
    expect(ruleOf({ description: 'd', min: '1', max: '10' })).toBe('decimal from 1 to 10');
    expect(ruleOf({ description: 'd', nonNegative: true, max: '50' })).toBe('decimal from 0 to 50');
    expect(ruleOf({ description: 'd' })).toBe('decimal');
  });
});

describe('decidePurely: how an author tests that a strategy is pure', () => {
  const rules = { markets: [marketRules()], prices: { BTC_USDT: '65000' }, trade: { USDT: { available: '1000' } } };
  const buying = (decide: () => Decimal) =>
    defineStrategy({
      name: 'impure',
      describe: 'Sizes its buy from something besides the view.',
      params: { MARKET: param.market({ description: 'Where to buy.', example: 'BTC_USDT' }) },
      reads: () => ['markets', 'prices', 'balances'],
      decide: async (_view, params) => [intent.buy(params.MARKET, decide())],
    });

  it('gives the answer of a strategy that reads only its view and params', async () => {
    const intents = await decidePurely(dca, { MARKET: 'BTC_USDT', AMOUNT: '0.001' }, rules);
    expect(intents.map((i) => i.kind)).toEqual(['buy-stock-market']);
  });

  it.each([
    ['Date.now()', () => new Decimal(new Date(Date.now()).getUTCDay() === 5 ? '0.003' : '0.001'), 'decide read the clock (Date.now())'],
    ['new Date()', () => new Decimal(new Date().getUTCDay() === 5 ? '0.003' : '0.001'), 'decide read the clock (new Date())'],
    ['Math.random()', () => new Decimal(Math.random() < 0.5 ? '0.001' : '0.002'), 'decide read Math.random()'],
  ])('refuses a strategy that reads %s, saying so', async (_what, size, says) => {
    await expect(decidePurely(buying(size), ENV, rules)).rejects.toThrow(says);
    // The clock is back once it has answered.
    expect(Date.now()).toBeGreaterThan(0);
    expect(new Date().getTime()).toBeGreaterThan(0);
  });

  it('refuses a strategy that keeps a count in its module: called again for the same view, it answers otherwise', async () => {
    let slotsSeen = 0;
    const counting = buying(() => {
      slotsSeen += 1;
      return new Decimal(slotsSeen % 3 === 0 ? '0.003' : '0.001');
    });
    await expect(decidePurely(counting, ENV, rules)).rejects.toThrow(/decide of impure answered the same view differently when called again/);
  });
});
