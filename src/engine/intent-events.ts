import type { IntentError, IntentRecord } from '../store/journal.ts';
import { tell } from './observer.ts';
import { DEFAULT_ACCOUNT, type EngineDeps } from './runtime.ts';

/**
 * The operator's notifications of a money intent that did not go through: refused (by a guard,
 * the kill switch, the budget or the exchange) or its answer lost. Called beside the log line
 * of the same moment, with what the journal now holds for it.
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
