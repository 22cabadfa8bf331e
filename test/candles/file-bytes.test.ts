import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_CANDLE_FILE_BYTES, readCandleBytes, readCandleBytesLater } from '../../src/candles/file-bytes.ts';
import { CandleFileTooLargeError } from '../../src/candles/csv-errors.ts';
import { loadCandles } from '../../src/candles/index.ts';
import { startLoadingCandles } from '../../src/candles/split-load.ts';
import { thrownBy } from '../support/thrown.ts';

const dir = mkdtempSync(join(tmpdir(), 'stacker-file-bytes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const FIXTURE = new URL('../fixtures/candles/btc-1m-2025-05-20.csv', import.meta.url).pathname;

describe("a candle file's bytes", () => {
  it('are the whole file, in shared memory, however many reads it takes', () => {
    const whole = readFileSync(FIXTURE);
    for (const chunk of [1, 1000, 65_536, 2 ** 30]) {
      const bytes = readCandleBytes(FIXTURE, chunk);
      expect(bytes.buffer).toBeInstanceOf(SharedArrayBuffer);
      expect(bytes.equals(whole)).toBe(true);
    }
  });

  it('refuse a file larger than a series can hold, whole and before reading any of it, saying what to do', async () => {
    // Sparse: gigabytes that take no disk. Cut to its size modulo 2^32, 4 GB used to be read as a much shorter file.
    const huge = join(dir, 'huge.csv');
    writeFileSync(huge, 'time,open,high,low,close,volume\n1747699200,1,2,1,1,1\n');
    truncateSync(huge, 2 ** 32 + 87_107_560);
    const error = thrownBy(CandleFileTooLargeError, () => readCandleBytes(huge));
    expect(error.message).toBe(`${huge} is 4.08 GiB, more than a candle file can be (2 GiB): split it by period (a year or two a file), or keep only the columns time,open,high,low,close,volume`);
    // Past 2 GiB Node's indexOf, which finds a row's fields, no longer starts where it is asked: 2.5 GB read whole gave wrong prices.
    truncateSync(huge, MAX_CANDLE_FILE_BYTES + 1);
    expect(thrownBy(CandleFileTooLargeError, () => readCandleBytes(huge)).message).toMatch(/ is 2\.00 GiB, more than a candle file can be \(2 GiB\)/);
    expect(() => loadCandles(huge, { market: 'BTC_USDT' })).toThrow(CandleFileTooLargeError);
    await expect(startLoadingCandles(huge, { market: 'BTC_USDT' }).finish()).rejects.toThrow(CandleFileTooLargeError);
    await expect(readCandleBytesLater(huge).bytes).rejects.toThrow(CandleFileTooLargeError);
  });

  it('are read to their end from a pipe or a file whose size the file system does not say, and refused as soon as they pass the limit', async () => {
    const whole = readFileSync(FIXTURE);
    const pipe = join(dir, 'pipe');
    expect(spawnSync('mkfifo', [pipe]).status).toBe(0);
    for (const [limit, expected] of [[MAX_CANDLE_FILE_BYTES, 'whole'], [whole.length, 'whole'], [whole.length - 1, 'refused']] as const) {
      const writer = spawn('sh', ['-c', 'cat "$1" > "$2"', 'sh', FIXTURE, pipe], { stdio: 'ignore' });
      try {
        const outcome = (() => {
          try {
            return readCandleBytes(pipe, 1000, limit).equals(whole) ? 'whole' : 'different';
          } catch (error) {
            return error instanceof CandleFileTooLargeError && error.rule.startsWith('is over 2 GiB') ? 'refused' : String(error);
          }
        })();
        expect(outcome).toBe(expected);
      } finally {
        writer.kill();
      }
    }
    // procfs says 0 bytes of a file that has some.
    if (existsSync('/proc/self/status')) expect(readCandleBytes('/proc/self/status').toString('latin1')).toMatch(/^Name:/);
  });

  it('are the same read in the background, however many reads it takes', async () => {
    const whole = readFileSync(FIXTURE);
    for (const chunk of [1000, 2 ** 26]) {
      const bytes = await readCandleBytesLater(FIXTURE, chunk).bytes;
      expect(bytes.buffer).toBeInstanceOf(SharedArrayBuffer);
      expect(bytes.equals(whole)).toBe(true);
    }
  });

  it('stop being read in the background when told, between two reads, and say so only to whoever waits', async () => {
    const read = readCandleBytesLater(FIXTURE, 64);
    read.stop();
    await expect(read.bytes).rejects.toThrow(`reading ${FIXTURE} was stopped`);
    // Stopped and never waited for: no unhandled rejection ends the process (vitest would fail the run).
    readCandleBytesLater(FIXTURE, 64).stop();
  });
});
