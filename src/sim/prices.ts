import type { Clock } from '../domain/clock.ts';
import { readFileSync } from 'node:fs';
import { Decimal, ZERO, isDecimal, parseDecimalStrict } from '../domain/money.ts';
import { type CandleSeries, parseCandles } from '../candles/index.ts';

/** What a market traded over the 24 h up to a moment: the ticker's base_volume and quote_volume. */
export interface TradedVolume {
  readonly base: Decimal;
  readonly quote: Decimal;
}

/** What a market did over a span: its candle as the exchange's kline serves it. */
export interface SpanCandle {
  readonly open: Decimal;
  readonly close: Decimal;
  readonly high: Decimal;
  readonly low: Decimal;
  /** Base traded. */
  readonly volume: Decimal;
  /** Quote traded: each candle's volume at its average price, as the ticker counts it (closedVolumes). */
  readonly quoteVolume: Decimal;
}

/** Where the sim takes the price an order fills at. `null`: no price known for that market. */
export interface PriceSource {
  /** The price an order placed at `timeMs` fills at (a replay: the open of the first candle at or after it, the backtest's fill rule). */
  priceAt(market: string, timeMs: number): Decimal | null;
  /**
   * The last price known at `timeMs`, what a ticker shows (a replay: the open of the candle under
   * way, never a later candle's, as a backtest's slot sees it); absent or null: `priceAt`.
   */
  knownPriceAt?(market: string, timeMs: number): Decimal | null;
  /** What the market traded in the 24 h up to `timeMs`; absent or null: nothing is known to have traded (fixed prices). */
  volume24hAt?(market: string, timeMs: number): TradedVolume | null;
  /** The price 24 h before `timeMs`, which the ticker's change is measured from; absent or null: the price never moved (fixed prices). */
  priceDayBeforeAt?(market: string, timeMs: number): Decimal | null;
  /** The market's candle over [fromMs, toMs); absent or null: none known (a flat candle at the price is all there is). */
  candleAt?(market: string, fromMs: number, toMs: number): SpanCandle | null;
}

export interface FixedPrices extends PriceSource {
  /** Move one market's price (tests, demos). */
  set(market: string, price: string | Decimal): void;
}

/** Constant prices per market, e.g. `fixedPrices({ BTC_USDT: '65000' })`. */
export function fixedPrices(prices: Readonly<Record<string, string | Decimal>>): FixedPrices {
  const table = new Map<string, Decimal>();
  const set = (market: string, price: string | Decimal): void => {
    const value = isDecimal(price) ? price : parseDecimalStrict(price, `price of ${market}`);
    if (!value.isPositive() || value.isZero()) throw new RangeError(`price of ${market} must be greater than 0`);
    table.set(market, value);
  };
  for (const [market, price] of Object.entries(prices)) set(market, price);
  return {
    priceAt: (market) => table.get(market) ?? null,
    set,
  };
}

export interface CandleReplayOptions {
  readonly market: string;
  /** Exactly one of csvPath / csvText. */
  readonly csvPath?: string;
  readonly csvText?: string;
  /** Virtual seconds per wall second: with speed X one candle interval passes in interval/X. */
  readonly speed: number;
  /** Wall time (ms) at which the replay starts at the first candle; default: the clock's now. */
  readonly startAtMs?: number;
  readonly clock?: Clock;
}

export interface CandleReplay extends PriceSource {
  readonly market: string;
  readonly candles: CandleSeries;
  /** The replayed moment that the wall time `wallMs` corresponds to. */
  virtualTimeMs(wallMs: number): number;
}

/**
 * Replay a candle file as a live price: wall time maps to virtual time = first candle's open
 * time + (wall elapsed since start × speed), and the price at a virtual time follows the
 * backtest fill rule (the series' `priceAt`, the same parser and rule as a backtest). The file is read and checked here, once, so a bad file
 * fails at start-up rather than on the first order. No timers: prices are computed on demand.
 */
export function candleReplay(options: CandleReplayOptions): CandleReplay {
  if ((options.csvPath === undefined) === (options.csvText === undefined)) {
    throw new TypeError('candleReplay needs exactly one of csvPath or csvText');
  }
  if (!Number.isFinite(options.speed) || options.speed <= 0) {
    throw new RangeError(`candleReplay speed must be a positive number, got ${options.speed}`);
  }
  const text = options.csvText ?? readFileSync(options.csvPath as string, 'utf8');
  const candles = parseCandles(text, { market: options.market, source: options.csvPath ?? `${options.market} candles` });
  const firstMs = candles.timeSec(0) * 1000;
  const startAtMs = options.startAtMs ?? (options.clock ?? { nowMs: () => Date.now() }).nowMs();
  const virtualTimeMs = (wallMs: number): number => firstMs + (wallMs - startAtMs) * options.speed;
  const traded = closedVolumes(candles);
  return {
    market: options.market,
    candles,
    virtualTimeMs,
    priceAt(market, timeMs) {
      if (market !== options.market) return null;
      return candles.priceAt(virtualTimeMs(timeMs));
    },
    // The ticker's price: a slot between two opens sees the one under way, as in a backtest, not
    // the next open it will fill at (which sized a quote amount on a price from the future).
    knownPriceAt(market, timeMs) {
      return market === options.market ? candles.priceKnownAt(virtualTimeMs(timeMs)) : null;
    },
    volume24hAt(market, timeMs) {
      return market === options.market ? traded(virtualTimeMs(timeMs)) : null;
    },
    // The ticker's price a day earlier: before the first candle, its open (the replay's first price).
    priceDayBeforeAt(market, timeMs) {
      if (market !== options.market) return null;
      const dayBeforeMs = virtualTimeMs(timeMs) - DAY_MS;
      return candles.priceKnownAt(dayBeforeMs) ?? candles.priceAt(dayBeforeMs);
    },
    // A wall-clock span is a replayed one `speed` times as long: its candles, joined.
    candleAt(market, fromMs, toMs) {
      return market === options.market ? joinedCandles(candles, virtualTimeMs(fromMs), virtualTimeMs(toMs)) : null;
    },
  };
}

