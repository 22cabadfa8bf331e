import { join } from 'node:path';
import type { InstanceConfig } from '../config/instance-config.ts';
import { type Decimal, formatDecimal } from '../domain/money.ts';
import { localParts } from '../domain/zone.ts';
import { changedOrderPages } from '../store/changed-order-pages.ts';
import type { IntentRecord, Journal } from '../store/journal.ts';

/**
 * Budgets belong to an instance's name, and the name is its file's: a file renamed (or copied,
 * the old one disabled) is a new instance with a fresh budget that buys again in a period the
 * old name has spent. The journal still holds the old name's spending, so a start and `stacker
 * check` say so, naming what it spent in which period and what of it is unresolved.
 */
export interface InstanceWithoutFile {
  readonly instance: string;
  /** `no-file`: the strategies folder has no NAME.env for it any more; `disabled`: its file says ENABLED=false. */
  readonly state: 'no-file' | 'disabled';
  /** The file it had or has. */
  readonly file: string;
  /** What it spent in the day, ISO week and month around now (only those it spent in). */
  readonly spent: readonly PeriodSpent[];
  readonly unresolved: readonly IntentRecord[];
  /** Since when an operator has it paused from the status API; null when not paused. */
  readonly pausedSinceMs: number | null;
  /** Enabled instances the journal has never seen: what a rename made. */
  readonly newNames: readonly string[];
  readonly message: string;
}

export interface PeriodSpent {
  readonly period: 'day' | 'week' | 'month';
  /** The period's first day, YYYY-MM-DD in `timeZone`. */
  readonly from: string;
  readonly amount: Decimal;
  readonly asset: string;
  readonly timeZone: string;
}

/** A month, and a day of zone offsets beside it: an order older than this spent in no current period. */
const LOOK_BACK_MS = 33 * 86_400_000;
/** How many of an instance's newest intents are asked for a budget reservation (one that had none has no budget). */
const RESERVATIONS_ASKED = 3;

type Reader = Pick<Journal, 'changedOrders' | 'unresolvedIntents' | 'budgetReservation' | 'budgetSpent' | 'lastSlot' | 'scheduledSince' | 'operatorControls'>;

/** Orders read at a time. */
const PAGE = 2_000;

/**
 * The instances the journal holds that will not run (no file any more, or disabled) and that
 * spent in one of their current budget periods, have an intent unresolved, or are paused from
 * the status API (a pause, like a budget, is the name's: a renamed file runs unpaused), by name.
 * Read before the start anchors new instances (catch-up), so a renamed file still reads as new.
 */
export async function instancesWithoutFile(
  journal: Reader,
  config: { readonly instances: readonly Pick<InstanceConfig, 'instance' | 'file' | 'enabled' | 'budgets'>[]; readonly strategiesDir: string },
  nowMs: number,
): Promise<InstanceWithoutFile[]> {
  const running = new Set(config.instances.filter((instance) => instance.enabled).map((instance) => instance.instance));
  const intentsOf = new Map<string, string[]>();
  const unresolvedOf = new Map<string, IntentRecord[]>();
  for (const intent of await journal.unresolvedIntents()) {
    if (running.has(intent.instance)) continue;
    unresolvedOf.set(intent.instance, [...(unresolvedOf.get(intent.instance) ?? []), intent]);
    intentsOf.set(intent.instance, [...(intentsOf.get(intent.instance) ?? []), intent.intentId]);
  }
  // The orders of the look-back, a page at a time with their instance: a year of a per-minute
  // schedule has some 50k in it, which read whole held a few hundred MB at every start.
  for await (const page of changedOrderPages(journal, nowMs - LOOK_BACK_MS, PAGE)) {
    for (const order of page) {
      const name = order.instance;
      if (order.intentId === null || name === null || running.has(name)) continue;
      // Newest first: the pages come oldest change first, so each newer intent goes in front.
      const known = (intentsOf.get(name) ?? []).filter((intentId) => intentId !== order.intentId);
      intentsOf.set(name, [order.intentId, ...known].slice(0, RESERVATIONS_ASKED));
    }
  }
  const paused = (await journal.operatorControls()).paused;
  for (const name of paused.keys()) if (!running.has(name) && !intentsOf.has(name)) intentsOf.set(name, []);
  if (intentsOf.size === 0) return [];

  const newNames: string[] = [];
  for (const name of running) {
    if ((await journal.lastSlot(name)) === null && (await journal.scheduledSince(name)) === null) newNames.push(name);
  }
  const found: InstanceWithoutFile[] = [];
  for (const [instance, intentIds] of [...intentsOf].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const configured = config.instances.find((candidate) => candidate.instance === instance);
    // Every buy is counted, budget or not: a disabled file says which periods are limited; a file gone no longer does.
    const spent = (await spentNow(journal, instance, intentIds, nowMs)).filter((period) => configured === undefined || configured.budgets[period.period] !== null);
    const unresolved = unresolvedOf.get(instance) ?? [];
    const pausedSinceMs = paused.get(instance) ?? null;
    if (spent.length === 0 && unresolved.length === 0 && pausedSinceMs === null) continue;
    const state = configured === undefined ? 'no-file' : 'disabled';
    const file = configured?.file ?? join(config.strategiesDir, `${instance}.env`);
    found.push({ instance, state, file, spent, unresolved, pausedSinceMs, newNames, message: describe({ instance, state, file, spent, unresolved, pausedSinceMs, newNames }) });
  }
  return found;
}

