import type { Candle } from '../domain/candle.ts';
import type { CandleWindow } from './candle-book.ts';
import { type Intent, isMoneyIntent } from '../domain/intent.ts';
import { type CodeRecord, type FlexInvestment, type FlexPlan, TRANSFER_DECIMALS, type TradeBalance } from '../domain/account.ts';
import type { InputProblem } from '../domain/errors.ts';
import type { MarketRules } from '../domain/market.ts';
import { type Decimal, isDecimal, ownDecimal } from '../domain/money.ts';
import { STP_INPUT_HELP, readStp } from '../domain/order.ts';

/**
 * The strategy contract, version 2: what a strategy module gives the engine and what the engine
 * gives back. Authors write strategies with `defineStrategy` (src/engine/define-strategy.ts,
 * exported with everything else they need by strategies/sdk.ts); this file is the engine's side. A strategy is a pure decision: it parses its own params from its instance's env
 * file once at start, and each slot it reads a read-only view and returns intents. It never
 * calls the exchange, the clock (`Date.now()`, `new Date()`), timers or randomness: the slot's
 * time comes in the view, which is what lets one strategy run live, in dry-run and in a
 * backtest unchanged.
 *
 * Bump STRATEGY_API_VERSION on any change a shipped strategy would notice; the engine refuses a
 * module whose `version` differs.
 */
export const STRATEGY_API_VERSION = 2 as const;

/**
 * What changed from version 1, for the message that refuses an older module: params are declared
 * once with `param.*` instead of a ParamSpec list plus parseParams, and a slot's money intents
 * are all or nothing per group (the engine's guards run on all of them before any is sent).
 */
export const STRATEGY_API_CHANGES = 'declare params with param.* and defineStrategy from strategies/sdk.ts (README: Adding a strategy); the engine now checks every money intent of a slot before sending any';

/** One key of an instance env file, for validation of unknown keys, `--help` and the README. */
export interface ParamSpec {
  readonly key: string;
  readonly required: boolean;
  /** What the key does, one or two sentences. */
  readonly description: string;
  /** The rule the value must follow, as a human reads it: "decimal > 0", "one of all, reserve". */
  readonly rule: string;
  /** The value used when the key is absent (text as written in an env file). */
  readonly default?: string;
  readonly example?: string;
  /** The example env file shows it commented out (one of two keys that exclude each other). */
  readonly exampleCommented?: boolean;
}

/**
 * The parts of an account the engine loads into the view before `decide`. Each costs requests
 * (codes are paged), so a strategy names only what it reads; reading a part it did not name
 * throws a programming error from the view.
 *
 * - `balances`: main balances (one request) and trade balances (one request).
 * - `markets`: market rules (public, cached by the engine).
 * - `prices`: last prices (public ticker; in a backtest, the candle price at the slot).
 * - `flex`: the account's active flex investments.
 * - `codes`: all the account's codes, every page.
 * - `candles`: closed hourly candles of the windows `candleWindows` names (the exchange's kline
 *   in live and dry-run, cached between slots; the data in a backtest).
 */
export const SNAPSHOT_PARTS = ['balances', 'markets', 'prices', 'flex', 'codes', 'candles'] as const;
export type SnapshotPart = (typeof SNAPSHOT_PARTS)[number];

/** What the engine loads when a strategy does not say: everything but the paged codes. */
export const DEFAULT_READS: readonly SnapshotPart[] = ['balances', 'markets', 'prices', 'flex'];

export type { RunMode } from '../domain/run-mode.ts';
import type { RunMode } from '../domain/run-mode.ts';

/** Budget headroom of the instance (BUDGET_QUOTE_PER_*, MAX_ORDER_QUOTE), in the quote asset of the orders it places. */
export interface BudgetView {
  /**
   * Quote still spendable in every configured window (the smallest of day/week/month), as the
   * journal counts it: the estimated value (base amount × view price) of every buy journalled
   * in the window, fees not included. null when the instance has no budget.
   */
  remainingQuote(): Decimal | null;
  /** MAX_ORDER_QUOTE, null when unset. */
  maxOrderQuote(): Decimal | null;
}

/**
 * The read-only world of one slot, built by the engine. Methods of a part the strategy did not
 * name in `reads` throw. Values are snapshots: nothing changes while `decide` runs.
 */
