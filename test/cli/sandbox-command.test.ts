import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { finished, runCli, startCli, waitForOutput } from './run-cli.ts';

/** `stacker sandbox` as a user runs it: a long-lived child process, stopped by a signal. */

const children: ChildProcess[] = [];
const dir = mkdtempSync(join(tmpdir(), 'stacker-sandbox-cli-'));

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function sandboxChild(args: readonly string[]): ChildProcess {
  const child = startCli(['sandbox', '--port', '0', ...args]);
  children.push(child);
  return child;
}

describe('stacker sandbox --fault', () => {
  it('misbehaves as asked over HTTP: an order is taken but answered 502, and shows in the history only after the lag', async () => {
    const child = sandboxChild(['--api-key', 'k', '--api-secret', 's3cret', '--fault', 'accept-then-5xx', '--fault', 'history-lag=1s']);
    const done = finished(child);
    const [, url] = await waitForOutput(child, /base URL\s+(http:\/\/127\.0\.0\.1:\d+)\n/);
    const env = { STACKER_BASE_URL: url as string, STACKER_API_KEY: 'k', STACKER_API_SECRET: 's3cret' };
    const buy = await runCli(['buy', '--market', 'BTC_USDT', '--amount', '0.001', '--client-order-id', 'rehearsal-1', '--json'], env);
    expect(buy.code).toBe(4);
    const soon = await runCli(['order', '--client-order-id', 'rehearsal-1', '--market', 'BTC_USDT', '--json'], env);
    expect(soon.stdout).not.toMatch(/"orderId"/);
    await new Promise((resolve) => setTimeout(resolve, 1200));
    const later = await runCli(['order', '--client-order-id', 'rehearsal-1', '--market', 'BTC_USDT', '--json'], env);
    expect(later.code, later.stderr).toBe(0);
    expect(later.stdout).toMatch(/"clientOrderId": "rehearsal-1"/);
    child.kill('SIGTERM');
    const result = await done;
    expect(result.stdout).toMatch(/faults {6}\/api\/v4\/order\/stock_market: performed, then answered 502/);
    expect(result.stdout).toContain('order history and active orders lag 1000 ms behind each order');
  });

  it("starts afresh, but never hands out an order id of an earlier start: a daemon's journal kept from it meets no second order under an id it holds", async () => {
    const orderIds: string[] = [];
    for (let start = 0; start < 2; start += 1) {
      const child = sandboxChild(['--api-key', 'k', '--api-secret', 's3cret']);
      const done = finished(child);
      const [, url] = await waitForOutput(child, /base URL\s+(http:\/\/127\.0\.0\.1:\d+)\n/);
      const buy = await runCli(['buy', '--market', 'BTC_USDT', '--amount', '0.001', '--client-order-id', `restart-${start}`, '--json'], { STACKER_BASE_URL: url as string, STACKER_API_KEY: 'k', STACKER_API_SECRET: 's3cret' });
      expect(buy.code, buy.stderr).toBe(0);
      orderIds.push((JSON.parse(buy.stdout) as { orderId: string }).orderId);
      child.kill('SIGTERM');
      await done;
    }
    expect(BigInt(orderIds[1] as string)).toBeGreaterThan(BigInt(orderIds[0] as string));
  });

  it('refuses a bad spec with exit 2, naming the flag and the rule, and listens on nothing', async () => {
    const result = await runCli(['sandbox', '--port', '0', '--fault', 'slow']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--fault: "slow": slow needs a duration, such as slow=4s');
  });
});

describe('stacker sandbox --extra-account', () => {
  it('serves more accounts of one exchange, each with the credentials it prints for the daemon, its own balances and ids no other account has', async () => {
    const child = sandboxChild(['--api-key', 'main-key', '--api-secret', 'main-secret', '--extra-account', 'kids', '--json']);
    const done = finished(child);
    const [line] = await waitForOutput(child, /^\{.*\}\n/m);
    const printed = JSON.parse(line as string) as { url: string; accounts: Record<string, { apiKey: string; apiSecret: string }>; env: Record<string, string> };
    const kids = printed.accounts['kids'];
    expect(kids?.apiKey).toMatch(/^[0-9a-f]{32}$/);
    expect(printed.env).toMatchObject({ STACKER_API_KEY: 'main-key', STACKER_ACCOUNT_kids_API_KEY: kids?.apiKey, STACKER_ACCOUNT_kids_API_SECRET: kids?.apiSecret });

    // One-off commands on either account, with the env the sandbox printed.
    const env = printed.env;
    const onMain = await runCli(['buy', '--market', 'BTC_USDT', '--amount', '0.001', '--json'], env);
    const onKids = await runCli(['buy', '--account', 'kids', '--market', 'BTC_USDT', '--amount', '0.002', '--json'], env);
    expect([onMain.code, onKids.code], `${onMain.stderr}${onKids.stderr}`).toEqual([0, 0]);
    const orderId = (text: string): string => (JSON.parse(text) as { orderId: string }).orderId;
    expect(orderId(onKids.stdout)).not.toBe(orderId(onMain.stdout));
    const btc = async (args: string[]): Promise<string> => (await runCli(['balance', '--trade', '--ticker', 'BTC', ...args], env)).stdout;
    expect(await btc([])).not.toBe(await btc(['--account', 'kids']));

    child.kill('SIGTERM');
    expect((await done).code).toBe(0);
  });

  it('refuses a name the daemon could not use, the default account and a name given twice: exit 2, naming the flag', async () => {
    for (const [args, rule] of [
      [['--extra-account', 'a b'], 'must be 1 to 32 letters, digits, underscores or dashes'],
      [['--extra-account', 'default'], '"default" is the sandbox\'s first account'],
      [['--extra-account', 'kids', '--extra-account', 'kids'], '"kids" is given twice'],
    ] as const) {
      const result = await runCli(['sandbox', '--port', '0', ...args]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`--extra-account: ${rule}`);
    }
  });
});

describe('stacker sandbox', () => {
  it('prints its URL, credentials and an env snippet, answers another stacker, logs the request, and exits 0 on SIGTERM', async () => {
    const child = sandboxChild(['--api-key', 'demo-key', '--api-secret', 'demo-secret-123']);
    const done = finished(child);
    const [, url] = await waitForOutput(child, /base URL\s+(http:\/\/127\.0\.0\.1:\d+)\n/);

    const ping = await runCli(['ping', '--base-url', url as string]);
    expect(ping.code, ping.stderr).toBe(0);
    const balance = await runCli(['balance', '--ticker', 'USDT'], { STACKER_BASE_URL: url as string, STACKER_API_KEY: 'demo-key', STACKER_API_SECRET: 'demo-secret-123' });
    expect(balance.code, balance.stderr).toBe(0);
    expect(balance.stdout).toMatch(/^USDT\s+10000$/m);
    expect(`${ping.stdout}${ping.stderr}${balance.stdout}${balance.stderr}`).not.toContain('demo-secret-123');

    const startedMs = Date.now();
    child.kill('SIGTERM');
    const result = await done;
    expect(result.code).toBe(0);
    expect(Date.now() - startedMs).toBeLessThan(5000);

    expect(result.stdout).toMatch(/^ {2}API key {5}demo-key$/m);
    expect(result.stdout).toMatch(/^ {2}API secret {2}demo-secret-123$/m);
    expect(result.stdout).toContain(`export STACKER_BASE_URL=${url} STACKER_API_KEY=demo-key STACKER_API_SECRET=demo-secret-123`);
    expect(result.stdout).toContain('stacker buy --market BTC_USDT --amount 0.001');

    // stderr is not a TTY here, so request lines are pino JSON: method, path, status, ms, and no more.
    const lines = result.stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const served = lines.filter((line) => typeof line['path'] === 'string');
    expect(served).toContainEqual(expect.objectContaining({ method: 'GET', path: '/api/v4/public/ping', status: 200 }));
    expect(served).toContainEqual(expect.objectContaining({ method: 'POST', path: '/api/v4/main-account/balance', status: 200 }));
    for (const line of served) expect(Object.keys(line).sort()).toEqual(['level', 'method', 'ms', 'msg', 'name', 'path', 'status', 'time']);
    expect(result.stderr).not.toContain('demo-secret-123');
    expect(lines.some((line) => line['msg'] === 'sandbox stopped')).toBe(true);
  });

  it('--json prints the URL and credentials as one JSON line and stops on SIGINT', async () => {
    const child = sandboxChild(['--json']);
    const done = finished(child);
    const [line] = await waitForOutput(child, /^\{.*\}\n/);
    const info = JSON.parse(line as string) as { url: string; apiKey: string; apiSecret: string; env: Record<string, string> };
    expect(info.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(info.env).toEqual({ STACKER_BASE_URL: info.url, STACKER_API_KEY: info.apiKey, STACKER_API_SECRET: info.apiSecret });
    const codes = await runCli(['codes', '--json'], info.env);
    expect(codes.code, codes.stderr).toBe(0);
    expect(codes.stdout).not.toContain(info.apiSecret);
    child.kill('SIGINT');
    expect((await done).code).toBe(0);
  });

  it('replays a candle file with --prices and --market at --speed', async () => {
    const csv = join(dir, 'btc.csv');
    const startSec = Math.floor(Date.now() / 1000) - 3600;
    writeFileSync(csv, `time,open,high,low,close,volume\n${startSec},60000,60500,59900,60100,12.5\n${startSec + 60},60100,60200,60000,60050,3.2\n`);
    const child = sandboxChild(['--prices', csv, '--market', 'btc_usdt', '--speed', '60', '--json']);
    const done = finished(child);
    const [line] = await waitForOutput(child, /^\{.*\}\n/);
    const info = JSON.parse(line as string) as { url: string; prices: string };
    expect(info.prices).toBe(`BTC_USDT replayed from ${csv} at 60x`);
    const ticker = await runCli(['ticker', '--market', 'BTC_USDT', '--base-url', info.url, '--json']);
    expect(ticker.code, ticker.stderr).toBe(0);
    expect((JSON.parse(ticker.stdout) as { lastPrice: string }).lastPrice).toMatch(/^60\d{3}(\.\d+)?$/);
    child.kill('SIGTERM');
    expect((await done).code).toBe(0);
  });

  it('refuses a port already in use with exit 2, naming --port', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    try {
      const address = blocker.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      const result = await runCli(['sandbox', '--port', String(port)]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`error: --port: 127.0.0.1:${port} is already in use; choose another port, or --port 0 for a free one`);
      expect(result.stdout).toBe('');
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });

  it('refuses flags that do not fit together before starting anything', async () => {
    const speed = await runCli(['sandbox', '--port', '0', '--speed', '10']);
    expect(speed.code).toBe(2);
    expect(speed.stderr).toContain('error: --speed: only applies with --prices');
    const market = await runCli(['sandbox', '--port', '0', '--prices', join(dir, 'missing.csv')]);
    expect(market.code).toBe(2);
    expect(market.stderr).toContain(`error: --prices: file not found: ${join(dir, 'missing.csv')}`);
    expect(market.stderr).toContain('error: --market: is required with --prices');
  });
});

describe('stacker sandbox --clock-offset', () => {
  it("runs the exchange's clock off this machine's: check prints the skew, and the daemon's signed requests are corrected and trade", async () => {
    const child = sandboxChild(['--api-key', 'k', '--api-secret', 's3cret', '--clock-offset', '40']);
    const done = finished(child);
    const [, url] = await waitForOutput(child, /base URL\s+(http:\/\/127\.0\.0\.1:\d+)\n/);
    const strategies = join(dir, 'clock-strategies');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(strategies, { recursive: true });
    writeFileSync(join(strategies, 'dca-btc.env'), 'STRATEGY=dca\nSCHEDULE="0 9 * * 1"\nMARKET=BTC_USDT\nAMOUNT=0.001\n');
    const env = { STACKER_BASE_URL: url as string, STACKER_API_KEY: 'k', STACKER_API_SECRET: 's3cret', STACKER_MODE: 'live', HOME: dir };
    const checked = await runCli(['check', '--live', '--strategies', strategies], env);
    expect(checked.code, checked.stderr).toBe(0);
    expect(checked.stdout).toMatch(/clock: this machine is (39\.\d|40\.\d) s behind the exchange/);
    const once = await runCli(['run', '--live', '--once', '--strategies', strategies, '--data-dir', join(dir, 'clock-data')], env);
    expect(once.code, once.stderr).toBe(0);
    expect(once.stdout).toMatch(/^dca-btc: done$/m);
    child.kill('SIGTERM');
    const result = await done;
    expect(result.stdout).toContain("its clock is 40 s off this machine's (--clock-offset)");
  });
});
