/**
 * CPU per signed request: stacker's ApiClient against a bare undici Pool + HMAC baseline doing
 * the same request (same endpoint, same sandbox, same concurrency). The sandbox runs in another
 * process so only the client side is counted. Rounds alternate to cancel drift.
 */
import { createHmac } from 'node:crypto';
import { Pool } from 'undici';
import { ApiClient } from '../src/api/client.ts';
import { median, type SandboxProcess } from './child.ts';

const PATH = '/api/v4/trade-account/balance';
// With nonceWindow the nonce must stay within 5 s of the server clock. Faster than 1 request/ms,
// a strictly increasing ms nonce runs ahead of the clock, so each phase is kept short and
// followed by a pause that lets the clock catch up (the pause costs no CPU and is not measured).
const CATCH_UP_MS = 3_000;
const pause = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, CATCH_UP_MS));
const CONCURRENCY = 8;

async function runConcurrently(total: number, one: () => Promise<unknown>): Promise<void> {
  let started = 0;
  const worker = async (): Promise<void> => {
    while (started < total) {
      started += 1;
      await one();
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

async function cpuMicrosPerRequest(total: number, one: () => Promise<unknown>): Promise<number> {
  const before = process.cpuUsage();
  await runConcurrently(total, one);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / total;
}

function baseline(sandbox: SandboxProcess): { one: () => Promise<unknown>; close: () => Promise<void> } {
  const pool = new Pool(sandbox.url, { connections: CONCURRENCY });
  let lastNonce = 0;
  const one = async (): Promise<unknown> => {
    lastNonce = Math.max(lastNonce + 1, Date.now());
    const body = JSON.stringify({ request: PATH, nonce: String(lastNonce), nonceWindow: true, ticker: 'USDT' });
    const payload = Buffer.from(body).toString('base64');
    const signature = createHmac('sha512', sandbox.apiSecret).update(payload).digest('hex');
    const response = await pool.request({
      method: 'POST',
      path: PATH,
      body,
      headers: {
        'content-type': 'application/json',
        'x-txc-apikey': sandbox.apiKey,
        'x-txc-payload': payload,
        'x-txc-signature': signature,
      },
    });
    const parsed: unknown = await response.body.json();
    if (response.statusCode !== 200) throw new Error(`baseline got HTTP ${response.statusCode}`);
    return parsed;
  };
  return { one, close: () => pool.close() };
}

export interface ClientCpuResult {
  readonly requestsPerRound: number;
  readonly rounds: number;
  readonly stackerMicros: number;
  readonly baselineMicros: number;
  readonly ratio: number;
}

export async function benchClientCpu(sandbox: SandboxProcess, requestsPerRound = 2000, rounds = 5): Promise<ClientCpuResult> {
  const client = new ApiClient({
    baseUrl: sandbox.url,
    credentials: { apiKey: sandbox.apiKey, apiSecret: sandbox.apiSecret },
    connections: CONCURRENCY,
    // The limiter stays on (its cost is part of the client) but far above what a bench reaches.
    rateLimits: { 'trade-query': { limit: 1_000_000_000, windowMs: 10_000 } },
  });
  const ours = (): Promise<unknown> => client.tradeBalance('USDT');
  const bare = baseline(sandbox);
  try {
    await runConcurrently(1000, ours);
    await pause();
    await runConcurrently(1000, bare.one);
    await pause();
    const stacker: number[] = [];
    const base: number[] = [];
    for (let round = 0; round < rounds; round += 1) {
      stacker.push(await cpuMicrosPerRequest(requestsPerRound, ours));
      await pause();
      base.push(await cpuMicrosPerRequest(requestsPerRound, bare.one));
      await pause();
    }
    const stackerMicros = median(stacker);
    const baselineMicros = median(base);
    return { requestsPerRound, rounds, stackerMicros, baselineMicros, ratio: stackerMicros / baselineMicros };
  } finally {
    await client.close();
    await bare.close();
  }
}
