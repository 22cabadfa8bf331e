import type { Clock } from '../domain/clock.ts';
import { randomBytes } from 'node:crypto';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SimCore } from '../sim/core.ts';
import type { FillModelOptions } from '../sim/fills.ts';
import type { SimIds } from '../sim/ids.ts';
import type { SettlementOptions } from '../sim/orders.ts';
import { type PriceSource, fixedPrices } from '../sim/prices.ts';
import { SimRejection } from '../sim/rejection.ts';
import { DEMO_MARKETS, DEMO_PRICES, seedDemo } from '../sim/seed.ts';
import { type ApiKeyPair, authenticate } from './auth.ts';
import { SequentialIds } from '../sim/ids.ts';
import { FaultInjector, type FaultSpec } from './faults.ts';
import { NonceTracker } from './nonces.ts';
import type { Body } from './params.ts';
import { RATE_LIMITED_TEXT, type RateLimit, SANDBOX_RATE_LIMITS, type SandboxRateScope, RateGate } from './rate-limit.ts';
import { type Route, type RouteMatch, findRoute } from './router.ts';
import { flexRoutes } from './routes/flex.ts';
import { mainAccountRoutes } from './routes/main-account.ts';
import { publicRoutes } from './routes/public.ts';
import { tradeRoutes } from './routes/trade.ts';
import { type Answer, INTERNAL_ERROR, NOT_FOUND, json, rejectionAnswer, writeAnswer } from './responses.ts';

export interface SandboxOptions {
  readonly host?: string;
  readonly port?: number;
  readonly apiKey?: string;
  readonly apiSecret?: string;
  /**
   * More accounts beside the first, each with its own key, balances, orders and nonce sequence
   * (seeded like the first), as several accounts of one exchange. Order and deal ids are unique
   * across all of them, as the exchange's are.
   */
  readonly moreAccounts?: readonly ApiKeyPair[];
  /** 'demo' (default): the demo account. 'empty': the demo markets and nothing else. */
  readonly seed?: 'demo' | 'empty';
  readonly prices?: PriceSource;
  readonly rateLimits?: boolean;
  readonly clock?: Clock;
  // Additions beyond the contract, for tests:
  /** Replace some of the exchange's limits (e.g. 3 per second) to test the 429 path cheaply. */
  readonly rateLimitOverrides?: Partial<Record<SandboxRateScope, RateLimit>>;
  readonly fills?: FillModelOptions;
  readonly settlement?: SettlementOptions | null;
  readonly ids?: SimIds;
  /** Larger request bodies are answered 413 (default 64 KiB). */
  readonly maxBodyBytes?: number;
  /**
   * Called with any error that is not an exchange refusal (the request got a 500). Such an
   * error is a sandbox bug, so the default writes it to stderr rather than hide it.
   */
  readonly onInternalError?: (error: unknown) => void;
  /** Told of every request as it arrives (path only, never headers or body): benchmarks time the engine with it. */
  readonly onRequest?: (request: { readonly method: string; readonly path: string; readonly receivedAtMs: number }) => void;
}

export interface Sandbox {
  readonly url: string;
  readonly apiKey: string;
  readonly apiSecret: string;
  /** The first account (the one of `apiKey`). */
  readonly exchange: SimCore;
  /** The account of a key (`apiKey` or one of `moreAccounts`); undefined for a key it does not know. */
  accountOf(apiKey: string): SimCore | undefined;
  readonly faults: FaultInjector;
  stop(): Promise<void>;
}

const ROUTES: readonly Route[] = [...publicRoutes, ...mainAccountRoutes, ...flexRoutes, ...tradeRoutes];

/**
 * Start the sandbox exchange: the sim core served over HTTP as docs/exchange-api.md says (docs/exchange-api.md where
 * the documents are silent), on 127.0.0.1 and a random port unless told otherwise.
 */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const sandbox = new SandboxServer(options);
  await sandbox.listen(options.host ?? '127.0.0.1', options.port ?? 0);
  return sandbox;
}

function faultAnswer(spec: FaultSpec): Answer {
  const status = spec.status as number;
  if (spec.body === undefined) return { status, empty: true };
  if (typeof spec.body === 'string') return { status, text: spec.body };
  return json(status, spec.body);
}

/**
 * A successful answer with `word` as the status of each order record in it: the record of a
 * create answer, the list of active orders, the history's rows under their markets. Refusals
 * are left as they are: they carry no order.
 */
