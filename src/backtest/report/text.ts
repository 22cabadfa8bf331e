/**
 * Text helpers shared by the terminal summary and the HTML page. Times are always UTC: a
 * report is shared between people in different zones and must read the same for all of them.
 */

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Safe in element text and in quoted attribute values alike. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => HTML_ESCAPES[ch] ?? ch);
}

/** `2024-05-01 12:00Z`, or with seconds when the time has any. */
export function utcMinute(ms: number): string {
  if (!Number.isFinite(ms)) return '';
  const iso = new Date(ms).toISOString();
  const seconds = iso.slice(17, 19);
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)}${seconds === '00' ? '' : `:${seconds}`}Z`;
}

export function utcDate(ms: number): string {
  return Number.isFinite(ms) ? new Date(ms).toISOString().slice(0, 10) : '';
}

/** A figure that may be missing (no buys, zero initial value) reads as a dash, never "null". */
export function orDash(value: string | null): string {
  return value ?? '—';
}

/** Counts by key as `KEY n, KEY n`, or "none". */
export function countsText(counts: Record<string, number>): string {
  const entries = Object.entries(counts);
  return entries.length === 0 ? 'none' : entries.map(([key, n]) => `${key} ${n}`).join(', ');
}

/** Signed text for a change: "+12.5" / "-3" / "0". */
export function signed(value: string): string {
  return value.startsWith('-') || value === '0' ? value : `+${value}`;
}

/**
 * Text from outside (instance names come from file names) made safe for a terminal: control
 * characters, escape sequences among them, are shown as "?" instead of being obeyed.
 */
export function terminalSafe(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
}

/** `1 gap`, `7 gaps`: a count with its noun, in the singular for one. */
export function counted(count: number, noun: string, plural = `${noun}s`): string {
  return `${count} ${count === 1 ? noun : plural}`;
}

/** A disabled instance, as the headline and a comparison say it: which, when, how many slots it missed, why. */
export function failureNote(failure: { readonly instance: string; readonly atMs: number; readonly slotsNotRun: number; readonly reason: string }): string {
  return `${failure.instance} on ${utcMinute(failure.atMs)}, disabled (${failure.slotsNotRun} later slots not run): ${failure.reason}`;
}

/** When the money ran out, as the headline and the refusals section say it: the first and last refused buy, and the buys that still filled between. */
export function ranOutNote(ranOut: { readonly atMs: number; readonly lastAtMs: number; readonly refusedFromThen: number; readonly filledAfter: number }): string {
  const last = ranOut.refusedFromThen > 1 ? `, the last on ${utcMinute(ranOut.lastAtMs)}` : '';
  const after = ranOut.filledAfter > 0 ? `; ${counted(ranOut.filledAfter, 'buy')} still filled after it, when the balance covered one again` : '';
  return `on ${utcMinute(ranOut.atMs)}: the buys of ${counted(ranOut.refusedFromThen, 'slot')} refused for insufficient funds from then on${last}${after}`;
}

/** `, 3 rows off the interval's grid (the first at …)`: the file's rows are not all one interval apart; '' when they are. */
export function offGridText(offGrid: { readonly count: number; readonly firstTimeSec: number } | null): string {
  return offGrid === null ? '' : `; ${counted(offGrid.count, 'row')} off the interval's grid (the first at ${utcMinute(offGrid.firstTimeSec * 1000)}): not every candle spans the interval`;
}
