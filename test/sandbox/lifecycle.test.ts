import { spawn } from 'node:child_process';
import { inspect } from 'node:util';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { ZERO } from '../../src/domain/money.ts';
import { startSandbox } from '../../src/sandbox/server.ts';
import { DEMO_FLEX_PLAN_ID } from '../../src/sim/seed.ts';
import { Harness, PATHS } from './helpers.ts';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

describe('sandbox lifecycle', () => {
  it('listens on 127.0.0.1 with a random port and the given credentials', async () => {
    const h = (harness = await Harness.start({ apiKey: 'demo-key', apiSecret: 'demo-secret' }));
    expect(h.sandbox.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect([h.sandbox.apiKey, h.sandbox.apiSecret]).toEqual(['demo-key', 'demo-secret']);
    expect((await h.post(PATHS.mainBalance)).status).toBe(200);
  });

  it('does not show the secret when the sandbox object is logged or serialised', async () => {
    const h = (harness = await Harness.start());
    expect(JSON.stringify(h.sandbox)).not.toContain(h.sandbox.apiSecret);
    expect(inspect(h.sandbox, { depth: 4 })).not.toContain(h.sandbox.apiSecret);
  });

  it('closes keep-alive connections on stop, and refuses connections afterwards', async () => {
    const sandbox = await startSandbox();
    const agent = new Agent({ keepAliveTimeout: 60_000 });
    try {
      const first = await request(`${sandbox.url}/api/v4/public/ping`, { dispatcher: agent });
      await first.body.text();
      await sandbox.stop();
      await expect(request(`${sandbox.url}/api/v4/public/ping`, { dispatcher: agent })).rejects.toThrow();
      await sandbox.stop(); // idempotent
    } finally {
      await agent.destroy();
    }
  });

  it('lets the process exit after stop (no timers or sockets left behind)', async () => {
    const server = fileURLToPath(new URL('../../src/sandbox/server.ts', import.meta.url));
    const script = [
      `import { startSandbox } from ${JSON.stringify(server)};`,
      'const s = await startSandbox();',
      "s.faults.inject({ path: '/api/v4/public/ping', kind: 'latency', latencyMs: 600000 });",
      "fetch(s.url + '/api/v4/public/ping').catch(() => {});",
      'await new Promise((r) => setTimeout(r, 100));',
      "const r = await fetch(s.url + '/api/v4/public/time'); await r.text();",
      'await s.stop();',
    ].join('\n');
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });

  it('starts an empty account with the demo markets when asked', async () => {
    const h = (harness = await Harness.start({ seed: 'empty' }));
    expect((await h.post(PATHS.tradeBalance)).json).toEqual({});
    expect((await h.post(PATHS.codes)).json).toMatchObject({ total: 0, data: [] });
    expect(((await h.get('/api/v4/public/markets')).json as unknown[]).length).toBe(2);
  });
});

describe('the books behind the HTTP face', () => {
  it('balance the ledger exactly after a sequence of requests', async () => {
    const h = (harness = await Harness.start());
    await h.post(PATHS.transfer, { ticker: 'USDT', amount: '777.77', from: 'main', to: 'spot' });
    await h.post(PATHS.stockMarket, { market: 'BTC_USDT', side: 'buy', amount: '0.004321' });
    await h.post(PATHS.market, { market: 'ETH_USDT', side: 'buy', amount: '123.45' });
    await h.post(PATHS.flexWithdraw, { plan: DEMO_FLEX_PLAN_ID, amount: '12.345' });
    await h.post(PATHS.transfer, { ticker: 'BTC', amount: '0.001', from: 'spot', to: 'main' });
    // Refused requests move nothing.
    await h.post(PATHS.stockMarket, { market: 'BTC_USDT', side: 'buy', amount: '1' });
    const exchange = h.sandbox.exchange;
    expect(exchange.verifyLedger()).toBe(true);
    const ledger = exchange.ledger();
    const sum = (account: string, asset: string): string =>
      ledger.filter((e) => e.account === account && e.asset === asset).reduce((s, e) => s.add(e.delta), ZERO).toFixed();
    const main = (await h.post(PATHS.mainBalance)).json as Record<string, { main_balance: string }>;
    const spot = (await h.post(PATHS.tradeBalance)).json as Record<string, { available: string; freeze: string }>;
    for (const [asset, { main_balance }] of Object.entries(main)) expect(sum('main', asset)).toBe(main_balance);
    for (const [asset, { available }] of Object.entries(spot)) expect(sum('spot', asset)).toBe(available);
    // Hand-computed: 1777.77 − (0.004321 × 65000 = 280.865) − fee 0.280865 − (0.0391 ETH × 3150.42 = 123.181422) − fee 0.12318143.
    expect(spot['USDT']?.available).toBe('1373.31953157');
    expect(spot['BTC']?.available).toBe('0.003321');
    expect(spot['ETH']?.available).toBe('0.0391');
    expect(main['USDT']?.main_balance).toBe('9234.575');
  });
});
