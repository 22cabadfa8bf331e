import type { Decimal } from './money.ts';

/** One candle of a market: its open time and prices (the exchange's kline, or a backtest's data). */
export interface Candle {
  /** Open time, Unix seconds. */
  readonly timeSec: number;
  readonly open: Decimal;
  readonly high: Decimal;
  readonly low: Decimal;
  readonly close: Decimal;
}

/** The candle interval the engine loads for strategies: one hour (docs/exchange-api.md, kline). */
export const CANDLE_INTERVAL_SEC = 3600;

/** Most candles one kline request returns. */
export const KLINE_LIMIT = 1440;
