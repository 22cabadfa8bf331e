import { isLoopbackHost } from '../domain/plain-http.ts';

/**
 * Which requests the status server answers by their `Host` (STACKER_METRICS_ALLOWED_HOSTS), and
 * what listening off loopback exposes: small, so `stacker check` says it without the server.
 */

/** Where the server listens and the Host names it was given (absent: its default). */
export interface ServerAddress {
  readonly host: string;
  readonly allowedHosts?: readonly string[] | '*';
}

/** The names a server on loopback answers to by default. */
export const LOOPBACK_NAMES: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

export function allowedHostsOf(options: ServerAddress): readonly string[] | '*' {
  return options.allowedHosts ?? (isLoopbackHost(options.host) ? LOOPBACK_NAMES : '*');
}

/**
 * What an operator must be told of a server that listens off loopback (STACKER_METRICS_HOST
 * 0.0.0.0 or a LAN address), or null on loopback: it speaks plain HTTP to whoever reaches the
 * port, so the status (orders, budgets, P&L) and, with the controls on, their bearer token
 * cross the network in clear; and which Host names it answers (any: no DNS-rebinding guard).
 * `listening` is the address and port as shown.
 */
export function offLoopbackWarning(options: ServerAddress & { readonly listening: string; readonly controls: boolean }): string | null {
  if (isLoopbackHost(options.host)) return null;
  const allowed = allowedHostsOf(options);
  return (
    `the status page listens on ${options.listening}, off loopback, and speaks plain HTTP: whoever reaches the port reads /api/status (instances, orders, P&L)` +
    (options.controls ? ', and the controls are on: their bearer token (STACKER_CONTROL_TOKEN) crosses the network in clear' : '; the controls are off') +
    `; allowed hosts: ${allowed === '*' ? '* (any Host is answered: no guard against DNS rebinding)' : allowed.join(', ')} (STACKER_METRICS_ALLOWED_HOSTS). ` +
    'Keep STACKER_METRICS_HOST=127.0.0.1 and reach it over SSH, or put a TLS proxy in front; in a container, publish the port on the host\'s loopback only (-p 127.0.0.1:9464:9464)'
  );
}

