import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { maskCode } from '../../src/domain/account.ts';
import { formatDecimal } from '../../src/domain/money.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.ts';
import { DEMO_EMPTY_FLEX_PLAN_ID, DEMO_FLEX_PLAN_ID } from '../../src/sim/seed.ts';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { BIN, type CliResult, type CountingProxy, cleanEnv, countingProxy, finished, runCli } from './run-cli.ts';

/**
 * The real CLI (`node bin/stacker.js …` in a child process) against a real sandbox on
 * 127.0.0.1:0, reached through a counting proxy so a test can prove that nothing was sent.
 */

const API_KEY = 'cli-test-key';
const API_SECRET = `cli-test-secret-${randomBytes(12).toString('hex')}`;

let sandbox: Sandbox;
let proxy: CountingProxy;

beforeAll(async () => {
  sandbox = await startSandbox({ host: '127.0.0.1', port: 0, apiKey: API_KEY, apiSecret: API_SECRET });
  proxy = await countingProxy(sandbox.url);
});

afterAll(async () => {
  await proxy?.close();
  await sandbox?.stop();
});

const credentials = (): Record<string, string> => ({ STACKER_BASE_URL: proxy.url, STACKER_API_KEY: API_KEY, STACKER_API_SECRET: API_SECRET });

/** Run stacker with the sandbox's settings; no run may ever print the API secret. */
async function stacker(args: readonly string[], env: Record<string, string> = credentials()): Promise<CliResult> {
  const result = await runCli(args, env);
  expect(result.stdout).not.toContain(API_SECRET);
  expect(result.stderr).not.toContain(API_SECRET);
  return result;
}

/** Run stacker and expect it to be refused before any request reached the exchange. */
async function refusedLocally(args: readonly string[], env?: Record<string, string>): Promise<CliResult> {
  const before = proxy.requests.length;
  const result = await stacker(args, env);
  expect(result.code, result.stderr).toBe(2);
  expect(proxy.requests.length).toBe(before);
  expect(result.stdout).toBe('');
  return result;
}

function parseJson(result: CliResult): unknown {
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout);
}

