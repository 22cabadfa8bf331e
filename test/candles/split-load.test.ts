import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { type CandleSeries, type LoadOptions, loadCandles } from '../../src/candles/index.ts';
import { startLoadingCandles } from '../../src/candles/split-load.ts';
import { CandleCsvError } from '../../src/candles/csv-errors.ts';

const HEADER = 'time,open,high,low,close,volume';
const FIXTURES = new URL('../fixtures/candles/', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'stacker-split-load-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
function file(text: string): string {
  const path = join(dir, `candles-${(files += 1)}.csv`);
  writeFileSync(path, text);
  return path;
}

/** Every row of a one-minute file, `rows` long, from 2025-05-20 (prices vary, so each row reads differently). */
function minutes(rows: number, options: { readonly from?: number; readonly eol?: string } = {}): string[] {
  const from = options.from ?? 1_747_699_200;
  return Array.from({ length: rows }, (_, i) => {
    const open = 100_000 + ((i * 37) % 1000) / 100;
    return `${from + i * 60},${open},${open + 5},${open - 5},${open + 1.25},${(i % 7) + 0.5}`;
  });
}

/** What a series holds, read through its interface (so two series compare whatever their columns' buffers). */
function everything(series: CandleSeries): unknown {
  return {
    market: series.market,
    length: series.length,
    intervalSec: series.intervalSec,
    gaps: series.gaps,
    offGrid: series.offGrid,
    rows: Array.from({ length: series.length }, (_, i) => [series.timeSec(i), series.openText(i), series.highText(i), series.lowText(i), series.closeText(i), series.volumeText(i), series.closeEstimate(i)]),
  };
}

/** The series or the problems, as loadCandles gives them, and as a split load (threshold 0: every file splits) gives them. */
async function bothWays(path: string, options: LoadOptions): Promise<{ whole: unknown; split: unknown; threads: number | null }> {
  const outcome = async (load: () => CandleSeries | Promise<CandleSeries>): Promise<unknown> => {
    try {
      return everything(await load());
    } catch (error) {
      return error instanceof CandleCsvError ? { source: error.source, problems: error.problems, stoppedEarly: error.stoppedEarly } : String(error);
    }
  };
  const load = startLoadingCandles(path, options, 0);
  const split = await outcome(() => load.finish());
  return { whole: await outcome(() => loadCandles(path, options)), split, threads: load.threads };
}

describe('a large candle file read in two threads', () => {
  it('gives the series one thread gives, row for row, its interval, gaps and rows off the grid too', async () => {
    const rows = minutes(5000);
    // A gap of 3 minutes in the first half, a row off the grid in the second, and the halves meeting on the usual step.
    rows.splice(1000, 3);
    rows[4000] = rows[4000]?.replace(/^\d+/, (time) => String(Number(time) + 20)) as string;
    const path = file(`${[HEADER, ...rows].join('\n')}\n`);
    const { whole, split, threads } = await bothWays(path, { market: 'BTC_USDT' });
    expect(threads).toBe(2);
    expect(split).toEqual(whole);
    expect(whole).toMatchObject({ gaps: [{ afterTimeSec: 1_747_699_200 + 999 * 60, missing: 3 }], offGrid: { count: 2 } });
  });

  it('cuts the same period (--from, --to) whichever half its ends fall in, and counts the steps of the rows cut away', async () => {
    const path = file(`${[HEADER, ...minutes(4000)].join('\n')}\n`);
    const at = (row: number): number => (1_747_699_200 + row * 60) * 1000;
    for (const [from, to] of [
      [at(10), at(1500)],
      [at(2500), at(3900)],
      [at(100), at(3000)],
      [at(5000), at(6000)],
    ] as const) {
      const { whole, split, threads } = await bothWays(path, { market: 'BTC_USDT', fromMs: from, toMs: to });
      expect(threads).toBe(2);
      expect(split).toEqual(whole);
    }
  });

  it('reads CR LF line ends, a byte-order mark, a last row without a line end and blank lines closing the file', async () => {
    for (const text of [
      `${[HEADER, ...minutes(3000)].join('\r\n')}\r\n`,
      `\uFEFF${[HEADER, ...minutes(3000)].join('\n')}`,
      `${[HEADER, ...minutes(3000)].join('\n')}\n\n  \n`,
      // The blank lines closing it are half of the file: the second thread reads only them.
      `${[HEADER, ...minutes(20)].join('\n')}${'\n'.repeat(2000)}`,
    ]) {
      const { whole, split } = await bothWays(file(text), { market: 'BTC_USDT' });
      expect(split).toEqual(whole);
      expect(whole).toHaveProperty('length');
    }
  });

  it('refuses a bad row in either half with every problem loadCandles names, line numbers and all', async () => {
    for (const bad of [200, 2800]) {
      const rows = minutes(3000);
      rows[bad] = rows[bad]?.replace(/,[^,]+$/, ',-1') as string;
      rows[bad + 10] = '';
      const { whole, split, threads } = await bothWays(file(`${[HEADER, ...rows].join('\n')}\n`), { market: 'BTC_USDT' });
      expect(threads).toBe(1);
      expect(split).toEqual(whole);
      expect((whole as { problems: Array<{ line: number }> }).problems.map((p) => p.line)).toEqual([bad + 2, bad + 12]);
    }
  });

  it('refuses halves that do not follow each other in time as one thread does: the row at the seam is out of order', async () => {
    const good = minutes(3000);
    const middle = good.findIndex((_, i) => [HEADER, ...good.slice(0, i)].join('\n').length >= [HEADER, ...good].join('\n').length / 2);
    // One row repeats the time of the row before it, at each row around the middle: one of them
    // is the first row of the second half, each half in order on its own.
    for (let k = middle - 3; k <= middle + 3; k += 1) {
      const rows = [...good];
      rows[k] = rows[k]?.replace(/^\d+/, String(1_747_699_200 + (k - 1) * 60)) as string;
      const { whole, split, threads } = await bothWays(file(`${[HEADER, ...rows].join('\n')}\n`), { market: 'BTC_USDT' });
      expect(threads).toBe(1);
      expect(split).toEqual(whole);
      expect(whole).toMatchObject({ problems: [{ line: k + 2, reason: `time ${1_747_699_200 + (k - 1) * 60} is line ${k + 1}'s time again` }] });
    }
  });

  it('says what loadCandles says of no rows, a wrong header, a missing file and a folder', async () => {
    const cases = [file(`${HEADER}\n${'\n'.repeat(100)}`), file(`time,open,close\n${minutes(100).join('\n')}\n`), join(dir, 'absent.csv')];
    mkdirSync(join(dir, 'folder.csv'));
    cases.push(join(dir, 'folder.csv'));
    for (const path of cases) {
      const { whole, split } = await bothWays(path, { market: 'BTC_USDT' });
      expect(split).toEqual(whole);
    }
  });

  it('keeps the series in shared memory when asked, for the threads of a sweep', async () => {
    const path = file(`${[HEADER, ...minutes(3000)].join('\n')}\n`);
    const load = startLoadingCandles(path, { market: 'BTC_USDT', shared: true }, 0);
    const series = await load.finish();
    expect(load.threads).toBe(2);
    expect(series.times.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(everything(series)).toEqual(everything(loadCandles(path, { market: 'BTC_USDT' })));
  });

  it('reads a committed file of real hourly candles (28 gaps) the same in two threads', async () => {
    const { whole, split, threads } = await bothWays(`${FIXTURES}btc-1h-2018-02-gap.csv`, { market: 'BTC_USDT' });
    expect(threads).toBe(2);
    expect(split).toEqual(whole);
  });

  it('reads a named pipe to its end, as --data <(xzcat candles.csv.xz) gives one, shared with threads or not', async () => {
    const text = `${[HEADER, ...minutes(3000)].join('\n')}\n`;
    const source = file(text);
    for (const shared of [false, true]) {
      const pipe = join(dir, `pipe-${shared}`);
      expect(spawnSync('mkfifo', [pipe]).status).toBe(0);
      const writer = spawn('sh', ['-c', 'cat "$1" > "$2"', 'sh', source, pipe], { stdio: 'ignore' });
      try {
        const load = startLoadingCandles(pipe, { market: 'BTC_USDT', shared }, 0);
        expect(everything(await load.finish())).toEqual(everything(loadCandles(source, { market: 'BTC_USDT' })));
      } finally {
        writer.kill();
      }
    }
  });

  it('does not hold the process open with its thread until the series is waited for: a bad strategy file found meanwhile ends the command at once', async () => {
    const ports = (): number => process.getActiveResourcesInfo().filter((name) => name === 'MessagePort' || name === 'Worker').length;
    const before = ports();
    const load = startLoadingCandles(file(`${[HEADER, ...minutes(3000)].join('\n')}\n`), { market: 'BTC_USDT' }, 0);
    expect(ports()).toBe(before);
    expect((await load.finish()).length).toBe(3000);
    expect(load.threads).toBe(2);
  });

  it('reads one thread only below the size where a second one pays', async () => {
    const path = file(`${[HEADER, ...minutes(100)].join('\n')}\n`);
    const load = startLoadingCandles(path, { market: 'BTC_USDT' });
    expect((await load.finish()).length).toBe(100);
    expect(load.threads).toBe(1);
  });

  it('agrees with loadCandles on any file of good, bad, repeated and blank rows, wherever the halves meet', async () => {
    const row = fc.oneof(
      { weight: 6, arbitrary: fc.tuple(fc.integer({ min: 1, max: 9 }), fc.integer({ min: 1, max: 4 })).map(([p, step]) => ({ step, text: (t: number) => `${t},${p},${p + 1},${p},${p},1` })) },
      { weight: 1, arbitrary: fc.constantFrom('', '1,2,3', 'x,1,1,1,1,1', '3600,0,1,0,1,1').map((text) => ({ step: 1, text: () => text })) },
      { weight: 1, arbitrary: fc.constant({ step: 0, text: (t: number) => `${t},1,1,1,1,1` }) },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(row, { minLength: 1, maxLength: 60 }), fc.constantFrom('\n', '\r\n'), fc.boolean(), async (rows, eol, finalEol) => {
        let time = 1_700_000_000;
        const lines = rows.map((r) => r.text((time += r.step * 60)));
        const path = file([HEADER, ...lines].join(eol) + (finalEol ? eol : ''));
        const { whole, split } = await bothWays(path, { market: 'X_Y' });
        expect(split).toEqual(whole);
      }),
      { numRuns: 40 },
    );
  });
});
