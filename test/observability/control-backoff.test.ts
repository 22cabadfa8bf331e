import { afterEach, describe, expect, it } from 'vitest';
import { ControlBackoff } from '../../src/observability/control-backoff.ts';
import { type HealthServer, startHealthServer } from '../../src/observability/health-server.ts';
import { Metrics } from '../../src/observability/metrics.ts';

/**
 * Guessing the control token is slowed to ten tries a minute per address: after ten requests
 * refused for their token within a minute, the address gets 429 with Retry-After, its token not
 * even looked at, until that minute is over. The addresses followed are bounded in number.
 */
const TOKEN = 'the-right-control-token-0123456789';

let servers: HealthServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((server) => server.stop()));
  servers = [];
});

/** A server on 127.0.0.1:0 whose controls count how often the token was looked at. */
async function serve(backoff?: ControlBackoff, trustedProxies?: ReadonlySet<string>): Promise<{ url: string; looked: () => number; refused: string[]; from: string[] }> {
  let looked = 0;
  const refused: string[] = [];
  const from: string[] = [];
  const server = await startHealthServer({
    host: '127.0.0.1',
    port: 0,
    metrics: new Metrics({ mode: 'live' }),
    health: { status: () => ({ ok: true, mode: 'live', startedAtMs: 0, lastSlot: {}, stopping: false, problems: [] }) },
    controls: {
      token: {
        matches: (presented) => {
          looked += 1;
          return presented === TOKEN;
        },
      },
      controls: { act: async () => ({ outcome: 'ok', body: { killSwitch: true } }) },
      refused: (why, where) => {
        refused.push(why);
        from.push(where);
      },
      ...(backoff === undefined ? {} : { backoff }),
      ...(trustedProxies === undefined ? {} : { trustedProxies }),
    },
  });
  servers.push(server);
  return { url: server.url, looked: () => looked, refused, from };
}

/** `forwardedFor`: the X-Forwarded-For a reverse proxy in front would send (nginx's $proxy_add_x_forwarded_for). */
function killSwitch(url: string, token: string, forwardedFor?: string): Promise<Response> {
  return fetch(`${url}/api/kill-switch`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor }) },
    body: '{"on":true}',
  });
}

describe('the controls after repeated wrong tokens from one address', () => {
  it('answer 429 with Retry-After once ten were refused within a minute, without looking at the token (the right one neither), until the minute is over', async () => {
    let nowMs = Date.UTC(2025, 0, 1, 9);
    const { url, looked, refused } = await serve(new ControlBackoff({ nowMs: () => nowMs }));
    for (let guess = 0; guess < 10; guess += 1) {
      expect((await killSwitch(url, `guess-${guess}-0123456789abcdef`)).status).toBe(401);
      nowMs += 1000;
    }
    expect(looked()).toBe(10);

    for (const token of ['guess-10-0123456789abcdef', TOKEN]) {
      const held = await killSwitch(url, token);
      expect(held.status).toBe(429);
      // The minute began with the first refusal, 10 s ago.
      expect(held.headers.get('retry-after')).toBe('50');
      expect(await held.json()).toEqual({ error: 'too many control requests refused for their token from this address: the token is not checked again for 50 s' });
    }
    expect(looked()).toBe(10);
    expect(refused.slice(-2)).toEqual(['too many refused', 'too many refused']);

    nowMs += 49_000;
    expect((await killSwitch(url, TOKEN)).headers.get('retry-after')).toBe('1');
    nowMs += 1000;
    expect((await killSwitch(url, TOKEN)).status).toBe(200);
    // The right token forgets the address's wrong ones: nine more are answered 401, not 429.
    for (let guess = 0; guess < 9; guess += 1) expect((await killSwitch(url, 'another-wrong-token-0123')).status).toBe(401);
  });

  it('are held back by default, at ten refused a minute, a missing token counted as a wrong one', async () => {
    const { url } = await serve();
    for (let guess = 0; guess < 5; guess += 1) expect((await killSwitch(url, `guess-${guess}-0123456789abcdef`)).status).toBe(401);
    for (let guess = 0; guess < 5; guess += 1) expect((await fetch(`${url}/api/kill-switch`, { method: 'POST', body: '{"on":true}' })).status).toBe(401);
    const held = await killSwitch(url, TOKEN);
    expect(held.status).toBe(429);
    expect(Number(held.headers.get('retry-after'))).toBeGreaterThan(50);
    expect(Number(held.headers.get('retry-after'))).toBeLessThanOrEqual(60);
  });
});

