import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../../src/api/client.ts';
import { marketsCachePath, readMarketsCache, writeMarketsCache } from '../../../src/backtest/rules/markets-cache.ts';
import { type ExchangeMarkets, type RulesDeps, age, resolveRules } from '../../../src/backtest/rules/resolve.ts';
import { parseRuleFlags } from '../../../src/backtest/rules/rule-flags.ts';
import { rulesToJson } from '../../../src/backtest/rules/rules-file.ts';
import { InputError } from '../../../src/domain/errors.ts';
import type { MarketRules } from '../../../src/domain/market.ts';
import { Decimal } from '../../../src/domain/money.ts';
import { type Sandbox, startSandbox } from '../../../src/sandbox/server.ts';
import { DEMO_MARKETS } from '../../../src/sim/seed.ts';
import { SOL } from './sol-market.ts';

const dir = mkdtempSync(join(tmpdir(), 'stacker-rules-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let fresh = 0;
const newDir = (): string => join(dir, `data-${++fresh}`);

const BTC_DEMO = DEMO_MARKETS.find((m) => m.name === 'BTC_USDT')!;
const ALL_FLAGS = { basePrecision: '3', quotePrecision: '4', feePrecision: '8', minAmount: '0.001', minTotal: '1', takerFeePct: '0.2' };

function rulesFile(markets: readonly MarketRules[]): string {
  const path = join(dir, `rules-${++fresh}.json`);
  writeFileSync(path, JSON.stringify(markets.map(rulesToJson)));
  return path;
}

/** Deps whose exchange must not be touched: any use fails the test. */
function offline(warnings: string[] = []): RulesDeps {
  return {
    exchange: () => Promise.reject(new Error('the exchange was reached without --rules exchange')),
    nowMs: () => Date.UTC(2025, 0, 31, 9),
    warn: (text) => warnings.push(text),
  };
}

async function inputProblem(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InputError);
  return (error as InputError).message;
}

describe('where a backtest takes its market rules from, without the network', () => {
  it('takes the demo rules for BTC_USDT and ETH_USDT, and says so', async () => {
    const resolved = await resolveRules({ market: 'BTC_USDT', overrides: {} }, offline());
    expect(resolved).toEqual({ rules: BTC_DEMO, origin: { source: 'demo' } });
  });

  it('refuses a market whose largest order total is below its smallest, naming where the maximum came from: no order could be placed', async () => {
    expect(await inputProblem(resolveRules({ market: 'BTC_USDT', overrides: parseRuleFlags({ maxTotal: '1' }) }, offline()))).toBe(
      "--max-total: the market's largest order total (1 USDT) is below its smallest (5 USDT): no order could be placed; give a maximum of at least the minimum, or none",
    );
    expect(await inputProblem(resolveRules({ market: 'BTC_USDT', overrides: parseRuleFlags({ ...ALL_FLAGS, minTotal: '30', maxTotal: '20' }) }, offline()))).toMatch(/^--max-total: /);
    const file = rulesFile([{ ...SOL, minQuoteTotal: new Decimal('25'), maxQuoteTotal: new Decimal('10') }]);
    expect(await inputProblem(resolveRules({ market: 'SOL_USDT', rules: file, overrides: {} }, offline()))).toMatch(/^--rules: the market's largest order total \(10 USDT\) is below its smallest \(25 USDT\)/);
    expect(await inputProblem(resolveRules({ market: 'SOL_USDT', rules: file, overrides: parseRuleFlags({ minTotal: '12' }) }, offline()))).toMatch(/^--min-total: /);
    // Equal is one order total, and fine.
    expect((await resolveRules({ market: 'BTC_USDT', overrides: parseRuleFlags({ maxTotal: '5' }) }, offline())).rules.maxQuoteTotal?.toString()).toBe('5');
  });

  it('takes the market from a --rules file, over the demo rules', async () => {
    const file = rulesFile([SOL, { ...BTC_DEMO, takerFeePct: new Decimal('0.25') }]);
    expect(await resolveRules({ market: 'SOL_USDT', rules: file, overrides: {} }, offline())).toEqual({ rules: SOL, origin: { source: 'file', file } });
    const btc = await resolveRules({ market: 'BTC_USDT', rules: file, overrides: {} }, offline());
    expect([btc.origin.source, btc.rules.takerFeePct.toString()]).toEqual(['file', '0.25']);
  });

  it('refuses a --rules file that lacks the market, naming the file', async () => {
    const file = rulesFile([SOL]);
    expect(await inputProblem(resolveRules({ market: 'ADA_USDT', rules: file, overrides: {} }, offline()))).toBe(`${file}: --market: ADA_USDT is not in this rules file; it lists 1: SOL_USDT`);
  });

  it('lets the flags define a market alone, with the stated defaults for max total and maker fee', async () => {
    const resolved = await resolveRules({ market: 'SOL_USDT', overrides: parseRuleFlags(ALL_FLAGS) }, offline());
    expect(resolved.origin).toEqual({ source: 'flags' });
    expect(resolved.rules).toEqual({
      name: 'SOL_USDT',
      base: 'SOL',
      quote: 'USDT',
      basePrecision: 3,
      quotePrecision: 4,
      feePrecision: 8,
      minBaseAmount: new Decimal('0.001'),
      minQuoteTotal: new Decimal('1'),
      maxQuoteTotal: null,
      makerFeePct: new Decimal('0.2'),
      takerFeePct: new Decimal('0.2'),
      tradesEnabled: true,
      type: 'spot',
    });
  });

  it('prefers complete flags to the demo rules, and a --rules file to complete flags (the flags then override it field by field)', async () => {
    expect((await resolveRules({ market: 'BTC_USDT', overrides: parseRuleFlags(ALL_FLAGS) }, offline())).origin).toEqual({ source: 'flags' });
    const file = rulesFile([SOL]);
    const resolved = await resolveRules({ market: 'SOL_USDT', rules: file, overrides: parseRuleFlags(ALL_FLAGS) }, offline());
    expect(resolved.origin).toEqual({ source: 'file', file, overrides: ['basePrecision', 'quotePrecision', 'feePrecision', 'minBaseAmount', 'minQuoteTotal', 'takerFeePct'] });
    expect(resolved.rules.makerFeePct.toString()).toBe('0.15');
  });

  it('overrides single fields of the source with the flags given, and lists them', async () => {
    const resolved = await resolveRules({ market: 'BTC_USDT', overrides: parseRuleFlags({ takerFeePct: '0.075', maxTotal: '50000' }) }, offline());
    expect(resolved.origin).toEqual({ source: 'demo', overrides: ['maxQuoteTotal', 'takerFeePct'] });
    expect(resolved.rules).toEqual({ ...BTC_DEMO, takerFeePct: new Decimal('0.075'), maxQuoteTotal: new Decimal('50000') });
  });

  it('refuses another market without rules, naming every way to give them and the flags still missing', async () => {
    const none = await inputProblem(resolveRules({ market: 'SOL_USDT', overrides: {} }, offline()));
    expect(none).toBe(
      '--rules: no market rules for SOL_USDT (demo rules exist for BTC_USDT and ETH_USDT only): give --rules exchange (fetch the exchange\'s markets; cached in the data dir), --rules FILE (the output of `stacker markets --json`), or the rule flags; the rule flags define a market with --base-precision, --quote-precision, --fee-precision, --min-amount, --min-total, --taker-fee-pct',
    );
    const some = await inputProblem(resolveRules({ market: 'SOL_USDT', overrides: parseRuleFlags({ basePrecision: '2', takerFeePct: '0.1', maxTotal: 'none' }) }, offline()));
    expect(some).toMatch(/; the rule flags lack --quote-precision, --fee-precision, --min-amount, --min-total$/);
  });
});

describe('the rule flags', () => {
  it('read precisions, plain decimals and none', () => {
    expect(parseRuleFlags({ feePrecision: '0', minAmount: '0', maxTotal: 'none', makerFeePct: '100' })).toEqual({ feePrecision: 0, minBaseAmount: new Decimal(0), maxQuoteTotal: null, makerFeePct: new Decimal(100) });
  });

  it('refuse every bad value at once, naming each flag and its rule', () => {
    const bad = { basePrecision: '31', quotePrecision: '-1', minAmount: '1e-3', minTotal: '-5', maxTotal: '0', takerFeePct: '101', makerFeePct: 'x' };
    expect(() => parseRuleFlags(bad)).toThrow(
      [
        '--base-precision: must be a whole number of decimals from 0 to 30 (got "31")',
        '--quote-precision: must be a whole number of decimals from 0 to 30 (got "-1")',
        '--min-amount: must be a plain decimal of zero or more, such as 0.1 (got "1e-3")',
        '--min-total: must be a plain decimal of zero or more, such as 0.1 (got "-5")',
        '--max-total: must be above 0, or none for no upper limit (got "0")',
        '--maker-fee-pct: must be a plain decimal from 0 to 100, such as 0.1 (got "x")',
        '--taker-fee-pct: must be a plain decimal from 0 to 100, such as 0.1 (got "101")',
      ].join('\n'),
    );
  });
});

describe('--rules exchange, against the sandbox on loopback', () => {
  let sandbox: Sandbox | undefined;
  const clients: ApiClient[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await sandbox?.stop();
    sandbox = undefined;
  });

  /** The exchange as the CLI builds it: the public client on the sandbox's URL, no retries (the test needs no patience). */
  function exchangeAt(url: string, dataDir: string): () => Promise<ExchangeMarkets> {
    return async () => {
      const client = new ApiClient({ baseUrl: url, retry: false });
      clients.push(client);
      return { baseUrl: url, dataDir, markets: () => client.markets() };
    };
  }

  it("takes the market from the exchange's list, and caches the whole list in the data dir with its time", async () => {
    sandbox = await startSandbox({ seed: 'empty' });
    sandbox.exchange.addMarket(SOL);
    const dataDir = newDir();
    const warnings: string[] = [];
    const now = Date.UTC(2025, 0, 31, 9);
    const resolved = await resolveRules({ market: 'SOL_USDT', rules: 'exchange', overrides: {} }, { exchange: exchangeAt(sandbox.url, dataDir), nowMs: () => now, warn: (t) => warnings.push(t) });
    expect(resolved).toEqual({ rules: SOL, origin: { source: 'exchange', baseUrl: sandbox.url, fetchedAtMs: now } });
    expect(warnings).toEqual([]);
    const cache = JSON.parse(readFileSync(marketsCachePath(dataDir, sandbox.url), 'utf8')) as { fetchedAt: string; baseUrl: string; markets: Array<{ name: string }> };
    expect(cache.fetchedAt).toBe('2025-01-31T09:00:00.000Z');
    expect(cache.baseUrl).toBe(sandbox.url);
    expect(cache.markets.map((m) => m.name).sort()).toEqual(['BTC_USDT', 'ETH_USDT', 'SOL_USDT']);
  });

  it('refuses a market the exchange does not list, naming the exchange', async () => {
    sandbox = await startSandbox({ seed: 'empty' });
    const message = await inputProblem(resolveRules({ market: 'SOL_USDT', rules: 'exchange', overrides: {} }, { ...offline(), exchange: exchangeAt(sandbox.url, newDir()) }));
    expect(message).toBe(`--market: SOL_USDT is not in the markets of ${sandbox.url}; it lists 2: BTC_USDT, ETH_USDT`);
  });

  it('uses the cached list when the exchange is not reachable, and says how old it is', async () => {
    sandbox = await startSandbox({ seed: 'empty' });
    sandbox.exchange.addMarket(SOL);
    const url = sandbox.url;
    const dataDir = newDir();
    const fetchedAt = Date.UTC(2025, 0, 28, 9);
    await resolveRules({ market: 'SOL_USDT', rules: 'exchange', overrides: {} }, { exchange: exchangeAt(url, dataDir), nowMs: () => fetchedAt, warn: () => {} });
    await sandbox.stop();
    sandbox = undefined;

    const warnings: string[] = [];
    const resolved = await resolveRules(
      { market: 'SOL_USDT', rules: 'exchange', overrides: parseRuleFlags({ takerFeePct: '0.2' }) },
      { exchange: exchangeAt(url, dataDir), nowMs: () => fetchedAt + 3 * 86_400_000 + 3_600_000, warn: (t) => warnings.push(t) },
    );
    expect(resolved).toEqual({ rules: { ...SOL, takerFeePct: new Decimal('0.2') }, origin: { source: 'cache', baseUrl: url, fetchedAtMs: fetchedAt, overrides: ['takerFeePct'] } });
    expect(warnings).toEqual([
      `the markets of ${url} could not be fetched (E_NETWORK: /api/v4/public/markets: connection refused (ECONNREFUSED)); using the list cached in ${marketsCachePath(dataDir, url)}, fetched 2025-01-28T09:00:00.000Z (3 days ago)`,
    ]);
  });

  it('fails with a clear message naming --rules when the exchange is not reachable and nothing is cached', async () => {
    sandbox = await startSandbox();
    const url = sandbox.url;
    await sandbox.stop();
    sandbox = undefined;
    const dataDir = newDir();
    const message = await inputProblem(resolveRules({ market: 'BTC_USDT', rules: 'exchange', overrides: {} }, { ...offline(), exchange: exchangeAt(url, dataDir) }));
    expect(message).toBe(
      `--rules: exchange: the markets of ${url} could not be fetched (E_NETWORK: /api/v4/public/markets: connection refused (ECONNREFUSED)) and the data dir ${dataDir} holds no cached list of them; give the rules another way: --rules FILE (the output of \`stacker markets --json\` where the exchange is reachable) or the rule flags (--base-precision, --quote-precision, --fee-precision, --min-amount, --min-total, --taker-fee-pct)`,
    );
  });

  it('goes on, with a warning, when the data dir cannot hold the cache', async () => {
    sandbox = await startSandbox();
    const notADir = join(dir, 'a-file');
    writeFileSync(notADir, '');
    const warnings: string[] = [];
    const resolved = await resolveRules({ market: 'BTC_USDT', rules: 'exchange', overrides: {} }, { ...offline(warnings), exchange: exchangeAt(sandbox.url, notADir) });
    expect(resolved.origin.source).toBe('exchange');
    expect(warnings).toEqual([`the markets list of ${sandbox.url} was not cached in ${notADir} (EEXIST); the backtest goes on`]);
  });
});

describe('the markets cache', () => {
  const url = 'https://exchange.example:8443';

  it('is one file per exchange, read back with the time it was fetched', () => {
    const dataDir = newDir();
    const path = writeMarketsCache(dataDir, url, Date.UTC(2025, 0, 1), [SOL]);
    expect(path).toBe(join(dataDir, 'markets-cache.exchange.example_8443.json'));
    expect(readMarketsCache(dataDir, url)).toEqual({ path, baseUrl: url, fetchedAtMs: Date.UTC(2025, 0, 1), markets: [SOL] });
    expect(readMarketsCache(dataDir, 'http://127.0.0.1:8787')).toBeNull();
  });

  it('is an InputError naming the file when damaged', () => {
    const dataDir = newDir();
    const path = writeMarketsCache(dataDir, url, Date.UTC(2025, 0, 1), [SOL]);
    writeFileSync(path, '{"fetchedAt": "2025-01-01T00:00:00.000Z", "baseUrl": "https://exchange.example:8443", "markets": [{"name": "SOL_USDT"}]}');
    expect(() => readMarketsCache(dataDir, url)).toThrow(`${path}: entry 1 (SOL_USDT), base: is missing`);
    writeFileSync(path, 'not json');
    expect(() => readMarketsCache(dataDir, url)).toThrow(`${path}: markets cache: is not valid JSON; delete the file and fetch again`);
  });
});

describe('the age of a cached list, in words', () => {
  it('counts minutes, then hours from two hours, then days from two days', () => {
    expect([0, 59_999, 60_000, 7_140_000, 7_200_000, 172_799_999, 172_800_000].map(age)).toEqual([
      'less than a minute',
      'less than a minute',
      '1 minute',
      '119 minutes',
      '2 hours',
      '47 hours',
      '2 days',
    ]);
  });
});
