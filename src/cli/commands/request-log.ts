import diagnosticsChannel from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** One served request as the sandbox log shows it: no headers, no bodies, no query string. */
export interface ServedRequest {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly ms: number;
}

interface ServerMessage {
  readonly request: IncomingMessage;
  readonly response: ServerResponse;
  readonly socket: Socket;
}

/**
 * Watch the requests an in-process HTTP server on `port` answers, through Node's built-in
 * `http.server.*` diagnostics channels. The sandbox contract has no request hook, and this needs
 * none: it sees what any node:http server in this process serves, filtered by local port.
 * The query string is cut off (public endpoints carry parameters there) and nothing else of the
 * request is read. Returns the function that stops watching.
 */
export function watchServedRequests(port: () => number | null, onServed: (request: ServedRequest) => void, nowMs: () => number = () => performance.now()): () => void {
  const started = new WeakMap<IncomingMessage, number>();
  const start = diagnosticsChannel.channel('http.server.request.start');
  const finish = diagnosticsChannel.channel('http.server.response.finish');
  const onStart = (message: unknown): void => {
    const { request, socket } = message as ServerMessage;
    if (socket.localPort === port()) started.set(request, nowMs());
  };
  const onFinish = (message: unknown): void => {
    const { request, response } = message as ServerMessage;
    const startedMs = started.get(request);
    if (startedMs === undefined) return;
    started.delete(request);
    const path = (request.url ?? '').split('?')[0] ?? '';
    onServed({ method: request.method ?? '?', path, status: response.statusCode, ms: Math.round(nowMs() - startedMs) });
  };
  start.subscribe(onStart);
  finish.subscribe(onFinish);
  return () => {
    start.unsubscribe(onStart);
    finish.unsubscribe(onFinish);
  };
}
