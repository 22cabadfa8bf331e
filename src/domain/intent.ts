import type { Decimal } from './money.ts';
import type { Stp } from './order.ts';

/**
 * What a strategy asks for in one slot. These shapes live in the domain because two layers that
 * may not import each other hold them: the engine (which decides and executes) and the store
 * (which journals them). `src/engine/contract.ts` describes the same shapes for strategy
 * authors; the two are structurally identical, so either can be passed where the other is asked.
 */

/**
 * The money intents of a slot that stand or fall together: when the engine refuses one before
 * sending, it sends none of the others of its group. Absent: the slot's one default group, so a
 * slot's money intents are all or nothing unless the strategy says they are independent.
 */
export type MoneyGroup = string;

/** Buy an exact base quantity at market (WhiteBIT "stock market" order). Spends the trade balance. */
export interface BuyStockMarketIntent {
  readonly kind: 'buy-stock-market';
  readonly market: string;
  readonly amount: Decimal;
  readonly stp?: Stp;
  /** Prefix of the derived clientOrderId. */
  readonly tag?: string;
  readonly group?: MoneyGroup;
}

/** Withdraw from a flex investment back to the main balance. */
export interface FlexWithdrawIntent {
  readonly kind: 'flex-withdraw';
  readonly plan: string;
  readonly amount: Decimal;
  readonly group?: MoneyGroup;
}

/** Move funds from the main balance to the trade (spot) balance. */
export interface TransferIntent {
  readonly kind: 'transfer';
  readonly ticker: string;
  readonly amount: Decimal;
  readonly from: 'main';
  readonly to: 'spot';
  readonly group?: MoneyGroup;
}

/** A log line of the slot. Values are text (money via formatDecimal). */
export interface NoteIntent {
  readonly kind: 'note';
  readonly level: 'info' | 'warn';
  readonly message: string;
  readonly data?: Readonly<Record<string, string>>;
}

/** The strategy chose not to act, and says why (kebab-case reason). */
export interface RefusalIntent {
  readonly kind: 'refusal';
  readonly reason: string;
  readonly message: string;
  readonly data?: Readonly<Record<string, string>>;
}

/** Persist (value: text) or delete (value: null) one key of the strategy's state. */
export interface SetStateIntent {
  readonly kind: 'set-state';
  readonly key: string;
  readonly value: string | null;
}

export type Intent = BuyStockMarketIntent | FlexWithdrawIntent | TransferIntent | NoteIntent | RefusalIntent | SetStateIntent;
export type IntentKind = Intent['kind'];

export const INTENT_KINDS = ['buy-stock-market', 'flex-withdraw', 'transfer', 'note', 'refusal', 'set-state'] as const satisfies readonly IntentKind[];

/** Intents that move money at the exchange: journalled as pending before anything is sent. */
export type MoneyIntent = BuyStockMarketIntent | FlexWithdrawIntent | TransferIntent;

export function isMoneyIntent(intent: Intent): intent is MoneyIntent {
  return intent.kind === 'buy-stock-market' || intent.kind === 'flex-withdraw' || intent.kind === 'transfer';
}