describe('stacker public commands', () => {
  it('ping answers pong from the base URL', async () => {
    const result = await stacker(['ping']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^pong from ${proxy.url} in \\d+ ms\\n$`));
  });

  it('ping --json prints one JSON document and nothing else', async () => {
    expect(parseJson(await stacker(['ping', '--json']))).toMatchObject({ pong: true, baseUrl: proxy.url });
  });

  it('ping takes --base-url over STACKER_BASE_URL', async () => {
    const result = await stacker(['ping', '--base-url', sandbox.url], { STACKER_BASE_URL: 'http://127.0.0.1:9' });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`pong from ${sandbox.url}`);
  });

  it('ping over https:// to a plain-HTTP port fails as a setting, not an outage: exit 3, the endpoint to check, no "try again later"', async () => {
    const result = await stacker(['ping', '--base-url', sandbox.url.replace('http://', 'https://')], {});
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('E_NETWORK');
    expect(result.stderr).toContain('TLS handshake failed: check the endpoint (https:// on a plain-HTTP port?) and its certificate; trying again does not mend it');
    expect(result.stderr).not.toMatch(/temporary|try again later/);
  });

  it('markets lists every market with its rules in aligned columns, decimals as formatDecimal prints them', async () => {
    const result = await stacker(['markets']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(
      [
        'MARKET    BASE DECIMALS  QUOTE DECIMALS  MIN AMOUNT  MIN TOTAL  MAX TOTAL  MAKER FEE %  TAKER FEE %  TRADING',
        'BTC_USDT              6               2     0.00001          5       none          0.1          0.1  yes',
        'ETH_USDT              4               2       0.001          5    1000000          0.1          0.1  yes',
        '',
      ].join('\n'),
    );
  });

  it('markets --market (any case) --json gives one market with decimals as strings', async () => {
    const markets = parseJson(await stacker(['markets', '--market', 'eth_usdt', '--json'])) as Array<Record<string, unknown>>;
    expect(markets).toHaveLength(1);
    expect(markets[0]).toMatchObject({ name: 'ETH_USDT', minBaseAmount: '0.001', minQuoteTotal: '5', maxQuoteTotal: '1000000', takerFeePct: '0.1' });
  });

  it('ticker shows the last price', async () => {
    const result = await stacker(['ticker', '--market', 'BTC_USDT']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^last price:\s+65000$/m);
    expect(parseJson(await stacker(['ticker', '--market', 'BTC_USDT', '--json']))).toMatchObject({ market: 'BTC_USDT', lastPrice: '65000' });
  });
});

describe('stacker balance', () => {
  it('shows the main balance of every asset by default', async () => {
    const result = await stacker(['balance']);
    expect(result.code, result.stderr).toBe(0);
    for (const [ticker, amount] of sandbox.exchange.mainBalances()) {
      if (!amount.isZero()) expect(result.stdout).toMatch(new RegExp(`^${ticker}\\s+${formatDecimal(amount).replace('.', '\\.')}$`, 'm'));
    }
    expect(result.stdout.split('\n')[0]).toMatch(/^TICKER\s+MAIN BALANCE$/);
  });

  it('shows one ticker of the main balance', async () => {
    const result = await stacker(['balance', '--ticker', 'btc']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(`TICKER  MAIN BALANCE\nBTC             0.05\n`);
  });

  it('--trade shows the spot balance with available and freeze', async () => {
    const result = await stacker(['balance', '--trade']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^TICKER\s+AVAILABLE\s+FREEZE$/m);
    expect(result.stdout).toMatch(/^USDT\s+\d+(\.\d+)?\s+0$/m);
    const one = parseJson(await stacker(['balance', '--trade', '--ticker', 'USDT', '--json']));
    const spot = sandbox.exchange.tradeBalance('USDT');
    expect(one).toEqual({ account: 'trade', balances: { USDT: { available: formatDecimal(spot.available), freeze: formatDecimal(spot.freeze) } } });
  });
});

describe('stacker codes', () => {
  const allCodes = () => sandbox.exchange.codes({ limit: 100 }).codes;

  it('masks every code value by default, in the table and in JSON', async () => {
    const table = await stacker(['codes']);
    expect(table.code, table.stderr).toBe(0);
    const json = await stacker(['codes', '--json']);
    expect(json.code, json.stderr).toBe(0);
    for (const record of allCodes()) {
      expect(table.stdout).not.toContain(record.code);
      expect(json.stdout).not.toContain(record.code);
      expect(table.stdout).toContain(maskCode(record.code));
    }
    expect(table.stderr).toContain('codes 1-5 of 5');
  });

  it('--reveal prints the code values in full', async () => {
    const result = await stacker(['codes', '--reveal']);
    expect(result.code, result.stderr).toBe(0);
    for (const record of allCodes()) expect(result.stdout).toContain(record.code);
  });

  it('--limit and --offset page through the list and say where the next page starts', async () => {
    const result = await stacker(['codes', '--limit', '2', '--offset', '1']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trimEnd().split('\n')).toHaveLength(3);
    expect(result.stderr).toContain('codes 2-3 of 5; next page: --offset 3, or --all');
  });

  it('--all fetches every page (here pages of 2) and keeps the codes masked', async () => {
    const before = proxy.requests.filter((r) => r.includes('/codes/my')).length;
    const page = parseJson(await stacker(['codes', '--all', '--limit', '2', '--json'])) as { total: number; codes: Array<{ code: string }> };
    expect(page.total).toBe(5);
    expect(page.codes.map((c) => c.code)).toEqual(allCodes().map((c) => maskCode(c.code)));
    expect(proxy.requests.filter((r) => r.includes('/codes/my')).length - before).toBeGreaterThanOrEqual(3);
  });
});

describe('stacker flex', () => {
  it('plans and investments list the demo plan and its investment', async () => {
    const plans = await stacker(['flex', 'plans']);
    expect(plans.code, plans.stderr).toBe(0);
    expect(plans.stdout).toMatch(new RegExp(`^${DEMO_FLEX_PLAN_ID}\\s+USDT\\s+10\\s+100000\\s+8\\.5$`, 'm'));
    const investments = parseJson(await stacker(['flex', 'investments', '--json'])) as Array<Record<string, unknown>>;
    expect(investments.some((i) => i['planId'] === DEMO_FLEX_PLAN_ID && typeof i['invested'] === 'string')).toBe(true);
  });

  it('withdraw moves the amount from the investment to the main balance', async () => {
    const mainBefore = sandbox.exchange.mainBalance('USDT');
    const result = await stacker(['flex', 'withdraw', '--plan', DEMO_FLEX_PLAN_ID, '--amount', '12.5']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^withdrawn:\s+12\.5 from plan /m);
    expect(result.stdout).toMatch(/^transaction id:\s+\S+$/m);
    expect(formatDecimal(sandbox.exchange.mainBalance('USDT').sub(mainBefore))).toBe('12.5');
  });

  it('a withdraw above the invested amount is refused by the exchange: exit 3 with the 422 and its field message', async () => {
    const result = await stacker(['flex', 'withdraw', '--plan', DEMO_FLEX_PLAN_ID, '--amount', '99999999']);
    expect(result.code).toBe(3);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^error: E_EXCHANGE_REFUSED \(ExchangeRefusedError\): the exchange answered HTTP 422 on \/api\/v4\/main-account\/smart-flex\/investments\/withdraw$/m);
    expect(result.stderr).toMatch(/exchange code: 2;/);
    expect(result.stderr).toMatch(/^ {2}amount: \S.*$/m);
  });

  it('a withdraw from a plan without an investment is refused with the message under `plan`, and --json puts it on stderr', async () => {
    const result = await stacker(['flex', 'withdraw', '--plan', DEMO_EMPTY_FLEX_PLAN_ID, '--amount', '1', '--json']);
    expect(result.code).toBe(3);
    expect(result.stdout).toBe('');
    const { error } = JSON.parse(result.stderr) as { error: { code: string; httpStatus: number; exchangeCode: number; fieldErrors: Record<string, string[]> } };
    expect(error).toMatchObject({ code: 'E_EXCHANGE_REFUSED', httpStatus: 422, exchangeCode: 2 });
    expect(error.fieldErrors['plan']?.length).toBeGreaterThan(0);
  });
});

describe('stacker buy and order', () => {
  it('buys a base quantity and prints the order as JSON with decimals as strings; the sandbox has it', async () => {
    const order = parseJson(await stacker(['buy', '--market', 'BTC_USDT', '--amount', '0.001', '--json'])) as Record<string, unknown>;
    expect(order).toMatchObject({ market: 'BTC_USDT', side: 'buy', type: 'stock market', status: 'FILLED', amount: '0.001', filledBase: '0.001', filledQuote: '65' });
    expect(typeof order['fee']).toBe('string');
    expect(order['clientOrderId']).toMatch(/^cli-[0-9a-z]+-[0-9a-f]{8}$/);
    const [recorded] = sandbox.exchange.orderHistory({ clientOrderId: order['clientOrderId'] as string });
    expect(recorded?.orderId).toBe(order['orderId']);
    expect(sandbox.exchange.ledger().some((entry) => entry.ref === order['orderId'] && entry.asset === 'BTC')).toBe(true);
  });

  it('sends the client order id and stp given, and `order` finds it again', async () => {
    const result = await stacker(['buy', '--market', 'btc_usdt', '--amount', '0.0002', '--client-order-id', 'dca.btc-0001', '--stp', 'cancel_new']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^client order id:\s+dca\.btc-0001$/m);
    // Typed in the long form, sent and answered in the short one.
    expect(result.stdout).toMatch(/^stp:\s+cn$/m);
    expect(result.stdout).toMatch(/^filled base:\s+0\.0002$/m);
    expect(sandbox.exchange.orderHistory({ clientOrderId: 'dca.btc-0001' })).toHaveLength(1);

    const found = await stacker(['order', '--client-order-id', 'dca.btc-0001', '--market', 'BTC_USDT']);
    expect(found.code, found.stderr).toBe(0);
    expect(found.stdout).toMatch(/^\d+\s+history\s+BTC_USDT\s+buy\s+stock market\s+FILLED\s+0\.0002/m);
  });

  it('refuses an id this machine sent with the key before, while the history does not show its order yet (it lags), whatever its letter case', async () => {
    sandbox.faults.historyLagMs = 60_000;
    try {
      const command = ['buy', '--market', 'BTC_USDT', '--amount', '0.0001', '--client-order-id', 'lagging-id-1'];
      expect((await stacker(command)).code).toBe(0);
      const before = proxy.requests.filter((path) => path.endsWith('/order/stock_market')).length;
      for (const id of ['lagging-id-1', 'LAGGING-ID-1']) {
        const again = await stacker([...command.slice(0, -1), id]);
        expect(again.code).toBe(2);
        expect(again.stderr).toMatch(/^error: --client-order-id: lagging-id-1 was sent from this machine with this key at \d{4}-\d\d-\d\dT[\d:.]+Z \(BTC_USDT\); the exchange's history may not show its order yet/);
      }
      expect(proxy.requests.filter((path) => path.endsWith('/order/stock_market')).length).toBe(before);
    } finally {
      sandbox.faults.historyLagMs = 0;
    }
  });

  it('places one order of two commands with one id started together, and frees an id the exchange refused outright', async () => {
    sandbox.faults.historyLagMs = 60_000;
    try {
      const command = ['buy', '--market', 'BTC_USDT', '--amount', '0.0001', '--client-order-id', 'together-1'];
      const results = await Promise.all([stacker(command), stacker(command)]);
      expect(results.map((result) => result.code).sort()).toEqual([0, 2]);
      expect(sandbox.exchange.orderHistory({ clientOrderId: 'together-1' })).toHaveLength(1);
      // Not enough balance: refused, nothing has the id, so it may be sent again.
      const refused = await stacker(['buy', '--market', 'BTC_USDT', '--amount', '1000', '--client-order-id', 'refused-1']);
      expect(refused.code).toBe(3);
      expect((await stacker(['buy', '--market', 'BTC_USDT', '--amount', '0.0001', '--client-order-id', 'refused-1'])).code).toBe(0);
    } finally {
      sandbox.faults.historyLagMs = 0;
    }
  });

  it('running the same buy with its --client-order-id again is refused before sending (exit 2), naming the order that has it and its status: it never buys twice', async () => {
    const command = ['buy', '--market', 'ETH_USDT', '--amount', '0.01', '--client-order-id', 'same-id-1'];
    // Placed from another machine (its own lock folder): only the exchange's history knows the id.
    const otherMachine = mkdtempSync(join(tmpdir(), 'stacker-other-machine-'));
    onTestFinished(() => rmSync(otherMachine, { recursive: true, force: true }));
    const first = await stacker(command, { ...credentials(), STACKER_LOCK_DIR: otherMachine });
    expect(first.code, first.stderr).toBe(0);
    const [placed] = sandbox.exchange.orderHistory({ clientOrderId: 'same-id-1' });
    const before = proxy.requests.length;
    const again = await stacker(command);
    expect(again.code).toBe(2);
    expect(again.stdout).toBe('');
    expect(again.stderr).toMatch(
      new RegExp(`^error: --client-order-id: order ${placed?.orderId ?? '-'} \\(ETH_USDT, FILLED, placed \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\dZ\\) already has the id same-id-1; the exchange takes a second market order with the same id, so this would buy again\\.`),
    );
    expect(again.stderr).toContain('See it with `stacker order --client-order-id same-id-1`; to buy once more, give a new --client-order-id');
    expect(sandbox.exchange.orderHistory({ clientOrderId: 'same-id-1' })).toHaveLength(1);
    expect(proxy.requests.slice(before).filter((request) => request.startsWith('POST /api/v4/order/'))).toEqual([]);
    // On another market the same id is an order there too: refused as well.
    expect((await stacker(['buy', '--market', 'BTC_USDT', '--amount', '0.0001', '--client-order-id', 'same-id-1', '--json'])).code).toBe(2);
    expect(sandbox.exchange.orderHistory({ clientOrderId: 'same-id-1' })).toHaveLength(1);
    expect((await stacker(['buy', '--help'])).stdout.replace(/\s+/g, ' ')).toContain('stacker refuses (exit 2) an id it sent from this machine with the key (kept 31 days in STACKER_LOCK_DIR, in any letter case) or that an order in the order history already has');
  });

  it('order without --market searches the history of every market (active orders need a market) and says so', async () => {
    const placed = await stacker(['buy', '--market', 'ETH_USDT', '--amount', '0.01', '--client-order-id', 'any-market-1']);
    expect(placed.code, placed.stderr).toBe(0);
    const found = await stacker(['order', '--client-order-id', 'any-market-1']);
    expect(found.code, found.stderr).toBe(0);
    expect(found.stdout).toMatch(/^\d+\s+history\s+ETH_USDT\s+buy/m);
    expect(found.stderr).toContain('give --market to search its active orders too');
  });

  it('order says so when no order has the client order id, and that a lagging history may still show it', async () => {
    const result = await stacker(['order', '--client-order-id', 'never-sent']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('no order with client order id never-sent in the order history yet: the history can show an order minutes late, so look again in a few minutes before buying again');
    expect(parseJson(await stacker(['order', '--client-order-id', 'never-sent', '--json']))).toEqual({ clientOrderId: 'never-sent', orders: [] });
  });
});

describe('bad input is refused before anything is sent (exit 2)', () => {
  it('an amount in exponent notation', async () => {
    const result = await refusedLocally(['buy', '--market', 'BTC_USDT', '--amount', '1e-3']);
    expect(result.stderr).toContain('error: --amount: must be a plain decimal number such as 0.0005 (got "1e-3")');
  });

  it("an amount with more decimals than the market takes, or below its minimum, named with the market's rule (the market rules are read, nothing is sent)", async () => {
    const before = proxy.requests.length;
    const fine = await stacker(['buy', '--market', 'BTC_USDT', '--amount', '0.00012345678']);
    expect(fine.code).toBe(2);
    expect(fine.stdout).toBe('');
    expect(fine.stderr).toBe('error: --amount: 0.00012345678 has 11 decimals; BTC_USDT takes at most 6 (its amount precision): rounded down, that is 0.000123\n');
    const both = await stacker(['buy', '--market', 'ETH_USDT', '--amount', '0.00005', '--json']);
    expect(both.code).toBe(2);
    expect((JSON.parse(both.stderr) as { error: { problems: Array<{ field: string; rule: string }> } }).error.problems).toEqual([
      { field: '--amount', rule: '0.00005 has 5 decimals; ETH_USDT takes at most 4 (its amount precision): rounded down, that is 0' },
      { field: '--amount', rule: "0.00005 is below ETH_USDT's minimum amount, 0.001 ETH" },
    ]);
    expect((await stacker(['buy', '--market', 'BTC_USDT', '--amount', '0.000009'])).stderr).toBe("error: --amount: 0.000009 is below BTC_USDT's minimum amount, 0.00001 BTC\n");
    expect(proxy.requests.slice(before).filter((request) => !request.startsWith('GET /api/v4/public/'))).toEqual([]);
  });

  it('a code page limit of 0 or 101', async () => {
    expect((await refusedLocally(['codes', '--limit', '0'])).stderr).toContain('error: --limit: must be a whole number from 1 to 100 (got "0")');
    expect((await refusedLocally(['codes', '--limit', '101'])).stderr).toContain('error: --limit: must be a whole number from 1 to 100 (got "101")');
  });

  it('a code page that would end past the 10000th code, named by its flag', async () => {
    expect((await refusedLocally(['codes', '--offset', '9990', '--limit', '20'])).stderr).toMatch(/^error: --offset: .*10000/m);
  });

  it('an unknown flag', async () => {
    expect((await refusedLocally(['balance', '--tikcer', 'BTC'])).stderr).toContain("error: unknown option '--tikcer'");
  });

  it('a misspelt required flag is reported as unknown, with the flag meant, not as the required one missing', async () => {
    const misspelt = await refusedLocally(['buy', '--markte', 'BTC_USDT', '--amount', '0.001']);
    expect(misspelt.stderr).toBe("error: unknown option '--markte'\n(Did you mean --market?)\n(run with --help for usage)\n");
    const missing = await refusedLocally(['buy', '--amount', '0.001']);
    expect(missing.stderr).toBe("error: required option '--market <market>' not specified\n(run with --help for usage)\n");
  });

  it('a usage error with --json: one JSON line on stderr naming the flag or command, as every other error with --json', async () => {
    const lines = async (args: readonly string[]) => (await refusedLocally(args)).stderr.trimEnd().split('\n');
    expect(await lines(['--json', 'buy', '--markte', 'BTC_USDT', '--amount', '0.001'])).toEqual([
      JSON.stringify({ error: { code: 'E_INPUT', message: "unknown option '--markte' (Did you mean --market?)", problems: [{ field: '--markte', rule: "unknown option '--markte' (Did you mean --market?)" }] } }),
    ]);
    const missing = JSON.parse((await lines(['buy', '--json', '--amount', '0.001']))[0] as string) as { error: { problems: Array<{ field: string }> } };
    expect(missing.error.problems[0]?.field).toBe('--market');
    const command = JSON.parse((await lines(['--json', 'bye']))[0] as string) as { error: { code: string; problems: Array<{ field: string }> } };
    expect([command.error.code, command.error.problems[0]?.field]).toEqual(['E_INPUT', 'bye']);
    // After `--` it is an argument, not the flag: the error is for people.
    expect((await refusedLocally(['buy', '--markte', 'x', '--', '--json'])).stderr).toMatch(/^error: unknown option '--markte'/);
  });

  it('a flag without its value', async () => {
    expect((await refusedLocally(['buy', '--market', 'BTC_USDT', '--amount'])).stderr).toContain("error: option '--amount <decimal>' argument missing");
  });

  it('an stp mode outside the allowed set, and a client order id with a bad character, both reported at once', async () => {
    const result = await refusedLocally(['buy', '--market', 'BTC_USDT', '--amount', '0.001', '--stp', 'cancel', '--client-order-id', 'a/b']);
    expect(result.stderr).toContain('error: --stp: must be no, cb (cancel both), cn (cancel new) or co (cancel old); the long forms cancel_both, cancel_new and cancel_old are read too (got "cancel")');
    expect(result.stderr).toContain('error: --client-order-id: must be 1 to 64 characters, only letters, digits, dashes, dots and underscores (got "a/b")');
  });

  it('a market that is not BASE_QUOTE, and an empty plan', async () => {
    expect((await refusedLocally(['ticker', '--market', 'BTCUSDT'])).stderr).toContain('error: --market: must be a market such as BTC_USDT');
    expect((await refusedLocally(['flex', 'withdraw', '--plan', '', '--amount', '1'])).stderr).toContain('error: --plan: must be a plan id');
  });

  it('a private command without STACKER_API_KEY names the variable and how to set it', async () => {
    const result = await refusedLocally(['balance'], { STACKER_BASE_URL: proxy.url });
    expect(result.stderr).toMatch(/^error: STACKER_API_KEY: is not set; `stacker balance` is a private command and needs an API key: set it in the environment \(export STACKER_API_KEY=/m);
    expect(result.stderr).toContain('--env-file FILE');
  });

  it('a private command over plain http:// to another machine: its key, signed payloads and answers would cross the network in clear', async () => {
    const keys = { STACKER_API_KEY: API_KEY, STACKER_API_SECRET: API_SECRET };
    const rule =
      'is plain http:// to exchange.example, which is not this machine: signed requests and account answers would cross the network in clear; use https:// ' +
      '(plain http is for a sandbox on this machine: 127.0.0.1, [::1] or localhost; on a lab network of your own, STACKER_ALLOW_PLAIN_HTTP=1 allows it)';
    expect((await refusedLocally(['balance', '--base-url', 'http://exchange.example:8787'], keys)).stderr).toBe(`error: --base-url: ${rule}\n`);
    const json = await refusedLocally(['codes', '--json'], { ...keys, STACKER_BASE_URL: 'http://exchange.example:8787' });
    expect(JSON.parse(json.stderr)).toMatchObject({ error: { code: 'E_CONFIG', problems: [{ source: 'environment', field: 'STACKER_BASE_URL', rule }] } });
  });

  it('a missing --env-file', async () => {
    // `node -- bin/stacker.js`: see the next test for why the `--` is needed to reach our own check.
    const before = proxy.requests.length;
    const result = await runCli(['ping', '--env-file', '/nonexistent/stacker.env'], { STACKER_BASE_URL: proxy.url }, ['--']);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toBe('error: --env-file: file not found: /nonexistent/stacker.env\n');
    expect(proxy.requests.length).toBe(before);
  });

  it('a missing, folder or unreadable --env-file through every way of starting stacker: its own message, exit 2, nothing sent', async () => {
    // Node takes `--env-file` anywhere on its own command line up to a `--`, and exits 9 before
    // stacker runs: every entry point passes `--` to Node (package scripts, bin/stacker.js's
    // shebang, bin/daemon.sh), and `npx stacker -- …` works for npx's own Node.
    const folder = mkdtempSync(join(tmpdir(), 'stacker-cli-envdir-'));
    const pinnedFirst = { STACKER_BASE_URL: proxy.url, PATH: `${dirname(process.execPath)}:${process.env['PATH'] ?? ''}` };
    const ways: Array<[string, (args: string[]) => Promise<CliResult>]> = [
      ['node -- src/cli.ts (the sources, as the tests start them)', (args) => finished(spawn(process.execPath, ['--', fileURLToPath(new URL('../../src/cli.ts', import.meta.url)), ...args], { env: cleanEnv(pinnedFirst), stdio: ['ignore', 'pipe', 'pipe'] }))],
      ['bin/stacker.js run by its shebang (npx, an installed stacker)', (args) => finished(spawn(BIN, args, { env: cleanEnv(pinnedFirst), stdio: ['ignore', 'pipe', 'pipe'] }))],
      ['node -- bin/stacker.js (npm start --)', (args) => finished(spawn(process.execPath, ['--', fileURLToPath(new URL('../../bin/stacker.js', import.meta.url)), ...args], { env: cleanEnv(pinnedFirst), stdio: ['ignore', 'pipe', 'pipe'] }))],
      ['a leading -- (npx stacker -- …)', (args) => runCli(['--', ...args], { STACKER_BASE_URL: proxy.url }, ['--'])],
    ];
    try {
      const before = proxy.requests.length;
      for (const [way, run] of ways) {
        for (const [path, message] of [
          ['/nonexistent/stacker.env', 'file not found: /nonexistent/stacker.env'],
          [folder, `is a directory, not a file: ${folder}`],
          ['/etc/hostname/stacker.env', 'cannot be read (ENOTDIR): /etc/hostname/stacker.env'],
        ] as const) {
          const result = await run(['ping', '--env-file', path]);
          expect([way, result.code, result.stderr]).toEqual([way, 2, `error: --env-file: ${message}\n`]);
        }
      }
      expect(proxy.requests.length).toBe(before);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('an --env-file that sets a key twice: refused with the file, the key and both lines, exit 2, nothing sent', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'stacker-cli-env-')), 'twice.env');
    writeFileSync(file, `STACKER_BASE_URL=${proxy.url}\n# later\nSTACKER_LOG_LEVEL=info\n\nexport STACKER_BASE_URL=${proxy.url}\n`);
    try {
      const before = proxy.requests.length;
      const result = await runCli(['ping', '--env-file', file], {}, ['--']);
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(`error: ${file}: STACKER_BASE_URL: is set on lines 1 and 5; dotenv would keep the last one without a word, so say it once\n`);
      expect(proxy.requests.length).toBe(before);
    } finally {
      rmSync(dirname(file), { recursive: true, force: true });
    }
  });

  it('an --env-file with the keys is read (and never echoed)', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'stacker-cli-env-')), 'sandbox.env');
    writeFileSync(file, `STACKER_BASE_URL=${proxy.url}\nSTACKER_API_KEY=${API_KEY}\nSTACKER_API_SECRET=${API_SECRET}\n`);
    try {
      const result = await stacker(['balance', '--ticker', 'ETH', '--env-file', file], {});
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/^ETH\s+1\.2$/m);
    } finally {
      rmSync(dirname(file), { recursive: true, force: true });
    }
  });
});

