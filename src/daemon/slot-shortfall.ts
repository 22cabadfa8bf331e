import { isMoneyIntent } from '../domain/intent.ts';
import type { IntentRecord, Journal } from '../store/journal.ts';

/** Why a slot asked for (`run --once`, the status API's run now) did not run: the journal had it. */
export const ALREADY_JOURNALLED = 'the journal already has this slot (a run in the same second, or the scheduled slot): nothing was sent again';

/**
 * What of a slot did not happen: its money intents that were refused, failed or left unknown,
 * and the strategy's own refusals. The engine finishes a slot `done` when its guards refused
 * every buy (the kill switch, a budget, the balance): its normal course, but someone who asked
 * for one slot (`run --once`, the status API's run now) to see it work must hear that nothing
 * was bought, and why. Oldest intent first.
 */
export async function slotShortfall(journal: Pick<Journal, 'listIntents'>, instance: string, slotTimeMs: number): Promise<IntentRecord[]> {
  const intents = await journal.listIntents({ instance, slotTimeMs });
  return intents.filter(fellShort).sort((a, b) => a.index - b.index);
}

function fellShort(record: IntentRecord): boolean {
  const kind = record.intent.kind;
  if (kind === 'refusal') return true;
  if (kind === 'note' || kind === 'set-state') return false;
  return record.status !== 'done' && record.status !== 'sent';
}

/** One shortfall as the status API answers it: a strategy's refusal reads `declined`, its reason the code. */
export interface ShortfallItem {
  readonly index: number;
  readonly kind: string;
  readonly status: string;
  readonly code: string | null;
  readonly message: string | null;
}

export function shortfallItem(record: IntentRecord): ShortfallItem {
  const intent = record.intent;
  if (intent.kind === 'refusal') return { index: record.index, kind: intent.kind, status: 'declined', code: intent.reason, message: intent.message };
  return { index: record.index, kind: intent.kind, status: record.status, code: record.error?.code ?? null, message: record.error?.message ?? null };
}

/**
 * A slot that ended `failed` because an answer was lost, whose orders the journal has since found
 * (reconciliation looked them up): 'done' once every intent that moves money is done, else null.
 * The slot's own record stays as it ended (the journal never rewrites a finished slot); what the
 * operator is shown beside it is what became of it.
 */
export async function settledSince(journal: Pick<Journal, 'listIntents'>, instance: string, slotTimeMs: number): Promise<'done' | null> {
  const money = (await journal.listIntents({ instance, slotTimeMs })).filter((record) => isMoneyIntent(record.intent));
  return money.length > 0 && money.every((record) => record.status === 'done') ? 'done' : null;
}
