import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Decimal, formatDecimal, roundUp } from '../../../src/domain/money.ts';
import { type Sandbox, startSandbox } from '../../../src/sandbox/server.ts';
import { countingProxy, runCli } from '../../cli/run-cli.ts';
import { SOL } from './sol-market.ts';

/**
 * `stacker backtest` on a market stacker has no demo rules for, end to end through the real
 * CLI: rules from a file written by `stacker markets --json`, from the exchange (the sandbox on
 * loopback) and its cache, and from flags; the report names the source every time.
 */

const dir = mkdtempSync(join(tmpdir(), 'stacker-rules-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let fresh = 0;
const newDir = (): string => join(dir, `data-${++fresh}`);


/** Five days of hourly SOL candles from 2024-03-01, the open rising 0.037 an hour from 20.5. */
const FIRST_SEC = Date.UTC(2024, 2, 1) / 1000;
const openAt = (hour: number): Decimal => new Decimal('20.5').add(new Decimal('0.037').mul(hour));
const candleLines = Array.from({ length: 5 * 24 }, (_, h) => {
  const open = openAt(h);
  const close = openAt(h + 1);
  return `${FIRST_SEC + h * 3600},${open},${close},${open},${close},1000`;
});
const CANDLES = join(dir, 'SOLUSDT_1h.csv');
writeFileSync(CANDLES, `time,open,high,low,close,volume\n${candleLines.join('\n')}\n`);
const STRATEGY = join(dir, 'dca-sol.env');
writeFileSync(STRATEGY, 'STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=SOL_USDT\nAMOUNT=0.5\n');

/** Five buys of 0.5 SOL at the 09:00 opens, each with the taker fee rounded up to the fee precision: from the rules, not from our code. */
function expectedFees(rules: { takerFeePct: Decimal; feePrecision: number }): string {
  let fees = new Decimal(0);
  for (let day = 0; day < 5; day++) fees = fees.add(roundUp(openAt(day * 24 + 9).mul('0.5').mul(rules.takerFeePct).div(100), rules.feePrecision));
  return formatDecimal(fees);
}

interface Report {
  market: string;
  orders: { total: number; byStatus: Record<string, number> };
  totals: { baseAcquired: string; fees: Record<string, string> };
  rules: Record<string, unknown>;
}

const backtestArgs = ['backtest', '--data', CANDLES, '--market', 'SOL_USDT', '--strategy', STRATEGY];

async function backtest(more: readonly string[], env: Record<string, string> = {}, global: readonly string[] = []): Promise<{ code: number | null; report: Report | null; stdout: string; stderr: string }> {
  const result = await runCli([...global, ...backtestArgs, ...more], env);
  const report = more.includes('--json') && result.code === 0 ? (JSON.parse(result.stdout) as Report) : null;
  return { code: result.code, report, stdout: result.stdout, stderr: result.stderr };
}

describe('a backtest of SOL_USDT through the CLI', () => {
  let sandbox: Sandbox | undefined;
  afterEach(async () => {
    await sandbox?.stop();
    sandbox = undefined;
  });

  async function solSandbox(): Promise<Sandbox> {
    sandbox = await startSandbox({ seed: 'empty' });
    sandbox.exchange.addMarket(SOL);
    return sandbox;
  }

  it('trades on the rules of a file that `stacker markets --json` wrote, and the report names the file', async () => {
    const { url } = await solSandbox();
    const listed = await runCli(['--base-url', url, 'markets', '--json']);
    expect(listed.code).toBe(0);
    const file = join(dir, 'sol-markets.json');
    writeFileSync(file, listed.stdout);
    await sandbox?.stop();
    sandbox = undefined;

    const { code, report, stderr } = await backtest(['--rules', file, '--json']);
    expect([code, stderr]).toEqual([0, '']);
    expect(report?.orders).toEqual({ total: 5, filled: 5, byStatus: { FILLED: 5 } });
    expect(report?.totals.baseAcquired).toBe('2.5');
    expect(report?.totals.fees).toEqual({ USDT: expectedFees(SOL) });
    expect(report?.rules).toEqual({
      source: 'file',
      file: 'sol-markets.json',
      baseUrl: null,
      fetchedAt: null,
      overrides: [],
      basePrecision: 2,
      quotePrecision: 3,
      feePrecision: 4,
      minBaseAmount: '0.01',
      minQuoteTotal: '5',
      maxQuoteTotal: null,
      makerFeePct: '0.15',
      takerFeePct: '0.2',
      tradesEnabled: true,
    });

    const html = join(dir, 'sol.html');
    const human = await backtest(['--rules', file, '--report', html]);
    expect(human.stdout).toContain('Market rules: file sol-markets.json\n');
    expect(human.stdout).toContain('taker fee 0.2 % (maker 0.15 %), min amount 0.01 SOL, min total 5 USDT, max total none, decimals: amount 2, price 3, fee 4');
    expect(readFileSync(html, 'utf8')).toContain('<td>Market rules</td><td>file sol-markets.json: taker fee 0.2 %');
  });

  it('fetches the rules with --rules exchange, caches them in the data dir, and falls back to the cache with its age when the exchange is gone', async () => {
    const { url } = await solSandbox();
    const dataDir = newDir();
    const env = { STACKER_DATA_DIR: dataDir };
    const fetched = await backtest(['--rules', 'exchange', '--json'], env, ['--base-url', url]);
    expect([fetched.code, fetched.stderr]).toEqual([0, '']);
    expect(fetched.report?.rules).toMatchObject({ source: 'exchange', baseUrl: url, fetchedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), takerFeePct: '0.2' });
    expect(fetched.report?.totals.fees).toEqual({ USDT: expectedFees(SOL) });
    const cacheFile = join(dataDir, `markets-cache.127.0.0.1_${new URL(url).port}.json`);
    expect(JSON.parse(readFileSync(cacheFile, 'utf8'))).toMatchObject({ fetchedAt: fetched.report?.rules['fetchedAt'], baseUrl: url });

    await sandbox?.stop();
    sandbox = undefined;
    const cached = await backtest(['--rules', 'exchange', '--json', '--taker-fee-pct', '0.1'], env, ['--base-url', url]);
    expect(cached.code).toBe(0);
    expect(cached.stderr).toMatch(
      new RegExp(`^warning: the markets of ${url.replace(/\./g, '\\.')} could not be fetched \\(E_NETWORK: .+\\); using the list cached in ${cacheFile.replace(/\./g, '\\.')}, fetched \\S+ \\(less than a minute ago\\)\n$`),
    );
    expect(cached.report?.rules).toMatchObject({ source: 'cache', baseUrl: url, fetchedAt: fetched.report?.rules['fetchedAt'], overrides: ['takerFeePct'], takerFeePct: '0.1', feePrecision: 4 });
    expect(cached.report?.totals.fees).toEqual({ USDT: expectedFees({ takerFeePct: new Decimal('0.1'), feePrecision: 4 }) });

    const nothing = await backtest(['--rules', 'exchange'], { STACKER_DATA_DIR: newDir() }, ['--base-url', url]);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toMatch(/^error: --rules: exchange: the markets of http:\/\/127\.0\.0\.1:\d+ could not be fetched \(E_NETWORK: .+\) and the data dir .+ holds no cached list of them; give the rules another way: --rules FILE/);
  });

  it('takes the rules from flags alone, and sends nothing anywhere without --rules exchange', async () => {
    const { url } = await solSandbox();
    const proxy = await countingProxy(url);
    try {
      const flags = ['--base-precision', '2', '--quote-precision', '3', '--fee-precision', '4', '--min-amount', '0.01', '--min-total', '5', '--taker-fee-pct', '0.2'];
      const { code, report } = await backtest([...flags, '--json'], { STACKER_BASE_URL: proxy.url });
      expect(code).toBe(0);
      expect(report?.rules).toMatchObject({ source: 'flags', overrides: [], maxQuoteTotal: null, makerFeePct: '0.2', takerFeePct: '0.2' });
      expect(report?.totals.fees).toEqual({ USDT: expectedFees(SOL) });
      expect(proxy.requests).toEqual([]);
    } finally {
      await proxy.close();
    }
  });
});

describe('a backtest whose market rules are missing or wrong', () => {
  it('refuses a market with no rules (exit 2), naming --rules, the other ways and the flags missing', async () => {
    const { code, stderr } = await backtest(['--min-total', '5']);
    expect(code).toBe(2);
    expect(stderr).toBe(
      "error: --rules: no market rules for SOL_USDT (demo rules exist for BTC_USDT and ETH_USDT only): give --rules exchange (fetch the exchange's markets; cached in the data dir), --rules FILE (the output of `stacker markets --json`), or the rule flags; the rule flags lack --base-precision, --quote-precision, --fee-precision, --min-amount, --taker-fee-pct\n",
    );
  });

  it('refuses a rules file that is not JSON, or lacks the market, naming the file (E_INPUT)', async () => {
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '[{"name": "SOL_USDT",');
    const notJson = await backtest(['--rules', broken, '--json']);
    expect(notJson.code).toBe(2);
    expect(JSON.parse(notJson.stderr)).toMatchObject({ error: { code: 'E_INPUT', problems: [{ source: broken, field: 'JSON' }] } });

    const btcOnly = join(dir, 'btc-only.json');
    writeFileSync(btcOnly, JSON.stringify([{ name: 'BTC_USDT', base: 'BTC', quote: 'USDT', basePrecision: 6, quotePrecision: 2, feePrecision: 8, makerFeePct: '0.1', takerFeePct: '0.1', minBaseAmount: '0.00001', minQuoteTotal: '5', maxQuoteTotal: null }]));
    const missing = await backtest(['--rules', btcOnly]);
    expect([missing.code, missing.stderr]).toEqual([2, `error: ${btcOnly}: --market: SOL_USDT is not in this rules file; it lists 1: BTC_USDT\n`]);
  });

  it('refuses bad rule flags before reading anything, every one at once', async () => {
    const { code, stderr } = await backtest(['--rules', join(dir, 'absent.json'), '--base-precision', 'two', '--taker-fee-pct', '1e-1']);
    expect(code).toBe(2);
    expect(stderr).toBe('error: --base-precision: must be a whole number of decimals from 0 to 30 (got "two")\nerror: --taker-fee-pct: must be a plain decimal from 0 to 100, such as 0.1 (got "1e-1")\n');
  });
});

