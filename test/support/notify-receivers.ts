import { type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a receiver got: as it arrived, body as text. */
export interface Received {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export interface Receiver {
  readonly url: string;
  readonly received: Received[];
  /** Resolves once `count` requests have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A real HTTP server on 127.0.0.1 and a free port that records every request and answers as
 * `answer` says: the receiving end of the webhook, a fake Telegram Bot API, an ntfy server.
 * `answer` may also never answer (a hung receiver); stop() closes every connection.
 */
export async function startReceiver(answer: (request: Received, res: ServerResponse) => void = (_, res) => res.writeHead(200).end('ok')): Promise<Receiver> {
  const received: Received[] = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => {
      const request = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body };
      received.push(request);
      for (const waiter of waiters.filter((w) => received.length >= w.count)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
      answer(request, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    waitFor(count, timeoutMs = 10_000) {
      if (received.length >= count) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${received.length} of ${count} requests within ${timeoutMs} ms`)), timeoutMs);
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A fake Telegram Bot API: `POST /bot<token>/sendMessage` answers ok; any other path or token 404s, as Telegram does. */
export function startFakeTelegram(token: string): Promise<Receiver> {
  return startReceiver((request, res) => {
    const ok = request.method === 'POST' && request.path === `/bot${token}/sendMessage`;
    res.writeHead(ok ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(ok ? { ok: true, result: { message_id: 1 } } : { ok: false, error_code: 404, description: 'Not Found' }));
  });
}
