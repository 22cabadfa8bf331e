import type { ApiRequestEvent } from '../observability/metrics.ts';

/** How long an account's exchange may give no usable answer before /healthz names it. */
export const EXCHANGE_DOWN_AFTER_MS = 2 * 60_000;

/**
 * Failures that are no answer at all: nothing reached the exchange, it did not answer in time,
 * answered that it is down or throttled, or in a form that cannot be read. A refusal, a nonce or
 * a key problem is an answer (and has its own handling).
 */
const NO_ANSWER: ReadonlySet<string> = new Set(['E_NETWORK', 'E_TIMEOUT', 'E_UNAVAILABLE', 'E_RATE_LIMIT', 'E_PROTOCOL']);

type Side = 'private' | 'public';

/** The exchange's public endpoints (v4 and the v1 kline and ticker). */
const PUBLIC = /^\/api\/v\d+\/public\//;

/** An account's exchange giving no usable answer: since when, and the latest failure. */
export interface ExchangeDown {
  readonly account: string;
  readonly sinceMs: number;
  readonly lastError: string;
}

/**
 * Whether each account's exchange answers, from every request the daemon makes to it: one that
 * has given no usable answer for EXCHANGE_DOWN_AFTER_MS is a /healthz problem naming the account,
 * at once, where the slots' own count (3 skipped in a row) takes three days of a daily schedule,
 * and with several accounts the healthy ones keep every global figure fresh. Only what was tried
 * is known: an exchange that fails between two slots of a daily schedule is seen at the next.
 */
export class ExchangeReachability {
  /** Per account and side (its private API, the public one): since when it gives no usable answer, and the latest failure. */
  readonly #down = new Map<string, Map<Side, { sinceMs: number; lastError: string }>>();
  readonly #nowMs: () => number;

  constructor(nowMs: () => number = () => Date.now()) {
    this.#nowMs = nowMs;
  }

  /**
   * One attempt's outcome (the API clients' onRequest event). The private API and the public
   * one are told apart: an exchange whose private endpoints are down may answer its public ones
   * (the clock, the markets), which say nothing of whether an order can be placed.
   */
  record(event: ApiRequestEvent): void {
    const account = event.account ?? 'default';
    const side: Side = PUBLIC.test(event.path) ? 'public' : 'private';
    const sides = this.#down.get(account);
    if (event.errorCode === null) {
      sides?.delete(side);
      if (sides?.size === 0) this.#down.delete(account);
      return;
    }
    if (!NO_ANSWER.has(event.errorCode)) return;
    const found = sides ?? new Map<Side, { sinceMs: number; lastError: string }>();
    const since = found.get(side)?.sinceMs ?? this.#nowMs();
    found.set(side, { sinceMs: since, lastError: `${event.errorCode} on ${event.path}${event.status === null ? '' : ` (HTTP ${event.status})`}` });
    this.#down.set(account, found);
  }

  /** The account's exchange giving no usable answer since (the side down longest), with its latest failure; null when each side's last attempt was answered. */
  of(account: string): ExchangeDown | null {
    const sides = [...(this.#down.get(account)?.values() ?? [])].sort((a, b) => a.sinceMs - b.sinceMs);
    const down = sides[0];
    return down === undefined ? null : { account, ...down };
  }

  /** One sentence per account whose exchange has given no usable answer for EXCHANGE_DOWN_AFTER_MS or more. */
  problems(accountCount: number): string[] {
    const now = this.#nowMs();
    const problems: string[] = [];
    const accounts = [...this.#down.keys()].sort().flatMap((account) => {
      const down = this.of(account);
      return down === null ? [] : [[account, down] as const];
    });
    for (const [account, down] of accounts) {
      if (now - down.sinceMs < EXCHANGE_DOWN_AFTER_MS) continue;
      const whose = accountCount > 1 ? `account ${account}: its exchange` : 'the exchange';
      const others = accountCount > 1 ? '; the other accounts trade on' : '';
      problems.push(`${whose} has given no usable answer since ${new Date(down.sinceMs).toISOString()} (latest: ${down.lastError}): its slots wait for it or are skipped${others}`);
    }
    return problems;
  }
}
