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

/** How often while a clock is CLOCK_UNHEALTHY_MS off (its account sends nothing): trading resumes within a minute of the clock set right. */
export const CLOCK_RECHECK_OFF_MS = 60_000;

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

  /**
   * `nowMs`: the daemon's clock, by which it schedules slots and counts budget days, and times
   * these readings. An exchange's offset is measured against the process's own clock (Date.now);
   * a daemon run on another clock (a replay in virtual time) is judged against that one.
   */
  constructor(exchanges: ReadonlyMap<string, Exchange>, logger: Logger, nowMs: () => number) {
    this.#exchanges = exchanges;
    this.#logger = logger;
    this.#nowMs = nowMs;
  }

  /**
   * Measure every account's exchange clock now, or when it is `due`: CLOCK_CHECK_MS since the
   * last time (CLOCK_RECHECK_OFF_MS while one is far off), or at once when this machine's clock
   * reads earlier than it did then: stepped back, it would otherwise wait out the step as well,
   * an hour's step back an hour and ten minutes, unseen by /healthz and the guard on sends.
   */
  async check(when: 'now' | 'due' = 'now'): Promise<void> {
    const sinceMs = this.#nowMs() - this.#checkedAtMs;
    const interval = this.problems().length > 0 ? CLOCK_RECHECK_OFF_MS : CLOCK_CHECK_MS;
    if (when === 'due' && sinceMs >= 0 && sinceMs < interval) return;
    this.#checkedAtMs = this.#nowMs();
    const several = this.#exchanges.size > 1;
    await Promise.all(
      [...this.#exchanges].map(async ([account, exchange]) => {
        const measuredMs = await exchange.clockOffsetMs?.().catch(() => null);
        if (measuredMs === undefined || measuredMs === null) return;
        const offsetMs = measuredMs + (Date.now() - this.#nowMs());
        this.#offsets.set(account, offsetMs);
        const off = Math.abs(offsetMs) >= CLOCK_WARN_MS;
        const was = this.#off.get(account) ?? false;
        this.#off.set(account, off);
        const whose = several ? `account ${account}: ` : '';
        if (off) {
          this.#logger.warn(
            { event: 'clock-off', ...(several ? { account } : {}), offsetMs },
            `${whose}this machine's clock is ${clockSide(offsetMs)} the exchange's: signed requests are corrected, but schedules, budget days and slot times follow this machine's clock, so every slot runs that much off${Math.abs(offsetMs) >= CLOCK_UNHEALTHY_MS ? `, and nothing that moves money is sent while it is ${CLOCK_UNHEALTHY_MS / 60_000} minutes or more off` : ''}; set the clock right (NTP)`,
          );
        } else if (was) {
          this.#logger.info({ event: 'clock-right', ...(several ? { account } : {}), offsetMs }, `${whose}this machine's clock agrees with the exchange's again (${clockSide(offsetMs)})`);
        }
      }),
    );
  }

  /**
   * Why nothing of `account` may be sent now, or null: its clock was last read CLOCK_UNHEALTHY_MS
   * or more off the exchange's. Slots and budget days follow this machine's clock, so a clock
   * far behind buys again slots the journal holds under their true time (six years back, the
   * slot of 21:10 was bought twice within two minutes, and the day's budget with it), and one
   * far ahead spends tomorrow's budget today. Without `account`, none is named: nothing refused.
   */
  refusal(account?: string): string | null {
    const offsetMs = account === undefined ? undefined : this.#offsets.get(account);
    if (offsetMs === undefined || Math.abs(offsetMs) < CLOCK_UNHEALTHY_MS) return null;
    return `this machine's clock is ${clockSide(offsetMs)} the exchange's, and slots and budget days follow this machine's clock: nothing that moves money is sent until it is within ${CLOCK_UNHEALTHY_MS / 60_000} minutes (set it right, NTP; it is read again every minute)`;
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
