import { createRequire } from 'node:module';
import type { Dispatcher, Pool as UndiciPool } from 'undici';

/**
 * The two pieces of undici the client uses — its connection pool and its `request` — loaded by
 * their own files instead of through `undici`'s index.
 *
 * Why: the index loads everything undici offers (fetch, WebSocket, EventSource, caches, mocks,
 * proxies), and its cookie module reads `globalThis.Headers`, which makes Node load its own
 * bundled copy of undici as well. For a daemon that only sends signed POSTs that is about 20 MB
 * of resident memory for nothing (measured: `npm run bench`, daemon steady RSS). The files are
 * undici's own CommonJS modules, unchanged; `undici` is pinned to an exact version in
 * package.json and test/api/undici-core.test.ts checks that these are the same classes and
 * function the index exports, so an upgrade that moves them fails the tests, not production.
 */
const require = createRequire(import.meta.url);

export const Pool: typeof UndiciPool = require('undici/lib/dispatcher/pool.js');

type RequestFunction = (this: Dispatcher, options: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>;
const requestOn: RequestFunction = require('undici/lib/api/api-request.js');

/**
 * `dispatcher.request(options)` for any dispatcher, including one whose prototype never got
 * undici's API methods attached (the index attaches them; loading the pool alone does not).
 */
export function request(dispatcher: Dispatcher, options: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData> {
  return requestOn.call(dispatcher, options);
}
