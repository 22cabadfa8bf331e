import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { CANDLE_CSV_HEADER, CandleCsvError, CandleFileTooLargeError } from './csv-errors.ts';

/**
 * The largest candle file a series can hold: 2 GiB. Node's Buffer#indexOf, which finds a row's
 * fields, starts no further than 2^31 - 1 into the bytes. A 1-minute file of one market for
 * fifty years is about 1.5 GB.
 */
export const MAX_CANDLE_FILE_BYTES = 2 ** 31 - 1;
/**
 * One read at most this much: a single read's length is a 32-bit integer to Node, and a read in
 * the background for a command that stopped (a bad strategy file) ends between two reads.
 */
const READ_CHUNK_BYTES = 64 * 2 ** 20;

/**
 * A candle file's bytes in shared memory (which readFileSync's buffer cannot be), for the threads
 * that scan or replay them. A file larger than a series can hold is refused whole, never cut. A
 * pipe (`--data <(xzcat …)`), or a file whose size the file system does not say (procfs, some
 * network ones), is read to its end, and refused as soon as it passes that size.
 */
export function readCandleBytes(path: string, chunkBytes = READ_CHUNK_BYTES, limitBytes = MAX_CANDLE_FILE_BYTES): Buffer {
  const fd = openSync(path, 'r');
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile() || stat.size === 0) return readToEnd(fd, path, chunkBytes, limitBytes);
    const bytes = sharedFor(path, stat.size, limitBytes);
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

/** Shared memory for a file of `size` bytes; a file past the limit is refused before any of it is read. */
function sharedFor(path: string, size: number, limitBytes: number): Buffer {
  if (size > limitBytes) throw new CandleFileTooLargeError(path, size);
  return Buffer.from(new SharedArrayBuffer(size));
}

/** Bytes of unknown length, read into shared memory that grows as they come (never twice their size), up to `limitBytes`. */
function readToEnd(fd: number, path: string, chunkBytes: number, limitBytes: number): Buffer {
  const memory = new SharedArrayBuffer(0, { maxByteLength: limitBytes });
  let at = 0;
  for (;;) {
    const want = Math.min(chunkBytes, limitBytes - at);
    // One byte past the limit is enough to know the input is too large.
    if (want === 0) {
      if (readSync(fd, Buffer.alloc(1), 0, 1, null) > 0) throw new CandleFileTooLargeError(path, limitBytes + 1, true);
      break;
    }
    if (memory.byteLength < at + want) memory.grow(Math.min(limitBytes, Math.max(at + want, 2 * memory.byteLength)));
    const read = readSync(fd, new Uint8Array(memory, at, want), 0, want, null);
    if (read === 0) break;
    at += read;
  }
  return Buffer.from(memory, 0, at);
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
      const out = sharedFor(path, size, MAX_CANDLE_FILE_BYTES);
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
