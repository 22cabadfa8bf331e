import type { Logger } from 'pino';
import { throttled } from './throttled-log.ts';

/** How often the same Host is told again while its requests keep being refused. */
export const MISDIRECTED_LOG_EVERY_MS = 5 * 60_000;

/** Hosts followed each on their own; past this many, the rest share one line (a client making up names must not grow the map). */
const FOLLOWED_HOSTS = 100;

/**
 * A warning for requests the status server refused with 421 for their Host: a probe or a
 * Prometheus that names the server by a name not in STACKER_METRICS_ALLOWED_HOSTS fails on every
 * try, and without a line its operator sees only a target down. One line per Host at first, then
 * at most one per MISDIRECTED_LOG_EVERY_MS with how many came since: a scrape every 15 s, or a
 * page probing names, must not fill the log.
 */
export function misdirectedRequests(logger: Pick<Logger, 'warn'>, everyMs: number = MISDIRECTED_LOG_EVERY_MS, nowMs: () => number = Date.now): (host: string, allowed: readonly string[]) => void {
  const write = (refused: number, host: string, allowed: readonly string[]): void =>
    logger.warn(
      { event: 'host-refused', host, allowed, refused },
      `answered 421 to a request naming the host ${JSON.stringify(host)}: the status server answers only to ${allowed.join(', ')} (STACKER_METRICS_ALLOWED_HOSTS); ` +
        `add the name a probe or Prometheus uses there (or * where no browser reaches the port); ${refused} such request(s) since the last such line for it`,
    );
  const perHost = new Map<string, (host: string, allowed: readonly string[]) => void>();
  const others = throttled(everyMs, write, nowMs);
  return (host, allowed) => {
    let told = perHost.get(host);
    if (told === undefined && perHost.size < FOLLOWED_HOSTS) {
      told = throttled(everyMs, write, nowMs);
      perHost.set(host, told);
    }
    (told ?? others)(host, allowed);
  };
}
