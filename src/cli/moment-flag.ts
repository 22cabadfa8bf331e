import { InputError } from '../domain/errors.ts';

/**
 * A moment given on the command line (`--from`, `--to`): `2024-01-31`, `2024-01-31T09:00:00Z`
 * or Unix seconds. A date alone means the whole day (UTC): from its first moment for a start,
 * through its last for an end.
 */
export function momentFlag(text: string, flag: string, dateMeans: 'start' | 'end' = 'start'): number {
  // 20230101 is Unix seconds of August 1970, and what a date typed without dashes looks like.
  const compact = /^(\d{4})(\d{2})(\d{2})$/.exec(text);
  if (compact !== null && Number(compact[1]) >= 1970 && isCalendarDay(Number(compact[1]), Number(compact[2]), Number(compact[3]))) {
    throw InputError.one(flag, `${text} reads as Unix seconds in 1970: write the date with dashes, ${compact[1]}-${compact[2]}-${compact[3]}`);
  }
  if (/^\d{1,12}$/.test(text)) return Number(text) * 1000;
  if (/^\d{13}$/.test(text)) throw InputError.one(flag, `${text} has 13 digits: Unix milliseconds? give Unix seconds (${text.slice(0, 10)}), a date or a UTC time`);
  const date = /^(\d{4})-(\d{2})-(\d{2})(?:T\d{2}:\d{2}(?::\d{2})?(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2}))?$/.exec(text);
  // Date.parse rolls a day the month does not have (2023-02-30) into the next month: a date is
  // taken only when it names a real day.
  if (date !== null && isCalendarDay(Number(date[1]), Number(date[2]), Number(date[3]))) {
    const ms = Date.parse(/T/.test(text) ? text : `${text}T${dateMeans === 'end' ? '23:59:59.999' : '00:00:00'}Z`);
    if (Number.isFinite(ms)) return ms;
  }
  throw InputError.one(flag, `must be a date (2024-01-31), a UTC time (2024-01-31T09:00:00Z) or Unix seconds (got ${JSON.stringify(text)})`);
}

function isCalendarDay(year: number, month: number, day: number): boolean {
  const at = new Date(Date.UTC(year, month - 1, day));
  return at.getUTCFullYear() === year && at.getUTCMonth() === month - 1 && at.getUTCDate() === day;
}

