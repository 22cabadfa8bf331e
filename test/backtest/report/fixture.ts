import { Decimal } from '../../../src/domain/money.ts';
import { RunFacts } from '../../../src/backtest/report/facts.ts';
import type { BacktestRun, EquityPoint, ReportFlexOp, ReportOrder, ReportRefusal } from '../../../src/backtest/report/run.ts';
import { DEMO_MARKETS } from '../../../src/sim/seed.ts';

/**
 * A small synthetic run whose figures are worked out by hand in report.test.ts.
 * Prices are round on purpose (100, 80, 125): the arithmetic must be checkable on paper.
 *
 *   wallet      1000 USDT, 0 BTC; first open 100; last close 120
 *   buy 1       100 USDT → 1    BTC at 100, fee 0.1 USDT   (slot day 1, 01:00)
 *   buy 2       100 USDT → 1.25 BTC at  80, fee 0.1 USDT   (slot day 2, 01:00)
 *   buy 3       100 USDT → 0.8  BTC at 125, fee 0.1 USDT   (slot day 3, 01:00)
 *   canceled    an order that filled nothing
 *   refusals    E_BUDGET twice, E_MIN_AMOUNT once
 */

const d = (text: string): Decimal => new Decimal(text);

export const T0 = Date.UTC(2024, 0, 1); // 2024-01-01 00:00Z
export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

function order(instance: string, slotTimeMs: number, status: string, base: string, quote: string, fee: string, seq: number): ReportOrder {
  return {
    instance,
    slotTimeMs,
    clientOrderId: `stk-${instance}-${seq}`,
    market: 'BTC_USDT',
    status,
    amount: d(base === '0' ? '0.5' : base),
    filledBase: d(base),
    filledQuote: d(quote),
    fee: d(fee),
    feeAsset: 'USDT',
    fillTimeMs: slotTimeMs,
  };
}

function point(timeMs: number, price: string, base: string, quote: string): EquityPoint {
  return { timeMs, price: d(price), value: d(quote).add(d(base).mul(d(price))) };
}

/** Hourly closes for three days: a slow wave between 80 and 125 that passes through each buy price. */
function closes(): Array<{ timeSec: number; close: Decimal }> {
  const points: Array<{ timeSec: number; close: Decimal }> = [];
  const anchors = ['100', '100', '80', '80', '125', '90', '120'];
  for (let h = 0; h < 72; h++) {
    const slot = Math.min(Math.floor(h / 12), anchors.length - 2);
    const from = d(anchors[slot]!);
    const to = d(anchors[slot + 1]!);
    const close = from.add(to.sub(from).mul(h % 12).div(12)).toDecimalPlaces(2);
    points.push({ timeSec: (T0 + h * HOUR) / 1000, close });
  }
  points.push({ timeSec: (T0 + 72 * HOUR) / 1000, close: d('120') });
  return points;
}

/** The run's facts as lists, in the journal's order: what a test changes before folding them. */
export interface RunParts {
  orders: ReportOrder[];
  refusals: ReportRefusal[];
  flex: ReportFlexOp[];
  /** Time-ascending. */
  equity: EquityPoint[];
}

export type SyntheticRunOverrides = Partial<Omit<BacktestRun, 'facts'>> & Partial<RunParts>;