export interface SlotView {
  /** The instance name: the env file's base name (`dca-btc` for config/strategies/dca-btc.env). */
  readonly instance: string;
  /** The scheduled time of this slot (not the time it actually runs), Unix ms. */
  readonly slotTimeMs: number;
  /**
   * The instance's TIMEZONE (an IANA name, `UTC` by default): the zone its SCHEDULE and its
   * budget days, weeks and months are read in, for a strategy that counts calendar periods too.
   */
  readonly timezone: string;
  /** For notes only: a strategy decides the same way in every mode. */
  readonly mode: RunMode;
  /** The strategy's persisted state (written by `set-state` intents of earlier slots). */
  readonly state: ReadonlyMap<string, string>;
  readonly budget: BudgetView;

  /** `markets`: the rules of a market, undefined when the exchange does not list it. */
  market(name: string): MarketRules | undefined;
  /** `prices`: last price of a market, undefined when none is known. A market order may fill above it. */
  price(market: string): Decimal | undefined;
  /** `balances`: main balance of a ticker; zero when the exchange omits it. */
  mainBalance(ticker: string): Decimal;
  /** `balances`: trade (spot) balance of a ticker; zeros when the exchange omits it. */
  tradeBalance(ticker: string): TradeBalance;
  /** `balances`: every main balance the exchange reported, by ticker. */
  mainBalances(): ReadonlyMap<string, Decimal>;
  /** `balances`: every trade balance the exchange reported, by ticker. */
  tradeBalances(): ReadonlyMap<string, TradeBalance>;
  /** `flex`: the account's active flex investments. */
  flexInvestments(): readonly FlexInvestment[];
  /** `flex`: a flex plan (its minimum investment: a withdrawal may not leave less invested, only nothing); undefined when the exchange does not list it. */
  flexPlan(planId: string): FlexPlan | undefined;
  /** `codes`: every code of the account. `code` is secret-like: show it only through maskCode. */
  codes(): readonly CodeRecord[];
  /** `candles`: the closed hourly candles of a market's window (candleWindows), oldest first; empty when the exchange has none. A market without a window throws. */
  candles(market: string): readonly Candle[];
}

/**
 * Stable reasons a strategy (or the engine's guards and executor) refuses, counted in metrics by
 * reason. Reasons are kebab-case; a strategy may use its own when none of these fits, but it
 * should reuse these where they do so dashboards stay comparable.
 */
export const REFUSAL_REASONS = [
  'unknown-market',
  'trading-disabled',
  'no-price',
  'below-min-amount',
  'below-min-total',
  'above-max-total',
  'above-max-order',
  'over-budget',
  // Above the smallest budget limit itself: no period lets the buy through until a setting changes.
  'budget-too-small',
  'insufficient-funds',
  'no-active-investment',
  'amount-exceeds-investment',
  // A withdrawal that would leave less than the plan's minimum investment (and more than nothing): the exchange refuses it.
  'min-investment-left',
  'kill-switch',
] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

export const REFUSAL_REASON_PATTERN = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;

/** The longest CLIENT_ORDER_PREFIX / `tag`: the engine appends `-` and a derived suffix of up to 39 characters (64 in all). */
export const CLIENT_ORDER_PREFIX_MAX = 24;
export const CLIENT_ORDER_PREFIX_PATTERN = /^[A-Za-z0-9._-]{1,24}$/;

export const STATE_KEY_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
export const STATE_VALUE_MAX = 4096;

/**
 * The intents a strategy returns: buy-stock-market (an exact base quantity at market, spending
 * the trade balance; `tag` prefixes the derived clientOrderId, CLIENT_ORDER_PREFIX_PATTERN),
 * flex-withdraw (back to the main balance, amount ≤ invested), transfer (main → spot), note
 * (a log line; money via formatDecimal, codes via maskCode), refusal (a kebab-case reason,
 * counted by reason; reuse REFUSAL_REASONS where one fits) and set-state (persist text, or
 * delete with null). The shapes live in the domain because the store journals them too.
 */
export type { Candle } from '../domain/candle.ts';
export type { CandleWindow } from './candle-book.ts';
export type {
  BuyStockMarketIntent,
  FlexWithdrawIntent,
  Intent,
  IntentKind,
  NoteIntent,
  RefusalIntent,
  SetStateIntent,
  TransferIntent,
} from '../domain/intent.ts';

