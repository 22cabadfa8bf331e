import type { Clock } from '../domain/clock.ts';
import { readFileSync } from 'node:fs';
import { type Decimal, isDecimal, parseDecimalStrict } from '../domain/money.ts';
import { type CandleSeries, parseCandles } from '../candles/index.ts';

/** Where the sim takes the price an order fills at. `null`: no price known for that market. */
export interface PriceSource {
  priceAt(market: string, timeMs: number): Decimal | null;
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
  return {
    market: options.market,
    candles,
    virtualTimeMs,
    priceAt(market, timeMs) {
      if (market !== options.market) return null;
      return candles.priceAt(virtualTimeMs(timeMs));
    },
  };
}

/** Several sources, first answer wins: e.g. a BTC replay plus fixed prices for the rest. */
export function firstOf(...sources: readonly PriceSource[]): PriceSource {
  return {
    priceAt(market, timeMs) {
      for (const source of sources) {
        const price = source.priceAt(market, timeMs);
        if (price !== null) return price;
      }
      return null;
    },
  };
}
