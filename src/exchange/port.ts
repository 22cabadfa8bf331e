import type { RunMode } from '../domain/run-mode.ts';
import type { Candle } from '../domain/candle.ts';
import type { CodeRecord, FlexInvestment, FlexPlan, TradeBalance } from '../domain/account.ts';
import type { MarketRules } from '../domain/market.ts';
import type { Decimal } from '../domain/money.ts';
import type { Order, Stp } from '../domain/order.ts';

/**
 * The Exchange port: everything the engine asks of an exchange, in domain types only. Three
 * adapters implement it — LiveExchange (the signed HTTP API), PaperExchange (real public market
 * data, a simulated private account) and BacktestExchange (the sim core on a virtual clock) —
 * so modes are adapters, never `if (dryRun)` branches in the engine.
 *
 * Failures are the domain's typed errors (src/domain/errors.ts) whatever the adapter: a refusal
 * is ExchangeRefusedError / ExchangeValidationError with the exchange's code and field map, a
 * lost answer is NetworkError / TimeoutError / ServiceUnavailableError, so `outcomeUnknown()`
 * means the same thing in every mode. Writes are never retried by an adapter: resolving a lost
 * answer is the engine's job (docs/exactly-once.md).
 */
export interface Exchange {
  /** Which world this is; shown in logs and reports, never branched on by the engine. */
  /** The world this exchange is: the real one, a paper account on real prices, or history. */
  readonly kind: RunMode;
  /** Present when the account lives in stacker rather than at an exchange (dry-run's paper account): the daemon keeps it in the journal. */
  readonly keptAccount?: KeptAccount;

  // Market data (public).
  markets(): Promise<readonly MarketRules[]>;
  /** Last price per market, for the markets asked; a market without a price is absent. */
  prices(markets: readonly string[]): Promise<ReadonlyMap<string, Decimal>>;
  /** Hourly candles opening in [fromSec, toSec), oldest first (the exchange's kline; a backtest's data). */
  candles(request: { readonly market: string; readonly fromSec: number; readonly toSec: number }): Promise<readonly Candle[]>;

  // Account reads (private).
  /** Main balances; assets the exchange omits are zero. */
  mainBalances(): Promise<ReadonlyMap<string, Decimal>>;
  /** Trade (spot) balances; assets the exchange omits are zero. */
  tradeBalances(): Promise<ReadonlyMap<string, TradeBalance>>;
  /** Active flex investments. */
  flexInvestments(): Promise<readonly FlexInvestment[]>;
  /** The flex plans, all pages: a withdrawal may not leave an investment below its plan's minimum. */
  flexPlans(): Promise<readonly FlexPlan[]>;
  /** Every code of the account, all pages. */
  codes(): Promise<readonly CodeRecord[]>;

  // Writes (private; never retried here).
  /** Move funds from the main balance to the trade balance. */
  transferToSpot(request: { readonly ticker: string; readonly amount: Decimal }): Promise<void>;
  /** Withdraw from a flex investment back to the main balance. */
  flexWithdraw(request: { readonly plan: string; readonly amount: Decimal }): Promise<{ readonly transactionId: string }>;
  /** Buy an exact base quantity at market. */
  buyStockMarket(request: {
    readonly market: string;
    readonly baseAmount: Decimal;
    readonly clientOrderId: string;
    readonly stp: Stp;
  }): Promise<Order>;

  // Order lookups: how a lost answer is resolved and how orders are tracked.
  /**
   * The order with this clientOrderId in the market, from order history and active orders;
   * null when the exchange provably has none. Throws (retryable) when it cannot tell.
   */
  findOrder(request: { readonly market: string; readonly clientOrderId: string }): Promise<Order | null>;
  /**
   * Finished orders of every market created from `sinceSec` to `untilSec` (Unix seconds of this
   * machine's clock, which the adapter maps onto the exchange's), all pages, oldest first: the
   * exchange's own record, read as a second ledger. The exchange keeps about six months of history.
   */
  orderHistory(request: { readonly sinceSec: number; readonly untilSec: number }): Promise<readonly Order[]>;
  /** The current state of an order the engine placed (history, then active orders); null when unknown. */
  orderStatus(request: { readonly market: string; readonly orderId: string; readonly clientOrderId: string }): Promise<Order | null>;

  close(): Promise<void>;
  /**
   * The exchange's clock minus this machine's, in ms, measured now; absent where the exchange
   * keeps this machine's time (a backtest's, the sandbox in process), null when it cannot tell.
   */
  clockOffsetMs?(): Promise<number | null>;
  /** The exchange's clock now, in Unix ms, read from it; absent where the exchange keeps this machine's time. */
  serverTimeMs?(): Promise<number>;
}

/**
 * An account whose state is stacker's to keep (the paper account of a dry-run): balances and the
 * id counters, as text. The daemon resumes it from its journal at start and saves it after every
 * change, so a restart continues the same account: its ids never repeat and its wallet is where
 * the last run left it, as the journal's budgets are.
 */
export interface KeptAccount {
  /**
   * Continue from a state saved earlier (null: none yet, start from the configured seed).
   * Returns a note when the configured seed differs from the one the saved account started with.
   */
  resume(saved: string | null): { readonly note: string | null };
  /** The state to save now. */
  state(): string;
  /** Called after every change of the account (a fill, a transfer, a withdrawal). */
  onChange(save: (state: string) => Promise<void>): void;
}