/**
 * What `checkParams` may look at when the instance is validated at start (the exchange's
 * markets are loaded once before any slot runs).
 */
export interface StartupContext {
  market(name: string): MarketRules | undefined;
  /** Every market name the exchange lists, for "did you mean" messages. */
  marketNames(): readonly string[];
  /**
   * The rule to report for a market `market()` does not know: that the exchange does not list
   * it (with the nearest name it does), or, in a backtest, that its candles are another market's.
   */
  unlisted(name: string): string;
}

/**
 * A strategy module. `decide` is the one method that does the work; the rest describe it.
 *
 * How the engine runs the intents `decide` returns:
 * - in order; money-moving intents (buy, transfer, flex-withdraw) each get a deterministic id
 *   from (instance, slot time, index) and are journalled before they are sent;
 * - before anything is sent, the guards (kill switch, market rules, MAX_ORDER_QUOTE, budget
 *   left, balances as the slot's intents leave them) run on every money intent, and a refused
 *   one refuses every other money intent of its `group` (one group per slot unless the intents
 *   name theirs): a transfer that was to fund a refused buy is never sent;
 * - a money intent that fails when sent stops the rest of its group; notes, refusals and
 *   set-state never stop anything;
 * - a transfer is followed by a wait until the trade balance shows it (the exchange takes up to ~2 s);
 * - `set-state` intents are written in the transaction that journals the slot, whatever the
 *   orders' outcome;
 * - a flex withdraw the exchange refuses with 422 (no active investment, amount above the
 *   investment, both raced since the snapshot) becomes a refusal with reason
 *   `no-active-investment` / `amount-exceeds-investment`, not a crash.
 * - `decide` throwing is a bug in the strategy: the slot is journalled as failed with the message.
 */
export interface Strategy<P> {
  /** Kebab-case; the value of STRATEGY= in an instance env file. */
  readonly name: string;
  readonly version: typeof STRATEGY_API_VERSION;
  /** One sentence for `--help` and the README. */
  readonly describe: string;
  /** Every key `parseParams` reads. Keys in an env file that no strategy param and no common key declares are refused. */
  readonly params: readonly ParamSpec[];
  /**
   * The asset BUDGET_QUOTE_PER_* and MAX_ORDER_QUOTE are counted in (the quote of the market it
   * buys). A strategy without it places no orders a budget could count, and an instance of it
   * that sets a budget is refused at start.
   */
  budgetAsset?(params: P): string | null;
  /**
   * The markets the instance buys on, by the key that names each (its param.market values, which
   * defineStrategy gives). The guards refuse a buy on any other market before anything is sent,
   * in every mode: only these are checked at start against the exchange's list (a backtest's
   * one market). Absent: not limited (a strategy object written without defineStrategy).
   */
  markets?(params: P): Readonly<Record<string, string>>;
  /** Snapshot parts `decide` reads with these params; DEFAULT_READS when absent. */
  reads?(params: P): readonly SnapshotPart[];
  /** With `candles` in reads: which market's hourly candles, how far back. */
  candleWindows?(params: P): readonly CandleWindow[];
  /**
   * Parse and validate the params from the instance's env file (common keys included; ignore
   * them). Throws ConfigError listing every bad key at once: source = file path, field = key,
   * rule = the rule it broke. Use ParamReader from src/engine/params.ts.
   */
  parseParams(env: Readonly<Record<string, string>>, source: string): P;
  /**
   * Optional start-time checks against the exchange (the market exists, the amount is not
   * below its minimum). Returns every problem, source = file path, field = key.
   */
  checkParams?(params: P, context: StartupContext, source: string): readonly InputProblem[];
  /** The decision for one slot. Pure: reads the view only. */
  decide(view: SlotView, params: P): Promise<readonly Intent[]>;
}

/** The snapshot parts the engine must load for this strategy instance. */
export function readsOf<P>(strategy: Strategy<P>, params: P): readonly SnapshotPart[] {
  return strategy.reads === undefined ? DEFAULT_READS : strategy.reads(params);
}

/**
 * Keys of an instance env file the engine reads itself; every strategy accepts them and
 * ignores them in parseParams.
 */
