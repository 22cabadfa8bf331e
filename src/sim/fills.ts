import { type MarketRules, takerFee } from '../domain/market.ts';
import { Decimal, ZERO, isAboveZero, isDecimal, parseDecimalStrict, roundDown, roundUp } from '../domain/money.ts';

/**
 * How a taker order meets the (synthetic) book. Prices come from a price source; the book is
 * a ladder above that price: level k sits at price × (1 + slippage%) × (1 + k × step%) rounded
 * up to the market's price precision, and holds `bookLevelBase` of the base asset. Without a
 * book the whole order fills at the (slipped) price. The taker band caps how far above the
 * source price the walk may go; an order that would go past it fills up to it and the rest is
 * cancelled (CANCELED_TAKER_BAND). A real book can be handed in instead (an `AskSource` on the
 * SimCore): the walk then takes its levels as they are.
 */
export interface FillModel {
  readonly book: { readonly stepPct: Decimal; readonly levelBase: Decimal; readonly levels: number } | null;
  readonly slippagePct: Decimal;
  readonly takerBandPct: Decimal | null;
}

export interface FillModelOptions {
  readonly bookStepPct?: string | Decimal;
  readonly bookLevelBase?: string | Decimal;
  /** Depth of the synthetic book in levels (default 1000); walking past the last level stops like a band. */
  readonly bookLevels?: number;
  readonly slippagePct?: string | Decimal;
  readonly takerBandPct?: string | Decimal;
}

const toDecimal = (value: string | Decimal, field: string): Decimal => (isDecimal(value) ? value : parseDecimalStrict(value, field));

export function fillModel(options: FillModelOptions = {}): FillModel {
  const hasStep = options.bookStepPct !== undefined;
  const hasBase = options.bookLevelBase !== undefined;
  if (hasStep !== hasBase) throw new TypeError('bookStepPct and bookLevelBase go together');
  let book: FillModel['book'] = null;
  if (options.bookStepPct !== undefined && options.bookLevelBase !== undefined) {
    const stepPct = toDecimal(options.bookStepPct, 'bookStepPct');
    const levelBase = toDecimal(options.bookLevelBase, 'bookLevelBase');
    const levels = options.bookLevels ?? 1000;
    if (stepPct.lte(0) || levelBase.lte(0)) throw new RangeError('bookStepPct and bookLevelBase must be greater than 0');
    if (!Number.isSafeInteger(levels) || levels < 1) throw new RangeError('bookLevels must be a positive integer');
    book = { stepPct, levelBase, levels };
  }
  const slippagePct = toDecimal(options.slippagePct ?? '0', 'slippagePct');
  const takerBandPct = options.takerBandPct === undefined ? null : toDecimal(options.takerBandPct, 'takerBandPct');
  if (slippagePct.isNegative()) throw new RangeError('slippagePct must not be negative');
  if (takerBandPct !== null && takerBandPct.isNegative()) throw new RangeError('takerBandPct must not be negative');
  return { book, slippagePct, takerBandPct };
}

/**
 * One book level a buy took from: base × price = quote, exactly. The quote is deliberately not
 * rounded to the market's price precision: the exchange reports `dealMoney` with more decimals
 * than `moneyPrec` (docs/exchange-api.md §6: 0.002 ETH × 3150.42 = "6.30084" with moneyPrec 2), and an
 * exact product keeps the ledger exact. Only the fee is rounded (up, to `feePrec`).
 */
export interface LevelFill {
  readonly price: Decimal;
  readonly base: Decimal;
  readonly quote: Decimal;
}

export interface FillPlan {
  readonly levels: readonly LevelFill[];
  readonly base: Decimal;
  readonly quote: Decimal;
  /** Taker fee on the whole quote total, rounded up to the fee precision. */
  readonly fee: Decimal;
  /** The walk stopped at the taker band (or the end of the book) before the order was done. */
  readonly stoppedByBand: boolean;
}

export interface BookLevel {
  readonly price: Decimal;
  /** null: unlimited depth. */
  readonly base: Decimal | null;
}

const hundred = new Decimal(100);

