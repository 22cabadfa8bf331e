import http from 'node:http';
import { gzipSync } from 'node:zlib';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { NetworkError, ProtocolError, TimeoutError, outcomeUnknown } from '../../src/domain/errors.ts';
import { Decimal } from '../../src/domain/money.ts';
import { ApiClient, type RequestEvent } from '../../src/api/client.ts';
import { Transport } from '../../src/api/transport.ts';
import { API_KEY, API_SECRET, failure, harness, type Harness } from './helpers.ts';

interface TestServer {
  readonly url: string;
  /** TCP connections accepted so far. */
  readonly connections: number;
  stop(): Promise<void>;
}

const servers: TestServer[] = [];
const clients: ApiClient[] = [];

async function startServer(handler: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<TestServer> {
  const server = http.createServer(handler);
  const sockets = new Set<Socket>();
  const state = { connections: 0 };
  server.on('connection', (socket) => {
    state.connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const result: TestServer = {
    url: `http://127.0.0.1:${port}`,
    get connections() {
      return state.connections;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  servers.push(result);
  return result;
}

function client(url: string, extra: Partial<ConstructorParameters<typeof ApiClient>[0]> = {}): { client: ApiClient; events: RequestEvent[] } {
  const events: RequestEvent[] = [];
  const c = new ApiClient({
    baseUrl: url,
    credentials: { apiKey: API_KEY, apiSecret: API_SECRET },
    rateLimits: false,
    // These servers count requests and connections: no time measurement in between.
    serverTime: false,
    sleep: async () => undefined,
    onRequest: (e) => events.push(e),
    ...extra,
  });
  clients.push(c);
  return { client: c, events };
}

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

describe('transport over a real socket', () => {
  it('reports a refused connection as not sent: an order is surely not placed, a read is retried', async () => {
    const server = await startServer((_req, res) => res.end());
    const url = server.url;
    await server.stop();
    servers.splice(servers.indexOf(server), 1);
    const { client: c, events } = client(url);
    const error = await failure(c.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.001') }));
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).toMatchObject({ causeCode: 'ECONNREFUSED', requestSent: false, retryable: true });
    expect(outcomeUnknown(error)).toBe(false);
    expect(events).toHaveLength(1);
    await failure(c.ping());
    expect(events.filter((e) => e.path === '/api/v4/public/ping').map((e) => e.attempt)).toEqual([1, 2, 3, 4]);
  });

  it('reports a connection dropped after the request as sent: the outcome is unknown', async () => {
    const server = await startServer((req) => {
      req.resume();
      req.on('end', () => req.socket.destroy());
    });
    const { client: c } = client(server.url);
    const error = await failure(c.flexWithdraw({ plan: 'p-1', amount: new Decimal('1') }));
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).requestSent).toBe(true);
    expect(['UND_ERR_SOCKET', 'ECONNRESET']).toContain((error as NetworkError).causeCode);
    expect(outcomeUnknown(error)).toBe(true);
  });

  it('times out waiting for headers (sent, outcome unknown)', async () => {
    const server = await startServer((req) => req.resume());
    const { client: c } = client(server.url, { responseTimeoutMs: 150 });
    const error = await failure(c.buyMarket({ market: 'BTC_USDT', quoteAmount: new Decimal('5') }));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ phase: 'headers', requestSent: true, code: 'E_TIMEOUT' });
    expect(outcomeUnknown(error)).toBe(true);
  });

  it('times out when the body stalls after the headers', async () => {
    const server = await startServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"USDT":');
    });
    const { client: c } = client(server.url, { responseTimeoutMs: 150, retry: false });
    const error = await failure(c.tradeBalances());
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ phase: 'body', requestSent: true });
  });

  it('gives up on an answer that keeps coming a byte at a time past twice the time limit and a second: never silent long enough for the time limit, held for ever before', async () => {
    const timers: NodeJS.Timeout[] = [];
    const server = await startServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"USDT": ');
      timers.push(setInterval(() => res.write(' '), 50));
    });
    const { client: c } = client(server.url, { responseTimeoutMs: 150, retry: false });
    const started = Date.now();
    const error = await failure(c.tradeBalances());
    for (const timer of timers) clearInterval(timer);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ phase: 'total', requestSent: true, message: expect.stringMatching(/the whole answer did not come within 1300 ms/) });
    expect(outcomeUnknown(error)).toBe(true);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('drains every body, errors included, so one keep-alive connection serves them all', async () => {
    let n = 0;
    const big = `<html><body>${'maintenance '.repeat(20_000)}</body></html>`;
    const server = await startServer((req, res) => {
      req.resume();
      req.on('end', () => {
        n += 1;
        if (n % 3 === 1) res.writeHead(503, { 'content-type': 'text/html' }).end(big);
        else if (n % 3 === 2) res.writeHead(422, { 'content-type': 'application/json' }).end('{"code":0,"message":"Validation failed","errors":{"ticker":["validation.string"]}}');
        else res.writeHead(200, { 'content-type': 'application/json' }).end('{"USDT":{"main_balance":"1"}}');
      });
    });
    const { client: c } = client(server.url, { connections: 1, retry: false });
    const outcomes: string[] = [];
    for (let i = 0; i < 12; i++) {
      outcomes.push(
        await c.mainBalances().then(
          () => 'ok',
          (e: { code: string }) => e.code,
        ),
      );
    }
    expect(outcomes).toEqual(Array.from({ length: 4 }, () => ['E_UNAVAILABLE', 'E_EXCHANGE_VALIDATION', 'ok']).flat());
    expect(server.connections).toBe(1);
  });

  it('refuses an oversized body and keeps working afterwards', async () => {
    const server = await startServer((req, res) => {
      req.resume();
      res.end(req.url === '/big' ? 'x'.repeat(64 * 1024) : '["pong"]');
    });
    const transport = new Transport({ baseUrl: server.url, connectTimeoutMs: 1000, responseTimeoutMs: 1000, connections: 1, maxBodyBytes: 1024 });
    try {
      const error = await failure(transport.send({ method: 'GET', path: '/big', query: '', headers: {} }));
      expect(error).toBeInstanceOf(ProtocolError);
      expect((error as ProtocolError).exchangeMessage).toMatch(/larger than 1024 bytes/);
      const ok = await transport.send({ method: 'GET', path: '/ping', query: '', headers: {} });
      expect(ok).toMatchObject({ status: 200, body: { kind: 'json', value: ['pong'] } });
    } finally {
      await transport.close();
    }
  });

  it('names where a redirect points and what to check: the base URL or a proxy (redirects are never followed)', async () => {
    const server = await startServer((req, res) => {
      req.resume();
      res.writeHead(301, { location: 'https://whitebit.eu/api/v4/public/markets' }).end();
    });
    const { client: c } = client(server.url);
    const error = await failure(c.markets());
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).exchangeMessage).toBe(
      'unexpected redirect (HTTP 301) to https://whitebit.eu/api/v4/public/markets: stacker follows none; check the base URL (STACKER_BASE_URL, --base-url, --region) and any proxy in between',
    );
  });

  it('says a gzip-encoded answer is Content-Encoding gzip (nothing asks for it, nothing decodes it), not only "not JSON"', async () => {
    const server = await startServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(gzipSync('["pong"]'));
    });
    const { client: c } = client(server.url);
    const error = await failure(c.ping());
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).exchangeMessage).toMatch(/^answer is not JSON: its body is Content-Encoding gzip, which stacker neither asks for nor decodes; a proxy between stacker and the exchange/);
  });

  it('settles every request by its deadline even when undici never answers it: a header it refused wedged the connection, and the requests queued behind it waited for ever', async () => {
    const server = await startServer((req, res) => {
      req.resume();
      res.end('{}');
    });
    const transport = new Transport({ baseUrl: server.url, connectTimeoutMs: 1000, responseTimeoutMs: 100, connections: 1 });
    const send = (key: string): Promise<unknown> =>
      transport.send({ method: 'GET', path: '/api/v4/public/time', query: '', headers: { 'x-txc-apikey': key } }).then(
        (answer) => answer,
        (error: unknown) => error,
      );
    const started = Date.now();
    const [refused, ...queued] = await Promise.all([send('key\u200b'), send('key'), send('key')]);
    await transport.close();
    expect(refused).toBeInstanceOf(NetworkError);
    expect(refused).toMatchObject({ causeCode: 'UND_ERR_INVALID_ARG', requestSent: false, retryable: false });
    expect((refused as NetworkError).message).toMatch(/request refused before sending: invalid x-txc-apikey header .*pasted with the API key\?\); trying again does not mend it/);
    for (const outcome of queued) expect(outcome).toMatchObject({ code: 'E_TIMEOUT', phase: 'total' });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('refuses requests after close() without touching the network', async () => {
    const server = await startServer((_req, res) => res.end('["pong"]'));
    const { client: c } = client(server.url);
    expect(await c.ping()).toBe('pong');
    await c.close();
    const error = await failure(c.ping());
    expect(error).toMatchObject({ code: 'E_NETWORK', causeCode: 'UND_ERR_CLOSED', requestSent: false });
  });
});

describe('transport error classes', () => {
  let h: Harness;
  afterEach(async () => {
    await h.agent.close();
  });

  it.each([
    ['UND_ERR_CONNECT_TIMEOUT', TimeoutError, false],
    ['ENOTFOUND', NetworkError, false],
    ['EAI_AGAIN', NetworkError, false],
    ['CERT_HAS_EXPIRED', NetworkError, false],
    ['EPIPE', NetworkError, true],
    ['UND_ERR_SOCKET', NetworkError, true],
    ['SOMETHING_NEW', NetworkError, true],
  ])('maps %s to %o with requestSent=%s', async (code, cls, sent) => {
    h = harness({ retry: false });
    h.pool.intercept({ path: '/api/v4/order/stock_market', method: 'POST' }).replyWithError(Object.assign(new Error(code), { code }));
    const error = await failure(h.client.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('1') }));
    expect(error).toBeInstanceOf(cls);
    expect((error as NetworkError).requestSent).toBe(sent);
    expect(outcomeUnknown(error)).toBe(sent);
  });
});
