/**
 * Testing strategies written against the SDK: a slot view built from literals (money as decimal
 * text), market rules and flex investments to put in it, and `decideWith`, which parses an
 * instance's env by the strategy's declaration (as the engine does, unknown keys refused) and
 * runs `decide` on the view with the parts the strategy reads.
 *
 *   const intents = await decideWith(dca, { MARKET: 'BTC_USDT', AMOUNT_QUOTE: '50' }, {
 *     markets: [marketRules()], prices: { BTC_USDT: '65000' }, trade: { USDT: { available: '100' } },
 *   });
 */
import { ConfigError, type InputProblem } from '../src/domain/errors.ts';
import { parseInstanceParams } from '../src/engine/params.ts';
import type { Candle, Intent, Strategy } from '../src/engine/contract.ts';
import { planMoney } from '../src/engine/money-plan.ts';
import type { CodeRecord, FlexInvestment, FlexPlan, TradeBalance } from '../src/domain/account.ts';
import type { MarketRules } from '../src/domain/market.ts';
import { DEMO_MARKETS } from '../src/sim/seed.ts';
import { Decimal, ZERO } from '../src/domain/money.ts';
import { DEFAULT_READS, type SlotView, type SnapshotPart, checkDecision, readsOf } from '../src/engine/contract.ts';
import { ReadOnlyMap, readOnly, readOnlyList, readOnlyParams } from '../src/engine/read-only.ts';

/** A plain-object SlotView for specification tests. Money is given as decimal text. */
export interface ViewSpec {
  readonly instance?: string;
  readonly slotTimeMs?: number;
  /** The instance's TIMEZONE (UTC when not given). */
  readonly timezone?: string;
  readonly markets?: readonly MarketRules[];
  readonly prices?: Readonly<Record<string, string>>;
  readonly main?: Readonly<Record<string, string>>;
  readonly trade?: Readonly<Record<string, { available: string; freeze?: string }>>;
  readonly flex?: readonly FlexInvestment[];
  /** The flex plans the exchange lists (see `plan`); none when not given. */
  readonly flexPlans?: readonly FlexPlan[];
  readonly codes?: readonly CodeRecord[];
  /** Hourly candles per market, oldest first: `{ BTC_USDT: [{ timeSec, close: '65000' }] }` (open, high and low default to the close). */
  readonly candles?: Readonly<Record<string, ReadonlyArray<{ readonly timeSec: number; readonly close: string; readonly open?: string; readonly high?: string; readonly low?: string }>>>;
  readonly remainingQuote?: string | null;
  readonly maxOrderQuote?: string | null;
  readonly state?: Readonly<Record<string, string>>;
  /** Parts the strategy asked for; reading any other throws, like the engine's view. */
  readonly reads?: readonly SnapshotPart[];
  /**
   * Markets the strategy declared a candle window for (candleWindows): one not in `candles` has
   * none, as the engine hands a market the exchange keeps no candles of. decideWith and
   * judgeWith fill it from the strategy; reading candles of any other market throws.
   */
  readonly candleMarkets?: readonly string[];
}

const NO_CANDLES: readonly Candle[] = Object.freeze([]);

