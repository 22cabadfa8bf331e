import type { IntentError, IntentRecord } from '../store/journal.ts';
import { tell } from './observer.ts';
import { DEFAULT_ACCOUNT, type EngineDeps } from './runtime.ts';

/**
 * The operator's notifications of a money intent that did not go through: refused (by a guard,
 * the kill switch, the budget or the exchange) or its answer lost, with what the journal now
 * holds for it. A refusal is called beside the log line of the same moment; an intent left
 * unknown writes its own (tellUnknown), the same for a buy, a transfer and a withdrawal.
 */
export function tellRefused(deps: EngineDeps, record: IntentRecord, error: IntentError): void {
  tell(deps, () => ({
    kind: 'order-refused',
    atMs: deps.clock.nowMs(),
    mode: deps.mode,
    instance: record.instance,
    intent: record.intent.kind,
    clientOrderId: record.clientOrderId,
    reason: error.code,
    message: error.message,
  }));
}

export function tellUnknown(deps: EngineDeps, record: IntentRecord, error: IntentError): void {
  // At warn, as a buy's lost answer is: a transfer or withdrawal left unknown holds every later
  // one of the same money until a human resolves it, and a log alert must see it now, not at
  // the next slot's refusal (a day later on a daily schedule).
  deps.logger.warn(
    { event: 'intent-unknown', instance: record.instance, intentId: record.intentId, intent: record.intent.kind, code: error.code, error: error.message },
    `${record.intent.kind} ${record.intentId} of ${record.instance} is unknown: ${error.message}; ` +
      (record.intent.kind === 'buy-stock-market'
        ? "looked up in the exchange's order history until its settle window ends, never resent"
        : `no lookup by id exists: \`stacker journal resolve --intent ${record.intentId} --as done\` (or failed) once you know what became of it`),
  );
  tell(deps, () => ({
    kind: 'intent-unknown',
    atMs: deps.clock.nowMs(),
    mode: deps.mode,
    instance: record.instance,
    // Named when it is not the default one (a single-account daemon's events stay as they were).
    ...(record.account === null || record.account === DEFAULT_ACCOUNT ? {} : { account: record.account }),
    intent: record.intent.kind,
    clientOrderId: record.clientOrderId,
    code: error.code,
    message: error.message,
  }));
}
