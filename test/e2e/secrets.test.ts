import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { inspect } from 'node:util';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_EMPTY_FLEX_PLAN_ID, DEMO_FLEX_PLAN_ID } from '../../src/sim/seed.ts';
import { dca } from '../../strategies/dca.ts';
import { flexSweep } from '../../strategies/flex-sweep.ts';
import { type EngineWorld, engineWorld, runtimeOf } from '../engine/harness.ts';

// The secret grep: drive every path that writes logs or errors (the engine through every fault
// kind, the CLI's error paths, JSON and text output) with canary secrets, collect every byte
// written, and look for the secrets and for anything shaped like a signature or a signed payload.
const SECRET = 'canary-secret-7f3a9c1e5b2d4f6a8c0e1a3b5d7f9c2e';
const WRONG_SECRET = 'canary-wrong-0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e';
/** An X-TXC-SIGNATURE is 128 hex digits; an X-TXC-PAYLOAD is base64 of `{"request":...`. */
const SIGNATURE_SHAPE = /[0-9a-f]{128}/i;
const PAYLOAD_SHAPE = /eyJyZXF1ZXN0Ijoi/;
const run = promisify(execFile);
const CLI = resolve(import.meta.dirname, '../../src/cli.ts');

let world: EngineWorld;
const collected: string[] = [];

beforeAll(async () => {
  world = await engineWorld({ apiSecret: SECRET });
});
afterAll(async () => {
  await world.close();
});

const expectClean = (text: string): void => {
  expect(text).not.toContain(SECRET);
  expect(text).not.toContain(WRONG_SECRET);
  expect(text).not.toMatch(SIGNATURE_SHAPE);
  expect(text).not.toMatch(PAYLOAD_SHAPE);
};

const record = (value: unknown): void => {
  collected.push(typeof value === 'string' ? value : `${JSON.stringify(value)}\n${inspect(value, { depth: 8 })}`);
};

describe('no secret or signature in any log line or error', () => {
  it('through every fault kind on orders, transfers and withdrawals', async () => {
    const faults = [
      { kind: 'drop-after-commit' },
      { kind: 'reset' },
      { kind: 'status', status: 503, body: { message: 'down' } },
      { kind: 'status', status: 503, body: { message: 'down' }, commit: true },
      { kind: 'status', status: 429, body: { code: 0, message: 'Too many attempts', errors: {} } },
      { kind: 'status', status: 429, body: { code: 0, errors: {}, message: 'Too many requests.' } },
      { kind: 'latency', latencyMs: 2500 },
    ] as const;
    const paths = ['/api/v4/order/stock_market', '/api/v4/main-account/transfer', '/api/v4/main-account/smart-flex/investments/withdraw'];
    let slot = Date.UTC(2026, 0, 1);
    for (const path of paths) {
      for (const fault of faults) {
        world.sandbox.faults.clear();
        world.sandbox.faults.inject({ path, ...fault });
        slot += 60_000;
        const instances = [
          runtimeOf({ instance: 'dca', strategy: dca, env: { STRATEGY: 'dca', SCHEDULE: '0 9 * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001', ALLOW_TRANSFER: 'true' } }),
          runtimeOf({ instance: 'sweep', strategy: flexSweep, env: { STRATEGY: 'flex-sweep', SCHEDULE: '0 9 * * *', PLAN: DEMO_FLEX_PLAN_ID, MODE: 'reserve', RESERVE: '10001' } }),
        ];
        // Funds on main only, so the buy needs a transfer first.
        const spot = world.sandbox.exchange.tradeBalance('USDT').available;
        if (spot.gt(0)) world.sandbox.exchange.transfer({ ticker: 'USDT', amount: spot, from: 'spot', to: 'main' });
        const engine = world.engine(instances);
        record(await engine.runSlot('dca', slot));
        record(await engine.runSlot('sweep', slot));
        await engine.track();
      }
    }
    world.sandbox.faults.clear();
    const wrong = world.engine([runtimeOf({ instance: 'dca', strategy: dca, env: { STRATEGY: 'dca', SCHEDULE: '0 9 * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001' } })], {
      credentials: { apiKey: world.sandbox.apiKey, apiSecret: WRONG_SECRET },
    });
    await wrong.runSlot('dca', slot + 60_000);
    for (const error of world.fatal) record(error);
    record(world.logs);
    expect(world.logs.length).toBeGreaterThan(50);
    expect(world.fatal.map((e) => e.code)).toContain('E_AUTH');
    expectClean(collected.join('\n'));
  }, 120_000);

  it('in the CLI: text and JSON, success and every kind of failure', async () => {
    const env = { PATH: process.env['PATH'] ?? '', HOME: world.dir, STACKER_BASE_URL: world.sandbox.url, STACKER_API_KEY: world.sandbox.apiKey, STACKER_LOG_LEVEL: 'trace' };
    const runs: Array<[Record<string, string>, string[]]> = [
      [{ STACKER_API_SECRET: SECRET }, ['balance']],
      [{ STACKER_API_SECRET: SECRET }, ['--json', 'balance', '--trade']],
      [{ STACKER_API_SECRET: SECRET }, ['buy', '--market', 'BTC_USDT', '--amount', '0.001']],
      [{ STACKER_API_SECRET: SECRET }, ['--json', 'buy', '--market', 'BTC_USDT', '--amount', '99']],
      [{ STACKER_API_SECRET: SECRET }, ['flex', 'withdraw', '--plan', DEMO_EMPTY_FLEX_PLAN_ID, '--amount', '5']],
      [{ STACKER_API_SECRET: SECRET }, ['codes', '--all']],
      [{ STACKER_API_SECRET: WRONG_SECRET }, ['balance']],
      [{ STACKER_API_SECRET: WRONG_SECRET }, ['--json', 'buy', '--market', 'BTC_USDT', '--amount', '0.001']],
      [{ STACKER_API_SECRET: SECRET, STACKER_BASE_URL: 'http://127.0.0.1:1' }, ['balance']],
    ];
    for (const [extra, args] of runs) {
      // Asynchronously: the sandbox answering these runs in this very process.
      const result = await run(process.execPath, [CLI, ...args], { env: { ...env, ...extra }, encoding: 'utf8', timeout: 30_000 }).catch(
        (error: { code?: number; stdout?: string; stderr?: string }) => ({ stdout: error.stdout ?? '', stderr: error.stderr ?? '', code: error.code }),
      );
      record(`${args.join(' ')}\n${result.stdout}\n${result.stderr}`);
    }
    const text = collected.join('\n');
    expect(text).toContain('E_AUTH');
    expectClean(text);
  }, 120_000);
});