/** (100 + slippage) / 100 of a model, worked out once: every buy's best ask multiplies by it. */
const askFactors = new WeakMap<FillModel, Decimal>();
function askFactor(model: FillModel): Decimal {
  let factor = askFactors.get(model);
  if (factor === undefined) {
    factor = hundred.add(model.slippagePct).div(hundred);
    askFactors.set(model, factor);
  }
  return factor;
}

/**
 * The best level last worked out: an order's checks and its walk both start there, at the same
 * price (rules, model and price are immutable values, so the same three give the same level).
 */
let lastBest: { rules: MarketRules; model: FillModel; refPrice: Decimal; level: BookLevel } | null = null;

/** Level `k` (0 = best) of the ask side of the synthetic book above `refPrice`. */
export function askLevelAt(rules: MarketRules, model: FillModel, refPrice: Decimal, k: number): BookLevel {
  if (k !== 0) return levelAt(rules, model, refPrice, k);
  const kept = lastBest;
  if (kept !== null && kept.refPrice === refPrice && kept.model === model && kept.rules === rules) return kept.level;
  const level = levelAt(rules, model, refPrice, 0);
  lastBest = { rules, model, refPrice, level };
  return level;
}

function levelAt(rules: MarketRules, model: FillModel, refPrice: Decimal, k: number): BookLevel {
  // Exact either way: (100 + s) / 100 is a finite decimal, so multiplying by it equals dividing after.
  const top = refPrice.mul(askFactor(model));
  if (model.book === null) return { price: roundUp(top, rules.quotePrecision), base: null };
  const { stepPct, levelBase } = model.book;
  return {
    price: roundUp(top.mul(hundred.add(stepPct.mul(k))).div(hundred), rules.quotePrecision),
    base: roundDown(levelBase, rules.basePrecision),
  };
}

/** Ask side of the synthetic book (what a buy walks), best first. */
export function askLevels(rules: MarketRules, model: FillModel, refPrice: Decimal, count: number): BookLevel[] {
  const depth = model.book === null ? 1 : Math.min(count, model.book.levels);
  return Array.from({ length: depth }, (_, k) => askLevelAt(rules, model, refPrice, k));
}

/** Bid side mirrored below `refPrice` (shown by the order book endpoint; the sim only buys). */
export function bidLevels(rules: MarketRules, model: FillModel, refPrice: Decimal, count: number): BookLevel[] {
  const top = refPrice.mul(hundred.sub(model.slippagePct)).div(hundred);
  if (model.book === null) return [{ price: roundDown(top, rules.quotePrecision), base: null }];
  const { stepPct, levelBase, levels } = model.book;
  const base = roundDown(levelBase, rules.basePrecision);
  const out: BookLevel[] = [];
  for (let k = 0; k < Math.min(count, levels); k += 1) {
    const price = roundDown(top.mul(hundred.sub(stepPct.mul(k))).div(hundred), rules.quotePrecision);
    if (price.lte(0)) break;
    out.push({ price, base });
  }
  return out;
}

interface Walk {
  /** How much base to take at this level, given its price and capacity; zero ends the walk. */
  take(price: Decimal, capacity: Decimal | null): Decimal;
  done(): boolean;
}

/** Level k of the ask side a buy walks, best first; null past the end of the book. */
export type AskLadder = (k: number) => BookLevel | null;

function syntheticLadder(rules: MarketRules, model: FillModel, refPrice: Decimal): AskLadder {
  const depth = model.book === null ? 1 : model.book.levels;
  return (k) => (k < depth ? askLevelAt(rules, model, refPrice, k) : null);
}

/**
 * A real book handed in for one order (a paper account walks the exchange's live asks). Sizes
 * are cut to the market's base precision and prices rounded up to its price precision, no-ops
 * for a real book, so a fill is never finer or cheaper than the exchange could give; levels
 * that round to nothing are left out. Slippage is not added: the book is the price.
 */
function givenLadder(rules: MarketRules, asks: readonly BookLevel[]): AskLadder {
  const levels: BookLevel[] = [];
  for (const level of asks) {
    const base = level.base === null ? null : roundDown(level.base, rules.basePrecision);
    if (base !== null && base.isZero()) continue;
    levels.push({ price: roundUp(level.price, rules.quotePrecision), base });
  }
  return (k) => levels[k] ?? null;
}

/**
 * The ask side an order walks: the given book when there is one (non-empty), else the model's
 * synthetic ladder above `refPrice`.
 */
