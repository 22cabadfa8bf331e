import type { AccountCapDay, NotifyEvent } from '../domain/notification.ts';
import type { RunMode } from '../domain/run-mode.ts';
import { type AccountRouting, accountCapLeft } from '../engine/runtime.ts';
import type { Clock } from '../engine/schedule/clock.ts';
import { type SummaryInstance, summariseDay } from '../report/day-summary.ts';
import type { Journal } from '../store/journal.ts';
import type { Decimal } from '../domain/money.ts';

const DAY_MS = 86_400_000;

export interface DailySummaryDeps {
  readonly journal: Pick<Journal, 'listOrders' | 'getIntent'>;
  readonly instances: readonly SummaryInstance[];
  readonly mode: RunMode;
  readonly clock: Clock;
  readonly budgetLeft: (instance: string, atMs: number) => Promise<Decimal | null>;
  /** Each account with a cap, and what its cap leaves at a moment. */
  readonly accountCaps?: (atMs: number) => Promise<readonly AccountCapDay[]>;
  readonly notify: (event: NotifyEvent) => void;
  readonly onError: (error: unknown) => void;
}

/** What each capped account's cap leaves at `atMs`, in the order of the run's accounts. */
export async function accountCapsLeft(journal: Journal, accounts: Pick<AccountRouting, 'names' | 'capOf'>, atMs: number): Promise<AccountCapDay[]> {
  const out: AccountCapDay[] = [];
  for (const account of accounts.names) {
    const cap = accounts.capOf(account);
    if (cap === null) continue;
    const left = await accountCapLeft(journal, account, cap, atMs);
    if (left !== null) out.push({ account, capLeft: left, capAsset: cap.asset, timeZone: cap.timeZone });
  }
  return out;
}

/** The UTC midnight after `nowMs` (a summary sent at 00:00:00 sums up the day that just ended). */
export function nextUtcMidnightMs(nowMs: number): number {
  return Math.floor(nowMs / DAY_MS) * DAY_MS + DAY_MS;
}

/**
 * The daily-summary event of the UTC day that ended at `dayEndMs`, read from the journal. Budgets
 * and caps left are as at that day's last moment: read at the moment the summary is sent, just
 * after midnight, a daily budget always showed its fresh day's whole limit beside the day's buys.
 */
export async function dailySummary(deps: Omit<DailySummaryDeps, 'notify' | 'onError'>, dayEndMs: number): Promise<NotifyEvent> {
  const fromMs = dayEndMs - DAY_MS;
  const nowMs = deps.clock.nowMs();
  const lastMomentMs = dayEndMs - 1;
  const instances = await summariseDay(deps.journal, deps.instances, { fromMs, toMs: dayEndMs }, (instance) => deps.budgetLeft(instance, lastMomentMs));
  const accountCaps = (await deps.accountCaps?.(lastMomentMs)) ?? [];
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
    timer = setTimeout(() => {
      dailySummary(deps, dueMs).then(deps.notify, deps.onError).finally(arm);
    }, Math.max(0, dueMs - deps.clock.nowMs()));
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
