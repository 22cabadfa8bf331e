import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HEALTH_SERVER_DEFAULTS, type HealthServer, type HealthStatus, startHealthServer } from '../../src/observability/health-server.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { parseExposition, valueOf } from './exposition-format.ts';

const STARTED_MS = Date.UTC(2025, 0, 1, 8);
const SLOT_MS = Date.UTC(2025, 0, 1, 9);

let servers: HealthServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((server) => server.stop()));
  servers = [];
});

function healthy(overrides: Partial<HealthStatus> = {}): HealthStatus {
  return { ok: true, mode: 'dry-run', startedAtMs: STARTED_MS, lastSlot: { 'dca-btc': { slotTimeMs: SLOT_MS, outcome: 'done' } }, stopping: false, problems: [], ...overrides };
}

async function start(status: () => HealthStatus = () => healthy(), metrics = new Metrics({ mode: 'dry-run' })): Promise<HealthServer> {
  const server = await startHealthServer({ host: '127.0.0.1', port: 0, metrics, health: { status } });
  servers.push(server);
  return server;
}

/** GET /healthz of `server` naming `host` in its Host header: the status and the body. */
function askedAs(server: HealthServer): (host: string) => Promise<{ status: number; body: string }> {
  return (host) =>
    new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: server.port, path: '/healthz', headers: { host } }, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });
}