export function slotView(spec: ViewSpec = {}): SlotView {
  const reads = new Set(spec.reads ?? DEFAULT_READS);
  const need = (part: SnapshotPart): void => {
    if (!reads.has(part)) throw new Error(`the view has no ${part}: the strategy did not name it in reads`);
  };
  const markets = new Map((spec.markets ?? []).map((m) => [m.name, m]));
  const prices = new Map(Object.entries(spec.prices ?? {}).map(([k, v]) => [k, new Decimal(v)]));
  const main = new Map(Object.entries(spec.main ?? {}).map(([k, v]) => [k, new Decimal(v)]));
  const trade = new Map<string, TradeBalance>(
    Object.entries(spec.trade ?? {}).map(([k, v]) => [k, { available: new Decimal(v.available), freeze: new Decimal(v.freeze ?? '0') }]),
  );
  const candles = new Map<string, readonly Candle[]>(
    Object.entries(spec.candles ?? {}).map(([market, rows]) => [
      market,
      // Frozen, as the engine hands candles (src/engine/read-only.ts says why they are not proxies).
      Object.freeze(rows.map((row) => Object.freeze({ timeSec: row.timeSec, close: new Decimal(row.close), open: new Decimal(row.open ?? row.close), high: new Decimal(row.high ?? row.close), low: new Decimal(row.low ?? row.close) }))),
    ]),
  );
  const remaining = spec.remainingQuote === undefined || spec.remainingQuote === null ? null : new Decimal(spec.remainingQuote);
  const maxOrder = spec.maxOrderQuote === undefined || spec.maxOrderQuote === null ? null : new Decimal(spec.maxOrderQuote);
  // Read-only as the engine's view is (src/engine/read-only.ts): a write fails here as it fails a live slot.
  const tradeShown = (balance: TradeBalance): TradeBalance => readOnly(balance, 'trade balances');
  // Frozen as the engine's view is: a write into it throws.
  return Object.freeze<SlotView>({
    instance: spec.instance ?? 'test-instance',
    slotTimeMs: spec.slotTimeMs ?? Date.UTC(2024, 4, 1, 9, 0, 0),
    timezone: spec.timezone ?? 'UTC',
    mode: 'backtest',
    state: new ReadOnlyMap(new Map(Object.entries(spec.state ?? {})), 'state entries (intent.setState writes them)'),
    budget: readOnly({ remainingQuote: () => remaining, maxOrderQuote: () => maxOrder }, 'budget figures'),
    market: (name) => {
      need('markets');
      const rules = markets.get(name);
      return rules === undefined ? undefined : readOnly(rules, 'market rules');
    },
    price: (market) => (need('prices'), prices.get(market)),
    mainBalance: (ticker) => (need('balances'), main.get(ticker) ?? ZERO),
    tradeBalance: (ticker) => (need('balances'), tradeShown(trade.get(ticker) ?? { available: ZERO, freeze: ZERO })),
    mainBalances: () => (need('balances'), new ReadOnlyMap(main, 'main balances')),
    tradeBalances: () => (need('balances'), new ReadOnlyMap(trade, 'trade balances', tradeShown)),
    flexInvestments: () => (need('flex'), readOnlyList(spec.flex ?? [], 'flex investments')),
    flexPlan: (planId) => {
      need('flex');
      const plan = spec.flexPlans?.find((p) => p.planId === planId);
      return plan === undefined ? undefined : readOnly(plan, 'flex plans');
    },
    codes: () => (need('codes'), readOnlyList(spec.codes ?? [], 'codes')),
    // As the engine's view: a market without candles given is one the strategy declared no window for.
    candles: (market) => {
      need('candles');
      const list = candles.get(market) ?? (spec.candleMarkets?.includes(market) === true ? NO_CANDLES : undefined);
      if (list === undefined) throw new Error(`the view has no candles of ${market}: the strategy declared no candleWindows entry for it`);
      return list;
    },
  });
}

/**
 * BTC_USDT as the demo sandbox and the backtest list it (6 base decimals, 2 quote decimals, fees
 * of 0.1 % to 8 decimals, at least 0.00001 BTC and 5 USDT, no maximum total): a unit test judges
 * a small buy as a dry-run or a backtest would.
 */
export function btcUsdt(overrides: Partial<Record<keyof MarketRules, unknown>> = {}): MarketRules {
  return { ...(DEMO_MARKETS[0] as MarketRules), ...overrides } as MarketRules;
}

/** A flex plan with its minimum investment (the rest of its fields as the demo's). */
export function plan(planId: string, ticker: string, minInvestment: string): FlexPlan {
  return { planId, ticker, minInvestment: new Decimal(minInvestment), maxInvestment: new Decimal('1000000'), maxRatePct: new Decimal('5') };
}

export function investment(planId: string, ticker: string, invested: string, active = true): FlexInvestment {
  return {
    investmentId: `inv-${planId.slice(0, 8)}`,
    planId,
    ticker,
    invested: new Decimal(invested),
    autoReinvest: false,
    active,
    createdAtSec: 1_714_000_000,
    updatedAtSec: 1_714_000_000,
  };
}

/** Intents as JSON text (Decimals become their strings): what a log line or the journal would hold. */
export function asJson(value: unknown): string {
  return JSON.stringify(value);
}

/** BTC_USDT as the demo sandbox lists it (see btcUsdt), or another market with the same rules. */
export function marketRules(overrides: Partial<Record<keyof MarketRules, unknown>> = {}): MarketRules {
  return btcUsdt(overrides);
}

/** Parse `env` (engine keys may be left out) by the strategy's declaration, then decide on a view built from `spec`. */
export async function decideWith<P>(strategy: Strategy<P>, env: Readonly<Record<string, string>>, spec: ViewSpec = {}): Promise<readonly Intent[]> {
  const params = parseInstanceParams(strategy, { STRATEGY: strategy.name, SCHEDULE: '0 9 * * *', ...env }, `${strategy.name}.env`);
  // Checked as the engine checks it: an answer a live slot would reject throws here (a TypeError naming each bad intent).
  return checkDecision(await strategy.decide(slotView(asDeclared(strategy, params, spec)), readOnlyParams(params, spec.instance ?? 'test-instance')), readsOf(strategy, params));
}

