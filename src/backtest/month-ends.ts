import { firstAtLeast } from '../domain/sorted.ts';

/**
 * The candles that end a UTC month, among those at indexes [from, end) of ascending open times
 * (Unix seconds): the last candle opening before the next month starts. A period's value at its
 * end is taken at that candle's close, so every one of them has to be seen, not only the ones a
 * chart happens to sample. Found by binary search per month, so a run of 1-minute candles still
 * visits a dozen candles a year, not half a million.
 */
export function monthEndCandles(times: ArrayLike<number>, length: number, from: number, end: number): number[] {
  const out: number[] = [];
  let at = from;
  while (at < end) {
    const next = firstAtLeast(times, nextUtcMonthSec(times[at] as number), length);
    // The month's last candle is next − 1; one at or past `end` has not closed yet.
    if (next > end) break;
    out.push(next - 1);
    at = next;
  }
  return out;
}

/** The start of the UTC month after the one `timeSec` falls in, in Unix seconds. */
function nextUtcMonthSec(timeSec: number): number {
  const date = new Date(timeSec * 1000);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1) / 1000;
}