describe('the health and metrics server', () => {
  it('listens on a free port when given port 0 and says where', async () => {
    const server = await start();
    expect(server.port).toBeGreaterThan(0);
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    expect(server.listening).toBe(`127.0.0.1:${server.port}`);
  });

  it('says the address it listens on as bound: every interface for 0.0.0.0, though it is reached at 127.0.0.1 from this machine', async () => {
    const server = await startHealthServer({ host: '0.0.0.0', port: 0, metrics: new Metrics({ mode: 'dry-run' }), health: { status: () => healthy() } });
    servers.push(server);
    expect(server.listening).toBe(`0.0.0.0:${server.port}`);
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
  });

  it('answers GET /healthz with 200 and the state as JSON while healthy', async () => {
    const server = await start();
    const response = await fetch(`${server.url}/healthz`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await response.json()).toEqual({
      status: 'ok',
      mode: 'dry-run',
      startedAt: '2025-01-01T08:00:00.000Z',
      stopping: false,
      problems: [],
      lastSlot: { 'dca-btc': { slotTime: '2025-01-01T09:00:00.000Z', outcome: 'done' } },
    });
  });

  it('on loopback, answers only a loopback Host: a page that points its own domain at 127.0.0.1 (DNS rebinding) gets 421 and no state', async () => {
    const server = await start();
    const asked = askedAs(server);
    const rebound = await asked(`attacker.example:${server.port}`);
    expect(rebound.status).toBe(421);
    expect(rebound.body).not.toContain('dca-btc');
    for (const host of [`127.0.0.1:${server.port}`, `localhost:${server.port}`, `[::1]:${server.port}`, 'localhost']) expect((await asked(host)).status, host).toBe(200);
  });

  it('on every address (a container\'s 0.0.0.0), answers the names it is given and refuses the others, or any with *', async () => {
    const listed = await startHealthServer({ host: '0.0.0.0', port: 0, allowedHosts: ['localhost', '127.0.0.1', '[::1]', 'stacker.example.com'], metrics: new Metrics({ mode: 'dry-run' }), health: { status: () => healthy() } });
    servers.push(listed);
    const asked = askedAs(listed);
    expect((await asked(`attacker.example:${listed.port}`)).status).toBe(421);
    expect((await asked(`attacker.example:${listed.port}`)).body).toMatch(/answers only to localhost, 127\.0\.0\.1, \[::1\], stacker\.example\.com \(STACKER_METRICS_ALLOWED_HOSTS\)/);
    for (const host of [`localhost:${listed.port}`, 'Stacker.Example.com']) expect((await asked(host)).status, host).toBe(200);
    const any = await startHealthServer({ host: '0.0.0.0', port: 0, allowedHosts: '*', metrics: new Metrics({ mode: 'dry-run' }), health: { status: () => healthy() } });
    servers.push(any);
    expect((await askedAs(any)('attacker.example')).status).toBe(200);
  });

  it('tells the daemon of each request it refuses for its Host, by the name asked for and the names allowed; never of one it answers', async () => {
    const refused: Array<[string, readonly string[]]> = [];
    const server = await startHealthServer({
      host: '127.0.0.1',
      port: 0,
      metrics: new Metrics({ mode: 'dry-run' }),
      health: { status: () => healthy() },
      onMisdirected: (host, allowed) => refused.push([host, allowed]),
    });
    servers.push(server);
    const asked = askedAs(server);
    expect((await asked(`Prometheus:${server.port}`)).status).toBe(421);
    expect((await asked(`127.0.0.1:${server.port}`)).status).toBe(200);
    expect((await asked('localhost')).status).toBe(200);
    expect(refused).toEqual([['prometheus', ['localhost', '127.0.0.1', '[::1]']]]);
  });

  it('answers 503 once trading stopped with problems', async () => {
    const server = await start(() => healthy({ ok: false, problems: ['the exchange refused the API key (E_AUTH)'] }));
    const response = await fetch(`${server.url}/healthz`);
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ status: 'unhealthy', problems: ['the exchange refused the API key (E_AUTH)'] });
  });

  it('answers 503 with status starting while the daemon has not started trading, its problems saying what it waits for', async () => {
    const server = await start(() => healthy({ ok: false, starting: true, lastSlot: {}, problems: ['starting: waiting for the exchange'] }));
    const response = await fetch(`${server.url}/healthz`);
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ status: 'starting', stopping: false, problems: ['starting: waiting for the exchange'] });
  });

  it('answers 503 while stopping, even when nothing is wrong', async () => {
    const server = await start(() => healthy({ stopping: true }));
    const response = await fetch(`${server.url}/healthz`);
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ status: 'stopping', stopping: true });
  });

  it('answers 503 when problems are listed even if ok says true', async () => {
    const server = await start(() => healthy({ problems: ['journal closed'] }));
    expect((await fetch(`${server.url}/healthz`)).status).toBe(503);
  });

  it('answers 503 without the message when the health state itself throws', async () => {
    const server = await start(() => {
      throw new Error('secret detail');
    });
    const response = await fetch(`${server.url}/healthz`);
    expect(response.status).toBe(503);
    const text = await response.text();
    expect(text).not.toContain('secret detail');
    expect(JSON.parse(text)).toEqual({ status: 'unhealthy', problems: ['health state could not be read'] });
  });

  it("says why the journal's database cannot be reached, never where: /healthz and /api/status (503 and 200) name no host, port or database URL", async () => {
    const refused = "reading the orders: the journal's database cannot be read: connect ECONNREFUSED 10.0.0.7:5432";
    const lock = "taking the PostgreSQL advisory lock 4242 (live) on postgres://stacker:***@db.internal:6543/stacker: the journal's database cannot be reached: getaddrinfo ENOTFOUND db.internal";
    const problems = [`the journal cannot be written since 2025-01-01T09:00:00.000Z (${refused}); nothing is sent until it can`, `waiting as a hot standby (${lock})`];
    const server = await startHealthServer({
      host: '127.0.0.1',
      port: 0,
      metrics: new Metrics({ mode: 'live' }),
      health: { status: () => healthy({ problems }) },
      status: { document: async () => Promise.reject(new Error(refused)), unavailable: (error) => ({ error: 'journal-unreadable', message: (error as Error).message, health: { problems } }) },
    });
    servers.push(server);
    const healthz = await (await fetch(`${server.url}/healthz`)).text();
    const status = await fetch(`${server.url}/api/status`);
    expect(status.status).toBe(503);
    const unreadable = await status.text();
    for (const body of [healthz, unreadable]) {
      expect(body).not.toMatch(/10\.0\.0\.7|5432|db\.internal|6543|postgres:/);
      expect(body).toContain("the journal's database cannot be read: connection refused (ECONNREFUSED)");
      expect(body).toContain(
        "taking the PostgreSQL advisory lock 4242 (live) on <STACKER_DATABASE_URL>: the journal's database cannot be reached: host name not found (ENOTFOUND)",
      );
    }
    expect(JSON.parse(unreadable)).toMatchObject({ message: "reading the orders: the journal's database cannot be read: connection refused (ECONNREFUSED)" });

    const document = await startHealthServer({ host: '127.0.0.1', port: 0, metrics: new Metrics({ mode: 'live' }), health: { status: () => healthy() }, status: { document: async () => ({ health: { problems } }) } });
    servers.push(document);
    const answered = await (await fetch(`${document.url}/api/status`)).text();
    expect(answered).not.toMatch(/10\.0\.0\.7|db\.internal/);
    expect(answered).toContain('connection refused (ECONNREFUSED)');
  });

  it('serves /metrics in the exposition format with its content type', async () => {
    const metrics = new Metrics({ mode: 'live' });
    metrics.orderPlaced('dca-btc', Date.now());
    const server = await start(undefined, metrics);
    const response = await fetch(`${server.url}/metrics?ignored=1`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(metrics.contentType);
    const { samples } = parseExposition(await response.text());
    expect(valueOf(samples, 'stacker_orders_placed_total', { strategy_instance: 'dca-btc' })).toBe(1);
  });

  it('answers 500 when rendering the metrics fails', async () => {
    const server = await start(undefined, { contentType: 'text/plain', render: () => Promise.reject(new Error('boom')) } as unknown as Metrics);
    const response = await fetch(`${server.url}/metrics`);
    expect(response.status).toBe(500);
    expect(await response.text()).toBe('internal error\n');
  });

  it('answers HEAD with the headers and no body', async () => {
    const server = await start();
    const response = await fetch(`${server.url}/healthz`, { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(Number(response.headers.get('content-length'))).toBeGreaterThan(0);
    expect(await response.text()).toBe('');
  });

  it("answers a path with doubled leading slashes as the path (a proxy's location without its closing slash passes /stacker/healthz on as //healthz)", async () => {
    const server = await start();
    const response = await fetch(`${server.url}//healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ status: 'ok' });
  });

  it('answers 404 for any other path and 405 for other methods', async () => {
    const server = await start();
    expect((await fetch(`${server.url}/`)).status).toBe(404);
    expect((await fetch(`${server.url}/healthz/extra`)).status).toBe(404);
    const post = await fetch(`${server.url}/healthz`, { method: 'POST', body: 'x'.repeat(100_000) });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  it('closes keep-alive connections on stop, and a second stop is harmless', async () => {
    const server = await start();
    // A client that keeps its socket open between requests, as Prometheus does between scrapes.
    const agent = new Agent({ keepAlive: true });
    try {
      // Wrapped in an object: resolving with a bare promise would wait for that promise instead.
      const { socketClosed } = await new Promise<{ socketClosed: Promise<void> }>((resolve, reject) => {
        const req = request(`${server.url}/healthz`, { agent }, (res) => {
          expect(res.headers.connection).toBe('keep-alive');
          res.resume();
          res.on('end', () => resolve({ socketClosed: new Promise<void>((closed) => req.socket?.once('close', () => closed())) }));
        });
        req.on('error', reject);
        req.end();
      });
      // server.close() alone would wait for the idle keep-alive socket; stop() must not.
      await server.stop();
      await socketClosed;
      await server.stop();
      await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
    } finally {
      agent.destroy();
    }
  });

  it('stop does not wait for a client stuck half-way through its request', async () => {
    const server = await start();
    const socket = connect(server.port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    // Headers never finished: server.close() alone would wait for the headers timeout.
    socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
    const socketClosed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => undefined);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const outcome = await Promise.race([
      server.stop().then(() => 'stopped'),
      new Promise((resolve) => setTimeout(() => resolve('still waiting'), HEALTH_SERVER_DEFAULTS.headersTimeoutMs - 1000)),
    ]);
    expect(outcome).toBe('stopped');
    await socketClosed;
  });

  it('on stop, a control already being acted on still gets its answer; new connections are refused meanwhile', async () => {
    let finishSlot = (): void => undefined;
    const acting = new Promise<void>((resolve) => {
      finishSlot = resolve;
    });
    let started = (): void => undefined;
    const actStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    const server = await startHealthServer({
      host: '127.0.0.1',
      port: 0,
      metrics: new Metrics({ mode: 'dry-run' }),
      health: { status: () => healthy() },
      controls: {
        token: { matches: (presented) => presented === 'stop-test-token-0123456789' },
        controls: {
          // A slot asked for from the API, still running when the daemon is told to stop.
          act: async () => {
            started();
            await acting;
            return { outcome: 'ok', body: { instance: 'dca-btc', outcome: 'done' } };
          },
        },
      },
    });
    servers.push(server);
    const answer = fetch(`${server.url}/api/instances/dca-btc/run`, { method: 'POST', headers: { authorization: 'Bearer stop-test-token-0123456789' } });
    await actStarted;
    const stopped = server.stop();
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
    finishSlot();
    const response = await answer;
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ instance: 'dca-btc', outcome: 'done' });
    await stopped;
  });

  it('fails to start with the system error when the port is taken', async () => {
    const first = await start();
    await expect(startHealthServer({ host: '127.0.0.1', port: first.port, metrics: new Metrics({ mode: 'dry-run' }), health: { status: () => healthy() } })).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });
});
