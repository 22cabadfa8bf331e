import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isLoopbackHost } from '../domain/plain-http.ts';
import { LOOPBACK_NAMES, allowedHostsOf } from './allowed-hosts.ts';
import { ControlBackoff } from './control-backoff.ts';
import { type ControlAccess, type Controls, controlRequest, isControlPath } from './control-api.ts';
import { publicJson } from './public-text.ts';
import { STATUS_PAGE_HEADERS, statusPage } from './status-page.ts';

/**
 * The daemon's small HTTP endpoint, a router only: `GET /healthz` (liveness and readiness for
 * Docker's HEALTHCHECK, Kubernetes probes, uptime checkers), `GET /metrics` (Prometheus
 * scrape), and when the daemon gives them the status page (`GET /`), its JSON
 * (`GET /api/status`) and the controls (`POST /api/…`, control-api.ts). Only a control's
 * request body is ever read, and only up to a small cap.
 */

export interface HealthStatus {
  readonly ok: boolean;
  readonly mode: string;
  readonly startedAtMs: number;
  /** `settled`: a failed slot whose lost answers were found since ('done'). */
  readonly lastSlot: Readonly<Record<string, { readonly slotTimeMs: number; readonly outcome: string; readonly settled?: 'done' }>>;
  readonly stopping: boolean;
  /** Not trading yet (its problems say what the start waits for): answered 503 with status `starting`. */
  readonly starting?: boolean;
  readonly problems: readonly string[];
}

export interface HealthState {
  status(): HealthStatus;
}

/** What the server needs from the metrics registry (`Metrics` fits). */
export interface MetricsSource {
  render(): Promise<string>;
  readonly contentType: string;
}

export interface HealthServerOptions {
  readonly host: string;
  /**
   * The host names a request may name (its `Host`, port aside), or `*` for any. Absent: the
   * loopback names when `host` is loopback, any otherwise.
   */
  readonly allowedHosts?: readonly string[] | '*';
  /** 0 picks a free port; the returned `port` says which. */
  readonly port: number;
  readonly metrics: MetricsSource;
  readonly health: HealthState;
  /** The status document behind `GET /api/status` and the page at `GET /`; absent: neither is served. */
  readonly status?: StatusSource;
  /** The controls (`POST /api/instances/{name}/pause|resume|run`, `POST /api/kill-switch`); absent: not served. */
  readonly controls?: ControlAccess;
  /** Told of a request that failed (answered 500), which the client sees without its reason. */
  readonly onError?: (error: unknown, path: string) => void;
  /** Told of a request refused (421) for the host it names (its `Host`, port aside, lower case, at most 100 characters). */
  readonly onMisdirected?: (host: string, allowed: readonly string[]) => void;
}

/** The daemon's status as a JSON-ready document (decimals already strings). */
export interface StatusSource {
  document(): Promise<unknown>;
  /**
   * What to answer, with 503, when `document()` failed for a reason that passes (the journal
   * cannot be read: its database down or not answering): what is known without it, and why.
   * null (or absent) for any other failure, answered 500.
   */
  unavailable?(error: unknown): unknown;
}

export interface HealthServer {
  /** Base URL, e.g. `http://127.0.0.1:9464` (a wildcard host is shown as loopback, which reaches it). */
  readonly url: string;
  /** The address and port it listens on, as bound: `0.0.0.0:9464` listens on every interface, whatever `url` says. */
  readonly listening: string;
  readonly port: number;
  /** Stops listening and closes every open connection, keep-alive ones included. Safe to call twice. */
  stop(): Promise<void>;
}

export const HEALTH_SERVER_DEFAULTS = {
  /** A scrape or probe is one short request; a client slower than this is cut off. */
  requestTimeoutMs: 10_000,
  headersTimeoutMs: 5_000,
} as const;

const JSON_TYPE = 'application/json; charset=utf-8';
const TEXT_TYPE = 'text/plain; charset=utf-8';

