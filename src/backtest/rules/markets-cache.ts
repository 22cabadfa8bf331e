import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../../domain/errors.ts';
import type { MarketRules } from '../../domain/market.ts';
import { parseRulesList, rulesToJson } from './rules-file.ts';

/**
 * The last markets list fetched from an exchange, kept in the data dir with the time it was
 * fetched: what a backtest falls back to when the exchange cannot be reached. One file per
 * exchange (named by its host and port), so the sandbox's list never stands in for the real one.
 * The file is `{ fetchedAt, baseUrl, markets }`, `markets` in the shape `stacker markets --json`
 * prints, so it also works as a `--rules` file.
 */

export interface CachedMarkets {
  readonly path: string;
  readonly baseUrl: string;
  readonly fetchedAtMs: number;
  readonly markets: readonly MarketRules[];
}

export function marketsCachePath(dataDir: string, baseUrl: string): string {
  const url = new URL(baseUrl);
  const slug = `${url.hostname}${url.port === '' ? '' : `_${url.port}`}`.replace(/[^A-Za-z0-9.-]+/g, '_');
  return join(dataDir, `markets-cache.${slug}.json`);
}

/** Write the list (replacing the previous one whole: a reader never sees half a file). Returns the path. */
export function writeMarketsCache(dataDir: string, baseUrl: string, fetchedAtMs: number, markets: readonly MarketRules[]): string {
  const path = marketsCachePath(dataDir, baseUrl);
  mkdirSync(dataDir, { recursive: true });
  const body = { fetchedAt: new Date(fetchedAtMs).toISOString(), baseUrl, markets: markets.map(rulesToJson) };
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(body, null, 2)}\n`);
  renameSync(temporary, path);
  return path;
}

/** The cached list of this exchange; null when there is none. A damaged cache is an InputError naming the file. */
export function readMarketsCache(dataDir: string, baseUrl: string): CachedMarkets | null {
  const path = marketsCachePath(dataDir, baseUrl);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new InputError([{ source: path, field: 'markets cache', rule: `cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})` }]);
  }
  const damaged = (rule: string): InputError => new InputError([{ source: path, field: 'markets cache', rule: `${rule}; delete the file and fetch again` }]);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw damaged('is not valid JSON');
  }
  const { fetchedAt, baseUrl: cachedUrl } = (value ?? {}) as { fetchedAt?: unknown; baseUrl?: unknown };
  const fetchedAtMs = typeof fetchedAt === 'string' ? Date.parse(fetchedAt) : Number.NaN;
  if (!Number.isFinite(fetchedAtMs)) throw damaged('has no fetchedAt time');
  if (cachedUrl !== baseUrl) return null;
  return { path, baseUrl, fetchedAtMs, markets: parseRulesList(value, path) };
}
