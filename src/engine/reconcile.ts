import type { IntentRecord } from '../store/journal.ts';
import { isMoneyIntent } from '../domain/intent.ts';
import { FatalEngineError, classifyError, errorMessage } from './error-policy.ts';
import { lookUpOrder, orderResult, releaseReservation } from './executor.ts';
import { recordOrder } from './order-log.ts';
import type { EngineDeps } from './runtime.ts';

export interface ReconcileSummary {
  /** Intents whose outcome is now known. */
  readonly resolved: number;
  /** Intents still unknown (a lookup failed, or a transfer/withdraw that cannot be looked up). */
  readonly unresolved: number;
  /** Claimed slots a crash left open, now closed. */
  readonly slotsClosed: number;
}

/**
 * Resolve what a crash or a lost answer left open, before any new slot runs (DESIGN.md money
 * rule, step 3):
 * - `pending` never left (intents are marked `sent` first): failed, not sent late — its slot's
 *   moment has passed and the next slot decides afresh;
 * - `sent` / `unknown` buys: looked up by clientOrderId; found → done and tracked; provably
 *   absent → failed (never placed). Never resent here, for the same reason;
 * - transfers and flex withdrawals cannot be looked up by id: they stay `unknown`, with a
 *   warning to check the balances, and are never resent.
 * `minAgeMs` keeps away from answers that may still be in flight (0 at start: nothing is).
 */
export async function reconcile(deps: EngineDeps, options: { readonly minAgeMs: number; readonly closeSlots: boolean }): Promise<ReconcileSummary> {
  // While slots run (the periodic pass), `pending` and `sent` intents belong to a slot in flight:
  // only `unknown` buys, whose answer was lost long enough ago, are looked at then.
  const atStart = options.closeSlots;
  let resolved = 0;
  let unresolved = 0;
  const now = deps.clock.nowMs();
  for (const record of await deps.journal.unresolvedIntents()) {
    const lookable = record.status === 'unknown' && record.intent.kind === 'buy-stock-market';
    if (!atStart && (!lookable || now - record.updatedAtMs < options.minAgeMs)) {
      unresolved += 1;
      continue;
    }
    if (await resolveIntent(deps, record)) resolved += 1;
    else unresolved += 1;
  }
  let slotsClosed = 0;
  if (options.closeSlots) {
    for (const slot of await deps.journal.listSlots({ status: 'claimed' })) {
      const intents = await deps.journal.listIntents({ instance: slot.instance, slotTimeMs: slot.slotTimeMs });
      const open = intents.some((intent) => intent.status === 'pending' || intent.status === 'sent' || intent.status === 'unknown');
      const anyDone = intents.some((intent) => isMoneyIntent(intent.intent) && intent.status === 'done');
      await deps.journal.finishSlot({
        instance: slot.instance,
        slotTimeMs: slot.slotTimeMs,
        status: anyDone && !open ? 'done' : 'failed',
        reason: 'interrupted: stacker stopped during this slot; closed by reconciliation',
      });
      slotsClosed += 1;
    }
  }
  if (resolved + slotsClosed > 0 || (atStart && unresolved > 0)) {
    deps.logger.info({ event: 'reconciled', resolved, unresolved, slotsClosed }, `reconciliation: ${resolved} resolved, ${unresolved} still unknown, ${slotsClosed} interrupted slots closed`);
  }
  return { resolved, unresolved, slotsClosed };
}

async function resolveIntent(deps: EngineDeps, record: IntentRecord): Promise<boolean> {
  const log = { event: 'reconcile', instance: record.instance, intentId: record.intentId, intent: record.intent.kind };
  if (record.status === 'pending') {
    await deps.journal.updateIntent(record.intentId, {
      status: 'failed',
      error: { code: 'E_INTERRUPTED', message: 'stacker stopped before sending it; not sent (its slot has passed)' },
    });
    await releaseReservation(deps, record);
    deps.logger.warn(log, 'an intent journalled before a stop was never sent; marked failed');
    return true;
  }
  const intent = record.intent;
  if (intent.kind !== 'buy-stock-market' || record.clientOrderId === null) {
    if (record.status === 'sent') {
      await deps.journal.updateIntent(record.intentId, {
        status: 'unknown',
        error: { code: 'E_OUTCOME_UNKNOWN', message: `stacker stopped while the ${intent.kind} was in flight; it cannot be looked up by id: check the balances; not resent` },
      });
    }
    deps.logger.warn(log, `a ${intent.kind} may or may not have happened (no lookup by id exists); check the balances — it is never resent`);
    return false;
  }
  let found;
  try {
    found = await lookUpOrder(deps, intent.market, record.clientOrderId);
  } catch (error) {
    if (error instanceof FatalEngineError) throw error;
    return false;
  }
  if (found.kind === 'error') {
    deps.logger.warn({ ...log, error: found.message }, 'could not look the order up yet; will try again');
    return false;
  }
  if (found.kind === 'found') {
    await recordOrder(deps, record.instance, found.order, record.intentId);
    await deps.journal.updateIntent(record.intentId, { status: 'done', result: orderResult(found.order) });
    deps.logger.info({ ...log, clientOrderId: record.clientOrderId, orderId: found.order.orderId }, 'the order of an interrupted send exists; recorded');
    return true;
  }
  await deps.journal.updateIntent(record.intentId, {
    status: 'failed',
    error: { code: 'E_NOT_PLACED', message: `the exchange has no order ${record.clientOrderId}: it was never placed; not resent (its slot has passed)` },
  });
  await releaseReservation(deps, record);
  deps.logger.warn({ ...log, clientOrderId: record.clientOrderId }, 'the order of an interrupted send was never placed; marked failed');
  return true;
}

/** Whether an error seen while reconciling or tracking should stop the daemon. */
export function isFatal(error: unknown): boolean {
  return error instanceof FatalEngineError || classifyError(error) === 'fatal';
}

