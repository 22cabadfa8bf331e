import { describe, expect, it } from 'vitest';
import { httpDateMs, retryAfterMs } from '../../src/domain/retry-after.ts';

// Retry-After as RFC 9110 §10.2.3 defines it: delay-seconds or an HTTP-date (§5.6.7).
const NOW = Date.UTC(2026, 0, 2, 9, 0, 0);

describe('Retry-After', () => {
  it('in seconds, as before: up to six digits, blanks around them allowed', () => {
    expect(retryAfterMs('12', NOW)).toBe(12_000);
    expect(retryAfterMs(' 0 ', NOW)).toBe(0);
    expect(retryAfterMs('999999', NOW)).toBe(999_999_000);
    expect(retryAfterMs('1000000', NOW)).toBeNull();
  });

  it('as an HTTP-date: the time until then, counted from the given now', () => {
    expect(retryAfterMs('Fri, 02 Jan 2026 09:00:30 GMT', NOW)).toBe(30_000);
    expect(retryAfterMs('Fri, 02 Jan 2026 10:00:00 GMT', NOW)).toBe(3_600_000);
  });

  it('a date already past means now', () => {
    expect(retryAfterMs('Fri, 02 Jan 2026 08:59:59 GMT', NOW)).toBe(0);
    expect(retryAfterMs('Sun, 06 Nov 1994 08:49:37 GMT', NOW)).toBe(0);
  });

  it('a date far ahead asks no more than the longest delay-seconds would', () => {
    expect(retryAfterMs('Fri, 31 Dec 9999 23:59:59 GMT', NOW)).toBe(999_999_000);
  });

  it('anything else is no answer: garbage, negative or fractional seconds, a date in another form or impossible', () => {
    for (const text of [undefined, '', 'soon', '-5', '1.5', '12s', '2026-01-02T09:00:30Z', 'Fri, 02 Jan 2026 09:00:30 UTC', 'Fri, 31 Feb 2026 09:00:30 GMT', 'Fri, 02 Jan 2026 24:00:00 GMT', 'tomorrow 1']) {
      expect(retryAfterMs(text, NOW), String(text)).toBeNull();
    }
  });
});

describe('HTTP-date', () => {
  const EXAMPLE = Date.UTC(1994, 10, 6, 8, 49, 37);

  it('reads the three forms a recipient must accept, as the same moment', () => {
    expect(httpDateMs('Sun, 06 Nov 1994 08:49:37 GMT')).toBe(EXAMPLE);
    expect(httpDateMs('Sunday, 06-Nov-94 08:49:37 GMT')).toBe(EXAMPLE);
    expect(httpDateMs('Sun Nov  6 08:49:37 1994')).toBe(EXAMPLE);
  });

  it("reads Date's own toUTCString(), which is IMF-fixdate", () => {
    expect(httpDateMs(new Date(NOW).toUTCString())).toBe(NOW);
  });

  it('takes a two-digit year more than 50 years ahead as the past century (rfc850-date)', () => {
    const nextYear = (new Date().getUTCFullYear() + 1) % 100;
    const twoDigits = String(nextYear).padStart(2, '0');
    expect(new Date(httpDateMs(`Thursday, 01-Jan-${twoDigits} 00:00:00 GMT`) ?? 0).getUTCFullYear()).toBe(new Date().getUTCFullYear() + 1);
    expect(new Date(httpDateMs('Thursday, 01-Jan-99 00:00:00 GMT') ?? 0).getUTCFullYear()).toBe(1999);
  });
});
