import { abortableSleep } from '../domain/abortable-sleep.ts';
import { tagAccount } from '../domain/error-account.ts';
import { NetworkError, StackerError } from '../domain/errors.ts';
import type { MarketRules } from '../domain/market.ts';
import type { Logger } from 'pino';
import type { Exchange } from '../exchange/port.ts';

/**
 * Waits between start-up reads of an exchange that is down: short at first (a blip, a deploy),
 * then once a minute for as long as it takes (a maintenance window).
 */
export const START_RETRY_MS: readonly number[] = [2_000, 5_000, 15_000, 30_000, 60_000];

export interface StartMarketsOptions {
  readonly logger: Logger;
  /** Aborted when the daemon is told to stop: the wait ends at once. */
  readonly stop: AbortSignal;
  /** false (`run --once`): one try, its failure is the run's. */
  readonly wait: boolean;
  readonly retryMs?: readonly number[];
  /** How long a read may go unanswered before a warning says so (SLOW_NOTICE_MS when absent). */
  readonly slowNoticeMs?: number;
  /** Told at each failed try that is waited out (the daemon's /healthz says what it waits for). */
  readonly onWaiting?: (account: string, error: StackerError) => void;
  /** Told when an account's exchange answered. */
  readonly onAnswered?: (account: string) => void;
}

/**
 * A hanging exchange takes a try four time limits (the client's own retries) to fail: say that
 * it is being waited for long before that, rather than nothing for 40 s.
 */
export const SLOW_NOTICE_MS = 5_000;

/**
 * Every account's market list, which the start checks each instance against. A daemon is
 * started next to an exchange that can be in maintenance or unreachable for a while; stopping
 * on that (exit 4) left a bare-Node daemon dead and a container restarting in a loop, so a
 * failure that may pass (5xx, 429, a network error or timeout) is waited out, each account on
 * its own, a warning logged at each try. Anything else (a refused key, an answer that cannot be
 * read) ends the start as before. null when the daemon was told to stop while it waited.
 */
export async function marketsAtStart(exchanges: ReadonlyMap<string, Exchange>, options: StartMarketsOptions): Promise<Map<string, readonly MarketRules[]> | null> {
  const retryMs = options.retryMs ?? START_RETRY_MS;
  // One account's lasting failure stops the others' waits too: the start has failed.
  const giveUp = new AbortController();
  const stop = AbortSignal.any([options.stop, giveUp.signal]);
  const read = async (account: string, exchange: Exchange): Promise<readonly MarketRules[] | null> => {
    for (let attempt = 0; ; attempt += 1) {
      const slowMs = options.slowNoticeMs ?? SLOW_NOTICE_MS;
      const slow = setTimeout(
        () => options.logger.warn({ event: 'exchange-slow', account, attempt: attempt + 1 }, `account ${account}: the exchange has not answered the market list for ${Math.round(slowMs / 1000)} s; still waiting for it`),
        slowMs,
      );
      try {
        const markets = await exchange.markets().finally(() => clearTimeout(slow));
        if (attempt > 0) options.logger.info({ event: 'exchange-back', account, attempts: attempt + 1 }, `account ${account}: the exchange answered; starting`);
        options.onAnswered?.(account);
        return markets;
      } catch (error) {
        // Told to stop, or another account's start failed: this one's failure no longer matters.
        if (stop.aborted) return null;
        // Not retryable: a refused key, an answer that cannot be read, a TLS handshake that fails (a setting, not an outage).
        if (!options.wait || !(error instanceof StackerError) || !error.retryable) {
          giveUp.abort();
          throw exchanges.size > 1 ? ofAccount(error, account) : error;
        }
        const delayMs = retryMs[Math.min(attempt, retryMs.length - 1)] ?? 60_000;
        options.onWaiting?.(account, error);
        options.logger.warn(
          { event: 'exchange-waiting', account, code: error.code, attempt: attempt + 1, retryInMs: delayMs },
          `account ${account}: the exchange's market list could not be read at start (${error.code}: ${error.message})${hintFor(error)}; nothing is scheduled until it answers; trying again in ${Math.round(delayMs / 1000)} s`,
        );
        await abortableSleep(delayMs, stop);
        if (stop.aborted) return null;
      }
    }
  };
  const entries = [...exchanges];
  const lists = await Promise.all(entries.map(([account, exchange]) => read(account, exchange)));
  if (lists.some((list) => list === null)) return null;
  return new Map(entries.map(([account], i) => [account, lists[i] as readonly MarketRules[]]));
}

/**
 * The error, its message naming the account whose exchange answered it: with several accounts
 * "connection refused" alone does not say which endpoint to look at. Same class and code.
 */
export function ofAccount(error: unknown, account: string): unknown {
  if (error instanceof Error && !error.message.startsWith(`account ${account}: `)) error.message = `account ${account}: ${error.message}`;
  // An exchange's error is reported from its fields, not its message: the account goes beside it too.
  return tagAccount(error, account);
}

/** What to check when a failure lasts that may also be a setting: a host name that does not resolve may be a typo. */
function hintFor(error: StackerError): string {
  return error instanceof NetworkError && error.causeCode === 'ENOTFOUND' ? ' (if this lasts, check the host name in STACKER_BASE_URL, or the account\'s BASE_URL)' : '';
}