export const COMMON_PARAMS: readonly ParamSpec[] = [
  { key: 'STRATEGY', required: true, rule: 'a registered strategy name', description: 'Which strategy this instance runs.', example: 'dca' },
  { key: 'SCHEDULE', required: true, rule: 'a cron expression of 5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first', description: 'When the slots fall.', example: '"0 9 * * *"' },
  { key: 'TIMEZONE', required: false, rule: 'an IANA time zone', default: 'UTC', description: 'Time zone the SCHEDULE is read in. Across daylight saving, a wall time that does not exist that day has no slot, and one that happens twice is one slot, at the first.', example: 'Europe/Berlin' },
  { key: 'ENABLED', required: false, rule: 'true or false', default: 'true', description: 'false keeps the file valid but schedules nothing.' },
  { key: 'CATCH_UP', required: false, rule: 'skip or last', default: 'skip', description: 'Slots missed while stopped (a new instance\'s from its first start on): skip them, or run the last one missed if it is within CATCH_UP_WINDOW.' },
  { key: 'CATCH_UP_WINDOW', required: false, rule: 'a duration such as 30m, 6h, 1d', default: '1h', description: 'How late a slot may still run with CATCH_UP=last: a slot missed while stopped, or one whose snapshot failed for now (tried again until then; with CATCH_UP=skip, for 5 minutes).' },
  { key: 'BUDGET_QUOTE_PER_DAY', required: false, rule: 'decimal > 0', description: 'Most quote spent per calendar day (in TIMEZONE), counted across restarts.' },
  { key: 'BUDGET_QUOTE_PER_WEEK', required: false, rule: 'decimal > 0', description: 'Most quote spent per ISO week (Monday first, in TIMEZONE).', example: '100' },
  { key: 'BUDGET_QUOTE_PER_MONTH', required: false, rule: 'decimal > 0', description: 'Most quote spent per calendar month (in TIMEZONE).' },
  {
    key: 'ACCOUNT',
    required: false,
    rule: '1 to 32 letters, digits, _ or -',
    default: 'the account of STACKER_API_KEY',
    description: 'The account this instance trades on; its key comes from STACKER_ACCOUNT_<ACCOUNT>_API_KEY / _API_SECRET in the global env.',
    example: 'main',
  },
  { key: 'MAX_ORDER_QUOTE', required: false, rule: 'decimal > 0', description: 'Largest estimated value of a single order, in quote.' },
  {
    key: 'ORDER_SETTLE_WINDOW',
    required: false,
    rule: 'a duration from 30s to 24h',
    default: 'STACKER_ORDER_SETTLE_WINDOW, else 10m',
    description: 'How long an order whose answer was lost is looked up before it is called not-found (it is never sent again; its budget stays counted until the order history has not shown it for an hour).',
    example: '10m',
  },
];

/** What the guards read to judge a buy. */
const BUY_READS: readonly SnapshotPart[] = ['markets', 'prices'];

export const COMMON_KEYS: ReadonlySet<string> = new Set(COMMON_PARAMS.map((spec) => spec.key));


/**
 * A strategy's answer as the engine takes it: an array of valid intents, or a TypeError saying
 * what is wrong with it (each bad intent by its index and kind). The slot runner, the pre-flight
 * of `stacker check` and the SDK's test helpers all judge an answer by this one rule, so a check
 * or a test never passes what a live slot would reject. `reads` are the parts the strategy named
 * for the slot: a buy is checked against its market's rules and price, read only when named.
 */
export function checkDecision(answer: unknown, reads: readonly SnapshotPart[]): readonly Intent[] {
  if (!Array.isArray(answer)) throw new TypeError(`decide must return an array of intents (got ${answer === null ? 'null' : typeof answer})`);
  const unread = BUY_READS.filter((part) => !reads.includes(part));
  // Judged and used as copies made here, once: a getter read again later, or an amount whose own
  // methods lie (a clone's rounding, a Proxy, a replaced `mul`), cannot make the guards see one
  // value and the exchange get another.
  const taken: unknown[] = answer.map((intent: unknown) => (intent === null || typeof intent !== 'object' ? intent : ownCopy(intent)));
  const problems = taken.flatMap((intent: unknown, index) => {
    if (intent === null || typeof intent !== 'object') return [`intent #${index} must be an object (got ${intent === null ? 'null' : typeof intent})`];
    const found = intentProblems(intent as Intent);
    // Refused by the guards at every slot instead, as a market "not listed" or "without a price": the reason was false, and it never heals.
    if ((intent as Intent).kind === 'buy-stock-market' && unread.length > 0) {
      found.push(`a buy needs ${BUY_READS.map((part) => `'${part}'`).join(' and ')} in the strategy's reads(), which names no ${unread.map((part) => `'${part}'`).join(' or ')}: the engine checks every buy against its market's rules and price, read for a slot only when named`);
    }
    return found.map((problem) => `intent #${index} (${String((intent as { kind?: unknown }).kind)}): ${problem}`);
  });
  if (problems.length > 0) throw new TypeError(problems.join('; '));
  return taken as Intent[];
}

