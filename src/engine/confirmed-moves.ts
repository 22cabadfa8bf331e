import type { Journal } from '../store/journal.ts';
import { errorCode, errorMessage } from './error-policy.ts';
import type { EngineLogger } from './observer.ts';

/**
 * Moves (transfers, flex withdrawals) the exchange confirmed whose journal record then failed (a
 * full disk, a database that stopped answering). No lookup by id exists for them, so a `sent`
 * move the journal cannot explain becomes `unknown` for a human (`journal resolve`); but this
 * process heard the exchange say it was done, and keeps that until the journal takes it: the
 * reconciler writes it then (takeConfirmed). Kept per journal and in memory only: a process that
 * dies first leaves the move `unknown`, as before.
 */
const byJournal = new WeakMap<Journal, Map<string, () => Promise<void>>>();

/**
 * `finish` (the move's journal record), or, when the journal refuses it, the move remembered for
 * the reconciler and said at error; the journal's error is rethrown for the slot.
 */
export async function finishConfirmed(deps: { readonly journal: Journal; readonly logger: EngineLogger }, intentId: string, what: string, finish: () => Promise<void>): Promise<void> {
  try {
    await finish();
  } catch (error) {
    keepConfirmed(deps.journal, intentId, finish);
    deps.logger.error(
      { event: 'move-record-failed', intentId, code: errorCode(error), error: errorMessage(error) },
      `the exchange confirmed ${what} (${intentId}), but journalling it failed: ${errorMessage(error)}; it is journalled done as soon as the journal takes writes again (while this stacker runs), and never sent again`,
    );
    throw error;
  }
}

/** The journal record of a confirmed move still to write, taken out; undefined when none is kept. */
export function takeConfirmed(journal: Journal, intentId: string): (() => Promise<void>) | undefined {
  const kept = byJournal.get(journal);
  const finish = kept?.get(intentId);
  kept?.delete(intentId);
  return finish;
}

/** Keep a move's record again (the reconciler's write failed too). */
export function keepConfirmed(journal: Journal, intentId: string, finish: () => Promise<void>): void {
  let kept = byJournal.get(journal);
  if (kept === undefined) byJournal.set(journal, (kept = new Map()));
  kept.set(intentId, finish);
}
