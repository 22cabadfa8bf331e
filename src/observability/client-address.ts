import type { IncomingMessage } from 'node:http';
import { plainAddress } from '../domain/ip-address.ts';

/**
 * Who sent a control request, for the back-off that slows guessing of the token and for the
 * log. Behind a reverse proxy every request comes from the proxy, so one client guessing would
 * hold back every other one, the operator included. A request from a proxy named in
 * STACKER_METRICS_TRUSTED_PROXIES counts as the client the proxy appended to `X-Forwarded-For`:
 * the last entry, and only it. Entries before it are what the client sent, which it can write
 * as it likes (skipping entries that look like proxies let a client on the proxy's own address,
 * 127.0.0.1 behind a local nginx, name itself anew at every guess). A client that can connect
 * from a trusted address itself can write that last entry too: trust only an address no one
 * else connects from.
 */
export interface ClientAddress {
  /** The address the back-off counts by. */
  readonly client: string;
  /** The proxy it came through, when it was looked through; null when the client connected itself. */
  readonly via: string | null;
}

export function clientAddress(req: Pick<IncomingMessage, 'headers'> & { readonly socket: { readonly remoteAddress?: string | undefined } }, trusted: ReadonlySet<string>): ClientAddress {
  const peer = plainAddress(req.socket.remoteAddress ?? 'unknown') ?? 'unknown';
  if (!trusted.has(peer)) return { client: peer, via: null };
  const header = req.headers['x-forwarded-for'];
  const last = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',').at(-1)?.trim() ?? '';
  // None, or not an address: the proxy stands for the request.
  const client = last === '' ? null : plainAddress(last);
  return client === null ? { client: peer, via: null } : { client, via: peer };
}
