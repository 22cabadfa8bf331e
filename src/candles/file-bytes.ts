import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { CANDLE_CSV_HEADER, CandleCsvError, CandleFileTooLargeError } from './csv-errors.ts';

/**
 * The largest candle file a series can hold: a row's start is kept as a 32-bit offset (four bytes
 * a row instead of eight), which reaches 4 GiB. A 1-minute file of one market for fifty years is
 * under 2 GiB.
 */
export const MAX_CANDLE_FILE_BYTES = 2 ** 32 - 1;
/**
 * One read at most this much: a single read's length is a 32-bit integer to Node, and a read in
 * the background for a command that stopped (a bad strategy file) ends between two reads.
 */
const READ_CHUNK_BYTES = 64 * 2 ** 20;

/**
 * A candle file's bytes in shared memory (which readFileSync's buffer cannot be), for the threads
 * that scan or replay them. A pipe (`--data <(xzcat …)`), which has no size, is read to its end
 * first. A file larger than a series can hold is refused whole, never cut.
 */
export function readCandleBytes(path: string, chunkBytes = READ_CHUNK_BYTES): Buffer {
  const fd = openSync(path, 'r');
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) {
      const read = readFileSync(fd);
      if (read.length > MAX_CANDLE_FILE_BYTES) throw new CandleFileTooLargeError(path, read.length);
      const bytes = Buffer.from(new SharedArrayBuffer(read.length));
      read.copy(bytes);
      return bytes;
    }
    if (stat.size > MAX_CANDLE_FILE_BYTES) throw new CandleFileTooLargeError(path, stat.size);
    const bytes = Buffer.from(new SharedArrayBuffer(stat.size));
    let at = 0;
    while (at < stat.size) {
      const read = readSync(fd, bytes, at, Math.min(chunkBytes, stat.size - at), at);
      if (read === 0) break;
      at += read;
    }
    // A file cut while it was read ends where the read did: its last row is checked as any other.
    return at === stat.size ? bytes : bytes.subarray(0, at);
  } finally {
    closeSync(fd);
  }
}

/** A regular file being read in the background (readCandleBytesLater). */
export interface BackgroundRead {
  /** The bytes, or the error reading them gave (once stopped: an error nobody needs to hear). */
  readonly bytes: Promise<Buffer>;
  /** No more reads: what is read so far is dropped, and the file closed at the end of the read under way. */
  stop(): void;
}

/**
 * readCandleBytes of a regular file, in Node's thread pool while this thread goes on (a backtest
 * loads its modules and strategies meanwhile), one READ_CHUNK_BYTES read at a time so that it can
 * stop: a read nobody waits for any more must not hold the process open for the rest of a large file.
 */
export function readCandleBytesLater(path: string, chunkBytes = READ_CHUNK_BYTES): BackgroundRead {
  let stopped = false;
  const bytes = (async (): Promise<Buffer> => {
    const file = await open(path, 'r');
    try {
      const { size } = await file.stat();
      if (size > MAX_CANDLE_FILE_BYTES) throw new CandleFileTooLargeError(path, size);
      const out = Buffer.from(new SharedArrayBuffer(size));
      let at = 0;
      while (at < size) {
        if (stopped) throw new Error(`reading ${path} was stopped`);
        const { bytesRead } = await file.read(out, at, Math.min(chunkBytes, size - at), at);
        if (bytesRead === 0) break;
        at += bytesRead;
      }
      return at === size ? out : out.subarray(0, at);
    } finally {
      await file.close();
    }
  })();
  // Heard or not: a read stopped because nobody waits for it must not end the process as an unhandled rejection.
  bytes.catch(() => {});
  return {
    bytes,
    stop: () => {
      stopped = true;
    },
  };
}

/** Where the rows start: after the header line, which must be the candle header (a byte-order mark and CR LF allowed). */
export function bodyStart(bytes: Buffer, source: string): number {
  const n = bytes.length;
  const firstNewline = bytes.indexOf(10);
  const header = bytes.toString('utf8', 0, firstNewline === -1 ? n : firstNewline).replace(/\r$/, '').replace(/^\uFEFF/, '');
  if (header !== CANDLE_CSV_HEADER) {
    throw new CandleCsvError(source, [{ line: 1, reason: `header must be "${CANDLE_CSV_HEADER}", got ${JSON.stringify(header.slice(0, 80))}` }]);
  }
  return firstNewline === -1 ? n : firstNewline + 1;
}