/** A 200 answer with each of its order records changed by `change`; any other answer as it is. */
function withOrderRecords(answer: Answer, change: (record: Record<string, unknown>) => Record<string, unknown>): Answer {
  if (!('json' in answer) || answer.status !== 200) return answer;
  const rewrite = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(rewrite);
    if (value === null || typeof value !== 'object') return value;
    const record = value as Record<string, unknown>;
    // An order record (`orderId`, or `id` with `ctime` in the history); a history answer is a map of such lists.
    if ('status' in record && ('orderId' in record || 'ctime' in record)) return change(record);
    return Object.fromEntries(Object.entries(record).map(([key, inner]) => [key, rewrite(inner)]));
  };
  return json(answer.status, rewrite(answer.json));
}

/** An order record as an older exchange answered one it had not matched yet: no status, nothing filled, all of it left. */
function unfilledRecord(record: Record<string, unknown>): Record<string, unknown> {
  const { status: _status, ...rest } = record;
  return { ...rest, dealStock: '0', dealMoney: '0', dealFee: '0', left: record['amount'] };
}

class SandboxServer implements Sandbox {
  readonly exchange: SimCore;
  readonly faults = new FaultInjector();
  readonly apiKey: string;
  // A private field plus a getter: the secret is not an own enumerable property, so logging or
  // serialising the sandbox object does not print it.
  readonly #apiSecret: string;
  readonly #clock: Clock;
  readonly #nonces = new NonceTracker();
  readonly #limiter: RateGate | null;
  readonly #maxBodyBytes: number;
  readonly #onInternalError: (error: unknown) => void;
  readonly #onRequest: SandboxOptions['onRequest'];
  /** apiKey → its secret and account; the first key's included. */
  readonly #accounts = new Map<string, { readonly pair: ApiKeyPair; readonly core: SimCore }>();
  readonly #server: Server;
  readonly #sleeps = new Set<{ timer: NodeJS.Timeout; wake: () => void }>();
  #url = '';
  #stopped = false;

