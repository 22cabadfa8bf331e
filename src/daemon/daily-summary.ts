import type { AccountCapDay, NotifyEvent } from '../domain/notification.ts';
import type { RunMode } from '../domain/run-mode.ts';
import { type AccountRouting, accountCapLeft } from '../engine/runtime.ts';
import type { Clock } from '../engine/schedule/clock.ts';
import { type SummaryInstance, summariseDay } from '../report/day-summary.ts';
import type { Journal } from '../store/journal.ts';
import type { Decimal } from '../domain/money.ts';
import { localToUtc } from '../domain/zone.ts';
import { periodWindows } from '../store/budget-periods.ts';

const DAY_MS = 86_400_000;

export interface DailySummaryDeps {
  readonly journal: Pick<Journal, 'listOrders' | 'getIntent'>;
  readonly instances: readonly SummaryInstance[];
  readonly mode: RunMode;
  readonly clock: Clock;
  readonly budgetLeft: (instance: string, atMs: number) => Promise<Decimal | null>;
  /** Each account with a cap, and what its cap leaves at the moment `readAtMs` names for the cap's zone. */
  readonly accountCaps?: (readAtMs: (timeZone: string) => number) => Promise<readonly AccountCapDay[]>;
  readonly notify: (event: NotifyEvent) => void;
  readonly onError: (error: unknown) => void;
}

/** What each capped account's cap leaves at the moment `readAtMs` names for its zone, in the order of the run's accounts. */
export async function accountCapsLeft(journal: Journal, accounts: Pick<AccountRouting, 'names' | 'capOf'>, readAtMs: (timeZone: string) => number): Promise<AccountCapDay[]> {
  const out: AccountCapDay[] = [];
  for (const account of accounts.names) {
    const cap = accounts.capOf(account);
    if (cap === null) continue;
    const left = await accountCapLeft(journal, account, cap, readAtMs(cap.timeZone));
    if (left !== null) out.push({ account, capLeft: left, capAsset: cap.asset, timeZone: cap.timeZone });
  }
  return out;
}

/** The UTC midnight after `nowMs` (a summary sent at 00:00:00 sums up the day that just ended). */
export function nextUtcMidnightMs(nowMs: number): number {
  return Math.floor(nowMs / DAY_MS) * DAY_MS + DAY_MS;
}

/**
 * When a budget or cap counted in `timeZone` is read for the summary of the UTC day that ends at
 * `dayEndMs`: the last moment of the same date in its own calendar, or of the UTC day when that
 * comes first. Read at the moment the summary is sent, just after midnight, a daily budget always
 * showed its fresh day's whole limit; read at the UTC day's last moment, one east of UTC showed
 * its next local day's. West of UTC the local date runs on past the summary: what it left so far.
 */
export function dayLeftReadAtMs(dayEndMs: number, timeZone: string): number {
  const date = new Date(dayEndMs - DAY_MS);
  // Noon exists on every local date, whatever the zone's changes of offset at night.
  const noonMs = localToUtc({ year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate(), hour: 12, minute: 0, second: 0 }, timeZone) ?? dayEndMs - DAY_MS / 2;
  return Math.min(dayEndMs, periodWindows(noonMs, timeZone).ends.day) - 1;
}

/**
 * The daily-summary event of the UTC day that ended at `dayEndMs`, read from the journal, with
 * each budget and cap left on that date in its own calendar (dayLeftReadAtMs).
 */
export async function dailySummary(deps: Omit<DailySummaryDeps, 'notify' | 'onError'>, dayEndMs: number): Promise<NotifyEvent> {
  const fromMs = dayEndMs - DAY_MS;
  const nowMs = deps.clock.nowMs();
  const zoneOf = new Map(deps.instances.map((instance) => [instance.instance, instance.budgetTimeZone ?? 'UTC']));
  const readAtMs = (timeZone: string): number => dayLeftReadAtMs(dayEndMs, timeZone);
  const instances = await summariseDay(deps.journal, deps.instances, { fromMs, toMs: dayEndMs }, (instance) => deps.budgetLeft(instance, readAtMs(zoneOf.get(instance) ?? 'UTC')));
  const accountCaps = (await deps.accountCaps?.(readAtMs)) ?? [];
  return { kind: 'daily-summary', atMs: nowMs, mode: deps.mode, day: new Date(fromMs).toISOString().slice(0, 10), instances, accountCaps };
}

/**
 * Once a day at 00:00 UTC, the summary of the UTC day that ended: one timer, re-armed after each
 * summary, unref'd so it never keeps a stopping process alive; `stop` clears it. UTC rather than
 * each instance's timezone: one message a day, the same day boundary for every instance.
 */
export function scheduleDailySummary(deps: DailySummaryDeps): { stop(): void } {
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  let lastDueMs = 0;
  const arm = (): void => {
    if (stopped) return;
    // Never the same midnight twice, should the timer fire a moment before the wall clock gets there.
    const dueMs = nextUtcMidnightMs(Math.max(deps.clock.nowMs(), lastDueMs));
    lastDueMs = dueMs;
    const fire = (): void => {
      // Node's timers may fire a millisecond before the wall clock gets there: the day is not over yet.
      const early = dueMs - deps.clock.nowMs();
      if (early > 0 && !stopped) {
        timer = setTimeout(fire, early);
        timer.unref();
        return;
      }
      dailySummary(deps, dueMs).then(deps.notify, deps.onError).finally(arm);
    };
    timer = setTimeout(fire, Math.max(0, dueMs - deps.clock.nowMs()));
    timer.unref();
  };
  arm();
  return {
    stop() {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
    },
  };
}
