import { isAboveZero } from '../domain/money.ts';
import { isTerminalStatus } from '../domain/order.ts';
import type { StoredOrder } from '../store/journal.ts';
import { DEFAULT_ACCOUNT, type EngineDeps, type InstanceLimits, accountBudgetScope, accountReservationId, countsEveryBuy } from './runtime.ts';

/** The longest budget period, a calendar month, with room for its zone: what a budget may still count. */
const LOOKBACK_MS = 33 * 86_400_000;
/** Read again from a little before the last pass: an order journalled as it ran (another process's clock) is not missed. */
const PASS_OVERLAP_MS = 3_600_000;

/**
 * Count the buys of the last month the journal holds without a budget count: a stacker before
 * every live buy was counted (budget or none) wrote a reservation only for an instance with a
 * budget or an account with a cap, and nothing tells its journal apart. Upgraded, and a budget or
 * cap set in the same day, week or month took what the old build had spent as nothing (650 USDT
 * spent, a 700 budget set, 700 taken as left: 1300 bought that day). Each such buy is counted
 * now, settled at what it spent, against its instance and its account, as a buy is today; then
 * the budgets and caps judge the next buy by what the period really spent. Idempotent: a buy
 * counted once has its reservations. Only the orders journalled since the last pass are read
 * (a month of a per-minute schedule is some 43k orders: read at every start, the start took as
 * long). Returns how many reservations it wrote.
 */
export async function countUncountedBuys(deps: EngineDeps, instances: readonly (InstanceLimits & { readonly budgetAsset: string | null })[], nowMs: number): Promise<number> {
  if (!countsEveryBuy(deps)) return 0;
  const through = await deps.journal.spendCountedThrough();
  const fromMs = Math.max(nowMs - LOOKBACK_MS, (through ?? Number.NEGATIVE_INFINITY) - PASS_OVERLAP_MS);
  let counted = 0;
  for (const instance of instances) {
    for (const order of await deps.journal.listOrders({ instance: instance.instance, firstSeenFromMs: fromMs, limit: -1 })) {
      if (!countable(order)) continue;
      const intent = await deps.journal.getIntent(order.intentId as string);
      // Its first order only: a second order of an intent is counted under a reservation of its own when it is found.
      if (intent === null || intent.result?.['orderId'] !== order.orderId) continue;
      const account = intent.account ?? DEFAULT_ACCOUNT;
      const cap = deps.accounts?.capOf(account) ?? null;
      // The asset an adoption counts it in (exchange-ledger.ts): its instance's budget asset, else its market's quote.
      const asset = instance.budgetAsset ?? order.market.split('_')[1] ?? order.market;
      const scopes = [
        { reservationId: intent.intentId, instance: intent.instance, asset, timeZone: instance.timezone },
        { reservationId: accountReservationId(intent.intentId), instance: accountBudgetScope(account), asset: cap?.asset ?? asset, timeZone: cap?.timeZone ?? instance.timezone },
      ];
      for (const scope of scopes) {
        if ((await deps.journal.budgetReservation(scope.reservationId)) !== null) continue;
        // No limits: what was spent is counted whatever it exceeds; it happened.
        await deps.journal.reserveBudget({ ...scope, atMs: intent.slotTimeMs, amountQuote: order.filledQuote, limits: {} });
        await deps.journal.settleBudget(scope.reservationId, order.filledQuote);
        counted += 1;
      }
    }
  }
  await deps.journal.setSpendCountedThrough(nowMs);
  if (counted > 0) {
    deps.logger.warn(
      { event: 'uncounted-buys-counted', reservations: counted },
      `${counted} budget counts of buys from the last month were missing (a journal an older stacker wrote, which counted a buy only under a budget or cap): written now, so a budget or cap set since counts what its period already spent`,
    );
  }
  return counted;
}

/** A filled buy of an intent, over: what a budget counts. */
function countable(order: StoredOrder): boolean {
  return order.side === 'buy' && order.intentId !== null && isTerminalStatus(order.status) && isAboveZero(order.filledQuote);
}
