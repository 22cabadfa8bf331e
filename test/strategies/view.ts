import type { CodeRecord, FlexInvestment, TradeBalance } from '../../src/domain/account.ts';
import type { MarketRules } from '../../src/domain/market.ts';
import { Decimal, ZERO } from '../../src/domain/money.ts';
import { DEFAULT_READS, type SlotView, type SnapshotPart } from '../../src/engine/contract.ts';

/** A plain-object SlotView for specification tests. Money is given as decimal text. */
export interface ViewSpec {
  readonly instance?: string;
  readonly slotTimeMs?: number;
  readonly markets?: readonly MarketRules[];
  readonly prices?: Readonly<Record<string, string>>;
  readonly main?: Readonly<Record<string, string>>;
  readonly trade?: Readonly<Record<string, { available: string; freeze?: string }>>;
  readonly flex?: readonly FlexInvestment[];
  readonly codes?: readonly CodeRecord[];
  readonly remainingQuote?: string | null;
  readonly maxOrderQuote?: string | null;
  readonly state?: Readonly<Record<string, string>>;
  /** Parts the strategy asked for; reading any other throws, like the engine's view. */
  readonly reads?: readonly SnapshotPart[];
}

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
  const remaining = spec.remainingQuote === undefined || spec.remainingQuote === null ? null : new Decimal(spec.remainingQuote);
  const maxOrder = spec.maxOrderQuote === undefined || spec.maxOrderQuote === null ? null : new Decimal(spec.maxOrderQuote);
  return {
    instance: spec.instance ?? 'test-instance',
    slotTimeMs: spec.slotTimeMs ?? Date.UTC(2024, 4, 1, 9, 0, 0),
    mode: 'backtest',
    state: new Map(Object.entries(spec.state ?? {})),
    budget: { remainingQuote: () => remaining, maxOrderQuote: () => maxOrder },
    market: (name) => (need('markets'), markets.get(name)),
    price: (market) => (need('prices'), prices.get(market)),
    mainBalance: (ticker) => (need('balances'), main.get(ticker) ?? ZERO),
    tradeBalance: (ticker) => (need('balances'), trade.get(ticker) ?? { available: ZERO, freeze: ZERO }),
    mainBalances: () => (need('balances'), main),
    tradeBalances: () => (need('balances'), trade),
    flexInvestments: () => (need('flex'), spec.flex ?? []),
    codes: () => (need('codes'), spec.codes ?? []),
  };
}

/** BTC_USDT as the demo sandbox lists it: 6 base decimals, 2 quote decimals, 0.1 % taker fee. */
export function btcUsdt(overrides: Partial<Record<keyof MarketRules, unknown>> = {}): MarketRules {
  return {
    name: 'BTC_USDT',
    base: 'BTC',
    quote: 'USDT',
    basePrecision: 6,
    quotePrecision: 2,
    feePrecision: 6,
    makerFeePct: new Decimal('0.1'),
    takerFeePct: new Decimal('0.1'),
    minBaseAmount: new Decimal('0.0001'),
    minQuoteTotal: new Decimal('5'),
    maxQuoteTotal: new Decimal('100000'),
    tradesEnabled: true,
    type: 'spot',
    ...overrides,
  } as MarketRules;
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
