import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'dotenv';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Decimal } from '../../src/domain/money.ts';
import {
  COMMON_KEYS,
  DEFAULT_READS,
  type Intent,
  REFUSAL_REASONS,
  REFUSAL_REASON_PATTERN,
  STRATEGY_API_VERSION,
  type Strategy,
  intentProblems,
  readsOf,
} from '../../src/engine/contract.ts';
import { parseInstanceParams } from '../../src/engine/params.ts';
import { STRATEGIES, findStrategy, strategyNames } from '../../strategies/index.ts';
import { btcUsdt, investment, slotView } from './view.ts';
import { asDeclared } from '../../strategies/sdk-testing.ts';

const CONFIG_DIR = join(import.meta.dirname, '../../config/strategies');
const EXAMPLES = readdirSync(CONFIG_DIR).filter((f) => f.endsWith('.env'));

function example(file: string): { env: Record<string, string>; text: string; strategy: Strategy<unknown> } {
  const text = readFileSync(join(CONFIG_DIR, file), 'utf8');
  const env = parse(text);
  const strategy = findStrategy(env.STRATEGY ?? '');
  if (strategy === undefined) throw new Error(`${file}: STRATEGY ${env.STRATEGY} is not registered`);
  return { env, text, strategy };
}

/** A demo-like account where every shipped example has something to do, read as the strategy declares (its reads, its candle windows). */
function richView(strategy: Strategy<unknown>, params: unknown) {
  return slotView(
    asDeclared(strategy, params, {
      markets: [btcUsdt()],
      prices: { BTC_USDT: '65000' },
      main: { USDT: '100' },
      trade: { USDT: { available: '10' }, BTC: { available: '0.01' } },
      flex: [investment('0b7b4a47-9a4f-4c4e-8d0e-2f1b6a7c9d11', 'USDT', '500')],
      codes: [{ amount: new Decimal(5), code: 'WBSECRETSECRETSECRET1234', dateSec: 1_714_550_400, status: 'Activated', ticker: 'USDT', externalId: 'e-1' }],
      remainingQuote: '250',
      maxOrderQuote: '50',
    }),
  );
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the strategy registry', () => {
  it('ships dca, flex-sweep, balance-report, top-up and value-avg, each under its own name and on this contract version', () => {
    expect(strategyNames()).toEqual(['dca', 'flex-sweep', 'balance-report', 'top-up', 'value-avg']);
    for (const [name, strategy] of STRATEGIES) {
      expect(strategy.name).toBe(name);
      expect(name).toMatch(/^[a-z][a-z0-9]*(-[a-z0-9]+)*$/);
      expect(strategy.version).toBe(STRATEGY_API_VERSION);
      expect(strategy.describe.length).toBeGreaterThan(10);
    }
    expect(findStrategy('nope')).toBeUndefined();
  });

  it.each([...STRATEGIES.keys()])('%s declares exactly the keys its parseParams reads, none of them an engine key', (name) => {
    const strategy = STRATEGIES.get(name) as Strategy<unknown>;
    const touched = new Set<string>();
    const spy = new Proxy({} as Record<string, string>, {
      get: (_target, key) => (typeof key === 'string' && touched.add(key), undefined),
      has: (_target, key) => (typeof key === 'string' && touched.add(key), false),
      getOwnPropertyDescriptor: (_target, key) => (typeof key === 'string' && touched.add(key), undefined),
    });
    try {
      strategy.parseParams(spy, 'spy.env');
    } catch {
      // Required keys are missing from the empty env; only the keys it looked at matter here.
    }
    const declared = strategy.params.map((spec) => spec.key);
    expect([...touched].filter((key) => !declared.includes(key))).toEqual([]);
    expect(declared.filter((key) => !touched.has(key))).toEqual([]);
    expect(declared.filter((key) => COMMON_KEYS.has(key))).toEqual([]);
    for (const spec of strategy.params) {
      expect(spec.key).toMatch(/^[A-Z][A-Z0-9_]*$/);
      expect(spec.description).not.toBe('');
      expect(spec.rule).not.toBe('');
    }
  });
});

