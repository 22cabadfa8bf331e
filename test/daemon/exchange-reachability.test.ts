import { describe, expect, it } from 'vitest';
import { DaemonHealth } from '../../src/daemon/health-state.ts';
import { EXCHANGE_DOWN_AFTER_MS, ExchangeReachability } from '../../src/daemon/exchange-reachability.ts';
import type { ApiRequestEvent } from '../../src/observability/metrics.ts';
import { MemoryJournal } from '../../src/store/memory-journal.ts';

const T0 = Date.UTC(2026, 10, 28, 9, 48, 28);
const attempt = (account: string, errorCode: string | null, path = '/api/v4/trade-account/balance', status: number | null = null): ApiRequestEvent => ({ account, path, status, durationMs: 10_000, errorCode });

describe("whether an account's exchange answers", () => {
  it('names an account whose exchange has given no usable answer for two minutes, since when and the latest failure, until an answer comes', () => {
    let now = T0;
    const reachability = new ExchangeReachability(() => now);
    reachability.record(attempt('alpha', null));
    reachability.record(attempt('beta', 'E_TIMEOUT'));
    now += 60_000;
    reachability.record(attempt('beta', 'E_UNAVAILABLE', '/api/v4/main-account/balance', 503));
    expect(reachability.problems(2)).toEqual([]);
    expect(reachability.of('beta')).toEqual({ account: 'beta', sinceMs: T0, lastError: 'E_UNAVAILABLE on /api/v4/main-account/balance (HTTP 503)' });
    now = T0 + EXCHANGE_DOWN_AFTER_MS;
    expect(reachability.problems(2)).toEqual([
      'account beta: its exchange has given no usable answer since 2026-11-28T09:48:28.000Z (latest: E_UNAVAILABLE on /api/v4/main-account/balance (HTTP 503)): its slots wait for it or are skipped; the other accounts trade on',
    ]);
    expect(reachability.of('alpha')).toBeNull();
    reachability.record(attempt('beta', null));
    expect(reachability.problems(2)).toEqual([]);
    expect(reachability.of('beta')).toBeNull();
  });

  it("tells the private API from the public one: answered public reads (the clock, the markets) do not clear a private API that does not answer", () => {
    let now = T0;
    const reachability = new ExchangeReachability(() => now);
    reachability.record(attempt('beta', 'E_TIMEOUT', '/api/v4/trade-account/balance'));
    now += 60_000;
    reachability.record(attempt('beta', null, '/api/v4/public/time'));
    reachability.record(attempt('beta', null, '/api/v1/public/kline'));
    now = T0 + EXCHANGE_DOWN_AFTER_MS;
    expect(reachability.of('beta')).toMatchObject({ sinceMs: T0, lastError: 'E_TIMEOUT on /api/v4/trade-account/balance' });
    expect(reachability.problems(2)).toHaveLength(1);
    reachability.record(attempt('beta', null, '/api/v4/main-account/balance'));
    expect(reachability.of('beta')).toBeNull();
  });

  it('counts no answer only: a refusal, a nonce or key problem is an answer; one account of its own is "the exchange"', () => {
    let now = T0;
    const reachability = new ExchangeReachability(() => now);
    for (const code of ['E_EXCHANGE_VALIDATION', 'E_EXCHANGE_REFUSED', 'E_NONCE', 'E_AUTH']) reachability.record(attempt('default', code));
    now += 10 * 60_000;
    expect(reachability.problems(1)).toEqual([]);
    reachability.record(attempt('default', 'E_NETWORK'));
    now += EXCHANGE_DOWN_AFTER_MS;
    reachability.record(attempt('default', 'E_PROTOCOL', '/api/v4/public/ticker', 200));
    // Each side is its own: the private API, down longest, is the one said.
    expect(reachability.problems(1)).toEqual([expect.stringMatching(/^the exchange has given no usable answer since .*latest: E_NETWORK on \/api\/v4\/trade-account\/balance\): its slots wait for it or are skipped$/)]);
  });

  it('is a /healthz problem of the daemon', async () => {
    let now = T0;
    const reachability = new ExchangeReachability(() => now);
    const journal = new MemoryJournal({ clock: () => now });
    await journal.open();
    const health = new DaemonHealth({ journal, engine: () => null, exchanges: () => reachability.problems(2) });
    reachability.record(attempt('beta', 'E_TIMEOUT'));
    expect(health.problems()).toEqual([]);
    now += EXCHANGE_DOWN_AFTER_MS;
    expect(health.problems()).toEqual([expect.stringMatching(/^account beta: its exchange has given no usable answer since /)]);
    await journal.close();
  });
});
