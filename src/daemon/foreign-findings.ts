import { ForeignOrderError } from '../domain/errors.ts';
import type { LedgerFinding } from '../store/journal.ts';
import { MISSED_UNSENT, RESENT, TWIN } from '../engine/exchange-ledger.ts';

/**
 * The orders with this stacker's ids that another client placed, as the journal keeps them
 * until a human acknowledges them: a daemon refuses to start on them (E_FOREIGN_ORDER), and
 * `stacker check` says so with the same error. null when there is none.
 */
export function foreignOrdersError(findings: readonly LedgerFinding[]): ForeignOrderError | null {
  const foreign = findings.filter((finding) => finding.kind === 'foreign');
  if (foreign.length === 0) return null;
  return new ForeignOrderError(
    foreign.map((f) => ({ instance: f.instance ?? '', clientOrderId: f.clientOrderId, orderId: f.orderId ?? '?', market: f.market ?? '?', at: { kind: 'found', ms: f.foundAtMs }, why: f.detail, twin: f.detail.includes(TWIN), ...(f.detail.includes(RESENT) ? { resent: true } : {}), ...(f.detail.includes(MISSED_UNSENT) ? { missedSlot: true } : {}) })),
  );
}
