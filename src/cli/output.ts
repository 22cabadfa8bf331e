import { formatDecimal, isDecimal } from '../domain/money.ts';

/**
 * How commands print. stdout carries the result only (a table, or with `--json` one JSON
 * document); everything else (progress, warnings, errors) goes to stderr.
 */
export interface Io {
  out(text: string): void;
  err(text: string): void;
}

export const processIo: Io = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
};

export type Align = 'left' | 'right';

export interface Column {
  readonly header: string;
  readonly align?: Align;
}

/**
 * Aligned columns, two spaces apart, header first. Cells are printed exactly as given (a
 * decimal cell is formatDecimal's text): alignment pads with spaces and never rewrites digits.
 */
export function table(columns: readonly Column[], rows: readonly (readonly string[])[]): string {
  const widths = columns.map((column, i) => Math.max(column.header.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    columns
      .map((column, i) => {
        const cell = cells[i] ?? '';
        const width = widths[i] ?? 0;
        return column.align === 'right' ? cell.padStart(width) : cell.padEnd(width);
      })
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.header)), ...rows.map(line)].join('\n') + '\n';
}

/** Label/value lines for a single record. */
export function fields(pairs: readonly (readonly [string, string])[]): string {
  const width = Math.max(0, ...pairs.map(([label]) => label.length));
  return pairs.map(([label, value]) => `${`${label}:`.padEnd(width + 1)}  ${value}`.trimEnd()).join('\n') + '\n';
}

/**
 * A value made JSON-safe the way we promise: every Decimal as its formatDecimal string (never a
 * number), Maps as objects, undefined fields left out.
 */
export function toPlain(value: unknown): unknown {
  if (isDecimal(value)) return formatDecimal(value);
  if (value instanceof Map) {
    const entries: Record<string, unknown> = {};
    for (const [key, item] of value) entries[String(key)] = toPlain(item);
    return entries;
  }
  if (Array.isArray(value)) return value.map(toPlain);
  if (value !== null && typeof value === 'object') {
    const entries: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      if (item !== undefined) entries[key] = toPlain(item);
    }
    return entries;
  }
  return value;
}

export function json(value: unknown): string {
  return `${JSON.stringify(toPlain(value), null, 2)}\n`;
}

/** Unix seconds → `2024-05-01 12:00:00Z` (UTC, to the second). */
export function utcTime(sec: number): string {
  if (!Number.isFinite(sec)) return '';
  return new Date(Math.floor(sec * 1000)).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

export function yesNo(value: boolean): string {
  return value ? 'yes' : 'no';
}
