import { Agent, request } from 'undici';
import { signRequest } from '../../src/api/sign.ts';
import { type Sandbox, type SandboxOptions, startSandbox } from '../../src/sandbox/server.ts';

export interface Reply {
  readonly status: number;
  readonly contentType: string;
  readonly text: string;
  /** The parsed body when it was JSON, else undefined. */
  readonly json: unknown;
}

export interface CallOptions {
  /** Nonce text; default a fresh ms timestamp from `clock` (strictly increasing). */
  readonly nonce?: string;
  /** Default true, like the official clients. */
  readonly nonceWindow?: boolean;
  readonly apiKey?: string;
  readonly apiSecret?: string;
  /** Rewrite the signed request before it is sent (to break it on purpose). */
  readonly tamper?: (signed: { body: string; headers: Record<string, string> }) => { body: string; headers: Record<string, string> };
}

/**
 * A test harness: one sandbox, one undici Agent, signed calls. `stop()` closes both; the
 * suites call it in afterEach/afterAll so no server or socket outlives its test.
 */
export class Harness {
  readonly sandbox: Sandbox;
  readonly #agent = new Agent({ keepAliveTimeout: 1000 });
  readonly #clock: { nowMs(): number };
  #lastNonce = 0;

  private constructor(sandbox: Sandbox, clock: { nowMs(): number }) {
    this.sandbox = sandbox;
    this.#clock = clock;
  }

  static async start(options: SandboxOptions = {}): Promise<Harness> {
    const clock = options.clock ?? { nowMs: () => Date.now() };
    return new Harness(await startSandbox({ ...options, clock }), clock);
  }

  nextNonce(): string {
    this.#lastNonce = Math.max(this.#clock.nowMs(), this.#lastNonce + 1);
    return String(this.#lastNonce);
  }

  async get(pathAndQuery: string): Promise<Reply> {
    const response = await request(`${this.sandbox.url}${pathAndQuery}`, { dispatcher: this.#agent });
    return read(response);
  }

  async post(path: string, params: Record<string, unknown> = {}, options: CallOptions = {}): Promise<Reply> {
    const signed = signRequest(
      path,
      options.nonce ?? this.nextNonce(),
      params,
      options.apiKey ?? this.sandbox.apiKey,
      options.apiSecret ?? this.sandbox.apiSecret,
      options.nonceWindow ?? true,
    );
    const plain = { body: signed.body, headers: { ...signed.headers } as Record<string, string> };
    const sent = options.tamper ? options.tamper(plain) : plain;
    return this.raw(path, sent.body, sent.headers);
  }

  async raw(path: string, body: string, headers: Record<string, string>): Promise<Reply> {
    const response = await request(`${this.sandbox.url}${path}`, { method: 'POST', body, headers, dispatcher: this.#agent });
    return read(response);
  }

  async stop(): Promise<void> {
    await this.sandbox.stop();
    await this.#agent.close();
  }
}

async function read(response: Awaited<ReturnType<typeof request>>): Promise<Reply> {
  const text = await response.body.text();
  const contentType = String(response.headers['content-type'] ?? '');
  let json: unknown;
  if (contentType.startsWith('application/json')) json = JSON.parse(text);
  return { status: response.statusCode, contentType, text, json };
}

/** A clock tests move by hand (shared by the sandbox and the nonces it checks). */
export function manualClock(startMs = 1_760_000_000_000): { nowMs(): number; advance(ms: number): void } {
  let now = startMs;
  return {
    nowMs: () => now,
    advance: (ms) => {
      now += ms;
    },
  };
}

export const PATHS = {
  mainBalance: '/api/v4/main-account/balance',
  tradeBalance: '/api/v4/trade-account/balance',
  transfer: '/api/v4/main-account/transfer',
  codes: '/api/v4/main-account/codes/my',
  flexPlans: '/api/v4/main-account/smart-flex/plans',
  flexInvestments: '/api/v4/main-account/smart-flex/investments',
  flexWithdraw: '/api/v4/main-account/smart-flex/investments/withdraw',
  stockMarket: '/api/v4/order/stock_market',
  market: '/api/v4/order/market',
  history: '/api/v4/trade-account/order/history',
  activeOrders: '/api/v4/orders',
  deals: '/api/v4/trade-account/order',
} as const;