export function askLadder(rules: MarketRules, model: FillModel, refPrice: Decimal, asks?: readonly BookLevel[] | null): AskLadder {
  return asks !== undefined && asks !== null && asks.length > 0 ? givenLadder(rules, asks) : syntheticLadder(rules, model, refPrice);
}

/** The price a buy would pay first: the best level of the ladder (what min-total checks use). */
export function bestAsk(rules: MarketRules, model: FillModel, refPrice: Decimal, asks?: readonly BookLevel[] | null): Decimal {
  return (askLadder(rules, model, refPrice, asks)(0) ?? askLevelAt(rules, model, refPrice, 0)).price;
}

function walkAsks(rules: MarketRules, model: FillModel, refPrice: Decimal, ladder: AskLadder, walk: Walk): FillPlan {
  const bandLimit = model.takerBandPct === null ? null : refPrice.mul(hundred.add(model.takerBandPct)).div(hundred);
  const levels: LevelFill[] = [];
  let stoppedByBand = false;
  for (let k = 0; !walk.done(); k += 1) {
    const level = ladder(k);
    // Past the end of the book, or a level size that rounds to nothing at the market's
    // precision (an empty book), ends the walk like the band does.
    if (level === null || (bandLimit !== null && level.price.gt(bandLimit)) || level.base?.isZero()) {
      stoppedByBand = true;
      break;
    }
    const base = walk.take(level.price, level.base);
    if (base.isZero()) break;
    levels.push({ price: level.price, base, quote: base.mul(level.price) });
  }
  // One level is the usual walk (an unlimited synthetic book): its sums are itself.
  let base = levels.length === 1 ? (levels[0] as LevelFill).base : ZERO;
  let quote = levels.length === 1 ? (levels[0] as LevelFill).quote : ZERO;
  if (levels.length > 1) {
    for (const level of levels) {
      base = base.add(level.base);
      quote = quote.add(level.quote);
    }
  }
  return { levels, base, quote, fee: takerFee(rules, quote), stoppedByBand };
}

/** A buy of an exact base quantity (stock market order), over `asks` when given. */
export function planBuyByBase(rules: MarketRules, model: FillModel, refPrice: Decimal, baseAmount: Decimal, asks?: readonly BookLevel[] | null): FillPlan {
  let remaining = baseAmount;
  return walkAsks(rules, model, refPrice, askLadder(rules, model, refPrice, asks), {
    take(_price, capacity) {
      const base = capacity === null || capacity.gte(remaining) ? remaining : capacity;
      remaining = remaining.sub(base);
      return base;
    },
    done: () => !isAboveZero(remaining),
  });
}

/**
 * A buy that spends up to a quote amount (market order). At each level it takes as much base
 * as the remaining quote buys, cut to the base precision; the dust that buys nothing stays
 * unspent (`left`), as on the real exchange. The fee comes on top of the amount.
 */
export function planBuyByQuote(rules: MarketRules, model: FillModel, refPrice: Decimal, quoteAmount: Decimal, asks?: readonly BookLevel[] | null): FillPlan {
  let remaining = quoteAmount;
  let exhausted = false;
  return walkAsks(rules, model, refPrice, askLadder(rules, model, refPrice, asks), {
    take(price, capacity) {
      const affordable = roundDown(remaining.div(price), rules.basePrecision);
      const base = capacity === null || capacity.gte(affordable) ? affordable : capacity;
      remaining = remaining.sub(base.mul(price));
      if (base.isZero() || base.eq(affordable)) exhausted = true;
      return base;
    },
    done: () => exhausted || !isAboveZero(remaining),
  });
}

/** The part of a plan between two cumulative base quantities, split at level boundaries. */
export function slicePlan(plan: FillPlan, fromBase: Decimal, toBase: Decimal): LevelFill[] {
  const out: LevelFill[] = [];
  let start = ZERO;
  for (const level of plan.levels) {
    const end = start.add(level.base);
    const lo = Decimal.max(start, fromBase);
    const hi = Decimal.min(end, toBase);
    if (hi.gt(lo)) {
      const base = hi.sub(lo);
      out.push({ price: level.price, base, quote: base.mul(level.price) });
    }
    start = end;
  }
  return out;
}
