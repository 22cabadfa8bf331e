/**
 * A server's `Retry-After` (RFC 9110 §10.2.3): either delay-seconds (`120`) or an HTTP-date
 * (`Wed, 21 Oct 2015 07:28:00 GMT`). Both mean the same thing, and a proxy or a rate limiter in
 * front of a server may send either, so both are read here, for the two places answers with it
 * arrive: a notification receiver's (notify/http-post.ts) and the exchange's gateway's
 * (api/requester.ts).
 *
 * Only the three HTTP-date forms RFC 9110 §5.6.7 names are accepted, read strictly: Date.parse
 * would take "3 pm" or "tomorrow 1" for a date, and a wait made up out of garbage is worse
 * than none (the caller's own backoff then decides, as for a header that is missing).
 */

/** Six digits of seconds (11.5 days) is the most either form may ask; each caller caps it far lower anyway. */
const MAX_SECONDS = 999_999;
const DELAY_SECONDS = /^\d{1,6}$/;

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const MONTH = `(${MONTHS.join('|')})`;
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';
/** `Sun, 06 Nov 1994 08:49:37 GMT`: what senders must send. */
const IMF_FIXDATE = new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`);
/** `Sunday, 06-Nov-94 08:49:37 GMT`: obsolete, still to be read. */
const RFC850_DATE = new RegExp(`^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`);
/** `Sun Nov  6 08:49:37 1994`: C's asctime(), obsolete, still to be read. */
const ASCTIME_DATE = new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ${MONTH} ([ \\d]\\d) ${TIME} (\\d{4})$`);

/**
 * How long the server asked us to wait, in ms; null when the header is absent or neither form.
 * A date is counted from `nowMs`, the caller's best idea of the server's clock (its own `Date`
 * header when it sent one); a date already past means now (0).
 */
export function retryAfterMs(header: string | undefined, nowMs: number): number | null {
  if (header === undefined) return null;
  const text = header.trim();
  if (DELAY_SECONDS.test(text)) return Number(text) * 1000;
  const atMs = httpDateMs(text);
  if (atMs === null) return null;
  return Math.min(Math.max(0, atMs - nowMs), MAX_SECONDS * 1000);
}

/** An HTTP-date in any of its three forms, as Unix ms; null for anything else (an impossible day included). */
export function httpDateMs(text: string): number | null {
  let match = IMF_FIXDATE.exec(text);
  if (match !== null) return utc(Number(match[3]), match[2] as string, Number(match[1]), match.slice(4, 7));
  match = RFC850_DATE.exec(text);
  if (match !== null) return utc(fullYear(Number(match[3])), match[2] as string, Number(match[1]), match.slice(4, 7));
  match = ASCTIME_DATE.exec(text);
  if (match !== null) return utc(Number(match[6]), match[1] as string, Number((match[2] as string).trim()), match.slice(3, 6));
  return null;
}

/**
 * RFC 9110 §5.6.7: a two-digit year more than 50 years in the future is the most recent past
 * year with those digits.
 */
function fullYear(twoDigits: number): number {
  const thisYear = new Date().getUTCFullYear();
  const year = Math.floor(thisYear / 100) * 100 + twoDigits;
  return year > thisYear + 50 ? year - 100 : year;
}

function utc(year: number, monthName: string, day: number, time: readonly (string | undefined)[]): number | null {
  const month = MONTHS.indexOf(monthName);
  const [hours, minutes, seconds] = time.map(Number) as [number, number, number];
  if (hours > 23 || minutes > 59 || seconds > 59) return null;
  const ms = Date.UTC(year, month, day, hours, minutes, seconds);
  // Date.UTC rolls 31 Feb over into March: such a day is not a date.
  return new Date(ms).getUTCDate() === day ? ms : null;
}
