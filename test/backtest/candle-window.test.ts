import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runBacktest } from '../../src/backtest/driver.ts';
import { parseCandles } from '../../src/candles/index.ts';
import { loadStrategyFiles } from '../../src/config/daemon-config.ts';
import { Decimal, formatDecimal } from '../../src/domain/money.ts';
import { defineStrategy, param } from '../../strategies/sdk.ts';

// A strategy's candle window holds each closed hour once, whole: over a file of minute or
// five-minute candles exactly what it holds over the same market's hourly file. Each slot
// used to leave the hour before it behind twice, cut where the slot had read it and again from
// the rest of the hour, which skewed any average over the window (dca's DIP_PCT).
const MINUTES = resolve(import.meta.dirname, '../fixtures/candles/btc-1m-2025-05-20.csv');
const HOUR = 3600;

/** The rows of a candle file: [time, open, high, low, close, volume] as written. */
function rows(csv: string): string[][] {
  return csv.trim().split('\n').slice(1).map((line) => line.split(','));
}

/** The same data in candles of `stepSec`, by the file's own rule (first open, last close, the extremes), computed here from the text. */
function coarser(csv: string, stepSec: number): string {
  const groups = new Map<number, string[][]>();
  for (const row of rows(csv)) {
    const start = Math.floor(Number(row[0]) / stepSec) * stepSec;
    groups.set(start, [...(groups.get(start) ?? []), row]);
  }
  const lines = ['time,open,high,low,close,volume'];
  for (const [start, group] of groups) {
    const high = Decimal.max(...group.map((r) => new Decimal(r[2] as string)));
    const low = Decimal.min(...group.map((r) => new Decimal(r[3] as string)));
    const volume = group.reduce((sum, r) => sum.add(r[5] as string), new Decimal(0));
    lines.push([start, group[0]?.[1], formatDecimal(high), formatDecimal(low), group.at(-1)?.[4], formatDecimal(volume)].join(','));
  }
  return `${lines.join('\n')}\n`;
}

const seen = new Map<number, string[]>();
/** Notes the window each slot is handed, hour by hour with its prices. */
const probe = defineStrategy({
  name: 'window-probe',
  describe: 'Notes its candle window.',
  params: { MARKET: param.market({ description: 'Where.', example: 'BTC_USDT' }) },
  reads: () => ['candles'],
  candleWindows: (params) => [{ market: params.MARKET, lookbackSec: 6 * HOUR }],
  async decide(view, params) {
    seen.set(
      view.slotTimeMs,
      view.candles(params.MARKET).map((c) => `${new Date(c.timeSec * 1000).toISOString().slice(11, 16)} ${formatDecimal(c.open)} ${formatDecimal(c.high)} ${formatDecimal(c.low)} ${formatDecimal(c.close)}`),
    );
    return [];
  },
});

const dir = mkdtempSync(join(tmpdir(), 'stacker-window-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The windows of an hourly schedule at `minute` past each hour, over `csv`. */
async function windows(csv: string, minute: number): Promise<Map<number, string[]>> {
  const file = join(dir, `probe-${minute}.env`);
  writeFileSync(file, `STRATEGY=window-probe\nSCHEDULE="${minute} * * * *"\nMARKET=BTC_USDT\n`);
  const instances = await loadStrategyFiles([file], { strategies: new Map([[probe.name, probe as never]]) });
  seen.clear();
  const run = await runBacktest({ candles: parseCandles(csv, { market: 'BTC_USDT' }), market: 'BTC_USDT', dataFile: 'btc.csv', instances, wallet: new Map([['USDT', new Decimal('1000')]]), slippagePct: new Decimal(0), flex: null });
  expect(run.strategyFailures).toEqual([]);
  return new Map(seen);
}

describe("a strategy's candle window in a backtest", () => {
  const minutes = readFileSync(MINUTES, 'utf8');
  const hourly = coarser(minutes, HOUR);

  it.each([0, 30, 59])('over minute and five-minute candles is the window the hourly file gives, each hour once and whole (slots at minute %i)', async (minute) => {
    const byHour = await windows(hourly, minute);
    // A day of data: a slot every hour (one after the hourly file's last open does not run), each
    // seeing the hours closed before it, at most six.
    expect(byHour.size).toBe(minute === 0 ? 24 : 23);
    const firstSec = Number(rows(minutes)[0]?.[0]);
    for (const [slotMs, window] of byHour) expect(window).toHaveLength(Math.min(6, Math.floor((slotMs / 1000 - firstSec) / HOUR)));
    for (const finer of [minutes, coarser(minutes, 300)]) {
      const got = await windows(finer, minute);
      for (const [slotMs, window] of byHour) expect([new Date(slotMs).toISOString(), got.get(slotMs)]).toEqual([new Date(slotMs).toISOString(), window]);
    }
  });
});
