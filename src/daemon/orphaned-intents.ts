import type { DaemonConfig } from '../config/daemon-config.ts';
import type { InputProblem } from '../domain/errors.ts';
import { DEFAULT_ACCOUNT } from '../engine/runtime.ts';
import type { IntentRecord } from '../store/journal.ts';

/**
 * Intents sent on an account the configuration no longer has, and not settled: only that
 * account's key can look them up, so they would stay unknown for good (an order filled and
 * never recorded, its budget never settled). The account stays until they settle.
 */
export function orphanedIntentProblems(unresolved: readonly IntentRecord[], config: DaemonConfig): InputProblem[] {
  const byAccount = new Map<string, IntentRecord[]>();
  for (const intent of unresolved) {
    const account = intent.account ?? DEFAULT_ACCOUNT;
    if (config.accounts.has(account)) continue;
    byAccount.set(account, [...(byAccount.get(account) ?? []), intent]);
  }
  return [...byAccount].map(([account, intents]) => ({
    field: account === DEFAULT_ACCOUNT ? 'STACKER_API_KEY' : `STACKER_ACCOUNT_${account}_API_KEY`,
    rule:
      `account ${account} has ${intents.length} intent(s) sent and not settled (${intents.slice(0, 3).map((i) => `${i.intentId} ${i.intent.kind} ${i.status}`).join(', ')}${intents.length > 3 ? ', …' : ''}), ` +
      `and only its key can look an order up: keep the account (its keys, and an instance naming it: ENABLED=false will do) until \`stacker journal\` shows them settled ` +
      `(a transfer or withdrawal settles by \`stacker journal resolve --intent ID --as done|failed\`, once you have checked the balances)`,
  }));
}