  constructor(options: SandboxOptions) {
    this.#clock = options.clock ?? { nowMs: () => Date.now() };
    const ids = options.ids ?? new SequentialIds();
    const account = (): SimCore => {
      const core = new SimCore({
        clock: this.#clock,
        prices: options.prices ?? fixedPrices(DEMO_PRICES),
        ...(options.fills === undefined ? {} : { fills: options.fills }),
        ...(options.settlement === undefined ? {} : { settlement: options.settlement }),
        ids,
      });
      if ((options.seed ?? 'demo') === 'demo') seedDemo(core);
      else for (const rules of DEMO_MARKETS) core.addMarket(rules);
      return core;
    };
    this.exchange = account();
    this.apiKey = options.apiKey ?? randomBytes(16).toString('hex');
    this.#apiSecret = options.apiSecret ?? randomBytes(32).toString('hex');
    this.#accounts.set(this.apiKey, { pair: { apiKey: this.apiKey, apiSecret: this.#apiSecret }, core: this.exchange });
    for (const pair of options.moreAccounts ?? []) {
      if (this.#accounts.has(pair.apiKey)) throw new Error('each sandbox account needs a key of its own');
      this.#accounts.set(pair.apiKey, { pair: { ...pair }, core: account() });
    }
    this.#limiter =
      options.rateLimits === false ? null : new RateGate({ ...SANDBOX_RATE_LIMITS, ...options.rateLimitOverrides }, this.#clock);
    this.#maxBodyBytes = options.maxBodyBytes ?? 64 * 1024;
    this.#onInternalError = options.onInternalError ?? ((error) => console.error('sandbox: internal error', error));
    this.#onRequest = options.onRequest;
    this.#server = createServer((req, res) => {
      this.#handle(req, res).catch((error: unknown) => {
        this.#onInternalError(error);
        if (!res.headersSent) writeAnswer(res, INTERNAL_ERROR);
        else res.destroy();
      });
    });
  }

  get apiSecret(): string {
    return this.#apiSecret;
  }

  accountOf(apiKey: string): SimCore | undefined {
    return this.#accounts.get(apiKey)?.core;
  }

  get url(): string {
    return this.#url;
  }

  listen(host: string, port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(port, host, () => {
        this.#server.off('error', reject);
        const address = this.#server.address() as AddressInfo;
        const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
        this.#url = `http://${shownHost}:${address.port}`;
        resolve();
      });
    });
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    for (const sleep of this.#sleeps) {
      clearTimeout(sleep.timer);
      sleep.wake();
    }
    this.#sleeps.clear();
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#server.closeAllConnections();
    await closed;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://sandbox.invalid');
    this.#onRequest?.({ method: req.method ?? '', path: url.pathname, receivedAtMs: Date.now() });
    const raw = await this.#readBody(req);
    if (raw === null) {
      res.setHeader('connection', 'close');
      writeAnswer(res, json(413, { code: 0, message: 'Payload too large.', errors: {} }));
      return;
    }
    const match = findRoute(ROUTES, req.method ?? '', url.pathname);
    if (match === null) {
      writeAnswer(res, NOT_FOUND);
      return;
    }
    const caller = (match.route.private ? headerText(req, 'x-txc-apikey') : undefined) ?? req.socket.remoteAddress ?? 'unknown';
    if (this.#limiter && !this.#limiter.admit(match.route.scope, caller)) {
      writeAnswer(res, { status: 429, text: RATE_LIMITED_TEXT, contentType: 'text/html' });
      return;
    }
    const latency = this.faults.takeLatency(url.pathname);
    // A gateway checks the signature and the nonce as the request arrives; only the work is
    // late. Checked after the delay, any delay past the ±5 s nonce window would be refused.
    const early = latency ? this.#admit(match, req, raw) : null;
    if (latency) await this.#sleep(latency.latencyMs ?? 0);
    if (this.#stopped) {
      req.socket.destroy();
      return;
    }
    const fault = this.faults.takeOutcome(url.pathname);
    if (fault?.kind === 'reset') {
      req.socket.resetAndDestroy();
      return;
    }
    if (fault?.kind === 'status' && fault.commit !== true) {
      writeAnswer(res, faultAnswer(fault));
      return;
    }
    if (fault?.kind === 'commit-late') {
      // Checked now (signature, nonce) as the gateway would; performed later by the "backend".
      const admitted = early ?? this.#admit(match, req, raw);
      writeAnswer(res, 'answer' in admitted ? admitted.answer : faultAnswer(fault));
      if ('body' in admitted) {
        void this.#sleep(fault.latencyMs ?? 0).then(() => {
          if (!this.#stopped) this.#handleRoute(match, admitted, url.searchParams);
        });
      }
      return;
    }
    const admitted = early ?? this.#admit(match, req, raw);
    let answer = 'answer' in admitted ? admitted.answer : this.#handleRoute(match, admitted, url.searchParams);
    if (fault?.kind === 'drop-after-commit') {
      req.socket.resetAndDestroy();
      return;
    }
    if (fault?.kind === 'status') answer = faultAnswer(fault);
    if (fault?.kind === 'status-word') answer = withOrderRecords(answer, (record) => ({ ...record, status: fault.statusWord ?? '' }));
    if (fault?.kind === 'unfilled-answer') answer = withOrderRecords(answer, unfilledRecord);
    if (fault?.kind === 'upper-ids') answer = withOrderRecords(answer, (record) => (typeof record['clientOrderId'] === 'string' ? { ...record, clientOrderId: record['clientOrderId'].toUpperCase() } : record));
    if (fault?.kind === 'answer-late') {
      await this.#sleep(fault.latencyMs ?? 0);
      if (this.#stopped) {
        req.socket.destroy();
        return;
      }
    }
    writeAnswer(res, answer);
  }

  /** A private route's signature and nonce: the body and the key's account when they hold, the refusal otherwise. */
  #admit(match: RouteMatch, req: IncomingMessage, raw: Buffer): { readonly body: Body; readonly core: SimCore } | { readonly answer: Answer } {
    const { route } = match;
    if (!route.private) return { body: {}, core: this.exchange };
    // An unknown key is checked against the first account's, which refuses it as the exchange does.
    const account = this.#accounts.get(headerText(req, 'x-txc-apikey') ?? '') ?? { pair: { apiKey: this.apiKey, apiSecret: this.#apiSecret }, core: this.exchange };
    const auth = authenticate(req.headers, raw, typeof route.path === 'string' ? route.path : '', account.pair, this.#nonces, this.#clock.nowMs());
    return auth.ok ? { body: auth.body, core: account.core } : { answer: auth.answer };
  }

  #handleRoute(match: RouteMatch, admitted: { readonly body: Body; readonly core: SimCore }, query: URLSearchParams): Answer {
    const { route, pathParams } = match;
    const { body, core } = admitted;
    try {
      return route.handle({ exchange: core, body, query, pathParams, visibleUntilSec: (this.#clock.nowMs() - this.faults.historyLagMs) / 1000, historyPageCap: this.faults.historyPageCap });
    } catch (error) {
      if (error instanceof SimRejection) return rejectionAnswer(error, route.refusals);
      this.#onInternalError(error);
      return INTERNAL_ERROR;
    }
  }

  async #readBody(req: IncomingMessage): Promise<Buffer | null> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > this.#maxBodyBytes) return null;
      chunks.push(chunk as Buffer);
    }
    return Buffer.concat(chunks);
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const sleep = {
        timer: setTimeout(() => {
          this.#sleeps.delete(sleep);
          resolve();
        }, ms),
        wake: resolve,
      };
      this.#sleeps.add(sleep);
    });
  }
}

function headerText(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
