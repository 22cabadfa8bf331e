/**
 * The strategy SDK: everything a strategy module imports, from one place. A strategy in this
 * folder imports nothing else from stacker (a test checks it), so the engine can change behind
 * this surface without touching strategies.
 *
 *   import { Decimal, defineStrategy, intent, param } from './sdk.ts';
 *
 *   export const weekly = defineStrategy({
 *     name: 'weekly',
 *     describe: 'Buy a fixed amount of one market.',
 *     params: { MARKET: param.market({ description: 'Where to buy.', example: 'BTC_USDT' }) },
 *     // What budgets and MAX_ORDER_QUOTE count in: the quote of the market it buys.
 *     budgetAsset: (params) => params.MARKET.split('_')[1] ?? null,
 *     reads: () => ['markets', 'prices'],
 *     async decide(view, params) {
 *       return [intent.buy(params.MARKET, new Decimal('0.001'))];
 *     },
 *   });
 *
 * Tests build views from literals with strategies/sdk-testing.ts.
 */
import type { MoneyGroup } from '../src/domain/intent.ts';
import type { Decimal as DecimalValue } from '../src/domain/money.ts';
import type { Stp } from '../src/domain/order.ts';
import type { MarketRules } from '../src/domain/market.ts';
import type { BuyStockMarketIntent, FlexWithdrawIntent, NoteIntent, RefusalIntent, SetStateIntent, SlotView, TransferIntent } from '../src/engine/contract.ts';

export { TRANSFER_DECIMALS, maskCode, transferCovering, type CodeRecord, type FlexInvestment, type TradeBalance } from '../src/domain/account.ts';
export { RULE_REFUSAL_REASONS, checkBaseOrder, roundBaseAmount, takerFee, type MarketRules, type RuleViolation } from '../src/domain/market.ts';
export { Decimal, ZERO, formatDecimal, roundDown, roundUp } from '../src/domain/money.ts';
export { STP_INPUT_HELP, type Stp } from '../src/domain/order.ts';
export {
  DEFAULT_READS,
  REFUSAL_REASONS,
  STRATEGY_API_VERSION,
  type BudgetView,
  type Candle,
  type CandleWindow,
  type Intent,
  type RefusalReason,
  type SlotView,
  type SnapshotPart,
  type StartupContext,
  type Strategy,
} from '../src/engine/contract.ts';
export { defineStrategy, type StrategyDefinition } from '../src/engine/define-strategy.ts';
export { param, type ParamDeclaration, type ParamShape, type ParamsOf } from '../src/engine/param-spec.ts';
export { closestName } from '../src/engine/params.ts';
export type { InputProblem } from '../src/domain/errors.ts';

type Data = Readonly<Record<string, string>>;

/** Builders for the intents `decide` returns (plain objects; these only save typing and mistakes). */
export const intent = {
  /** Buy an exact base quantity at market. `tag` prefixes the clientOrderId; `group` makes it stand apart from the slot's other money intents. */
  buy(market: string, amount: DecimalValue, options: { readonly stp?: Stp; readonly tag?: string | null; readonly group?: MoneyGroup } = {}): BuyStockMarketIntent {
    return {
      kind: 'buy-stock-market',
      market,
      amount,
      ...(options.stp === undefined ? {} : { stp: options.stp }),
      ...(options.tag === undefined || options.tag === null ? {} : { tag: options.tag }),
      ...(options.group === undefined ? {} : { group: options.group }),
    };
  },
  /** Move funds from the main balance to the trade balance (at most 8 decimals). */
  transfer(ticker: string, amount: DecimalValue, options: { readonly group?: MoneyGroup } = {}): TransferIntent {
    return { kind: 'transfer', ticker, amount, from: 'main', to: 'spot', ...(options.group === undefined ? {} : { group: options.group }) };
  },
  /** Withdraw from a flex investment back to the main balance. */
  flexWithdraw(plan: string, amount: DecimalValue, options: { readonly group?: MoneyGroup } = {}): FlexWithdrawIntent {
    return { kind: 'flex-withdraw', plan, amount, ...(options.group === undefined ? {} : { group: options.group }) };
  },
  note(message: string, data?: Data, level: 'info' | 'warn' = 'info'): NoteIntent {
    return { kind: 'note', level, message, ...(data === undefined ? {} : { data }) };
  },
  /** Decline to act, with a kebab-case reason (reuse REFUSAL_REASONS where one fits): counted by reason. */
  refuse(reason: string, message: string, data?: Data): RefusalIntent {
    return { kind: 'refusal', reason, message, ...(data === undefined ? {} : { data }) };
  },
  /** Persist text in the instance's state (null deletes the key); written with the slot. */
  setState(key: string, value: string | null): SetStateIntent {
    return { kind: 'set-state', key, value };
  },
};

/**
 * The rules and price of the market a slot buys on, or the refusal that says why there are none
 * (`unknown-market`, `no-price`): the first lines of most buying strategies.
 */
export function marketAndPrice(view: SlotView, market: string): { readonly rules: MarketRules; readonly price: DecimalValue } | RefusalIntent {
  const rules = view.market(market);
  if (rules === undefined) return intent.refuse('unknown-market', `the exchange does not list ${market}`, { market });
  const price = view.price(market);
  if (price === undefined || price.lte(0)) return intent.refuse('no-price', `no price is known for ${market}`, { market });
  return { rules, price };
}