describe('a backtest whose instance file trades another market than its candles', () => {
  it('says the file and --market disagree, and the two ways out (exit 2), not that the exchange lacks the market', async () => {
    const btc = join(dir, 'dca-btc-other.env');
    writeFileSync(btc, 'STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nAMOUNT=0.001\n');
    // Candles of ETH_USDT (the demo rules know it) for a file that trades BTC_USDT.
    const eth = join(dir, 'ETH_USDT_1h.csv');
    copyFileSync(CANDLES, eth);
    const result = await runCli(['backtest', '--data', eth, '--market', 'ETH_USDT', '--strategy', btc]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `error: ${btc}: MARKET: is BTC_USDT, but this backtest trades ETH_USDT only (--market, the market of its --data candles): give --market BTC_USDT with BTC_USDT candles, or an instance file for ETH_USDT\n`,
    );
  });
});

describe('a backtest of BTC_USDT without --rules', () => {
  it('keeps the demo rules and says they are made up', async () => {
    const btc = join(dir, 'dca-btc.env');
    writeFileSync(btc, 'STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nAMOUNT=0.001\n');
    const fixture = join(import.meta.dirname, '../../fixtures/candles/btc-1h-2021-03-01_14.csv');
    const result = await runCli(['backtest', '--data', fixture, '--market', 'BTC_USDT', '--strategy', btc]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Market rules: demo rules built into stacker (made up; --rules exchange for the real ones)\n');
  });
});
