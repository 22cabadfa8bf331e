import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Decimal } from '../../src/domain/money.ts';

/**
 * What the report tests check figures against: the committed 7-year hourly file, read from its
 * text alone (never through stacker's candle code), and the report's own rounding rule.
 */
export const DATA = resolve(import.meta.dirname, '../../data/BTCUSDT_1h_binance_2017-08-17_2024-04-21.csv');

export interface CsvCandle {
  timeMs: number;
  open: Decimal;
  close: Decimal;
}

/** The committed candles opening in [fromMs, toMs]. */
export function candlesBetween(fromMs: number, toMs: number): CsvCandle[] {
  return readFileSync(DATA, 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => line.split(','))
    .map((r) => ({ timeMs: Number(r[0]) * 1000, open: new Decimal(r[1] as string), close: new Decimal(r[4] as string) }))
    .filter((c) => c.timeMs >= fromMs && c.timeMs <= toMs);
}

/** As the report writes a figure: half-even to `places` decimals, plain, never "-0". */
export function written(x: Decimal, places: number): string {
  const rounded = x.toDecimalPlaces(places, Decimal.ROUND_HALF_EVEN);
  return rounded.isZero() ? '0' : rounded.toFixed();
}
