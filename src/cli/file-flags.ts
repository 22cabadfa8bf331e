import { type Stats, accessSync, closeSync, constants, fchmodSync, fstatSync, ftruncateSync, openSync, readSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { InputError, OutputFileError } from '../domain/errors.ts';

/*
 * Flags that name a file, checked with the other flags before any work: a typo in a path is bad
 * input (exit 2) found at once, not a failure after a long backtest whose result is then lost,
 * nor a raw EISDIR. What the checks cannot foresee (a disk that fills meanwhile) fails the write
 * itself, after the work: an I/O failure (OutputFileError, exit 1), not bad input.
 */

/** A file the user named for stacker to write (`backtest --report`, `backtest --journal`, `report --html`). */
export function outputFile(path: string, flag: string): string {
  if (path.trim() === '') throw InputError.one(flag, 'must be the path of a file to write');
  const target = statOf(path);
  if (target?.isDirectory() === true) throw InputError.one(flag, `is a folder: give the path of a file to write (got ${JSON.stringify(path)})`);
  const folder = dirname(path);
  const parent = statOf(folder);
  if (parent === null) throw InputError.one(flag, `folder not found: ${folder} (create it first, or give a path in an existing folder)`);
  if (!parent.isDirectory()) throw InputError.one(flag, `is not in a folder: ${folder} is a file`);
  // This user's right to write it, found now: after the work it would only fail (a container's user in the image's root-owned /app).
  const written = target === null ? folder : path;
  if (!mayWrite(written)) throw InputError.one(flag, `${written} cannot be written by this user${typeof process.getuid === 'function' ? ` (uid ${process.getuid()})` : ''}: give a path it may write (in a container, the data volume)`);
  return path;
}

function mayWrite(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * An HTML report the user named for stacker to write (`backtest --report`, `report --html`): as
 * outputFile, and a file already there is written over only when it is a report stacker wrote
 * (its generator mark, `marker`) or empty. One slip of tab completion (`--report data/BTC….csv`,
 * the strategy's .env) replaced the file with HTML.
 */
export function reportFile(path: string, flag: string, marker: string): string {
  outputFile(path, flag);
  const found = statOf(path);
  if (found === null || found.size === 0) return path;
  if (!headOf(path, 2048).includes(marker)) {
    throw InputError.one(flag, `${path} already exists and is not a report stacker wrote: it is written over only then; name a new file, or remove it first`);
  }
  return path;
}

function headOf(path: string, bytes: number): string {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(bytes);
    return buffer.toString('utf8', 0, readSync(fd, buffer, 0, bytes, 0));
  } finally {
    closeSync(fd);
  }
}

/**
 * Who may read a file stacker writes: `owner` for one that holds the account's own data (a page
 * of the live or dry-run journal: orders, client order ids, holdings, P&L), created 0600 like the
 * journal it came from; `umask` for one that does not (a backtest's, of simulated data), which
 * the user's umask decides, as for any file a command writes.
 */
export type OutputReaders = 'owner' | 'umask';

/**
 * Writes a checked output file. What can still go wrong (no permission, a full disk) happens
 * after the work, to input that was good: an I/O failure (exit 1), named with the flag.
 */
export function writeOutputFile(path: string, text: string, flag: string, readers: OutputReaders = 'umask'): void {
  try {
    // Never through a symbolic link: one made (or left dangling) under the name after the check
    // would have the report written, or a file created, wherever it points.
    const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW, readers === 'owner' ? 0o600 : 0o666);
    try {
      const found = fstatSync(fd);
      // A file written over keeps its mode: a page an older stacker left readable by all is
      // closed before the account's data goes in (and before the old page is cut, should it fail).
      if (readers === 'owner' && found.isFile() && (found.mode & 0o077) !== 0) fchmodSync(fd, 0o600);
      // Only a file has a length to cut (a device such as /dev/stdout refuses it).
      if (found.isFile()) ftruncateSync(fd);
      writeFileSync(fd, text);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : String(error);
    throw new OutputFileError(flag, path, code === 'ELOOP' ? 'ELOOP (it is a symbolic link; name the file itself)' : code);
  }
}

/** A file the command creates and fills from nothing: as outputFile, and it must not exist yet (`why` says why). */
export function newFile(path: string, flag: string, why: string): string {
  outputFile(path, flag);
  if (statOf(path) !== null) throw InputError.one(flag, `${path} already exists: ${why}; remove it or name a new file`);
  return path;
}

/** A file the command reads: it exists and is not a folder. */
export function existingFile(path: string, flag: string): string {
  if (path.trim() === '') throw InputError.one(flag, 'must be the path of a file');
  const found = statOf(path);
  if (found === null) throw InputError.one(flag, `file not found: ${path}`);
  if (found.isDirectory()) throw InputError.one(flag, `is a folder: give the path of a file (got ${JSON.stringify(path)})`);
  return path;
}

function statOf(path: string): Stats | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}