export function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const answering = new AnswersInFlight();
  // One for the server's life: the refused requests of each address are counted across connections.
  const backoff = options.controls?.backoff ?? new ControlBackoff();
  const server = createServer({ requestTimeout: HEALTH_SERVER_DEFAULTS.requestTimeoutMs, headersTimeout: HEALTH_SERVER_DEFAULTS.headersTimeoutMs }, (req, res) => {
    handle(req, res, options, answering, backoff).catch((error: unknown) => {
      options.onError?.(error, (req.url ?? '/').split('?')[0] ?? '/');
      if (!res.headersSent) send(res, req, 500, TEXT_TYPE, 'internal error\n');
      else res.destroy();
    });
  });

  return new Promise((resolve, reject) => {
    const onError = (error: Error): void => reject(error);
    server.once('error', onError);
    server.listen(options.port, options.host, () => {
      server.off('error', onError);
      const { address, port } = server.address() as AddressInfo;
      let stopped: Promise<void> | null = null;
      resolve({
        url: `http://${urlHost(options.host)}:${port}`,
        listening: `${address.includes(':') ? `[${address}]` : address}:${port}`,
        port,
        stop() {
          stopped ??= (async () => {
            const closed = new Promise<void>((done) => server.close(() => done()));
            server.closeIdleConnections();
            // A control already being acted on (a slot asked for runs to its end) gets its answer:
            // cut off, the operator would not know that it happened, and might ask again.
            await answering.settled();
            server.closeAllConnections();
            await closed;
          })();
          return stopped;
        },
      });
    });
  });
}

async function handle(req: IncomingMessage, res: ServerResponse, options: HealthServerOptions, answering: AnswersInFlight, backoff: ControlBackoff): Promise<void> {
  // Leading slashes as one: a proxy's `location /stacker { proxy_pass http://host:port/; }` passes
  // the page's own /stacker/api/status on as //api/status.
  const path = ((req.url ?? '/').split('?')[0] ?? '/').replace(/^\/{2,}/, '/');
  const allowed = allowedHostsOf(options);
  const name = req.headers.host === undefined ? null : hostName(req.headers.host);
  if (name !== null && allowed !== '*' && !hostAllowed(name, allowed)) {
    options.onMisdirected?.(name.slice(0, 100), allowed);
    req.resume();
    send(res, req, 421, TEXT_TYPE, `misdirected request: this server answers only to ${allowed.join(', ')} (STACKER_METRICS_ALLOWED_HOSTS)\n`);
    return;
  }
  const access = options.controls;
  if (access !== undefined && isControlPath(path)) {
    let answered = (): void => undefined;
    const controls: Controls = {
      act: (action) => {
        // From here on the request was read in full and changes something: its answer must reach the client.
        answered = answering.add(res);
        return access.controls.act(action);
      },
    };
    try {
      const answer = await controlRequest(req, path, { ...access, controls, backoff });
      for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
      send(res, req, answer.statusCode, JSON_TYPE, `${JSON.stringify(answer.body)}\n`);
    } finally {
      answered();
    }
    return;
  }
  // Other bodies are never read; draining keeps a client that sent one from stalling the socket.
  req.resume();
  const status = options.status;
  const served = status === undefined ? ['/healthz', '/metrics'] : ['/', '/api/status', '/healthz', '/metrics'];
  if (!served.includes(path)) {
    send(res, req, 404, TEXT_TYPE, `not found: try ${served.join(' or ')}\n`);
    return;
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    send(res, req, 405, TEXT_TYPE, 'method not allowed\n');
    return;
  }
  if (status !== undefined && path === '/') {
    for (const [name, value] of Object.entries(STATUS_PAGE_HEADERS)) res.setHeader(name, value);
    send(res, req, 200, 'text/html; charset=utf-8', statusPage());
    return;
  }
  if (status !== undefined && path === '/api/status') {
    let document: unknown;
    try {
      document = await status.document();
    } catch (error) {
      const known = status.unavailable?.(error) ?? null;
      if (known === null) throw error;
      send(res, req, 503, JSON_TYPE, `${publicJson(known)}\n`);
      return;
    }
    send(res, req, 200, JSON_TYPE, `${publicJson(document)}\n`);
    return;
  }
  if (path === '/metrics') {
    const text = await options.metrics.render();
    send(res, req, 200, options.metrics.contentType, text);
    return;
  }
  const body = healthBody(options.health);
  send(res, req, body.healthy ? 200 : 503, JSON_TYPE, `${publicJson(body.json)}\n`);
}

