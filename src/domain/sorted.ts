/**
 * The first index among the first `length` values of an ascending list whose value is at least
 * `value`; `length` when there is none. Binary search: candle times and retired slot times are
 * looked up this way, often, in lists of a million.
 */
export function firstAtLeast(sorted: ArrayLike<number>, value: number, length = sorted.length): number {
  let lo = 0;
  let hi = length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as number) >= value) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
