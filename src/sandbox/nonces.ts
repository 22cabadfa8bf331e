/**
 * The nonce rules of docs/exchange-api.md §3, per API key:
 * - without `nonceWindow`: each nonce must be strictly greater than the key's previous one
 *   (any increasing integer will do);
 * - with `nonceWindow: true`: the nonce is a ms timestamp within ±5 s of the server clock and
 *   must never have been seen before (replay protection; order no longer matters).
 * The two modes keep separate state: the exchange does not document how they interact.
 */
import { NONCE_WINDOW_MS } from '../api/nonce.ts';

export type NonceVerdict =
  | { readonly ok: true }
  | { readonly ok: false; readonly message: string };

export const TOO_MANY_REQUESTS = 'Too many requests.';
export const NONCE_TOO_OLD = 'Your nonce is more than 5 seconds lesser than the current nonce';
export const NONCE_TOO_NEW = 'Your nonce is more than 5 seconds greater than the current nonce';

interface KeyState {
  last: bigint | null;
  /** Window-mode nonces seen, with their ms value, pruned once they fall out of the window. */
  readonly seen: Map<string, number>;
  pruneAt: number;
}

export class NonceTracker {
  readonly #keys = new Map<string, KeyState>();

  /** `nonce` is the decimal digit text of the request's nonce. */
  check(apiKey: string, nonce: string, windowMode: boolean, nowMs: number): NonceVerdict {
    const state = this.#state(apiKey);
    if (!windowMode) {
      const value = BigInt(nonce);
      if (state.last !== null && value <= state.last) return { ok: false, message: TOO_MANY_REQUESTS };
      state.last = value;
      return { ok: true };
    }
    const valueMs = Number(nonce);
    if (valueMs < nowMs - NONCE_WINDOW_MS) return { ok: false, message: NONCE_TOO_OLD };
    if (valueMs > nowMs + NONCE_WINDOW_MS) return { ok: false, message: NONCE_TOO_NEW };
    if (state.seen.has(nonce)) return { ok: false, message: TOO_MANY_REQUESTS };
    state.seen.set(nonce, valueMs);
    if (state.seen.size >= state.pruneAt) {
      // Anything older than the window is refused as too old anyway, so forgetting it is safe.
      for (const [seenNonce, seenMs] of state.seen) if (seenMs < nowMs - NONCE_WINDOW_MS) state.seen.delete(seenNonce);
      state.pruneAt = Math.max(1024, state.seen.size * 2);
    }
    return { ok: true };
  }

  #state(apiKey: string): KeyState {
    let state = this.#keys.get(apiKey);
    if (!state) {
      state = { last: null, seen: new Map(), pruneAt: 1024 };
      this.#keys.set(apiKey, state);
    }
    return state;
  }
}
