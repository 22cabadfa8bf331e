import type { IncomingMessage } from 'node:http';
import { plainAddress } from '../domain/ip-address.ts';

/**
 * Who sent a control request, for the back-off that slows guessing of the token and for the
 * log. Behind a reverse proxy every request comes from the proxy, so one client guessing would
 * hold back every other one, the operator included. A proxy named in
 * STACKER_METRICS_TRUSTED_PROXIES is looked through: the client is the last address of
 * `X-Forwarded-For` that is not itself a trusted proxy. The header is believed only from a
 * trusted proxy (anyone else could write any address into it), and only its entries after the
 * last untrusted one, which a trusted proxy appended: what a client wrote itself comes before.
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
  const hops = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',').map((hop) => hop.trim()).filter((hop) => hop !== '');
  for (let i = hops.length - 1; i >= 0; i -= 1) {
    const hop = plainAddress(hops[i] as string);
    // Not an address: nothing after it can be told apart, so the proxy stands for the request.
    if (hop === null) return { client: peer, via: null };
    if (!trusted.has(hop)) return { client: hop, via: peer };
  }
  return { client: peer, via: null };
}
