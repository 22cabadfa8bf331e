import { CANDLE_INTERVAL_SEC, type Candle } from '../domain/candle.ts';
import type { Exchange } from '../exchange/port.ts';
import { readOnly } from './read-only.ts';

/** What a strategy needs of a market's history: the hourly candles of the last `lookbackSec` before the slot. */
export interface CandleWindow {
  readonly market: string;
  readonly lookbackSec: number;
}

/**
 * Hourly candles the strategies asked for, kept between slots: a slot fetches only the hours
 * that closed since the last one (an hourly dip check over 30 days is one candle per slot,
 * not 720), and hours older than the longest window asked are dropped.
 */
export class CandleBook {
  readonly #exchange: Exchange;
  readonly #markets = new Map<string, { candles: Candle[]; fromSec: number; toSec: number }>();

  constructor(exchange: Exchange) {
    this.#exchange = exchange;
  }

  /** The closed hourly candles opening in [slot hour − lookback, slot hour), oldest first. */
  async window(window: CandleWindow, slotTimeMs: number): Promise<readonly Candle[]> {
    const toSec = Math.floor(slotTimeMs / 1000 / CANDLE_INTERVAL_SEC) * CANDLE_INTERVAL_SEC;
    const fromSec = toSec - Math.ceil(window.lookbackSec / CANDLE_INTERVAL_SEC) * CANDLE_INTERVAL_SEC;
    let held = this.#markets.get(window.market);
    if (held === undefined || fromSec < held.fromSec || toSec < held.toSec) {
      // First use, a longer window, or time going back (a test, a catch-up): read it whole.
      const candles = (await this.#exchange.candles({ market: window.market, fromSec, toSec })).map(kept);
      held = { candles, fromSec, toSec: heldThrough(candles, fromSec) };
      this.#markets.set(window.market, held);
    } else if (toSec > held.toSec) {
      const fresh = (await this.#exchange.candles({ market: window.market, fromSec: held.toSec, toSec })).map(kept);
      held.candles.push(...fresh);
      held.toSec = heldThrough(fresh, held.toSec);
      const keep = held.candles.findIndex((c) => c.timeSec >= fromSec);
      held.candles.splice(0, keep === -1 ? held.candles.length : keep);
      held.fromSec = fromSec;
    }
    return held.candles.filter((c) => c.timeSec >= fromSec && c.timeSec < toSec);
  }
}

/** A candle as the book keeps it: every slot after this one hands it to strategies again, read-only. */
function kept(candle: Candle): Candle {
  return Object.freeze(candle);
}

/**
 * Where the next read starts: the hour after the last candle read, the first that can open after
 * it. An exchange answers closed candles only, and one that is still open when asked (a daily
 * candle at 09:00) must be read again once it has closed, so the book never counts a range as
 * held beyond what it was given. On the hour, not a second after the last candle: the exchange's
 * kline is asked for a start it documents (docs/exchange-api.md), and a backtest's fine data was
 * grouped into a second, partial copy of that candle's hour from the second after it.
 */
function heldThrough(candles: readonly Candle[], askedFromSec: number): number {
  const last = candles[candles.length - 1];
  return last === undefined ? askedFromSec : last.timeSec + CANDLE_INTERVAL_SEC;
}