/** What the instance spent in its day, week and month around now, in the zone and asset its newest budget reservation was made in. */
async function spentNow(journal: Reader, instance: string, intentIds: readonly string[], nowMs: number): Promise<PeriodSpent[]> {
  for (const intentId of intentIds.slice(0, RESERVATIONS_ASKED)) {
    const reservation = await journal.budgetReservation(intentId);
    if (reservation === null) continue;
    const scope = { instance, asset: reservation.asset, timeZone: reservation.timeZone };
    const spent = await journal.budgetSpent(scope, nowMs);
    return (['day', 'week', 'month'] as const)
      .filter((period) => spent[period].gt(0))
      .map((period) => ({ period, from: localDate(spent.periodStarts[period], scope.timeZone), amount: spent[period], asset: scope.asset, timeZone: scope.timeZone }));
  }
  return [];
}

function localDate(ms: number, timeZone: string): string {
  const { year, month, day } = localParts(ms, timeZone);
  return `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

function describe(found: Omit<InstanceWithoutFile, 'message'>): string {
  const { instance, spent, unresolved, pausedSinceMs } = found;
  const where = found.state === 'no-file' ? `the journal holds instance ${instance}, which has no file any more (${found.file})` : `${instance} is disabled (ENABLED=false in ${found.file})`;
  const periods = spent.map((p) => `${formatDecimal(p.amount)} ${p.asset} ${p.period === 'day' ? `on ${p.from}` : p.period === 'week' ? `in the week from ${p.from}` : `in the month from ${p.from}`}`);
  const what = [
    ...(pausedSinceMs === null ? [] : [`it is paused from the status API since ${new Date(pausedSinceMs).toISOString()}`]),
    ...(spent.length === 0 ? [] : [`it spent ${periods.join(', ')} (${spent[0]?.timeZone ?? 'UTC'}), budget periods that are not over`]),
    ...(unresolved.length === 0
      ? []
      : [`${unresolved.length} intent(s) unresolved (${unresolved.slice(0, 3).map((i) => `${i.clientOrderId ?? i.intentId} ${i.intent.kind} ${i.status}`).join(', ')}${unresolved.length > 3 ? ', …' : ''}), still looked up and counted under ${instance}`]),
  ];
  const fresh = found.newNames.length === 0 ? 'a file under another name starts afresh' : `${found.newNames.join(', ')}, new to this journal, start${found.newNames.length === 1 ? 's' : ''} afresh`;
  const keep = found.state === 'no-file' ? `name the file ${instance}.env again` : `enable ${instance} again rather than a copy of it`;
  const paused = pausedSinceMs !== null;
  const kept = [...(paused ? ['pause'] : []), ...(spent.length === 0 && unresolved.length === 0 ? [] : ['budget'])].join(' and ');
  const buys = spent.length > 0 ? ' buys again in those periods (an account cap still counts both)' : paused ? ' buys at its first slot' : '';
  const then = `${paused ? ', not paused,' : buys === '' ? '' : ','}${buys === '' ? '' : ` and${buys}`}`;
  return `${where}: ${what.join('; ')}. Renamed? Its ${kept} ${kept.includes(' and ') ? 'stay' : 'stays'} with ${instance}: ${fresh}${then}. To go on with its ${kept}, ${keep}${paused ? ', or pause the new name' : ''}`;
}