describe('the controls behind a reverse proxy', () => {
  const guessTenTimes = async (url: string, forwardedFor?: string): Promise<void> => {
    for (let guess = 0; guess < 10; guess += 1) expect((await killSwitch(url, `guess-${guess}-0123456789abcdef`, forwardedFor)).status).toBe(401);
  };

  it("named in STACKER_METRICS_TRUSTED_PROXIES, count each client by the address the proxy forwards: one client guessing holds back only itself, and the operator's kill switch goes on", async () => {
    const { url, from } = await serve(undefined, new Set(['127.0.0.1']));
    await guessTenTimes(url, '203.0.113.9');
    expect((await killSwitch(url, TOKEN, '203.0.113.9')).status).toBe(429);
    expect((await killSwitch(url, TOKEN, '198.51.100.4')).status).toBe(200);
    expect(from[0]).toBe('203.0.113.9 (through 127.0.0.1)');
  });

  it('believe only the address the trusted proxy appended: what the client wrote before it does not let it start afresh, even when the proxy appended its own loopback address (a local client of a local nginx)', async () => {
    const { url } = await serve(undefined, new Set(['127.0.0.1']));
    for (let guess = 0; guess < 10; guess += 1) expect((await killSwitch(url, `guess-${guess}-0123456789abcdef`, `10.9.9.${guess}, 203.0.113.9`)).status).toBe(401);
    expect((await killSwitch(url, TOKEN, '10.9.9.200, 203.0.113.9')).status).toBe(429);
    // nginx appends 127.0.0.1 for a client on the same machine: that client is 127.0.0.1, whatever it wrote first.
    for (let guess = 0; guess < 10; guess += 1) expect((await killSwitch(url, `guess-${guess}-0123456789abcdef`, `10.8.8.${guess}, 127.0.0.1`)).status).toBe(401);
    expect((await killSwitch(url, TOKEN, '10.8.8.200, 127.0.0.1')).status).toBe(429);
  });

  it('not named, share the address they connect from: X-Forwarded-For from anyone else is not believed (a guesser cannot start afresh by writing it)', async () => {
    const { url } = await serve();
    await guessTenTimes(url, '203.0.113.9');
    expect((await killSwitch(url, TOKEN, '198.51.100.4')).status).toBe(429);
  });
});

describe('the addresses followed', () => {
  it('are bounded in number however many addresses guess: the windows over go first, then the oldest', () => {
    let nowMs = 0;
    const backoff = new ControlBackoff({ nowMs: () => nowMs, maxAddresses: 100 });
    for (let i = 0; i < 10_000; i += 1) backoff.refused(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
    expect(backoff.size).toBe(100);
    nowMs += 60_000;
    backoff.refused('192.0.2.1');
    expect(backoff.size).toBe(1);
  });

  it('count an IPv6 client by its /64, and an IPv4 one mapped into IPv6 as itself', () => {
    const backoff = new ControlBackoff({ nowMs: () => 0 });
    for (let i = 0; i < 10; i += 1) backoff.refused(`2001:db8:1:2::${(i + 1).toString(16)}`);
    expect(backoff.waitSeconds('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe(60);
    expect(backoff.waitSeconds('2001:db8:1:3::1')).toBeNull();
    for (let i = 0; i < 10; i += 1) backoff.refused('::ffff:192.0.2.7');
    expect(backoff.waitSeconds('192.0.2.7')).toBe(60);
  });
});
