import { isIPv6 } from 'node:net';
import { plainAddress } from '../domain/ip-address.ts';

/**
 * The controls' answer to guessing: once one address has had `limit` control requests refused
 * for their token within `windowMs` of the first, its requests get 429 and a Retry-After
 * without the token being looked at until that window is over. Ten guesses a minute leave a
 * token of 16 characters or more out of reach; a token typed wrong by hand costs a minute.
 *
 * Memory stays bounded whatever the number of addresses: at most `maxAddresses` are followed,
 * the windows over are dropped first, then the oldest. An IPv6 client is followed by its /64,
 * the block one machine usually holds, so it cannot start afresh by changing its address.
 * Behind a reverse proxy every client is the proxy's address, and shares its back-off.
 */

export interface ControlBackoffOptions {
  /** Refused requests allowed within a window; the next is answered 429. Default 10. */
  readonly limit?: number;
  /** Default one minute. */
  readonly windowMs?: number;
  /** Default 1000. */
  readonly maxAddresses?: number;
  readonly nowMs?: () => number;
}

export const CONTROL_BACKOFF_DEFAULTS = { limit: 10, windowMs: 60_000, maxAddresses: 1000 } as const;

interface Window {
  readonly startMs: number;
  refused: number;
}

export class ControlBackoff {
  readonly #limit: number;
  readonly #windowMs: number;
  readonly #maxAddresses: number;
  readonly #nowMs: () => number;
  /** By window start, oldest first: a window that starts again is put back at the end. */
  readonly #windows = new Map<string, Window>();

  constructor(options: ControlBackoffOptions = {}) {
    this.#limit = options.limit ?? CONTROL_BACKOFF_DEFAULTS.limit;
    this.#windowMs = options.windowMs ?? CONTROL_BACKOFF_DEFAULTS.windowMs;
    this.#maxAddresses = options.maxAddresses ?? CONTROL_BACKOFF_DEFAULTS.maxAddresses;
    this.#nowMs = options.nowMs ?? Date.now;
  }

  /** Seconds until `address` may be heard again (for Retry-After), or null when it may now. */
  waitSeconds(address: string): number | null {
    const window = this.#current(clientOf(address));
    if (window === null || window.refused < this.#limit) return null;
    return Math.max(1, Math.ceil((window.startMs + this.#windowMs - this.#nowMs()) / 1000));
  }

  refused(address: string): void {
    const client = clientOf(address);
    const window = this.#current(client);
    if (window !== null) {
      window.refused += 1;
      return;
    }
    this.#windows.delete(client);
    this.#makeRoom();
    this.#windows.set(client, { startMs: this.#nowMs(), refused: 1 });
  }

  /** The right token: whatever this address got wrong before is forgotten. */
  accepted(address: string): void {
    this.#windows.delete(clientOf(address));
  }

  /** How many addresses are followed now. */
  get size(): number {
    return this.#windows.size;
  }

  #current(client: string): Window | null {
    const window = this.#windows.get(client);
    return window !== undefined && this.#nowMs() - window.startMs < this.#windowMs ? window : null;
  }

  #makeRoom(): void {
    const nowMs = this.#nowMs();
    for (const [client, window] of this.#windows) {
      if (this.#windows.size < this.#maxAddresses && nowMs - window.startMs < this.#windowMs) return;
      this.#windows.delete(client);
    }
  }
}

/** An IPv4 address as it is (one mapped into IPv6 too), an IPv6 one by its /64. */
function clientOf(given: string): string {
  const address = plainAddress(given) ?? given;
  if (!isIPv6(address)) return address;
  return `${expandIPv6(address).slice(0, 4).join(':')}::/64`;
}

/** The eight groups of an IPv6 address, `::` written out (a zone index dropped). */
function expandIPv6(address: string): string[] {
  const [head = '', tail] = address.split('%')[0]!.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const zeros = tail === undefined ? [] : new Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right].map((group) => group.toLowerCase().replace(/^0+(?=.)/, ''));
}