describe('transient failures exit 4', () => {
  it('a balance read that keeps answering 503', async () => {
    sandbox.faults.inject({ path: '/api/v4/main-account/balance', kind: 'status', status: 503, times: Number.POSITIVE_INFINITY });
    try {
      const result = await stacker(['balance']);
      expect(result.code).toBe(4);
      expect(result.stderr).toMatch(/^error: E_UNAVAILABLE \(ServiceUnavailableError\): the exchange answered HTTP 503/m);
      expect(result.stderr).toContain('this is usually temporary');
      // A read changes nothing at the exchange: there is no "operation" that may have happened.
      expect(result.stderr).not.toContain('may or may not have happened');
    } finally {
      sandbox.faults.clear();
    }
  });

  it('a buy whose answer is lost says the order may exist and how to look it up, and that lookup finds it', async () => {
    sandbox.faults.inject({ path: '/api/v4/order/stock_market', kind: 'drop-after-commit' });
    try {
      const result = await stacker(['buy', '--market', 'ETH_USDT', '--amount', '0.01', '--client-order-id', 'lost-answer-1']);
      expect(result.code).toBe(4);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain('the request may have reached the exchange: the operation may or may not have happened');
      expect(result.stderr).toContain('check before repeating it: stacker order --client-order-id lost-answer-1 --market ETH_USDT');
      // A buy that may have filled is never to be "tried again later": that would be the second buy.
      expect(result.stderr).not.toMatch(/try again/);
    } finally {
      sandbox.faults.clear();
    }
    const lookup = await stacker(['order', '--client-order-id', 'lost-answer-1', '--market', 'ETH_USDT', '--json']);
    const found = parseJson(lookup) as { orders: Array<{ source: string; status: string; filledBase: string }> };
    expect(found.orders).toEqual([expect.objectContaining({ source: 'history', status: 'FILLED', filledBase: '0.01' })]);
  });

  it("a buy the exchange's throttle turned away (HTTP 400 \"Too Many Attempts.\") was not placed: exit 4, try again later, nothing to look up", async () => {
    sandbox.faults.inject({ path: '/api/v4/order/stock_market', kind: 'status', status: 400, body: { message: 'Too Many Attempts.', code: 0 } });
    const before = sandbox.exchange.orderHistory({}).length;
    try {
      const result = await stacker(['buy', '--market', 'ETH_USDT', '--amount', '0.01', '--client-order-id', 'throttled-1']);
      expect(result.code).toBe(4);
      expect(result.stderr).toMatch(/^error: E_RATE_LIMIT \(ThrottledError\): the exchange answered HTTP 400 on \/api\/v4\/order\/stock_market$/m);
      expect(result.stderr).toContain('this is usually temporary; try again later');
      expect(result.stderr).not.toContain('may have reached the exchange');
    } finally {
      sandbox.faults.clear();
    }
    expect(sandbox.exchange.orderHistory({})).toHaveLength(before);
  });

  it.each([
    ['a body cut mid-way', '{"orderId":4,"clientOrderId":"unread'],
    ['an envelope it does not know', { success: true, result: { orderId: 4 } }],
  ])('a buy answered HTTP 200 with an answer it cannot read (%s) is a lost answer: exit 4, the order looked up, never "refused"', async (_what, body) => {
    const id = `unreadable-${randomBytes(3).toString('hex')}`;
    sandbox.faults.inject({ path: '/api/v4/order/stock_market', kind: 'status', status: 200, body, commit: true, times: 2 });
    let lookup = '';
    try {
      const result = await stacker(['buy', '--market', 'ETH_USDT', '--amount', '0.01', '--client-order-id', id]);
      expect(result.code, result.stderr).toBe(4);
      expect(result.stderr).toMatch(/^error: E_PROTOCOL \(ProtocolError\): the exchange answered HTTP 200 on \/api\/v4\/order\/stock_market$/m);
      expect(result.stderr).toContain(`check before repeating it: stacker order --client-order-id ${id} --market ETH_USDT`);
      const json = await stacker(['buy', '--market', 'ETH_USDT', '--amount', '0.01', '--json']);
      expect(json.code).toBe(4);
      const error = (JSON.parse(json.stderr) as { error: { code: string; outcomeUnknown: boolean; lookup: string } }).error;
      expect(error).toMatchObject({ code: 'E_PROTOCOL', outcomeUnknown: true });
      lookup = error.lookup;
    } finally {
      sandbox.faults.clear();
    }
    for (const command of [['order', '--client-order-id', id, '--market', 'ETH_USDT'], lookup.split(' ').slice(1)]) {
      const found = parseJson(await stacker([...command, '--json'])) as { orders: Array<{ status: string }> };
      expect(found.orders).toEqual([expect.objectContaining({ status: 'FILLED' })]);
    }
  });

  it('a buy whose answer is lost, with --json, carries the lookup command in its error (the generated id is known nowhere else)', async () => {
    sandbox.faults.inject({ path: '/api/v4/order/stock_market', kind: 'drop-after-commit' });
    let lookup = '';
    try {
      const result = await stacker(['buy', '--market', 'ETH_USDT', '--amount', '0.01', '--json']);
      expect(result.code).toBe(4);
      expect(result.stdout).toBe('');
      const error = (JSON.parse(result.stderr) as { error: { outcomeUnknown: boolean; lookup: string } }).error;
      expect(error.outcomeUnknown).toBe(true);
      expect(error.lookup).toMatch(/^stacker order --client-order-id cli-[0-9a-z]+-[0-9a-f]{8} --market ETH_USDT$/);
      lookup = error.lookup;
    } finally {
      sandbox.faults.clear();
    }
    const found = parseJson(await stacker([...lookup.split(' ').slice(1), '--json'])) as { orders: Array<{ status: string }> };
    expect(found.orders).toEqual([expect.objectContaining({ status: 'FILLED' })]);
  });

  it('a buy on --account whose answer is lost prints a lookup on that same account, which finds the order', async () => {
    // The default key is another account's (unknown to this exchange): a lookup without
    // --account would ask it, not the account the order was placed on.
    const env = { STACKER_BASE_URL: proxy.url, STACKER_API_KEY: 'someone-else', STACKER_API_SECRET: 'someone-elses-secret', STACKER_ACCOUNT_kids_API_KEY: API_KEY, STACKER_ACCOUNT_kids_API_SECRET: API_SECRET };
    sandbox.faults.inject({ path: '/api/v4/order/stock_market', kind: 'drop-after-commit' });
    let result: CliResult;
    try {
      result = await stacker(['buy', '--account', 'kids', '--market', 'ETH_USDT', '--amount', '0.01', '--client-order-id', 'lost-on-kids'], env);
    } finally {
      sandbox.faults.clear();
    }
    expect(result.code).toBe(4);
    const printed = /check before repeating it: (stacker order .*)$/m.exec(result.stderr)?.[1] ?? '';
    expect(printed).toBe('stacker order --client-order-id lost-on-kids --market ETH_USDT --account kids');
    const found = parseJson(await stacker([...printed.split(' ').slice(1), '--json'], env)) as { orders: Array<{ clientOrderId: string; status: string }> };
    expect(found.orders).toEqual([expect.objectContaining({ clientOrderId: 'lost-on-kids', status: 'FILLED' })]);
  });

  it('a flex withdrawal on --account whose answer is lost prints a check on that same account', async () => {
    const env = { STACKER_BASE_URL: proxy.url, STACKER_API_KEY: 'someone-else', STACKER_API_SECRET: 'someone-elses-secret', STACKER_ACCOUNT_kids_API_KEY: API_KEY, STACKER_ACCOUNT_kids_API_SECRET: API_SECRET };
    sandbox.faults.inject({ path: '/api/v4/main-account/smart-flex/investments/withdraw', kind: 'drop-after-commit' });
    let result: CliResult;
    try {
      result = await stacker(['flex', 'withdraw', '--account', 'kids', '--plan', DEMO_FLEX_PLAN_ID, '--amount', '1'], env);
    } finally {
      sandbox.faults.clear();
    }
    expect(result.code).toBe(4);
    const printed = /check before repeating it: (stacker .*)$/m.exec(result.stderr)?.[1] ?? '';
    expect(printed).toBe(`stacker flex investments --plan ${DEMO_FLEX_PLAN_ID} --account kids`);
    const check = await stacker(printed.split(' ').slice(1), env);
    expect([check.code, check.stderr]).toEqual([0, '']);
    expect(check.stdout).toContain(DEMO_FLEX_PLAN_ID);
  });

  it('a lost buy\'s lookup names the --base-url and --env-file it was given, quoted for the shell', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'stacker lookup '));
    const envFile = join(folder, 'my keys.env');
    writeFileSync(envFile, `STACKER_API_KEY=${API_KEY}\nSTACKER_API_SECRET=${API_SECRET}\n`);
    sandbox.faults.inject({ path: '/api/v4/order/stock_market', kind: 'drop-after-commit' });
    try {
      const result = await stacker(['buy', '--market', 'ETH_USDT', '--amount', '0.01', '--client-order-id', 'lost-flags', '--base-url', proxy.url, '--env-file', envFile], {});
      expect(result.code).toBe(4);
      expect(result.stderr).toContain(`check before repeating it: stacker order --client-order-id lost-flags --market ETH_USDT --base-url ${proxy.url} --env-file '${envFile}'\n`);
    } finally {
      sandbox.faults.clear();
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('a base URL where nothing listens', async () => {
    const port = await closedPort();
    const result = await stacker(['ping', '--base-url', `http://127.0.0.1:${port}`]);
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/^error: E_NETWORK \(NetworkError\)/m);
  });
});

