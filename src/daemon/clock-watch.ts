import type { Logger } from 'pino';
import type { Exchange } from '../exchange/port.ts';

/**
 * How far this machine's clock may be from the exchange's before the operator is told. Signed
 * requests are corrected by any offset, but schedules, budget days and slot times follow this
 * machine's clock: a minute off moves every slot by a minute.
 */
export const CLOCK_WARN_MS = 60_000;

/**
 * Off by this much, the daemon is unhealthy (/healthz 503) until the clock is right: budget days
 * and slots follow this machine's clock, so a clock hours ahead spent tomorrow's budget today
 * while /healthz said ok. A minute or two is a warning only.
 */
export const CLOCK_UNHEALTHY_MS = 5 * 60_000;

/** How often the daemon measures the clocks again (as the client measures them for its nonces). */
export const CLOCK_CHECK_MS = 10 * 60_000;

/** `3600.0 s ahead of`: how this machine's clock stands against the exchange's (offset = exchange − machine). */
export function clockSide(offsetMs: number): string {
  return `${(Math.abs(offsetMs) / 1000).toFixed(1)} s ${offsetMs > 0 ? 'behind' : 'ahead of'}`;
}

/**
 * Watches each account's exchange clock against this machine's, and says when it is off by a
 * minute or more (a warning, `clock-off`) and when it is right again (`clock-right`): `stacker
 * check` said so, but a daemon started without it ran its slots an hour off without a word. A
 * clock that cannot be read is not reported here: the requests that fail say so themselves.
 */
export class ClockWatch {
  readonly #exchanges: ReadonlyMap<string, Exchange>;
  readonly #logger: Logger;
  readonly #nowMs: () => number;
  /** Per account, whether the last reading was off. */
  readonly #off = new Map<string, boolean>();
  /** Per account, the last offset read (exchange − machine, ms). */
  readonly #offsets = new Map<string, number>();
  #checkedAtMs = Number.NEGATIVE_INFINITY;

  constructor(exchanges: ReadonlyMap<string, Exchange>, logger: Logger, nowMs: () => number) {
    this.#exchanges = exchanges;
    this.#logger = logger;
    this.#nowMs = nowMs;
  }

  /** Measure every account's exchange clock now, or when CLOCK_CHECK_MS has passed since the last time (`due`). */
  async check(when: 'now' | 'due' = 'now'): Promise<void> {
    if (when === 'due' && this.#nowMs() - this.#checkedAtMs < CLOCK_CHECK_MS) return;
    this.#checkedAtMs = this.#nowMs();
    const several = this.#exchanges.size > 1;
    await Promise.all(
      [...this.#exchanges].map(async ([account, exchange]) => {
        const offsetMs = await exchange.clockOffsetMs?.().catch(() => null);
        if (offsetMs === undefined || offsetMs === null) return;
        this.#offsets.set(account, offsetMs);
        const off = Math.abs(offsetMs) >= CLOCK_WARN_MS;
        const was = this.#off.get(account) ?? false;
        this.#off.set(account, off);
        const whose = several ? `account ${account}: ` : '';
        if (off) {
          this.#logger.warn(
            { event: 'clock-off', ...(several ? { account } : {}), offsetMs },
            `${whose}this machine's clock is ${clockSide(offsetMs)} the exchange's: signed requests are corrected, but schedules, budget days and slot times follow this machine's clock, so every slot runs that much off; set the clock right (NTP)`,
          );
        } else if (was) {
          this.#logger.info({ event: 'clock-right', ...(several ? { account } : {}), offsetMs }, `${whose}this machine's clock agrees with the exchange's again (${clockSide(offsetMs)})`);
        }
      }),
    );
  }

  /** What /healthz says of the clocks: each account whose last reading was CLOCK_UNHEALTHY_MS or more off. */
  problems(): string[] {
    const several = this.#exchanges.size > 1;
    return [...this.#offsets]
      .filter(([, offsetMs]) => Math.abs(offsetMs) >= CLOCK_UNHEALTHY_MS)
      .map(
        ([account, offsetMs]) =>
          `${several ? `account ${account}: ` : ''}this machine's clock is ${clockSide(offsetMs)} the exchange's: slots, budget days and periods follow this machine's clock, so they are that much off; set the clock right (NTP)`,
      );
  }
}
