import type { ApiRequestEvent } from '../observability/metrics.ts';

/** How long an account's exchange may give no usable answer before /healthz names it. */
export const EXCHANGE_DOWN_AFTER_MS = 2 * 60_000;

/**
 * Failures that are no answer at all: nothing reached the exchange, it did not answer in time,
 * answered that it is down or throttled, or in a form that cannot be read. A refusal, a nonce or
 * a key problem is an answer (and has its own handling).
 */
const NO_ANSWER: ReadonlySet<string> = new Set(['E_NETWORK', 'E_TIMEOUT', 'E_UNAVAILABLE', 'E_RATE_LIMIT', 'E_PROTOCOL']);

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
  readonly #down = new Map<string, { sinceMs: number; lastError: string }>();
  readonly #nowMs: () => number;

  constructor(nowMs: () => number = () => Date.now()) {
    this.#nowMs = nowMs;
  }

  /** One attempt's outcome (the API clients' onRequest event). */
  record(event: ApiRequestEvent): void {
    const account = event.account ?? 'default';
    if (event.errorCode === null) {
      this.#down.delete(account);
      return;
    }
    if (!NO_ANSWER.has(event.errorCode)) return;
    const since = this.#down.get(account)?.sinceMs ?? this.#nowMs();
    this.#down.set(account, { sinceMs: since, lastError: `${event.errorCode} on ${event.path}${event.status === null ? '' : ` (HTTP ${event.status})`}` });
  }

  /** The account's exchange giving no usable answer since, with the latest failure; null when its last attempt was answered. */
  of(account: string): ExchangeDown | null {
    const down = this.#down.get(account);
    return down === undefined ? null : { account, ...down };
  }

  /** One sentence per account whose exchange has given no usable answer for EXCHANGE_DOWN_AFTER_MS or more. */
  problems(accountCount: number): string[] {
    const now = this.#nowMs();
    const problems: string[] = [];
    for (const [account, down] of [...this.#down].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      if (now - down.sinceMs < EXCHANGE_DOWN_AFTER_MS) continue;
      const whose = accountCount > 1 ? `account ${account}: its exchange` : 'the exchange';
      const others = accountCount > 1 ? '; the other accounts trade on' : '';
      problems.push(`${whose} has given no usable answer since ${new Date(down.sinceMs).toISOString()} (latest: ${down.lastError}): its slots wait for it or are skipped${others}`);
    }
    return problems;
  }
}
