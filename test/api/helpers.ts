import { MockAgent } from 'undici';
import { ApiClient, type ApiClientOptions, type RequestEvent } from '../../src/api/client.ts';

export const ORIGIN = 'http://exchange.test';
export const API_KEY = 'test-api-key-0001';
export const API_SECRET = 'test-api-secret-0001';

/** A clock that moves only when told to. */
export function fixedClock(startMs: number): { nowMs(): number; set(ms: number): void; advance(ms: number): void } {
  let now = startMs;
  return {
    nowMs: () => now,
    set: (ms) => {
      now = ms;
    },
    advance: (ms) => {
      now += ms;
    },
  };
}

/** A MockAgent that refuses real connections and remembers every request. */
export function mockExchange(): { agent: MockAgent; pool: ReturnType<MockAgent['get']> } {
  const agent = new MockAgent({ enableCallHistory: true });
  agent.disableNetConnect();
  return { agent, pool: agent.get(ORIGIN) };
}

export interface Harness {
  readonly client: ApiClient;
  readonly agent: MockAgent;
  readonly pool: ReturnType<MockAgent['get']>;
  readonly events: RequestEvent[];
  readonly sleeps: number[];
  readonly clock: ReturnType<typeof fixedClock>;
  /** Requests that reached the dispatcher. */
  calls(): number;
}

export function harness(options: Partial<ApiClientOptions> = {}): Harness {
  const { agent, pool } = mockExchange();
  const events: RequestEvent[] = [];
  const sleeps: number[] = [];
  const clock = fixedClock(1_760_000_000_000);
  const client = new ApiClient({
    baseUrl: ORIGIN,
    credentials: { apiKey: API_KEY, apiSecret: API_SECRET },
    dispatcher: agent,
    clock,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: () => 0.5,
    rateLimits: false,
    // These tests are about one request at a time: the fixed clock is the exchange's (test/api/server-clock.test.ts measures it).
    serverTime: false,
    onRequest: (event) => events.push(event),
    ...options,
  });
  return { client, agent, pool, events, sleeps, clock, calls: () => agent.getCallHistory()?.calls().length ?? 0 };
}

/** The body a mocked endpoint was called with, parsed. */
export function jsonBody(body: unknown): Record<string, unknown> {
  return JSON.parse(String(body)) as Record<string, unknown>;
}

export { failure } from '../support/thrown.ts';
