import { readFileSync } from 'node:fs';

/**
 * The open-files limit, said at start when it is too low for a daemon. Past it nothing says so:
 * the status server's connections are reset (libuv accepts and closes them), the journal "cannot
 * be opened", the exchange "cannot be reached" — each the wrong thing blamed, and a liveness
 * probe restarting a daemon that trades. A daemon holds some 30 files at rest (the journal and
 * its WAL, the locks, the exchange's connections, the status page's); 128 leaves room for a burst.
 */
export const FD_LIMIT_FLOOR = 128;

/** The soft open-files limit from /proc/self/limits' text; null where it cannot be read (not Linux) or is unlimited. */
export function softFdLimit(limitsText: string): number | null {
  const line = limitsText.split('\n').find((row) => row.startsWith('Max open files'));
  const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
  return soft !== undefined && /^\d+$/.test(soft) ? Number(soft) : null;
}

/** Warns (`fd-limit-low`) when this process may open fewer than FD_LIMIT_FLOOR files. */
export function warnOfLowFdLimit(logger: { warn(fields: Record<string, unknown>, message: string): void }, readLimits: () => string = () => readFileSync('/proc/self/limits', 'utf8')): void {
  let limit: number | null;
  try {
    limit = softFdLimit(readLimits());
  } catch {
    return;
  }
  if (limit === null || limit >= FD_LIMIT_FLOOR) return;
  logger.warn(
    { event: 'fd-limit-low', limit, floor: FD_LIMIT_FLOOR },
    `this process may open only ${limit} files (ulimit -n): past it the status page resets connections and the journal or the exchange seem to fail (EMFILE); raise it to ${FD_LIMIT_FLOOR} or more (ulimit -n, docker run --ulimit nofile=…, LimitNOFILE= in systemd)`,
  );
}