/** An intent's own fields, each read once, its amount in the program's Decimal (ownDecimal). */
function ownCopy(intent: object): object {
  const copy: Record<string, unknown> = { ...intent };
  if (isDecimal(copy['amount'])) {
    try {
      copy['amount'] = ownDecimal(copy['amount']);
    } catch {
      // Says it is a Decimal, and its text is no number: judged as what it is, not a Decimal.
      copy['amount'] = null;
    }
  }
  return copy;
}

/**
 * What is wrong with one intent a strategy returned (empty when nothing). The engine checks
 * every intent before journalling: strategies are user code, and TypeScript types do not reach
 * a module loaded at run time.
 */
export function intentProblems(intent: Intent): string[] {
  const found: string[] = [];
  const positive = (field: string, value: unknown): void => {
    if (!isDecimal(value)) found.push(`${field} must be a Decimal`);
    else if (!value.isFinite()) found.push(`${field} must be a finite number (got ${value.toString()})`);
    else if (value.lte(0)) found.push(`${field} must be greater than 0`);
  };
  const text = (field: string, value: unknown): void => {
    if (typeof value !== 'string' || value === '') found.push(`${field} must be non-empty text`);
  };
  const data = (value: unknown): void => {
    if (value === undefined) return;
    if (value === null || typeof value !== 'object' || Object.values(value).some((v) => typeof v !== 'string')) {
      found.push('data must map names to text (money via formatDecimal)');
    }
  };
  if (isMoneyIntent(intent) && intent.group !== undefined && (typeof intent.group !== 'string' || !STATE_KEY_PATTERN.test(intent.group))) {
    found.push('group must be 1 to 64 letters, digits, dots, dashes or underscores');
  }
  switch (intent.kind) {
    case 'buy-stock-market':
      text('market', intent.market);
      positive('amount', intent.amount);
      if (intent.stp !== undefined && (typeof intent.stp !== 'string' || readStp(intent.stp) === null)) found.push(`stp must be ${STP_INPUT_HELP}`);
      if (intent.tag !== undefined && !CLIENT_ORDER_PREFIX_PATTERN.test(intent.tag)) {
        found.push(`tag must be 1 to ${CLIENT_ORDER_PREFIX_MAX} letters, digits, dots, dashes or underscores`);
      }
      break;
    case 'flex-withdraw':
      text('plan', intent.plan);
      positive('amount', intent.amount);
      break;
    case 'transfer':
      text('ticker', intent.ticker);
      positive('amount', intent.amount);
      if (isDecimal(intent.amount) && intent.amount.decimalPlaces() > TRANSFER_DECIMALS) found.push(`amount must have at most ${TRANSFER_DECIMALS} decimals (the exchange's rule for transfers): round it down`);
      if (intent.from !== 'main' || intent.to !== 'spot') found.push('only transfers from main to spot are supported');
      break;
    case 'note':
      text('message', intent.message);
      if (intent.level !== 'info' && intent.level !== 'warn') found.push('level must be info or warn');
      data(intent.data);
      break;
    case 'refusal':
      text('message', intent.message);
      if (typeof intent.reason !== 'string' || !REFUSAL_REASON_PATTERN.test(intent.reason)) found.push('reason must be kebab-case, e.g. below-min-total');
      data(intent.data);
      break;
    case 'set-state':
      if (typeof intent.key !== 'string' || !STATE_KEY_PATTERN.test(intent.key)) found.push('key must be 1 to 64 letters, digits, dots, dashes or underscores');
      if (intent.value !== null && (typeof intent.value !== 'string' || intent.value.length > STATE_VALUE_MAX)) {
        found.push(`value must be null or text of at most ${STATE_VALUE_MAX} characters`);
      }
      break;
    default:
      found.push(`unknown intent kind ${JSON.stringify((intent as { kind?: unknown }).kind)}`);
  }
  return found;
}