describe('the shipped instance examples in config/strategies', () => {
  it('cover every shipped strategy', () => {
    expect(new Set(EXAMPLES.map((file) => example(file).strategy.name))).toEqual(new Set(strategyNames()));
  });

  it.each(EXAMPLES)('%s parses cleanly and documents every key of its strategy', (file) => {
    const { env, text, strategy } = example(file);
    expect(() => parseInstanceParams(strategy, env, file)).not.toThrow();
    expect(env.SCHEDULE).toMatch(/^\S+( \S+){4}$/);
    for (const spec of strategy.params) {
      expect(text, `${file} documents ${spec.key}`).toMatch(new RegExp(`^#? ?${spec.key}=`, 'm'));
      expect(text, `${file} explains ${spec.key}`).toMatch(new RegExp(`^# ${spec.key} \\(`, 'm'));
    }
  });

  it('.env.example ships no credentials', () => {
    const env = parse(readFileSync(join(import.meta.dirname, '../../.env.example'), 'utf8'));
    expect(env.STACKER_API_KEY).toBe('');
    expect(env.STACKER_API_SECRET).toBe('');
    expect(env.STACKER_MODE).toBe('dry-run');
  });
});

describe('decide', () => {
  it.each(EXAMPLES)('%s: never reads the clock or randomness, and gives the same intents for the same view', async (file) => {
    const { env, strategy } = example(file);
    const params = parseInstanceParams(strategy, env, file);
    const view = richView(strategy, params);
    const first = await strategy.decide(view, params);
    const now = vi.spyOn(Date, 'now').mockImplementation(() => {
      throw new Error('a strategy read Date.now()');
    });
    const random = vi.spyOn(Math, 'random').mockImplementation(() => {
      throw new Error('a strategy read Math.random()');
    });
    // `new Date()` reads the clock without Date.now: a Date made with no argument is refused too.
    const RealDate = Date;
    let readClock = false;
    const NoClockDate = new Proxy(RealDate, {
      construct(target, args: unknown[]) {
        if (args.length === 0) readClock = true;
        return Reflect.construct(target, args);
      },
    });
    vi.stubGlobal('Date', NoClockDate);
    let second: Awaited<ReturnType<typeof strategy.decide>>;
    try {
      second = await strategy.decide(view, params);
    } finally {
      vi.unstubAllGlobals();
    }
    expect(readClock, 'a strategy made new Date() (the clock)').toBe(false);
    expect(now).not.toHaveBeenCalled();
    expect(random).not.toHaveBeenCalled();
    expect(JSON.stringify(second)).toBe(JSON.stringify(first));
    expect(second.length).toBeGreaterThan(0);
    for (const intent of second) expect(intentProblems(intent)).toEqual([]);
  });

  it('dca-btc.env on the demo account moves the shortfall and buys', async () => {
    const { env, strategy } = example('dca-btc.env');
    const params = parseInstanceParams(strategy, env, 'dca-btc.env');
    const intents = await strategy.decide(richView(strategy, params), params);
    // 0.0005 × 65000 = 32.5, fee 0.0325, × 1.01 buffer = 32.857825, − 10 on spot = 22.857825 → 22.86
    expect(JSON.parse(JSON.stringify(intents))).toEqual([
      { kind: 'transfer', ticker: 'USDT', amount: '22.86', from: 'main', to: 'spot' },
      { kind: 'buy-stock-market', market: 'BTC_USDT', amount: '0.0005', stp: 'cn', tag: 'dca-btc' },
    ]);
  });
});