/**
 * decideWith, three times on the same view, with the clock and randomness taken away: the
 * answer of a pure strategy (strategies/README.md, "Rules a strategy follows"). Throws, naming
 * it, when decide reads `Date.now()`, makes `new Date()` without a time or calls `Math.random()`,
 * or when its answers differ: state kept in the module between calls, which the daemon's
 * instances and a backtest's runs share, and which a decide called again for the same slot
 * counts twice. A counter may agree with itself three calls running: this finds what it can.
 */
export async function decidePurely<P>(strategy: Strategy<P>, env: Readonly<Record<string, string>>, spec: ViewSpec = {}): Promise<readonly Intent[]> {
  const answers: string[] = [];
  let first: readonly Intent[] = [];
  for (let call = 0; call < 3; call += 1) {
    const intents = await withoutClock(() => decideWith(strategy, env, spec));
    if (call === 0) first = intents;
    answers.push(JSON.stringify(intents));
  }
  if (new Set(answers).size > 1) {
    throw new Error(`decide of ${strategy.name} answered the same view differently when called again (it keeps state between calls: keep it with intent.setState instead):\n${answers.join('\n')}`);
  }
  return first;
}

/** `work` with Date.now, a Date made without a time and Math.random refused, until it settles. */
async function withoutClock<T>(work: () => Promise<T>): Promise<T> {
  const RealDate = globalThis.Date;
  const { now } = RealDate;
  const { random } = Math;
  const refuse = (what: string) => (): never => {
    throw new Error(`decide read ${what}: a strategy reads the slot's time from view.slotTimeMs, and no randomness`);
  };
  globalThis.Date = new Proxy(RealDate, {
    construct: (target, args: unknown[], newTarget) => (args.length === 0 ? refuse('the clock (new Date())')() : Reflect.construct(target, args, newTarget)),
    apply: () => refuse('the clock (Date())')(),
  });
  RealDate.now = refuse('the clock (Date.now())');
  Math.random = refuse('Math.random()');
  try {
    return await work();
  } finally {
    globalThis.Date = RealDate;
    RealDate.now = now;
    Math.random = random;
  }
}

/** The spec with the parts the strategy reads and the candle windows it declares, as the engine builds its view. */
export function asDeclared<P>(strategy: Strategy<P>, params: P, spec: ViewSpec): ViewSpec {
  const reads = strategy.reads === undefined ? undefined : strategy.reads(params);
  const candleMarkets = (strategy.candleWindows?.(params) ?? []).map((window) => window.market);
  return { candleMarkets, ...spec, ...(reads === undefined ? {} : { reads }) };
}

/**
 * What the engine does with a slot's intents before sending anything: each intent beside its
 * refusal (the guards' reason code), or null when it would be sent. `spec.maxOrderQuote` and
 * `spec.remainingQuote` stand for MAX_ORDER_QUOTE and the budget left.
 */
export async function judgeWith<P>(
  strategy: Strategy<P>,
  env: Readonly<Record<string, string>>,
  spec: ViewSpec = {},
): Promise<Array<{ readonly intent: Intent; readonly refused: string | null; readonly message: string | null }>> {
  const params = parseInstanceParams(strategy, { STRATEGY: strategy.name, SCHEDULE: '0 9 * * *', ...env }, `${strategy.name}.env`);
  const view = slotView(asDeclared(strategy, params, spec));
  const intents = checkDecision(await strategy.decide(view, readOnlyParams(params, spec.instance ?? 'test-instance')), readsOf(strategy, params));
  const maxOrderQuote = spec.maxOrderQuote === undefined || spec.maxOrderQuote === null ? null : new Decimal(spec.maxOrderQuote);
  const refusals = planMoney(intents, view, { maxOrderQuote, markets: strategy.markets?.(params) ?? null, budgetAsset: strategy.budgetAsset?.(params) ?? null, killed: null });
  return intents.map((intent, i) => ({ intent, refused: refusals[i]?.code ?? null, message: refusals[i]?.message ?? null }));
}

/** The problems of the ConfigError `run` throws (parsing an env with bad keys); fails when it throws none. */
export function configProblems(run: () => unknown): readonly InputProblem[] {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}
