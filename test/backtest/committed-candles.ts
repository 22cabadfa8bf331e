import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Decimal } from '../../src/domain/money.ts';

/**
 * What the report tests check figures against: the committed 7-year hourly file, read from its
 * text alone (never through stacker's candle code), the report's own rounding rule, and the
 * report itself, from the CLI over that file (reportOver).
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

const CLI = resolve(import.meta.dirname, '../../src/cli.ts');

/**
 * The JSON report of `stacker backtest` over the committed file, run as a user runs it (the
 * real CLI in a child process): one instance file with `env` as its text, and `flags` after
 * `--data` and `--market BTC_USDT`.
 */
export async function reportOver(env: string, flags: readonly string[]): Promise<unknown> {
  const dir = mkdtempSync(join(tmpdir(), 'stacker-report-'));
  try {
    const strategy = join(dir, 'instance.env');
    writeFileSync(strategy, env);
    const { stdout } = await promisify(execFile)(process.execPath, [CLI, 'backtest', '--json', '--data', DATA, '--market', 'BTC_USDT', '--strategy', strategy, ...flags]);
    return JSON.parse(stdout);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