/**
 * The file's candles that close after fromMs and by toMs, as one: the first's open, the last's
 * close, the highest high, the lowest low, the volumes summed. Each candle is in the span it
 * closes in, so spans side by side serve every candle once, whatever their edges (a replay
 * started at 09:30 on an hourly file; a candle across two wall hours at another speed). Null when
 * none closes there (before the file): a candle still trading is the future.
 */
function joinedCandles(candles: CandleSeries, fromMs: number, toMs: number): SpanCandle | null {
  const intervalMs = candles.intervalSec * 1000;
  const first = candles.firstAtOrAfter(fromMs - intervalMs + 1);
  const end = candles.firstAtOrAfter(toMs - intervalMs + 1);
  if (first >= end) return null;
  let high = new Decimal(candles.highText(first));
  let low = new Decimal(candles.lowText(first));
  let volume = ZERO;
  let quoteVolume = ZERO;
  for (let i = first; i < end; i += 1) {
    const candleHigh = new Decimal(candles.highText(i));
    const candleLow = new Decimal(candles.lowText(i));
    if (candleHigh.gt(high)) high = candleHigh;
    if (candleLow.lt(low)) low = candleLow;
    const traded = new Decimal(candles.volumeText(i));
    volume = volume.plus(traded);
    quoteVolume = quoteVolume.plus(traded.times(averagePrice(candles, i)));
  }
  return { open: candles.openDecimal(first), close: candles.closeDecimal(end - 1), high, low, volume, quoteVolume };
}

const DAY_MS = 86_400_000;

/**
 * The volume of the candles that closed in the 24 h up to a replayed moment (a candle closes one
 * interval after its open): the replay never counts a candle still trading, whose volume is the
 * future. Base is the sum of the file's volumes; quote prices each candle's volume at its
 * average, (open + high + low + close) / 4, the nearest a candle comes to what was paid (exact in
 * decimals: a quarter always terminates). The answer changes only when a candle closes, so the
 * last one is kept for the ticker requests in between.
 */
function closedVolumes(candles: CandleSeries): (nowMs: number) => TradedVolume {
  const intervalMs = candles.intervalSec * 1000;
  let last: { first: number; end: number; volume: TradedVolume } | null = null;
  return (nowMs) => {
    const closeMs = (index: number): number => candles.timeSec(index) * 1000 + intervalMs;
    let first = candles.firstAtOrAfter(nowMs - DAY_MS - intervalMs);
    while (first < candles.length && closeMs(first) <= nowMs - DAY_MS) first += 1;
    let end = first;
    while (end < candles.length && closeMs(end) <= nowMs) end += 1;
    if (last?.first === first && last.end === end) return last.volume;
    let base = ZERO;
    let quote = ZERO;
    for (let i = first; i < end; i += 1) {
      const volume = new Decimal(candles.volumeText(i));
      base = base.plus(volume);
      quote = quote.plus(volume.times(averagePrice(candles, i)));
    }
    last = { first, end, volume: { base, quote } };
    return last.volume;
  };
}

/** A candle's (open + high + low + close) / 4: the nearest it comes to what was paid (exact: a quarter always terminates). */
function averagePrice(candles: CandleSeries, index: number): Decimal {
  return candles.openDecimal(index).plus(candles.highText(index)).plus(candles.lowText(index)).plus(candles.closeDecimal(index)).div(4);
}

/** Several sources, first answer wins: e.g. a BTC replay plus fixed prices for the rest. */
export function firstOf(...sources: readonly PriceSource[]): PriceSource {
  const pricingSource = (market: string, timeMs: number): PriceSource | undefined => sources.find((source) => source.priceAt(market, timeMs) !== null);
  return {
    priceAt(market, timeMs) {
      for (const source of sources) {
        const price = source.priceAt(market, timeMs);
        if (price !== null) return price;
      }
      return null;
    },
    // The source that prices the market says what it traded and where its price stood a day
    // before: a replay's figures never come with another source's price.
    knownPriceAt(market, timeMs) {
      const source = pricingSource(market, timeMs);
      return source === undefined ? null : (source.knownPriceAt?.(market, timeMs) ?? source.priceAt(market, timeMs));
    },
    volume24hAt(market, timeMs) {
      return pricingSource(market, timeMs)?.volume24hAt?.(market, timeMs) ?? null;
    },
    priceDayBeforeAt(market, timeMs) {
      return pricingSource(market, timeMs)?.priceDayBeforeAt?.(market, timeMs) ?? null;
    },
    candleAt(market, fromMs, toMs) {
      return pricingSource(market, fromMs)?.candleAt?.(market, fromMs, toMs) ?? null;
    },
  };
}