/** The /healthz answer. A state that throws is reported as unhealthy, without its message. */
function healthBody(health: HealthState): { healthy: boolean; json: Record<string, unknown> } {
  let status: HealthStatus;
  try {
    status = health.status();
  } catch {
    return { healthy: false, json: { status: 'unhealthy', problems: ['health state could not be read'] } };
  }
  const healthy = status.ok && !status.stopping && status.starting !== true && status.problems.length === 0;
  const lastSlot: Record<string, { slotTime: string; outcome: string; settled?: 'done' }> = {};
  for (const [instance, slot] of Object.entries(status.lastSlot)) {
    lastSlot[instance] = { slotTime: new Date(slot.slotTimeMs).toISOString(), outcome: slot.outcome, ...(slot.settled === undefined ? {} : { settled: slot.settled }) };
  }
  return {
    healthy,
    json: {
      status: healthy ? 'ok' : status.stopping ? 'stopping' : status.starting === true ? 'starting' : 'unhealthy',
      mode: status.mode,
      startedAt: new Date(status.startedAtMs).toISOString(),
      stopping: status.stopping,
      problems: status.problems,
      lastSlot,
    },
  };
}

function send(res: ServerResponse, req: IncomingMessage, statusCode: number, contentType: string, body: string): void {
  res.statusCode = statusCode;
  res.setHeader('content-type', contentType);
  res.setHeader('content-length', Buffer.byteLength(body));
  // Probes and scrapes want the state now, never a cached copy.
  res.setHeader('cache-control', 'no-store');
  res.end(req.method === 'HEAD' ? undefined : body);
}

/**
 * A request is answered only when it names an allowed host: a web page the operator visits can
 * point its own domain at the server's address (DNS rebinding) and read the status and metrics
 * (orders, budgets, P&L), but the browser still sends that domain as the Host. On loopback any
 * 127.x address passes too.
 */
function hostAllowed(name: string, allowed: readonly string[]): boolean {
  return allowed.includes(name) || (allowed === LOOPBACK_NAMES && isLoopbackHost(name));
}

/** The name a `Host` header gives, its port aside, in lower case. */
function hostName(header: string): string {
  return (header.startsWith('[') ? header.slice(0, header.indexOf(']') + 1) : (header.split(':')[0] ?? '')).toLowerCase();
}

function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

/**
 * Control answers the server owes: each from the moment its control is acted on until its
 * response has been handed to the operating system (or its connection is gone).
 */
class AnswersInFlight {
  readonly #pending = new Set<Promise<void>>();

  /** Owe the answer on `res`; call the returned function once the handler is done with it. */
  add(res: ServerResponse): () => void {
    let handled!: () => void;
    const done = new Promise<void>((resolve) => {
      handled = resolve;
    });
    const delivered = done.then(
      () =>
        new Promise<void>((resolve) => {
          if (res.writableFinished || res.destroyed) return resolve();
          res.once('finish', () => resolve());
          res.once('close', () => resolve());
        }),
    );
    this.#pending.add(delivered);
    void delivered.then(() => this.#pending.delete(delivered));
    return handled;
  }

  async settled(): Promise<void> {
    await Promise.allSettled([...this.#pending]);
  }
}