describe('intentProblems', () => {
  const buy = { kind: 'buy-stock-market', market: 'BTC_USDT', amount: new Decimal('0.0005') } as const;

  it('accepts well-formed intents of every kind', () => {
    const good: Intent[] = [
      buy,
      { kind: 'flex-withdraw', plan: 'p', amount: new Decimal(1) },
      { kind: 'transfer', ticker: 'USDT', amount: new Decimal(1), from: 'main', to: 'spot' },
      { kind: 'note', level: 'warn', message: 'm', data: { a: '1' } },
      { kind: 'refusal', reason: 'over-budget', message: 'm' },
      { kind: 'set-state', key: 'last.buy', value: null },
    ];
    for (const intent of good) expect(intentProblems(intent)).toEqual([]);
  });

  it('refuses what a careless strategy module could return at run time', () => {
    const bad = [
      { ...buy, amount: 0.0005 },
      { ...buy, amount: new Decimal(0) },
      { ...buy, tag: 'x'.repeat(25) },
      { ...buy, stp: 'sometimes' },
      { kind: 'transfer', ticker: 'USDT', amount: new Decimal(1), from: 'spot', to: 'main' },
      { kind: 'refusal', reason: 'Over Budget', message: 'm' },
      { kind: 'note', level: 'info', message: 'm', data: { a: 1 } },
      { kind: 'set-state', key: 'a key', value: 'v' },
      { kind: 'sell-everything' },
    ] as unknown as Intent[];
    for (const intent of bad) expect(intentProblems(intent), JSON.stringify(intent)).not.toEqual([]);
  });

  it('keeps the documented refusal reasons kebab-case', () => {
    for (const reason of REFUSAL_REASONS) expect(reason).toMatch(REFUSAL_REASON_PATTERN);
  });

  it('loads every part but the paged codes for a strategy that does not say what it reads', () => {
    const bare: Strategy<null> = { name: 'bare', version: 2, describe: 'test', params: [], parseParams: () => null, decide: async () => [] };
    expect(readsOf(bare, null)).toEqual(DEFAULT_READS);
    expect(DEFAULT_READS).not.toContain('codes');
  });
});

describe('the strategy SDK is the only way in', () => {
  const STRATEGY_DIR = join(import.meta.dirname, '../../strategies');
  const SDK_FILES = new Set(['sdk.ts', 'sdk-testing.ts', 'index.ts']);
  it.each(readdirSync(STRATEGY_DIR).filter((f) => f.endsWith('.ts') && !SDK_FILES.has(f)))('%s imports from ./sdk.ts only', (file) => {
    const text = readFileSync(join(STRATEGY_DIR, file), 'utf8');
    const sources = [...text.matchAll(/^\s*(?:import|export)\b[^'"]*?from\s+['"]([^'"]+)['"]/gm)].map((m) => m[1]);
    expect(sources.length).toBeGreaterThan(0);
    expect(sources.filter((source) => source !== './sdk.ts')).toEqual([]);
  });
});

describe("the README's walk-through", () => {
  it('shows strategies/top-up.ts and its test exactly as they are in the repository', () => {
    const readme = readFileSync(join(import.meta.dirname, '../../README.md'), 'utf8');
    for (const file of ['../../strategies/top-up.ts', './top-up.test.ts']) {
      expect(readme.includes(`\`\`\`ts\n${readFileSync(join(import.meta.dirname, file), 'utf8')}\`\`\``), file).toBe(true);
    }
  });
});

describe("the README's strategy table", () => {
  it('is what `npm run strategy-table` prints today', () => {
    const printed = execFileSync(process.execPath, [join(import.meta.dirname, '../../scripts/strategy-backtests.ts')], { encoding: 'utf8' });
    const readme = readFileSync(join(import.meta.dirname, '../../README.md'), 'utf8');
    const rows = printed.split('\n').filter((line) => line.startsWith('| '));
    expect(rows.length).toBeGreaterThan(3);
    for (const row of rows) expect(readme, row).toContain(row);
  }, 60_000);
});