describe('help', () => {
  const commands = [[], ['sandbox'], ['ping'], ['markets'], ['ticker'], ['balance'], ['codes'], ['flex'], ['flex', 'plans'], ['flex', 'investments'], ['flex', 'withdraw'], ['buy'], ['order']];
  it.each(commands.map((c) => [c.join(' ') || '(root)', c] as const))('--help on %s exits 0 with usage on stdout', async (_name, command) => {
    const before = proxy.requests.length;
    const result = await stacker([...command, '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^Usage: stacker${command.length ? ` ${command.join(' ')}` : ''} `));
    expect(proxy.requests.length).toBe(before);
  });

  it('--version prints the version and, from a git checkout, the commit it runs', async () => {
    const result = await stacker(['--version']);
    expect(result.code).toBe(0);
    const { buildVersion } = await import('../../src/daemon/build-version.ts');
    expect(result.stdout).toBe(`${buildVersion()}\n`);
    expect(result.stdout).toMatch(/^\d+\.\d+\.\d+(\+[0-9a-f]{7})?\n$/);
    const { existsSync } = await import('node:fs');
    if (existsSync(new URL('../../.git', import.meta.url))) expect(result.stdout).toMatch(/\+[0-9a-f]{7}\n$/);
    // --help's line for it names this build, not an example that ages.
    const help = await stacker(['--help']);
    expect(help.stdout.replace(/\s+/g, ' ')).toContain(`(this build: ${buildVersion()})`);
  });
});

/** A port that was free a moment ago: listen on 0, note the port, close. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