export function syntheticParts(): RunParts {
  const buy1 = T0 + HOUR;
  const buy2 = T0 + DAY + HOUR;
  const buy3 = T0 + 2 * DAY + HOUR;
  return {
    orders: [
      order('dca-btc', buy1, 'FILLED', '1', '100', '0.1', 1),
      order('dca-btc', buy2, 'FILLED', '1.25', '100', '0.1', 2),
      order('dip-btc', buy2 + HOUR / 2, 'CANCELED', '0', '0', '0', 1),
      order('dca-btc', buy3, 'FILLED', '0.8', '100', '0.1', 3),
    ],
    refusals: [
      { instance: 'dip-btc', slotTimeMs: buy1 + HOUR / 2, reason: 'E_BUDGET', message: 'daily budget 50 USDT used' },
      { instance: 'dip-btc', slotTimeMs: buy3 + HOUR / 2, reason: 'E_BUDGET', message: 'daily budget 50 USDT used' },
      { instance: 'dca-btc', slotTimeMs: T0 + 3 * DAY, reason: 'E_MIN_AMOUNT', message: 'below the market minimum' },
    ],
    flex: [],
    equity: [
      point(T0, '100', '0', '1000'), //                                  1000
      point(buy1, '100', '1', '899.9'), //                     899.9 + 100 = 999.9
      point(T0 + DAY, '80', '1', '899.9'), //                   899.9 + 80 = 979.9
      point(buy2, '80', '2.25', '799.8'), //                  799.8 + 180 = 979.8
      point(buy3, '125', '3.05', '699.7'), //             699.7 + 381.25 = 1080.95
      point(buy3 + 4 * HOUR, '90', '3.05', '699.7'), //    699.7 + 274.5 = 974.2
      point(T0 + 3 * DAY, '120', '3.05', '699.7'), //        699.7 + 366 = 1065.7
    ],
  };
}

/** Folds lists of facts as the driver folds what the journal hands it; list order stands for the journal's order. */
export function foldParts(run: Pick<BacktestRun, 'base' | 'quote' | 'fromMs' | 'toMs' | 'chartCandles' | 'candles'>, parts: RunParts): RunFacts {
  const facts = new RunFacts({ base: run.base, quote: run.quote, fromMs: run.fromMs, toMs: run.toMs });
  const place = (slotTimeMs: number, instance: string, i: number, of: number) => ({ slotTimeMs, instance, index: of - i });
  parts.orders.forEach((o, i) => facts.addOrder(o, place(o.slotTimeMs, o.instance, i, parts.orders.length)));
  parts.refusals.forEach((r, i) => facts.addRefusal(r, place(r.slotTimeMs, r.instance, i, parts.refusals.length)));
  for (const op of parts.flex) facts.addFlex(op);
  for (const point of parts.equity) facts.addSample(point);
  // As the driver does: each chart close at the end of its candle, then the last close.
  for (const candle of run.chartCandles) facts.priceSeen((candle.timeSec + run.candles.intervalSec) * 1000 - 1, candle.close);
  facts.priceSeen(run.toMs - 1, run.candles.lastClose);
  return facts;
}

export function syntheticRun(overrides: SyntheticRunOverrides = {}): BacktestRun {
  const { orders, refusals, flex, equity, ...fields } = overrides;
  const defaults = syntheticParts();
  const parts: RunParts = { orders: orders ?? defaults.orders, refusals: refusals ?? defaults.refusals, flex: flex ?? defaults.flex, equity: equity ?? defaults.equity };
  const run: Omit<BacktestRun, 'facts'> = {
    schema: 'stacker.backtest/1',
    market: 'BTC_USDT',
    base: 'BTC',
    quote: 'USDT',
    fromMs: T0,
    toMs: T0 + 3 * DAY,
    dataFile: 'btc-usdt-1h.csv',
    candles: {
      count: 68,
      intervalSec: 3600,
      firstTimeSec: T0 / 1000,
      lastTimeSec: (T0 + 72 * HOUR) / 1000,
      firstOpen: d('100'),
      lastClose: d('120'),
      gaps: [
        { afterTimeSec: (T0 + 5 * HOUR) / 1000, missing: 2 },
        { afterTimeSec: (T0 + 30 * HOUR) / 1000, missing: 3 },
      ],
      offGrid: null,
    },
    chartCandles: closes(),
    initialWallet: { USDT: d('1000'), BTC: d('0') },
    finalBalances: { USDT: d('699.7'), BTC: d('3.05') },
    instances: [
      { instance: 'dca-btc', strategy: 'dca', schedule: '0 1 * * *', timezone: 'UTC' },
      { instance: 'dip-btc', strategy: 'dip', schedule: '30 1 * * *', timezone: 'Europe/Kyiv' },
    ],
    slots: 7,
    settings: { slippagePct: d('0.1'), flexAprPct: null },
    rules: { values: DEMO_MARKETS[0]!, origin: { source: 'demo' } },
    ...fields,
  };
  return { ...run, facts: foldParts(run, parts) };
}
