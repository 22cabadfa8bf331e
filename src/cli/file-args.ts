import { accessSync, constants, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { InputError } from '../domain/errors.ts';

/**
 * Checks of flags that name a file, run before any work starts: a backtest of years or a
 * report must not run to its end only to fail on a folder that does not exist (an unexpected
 * failure, exit 1, and the work lost) when the flag could have been refused at once (exit 2).
 */

/** A file the command will write (created or replaced): its folder exists and takes writes; it is not itself a folder. */
export function outputFile(text: string, flag: string): string {
  if (text.trim() === '') throw InputError.one(flag, 'must name a file to write');
  const path = resolve(text);
  if (isFolder(path)) throw InputError.one(flag, `${text} is a folder: give a file to write`);
  const folder = dirname(path);
  if (!isFolder(folder)) throw InputError.one(flag, `the folder ${dirname(text)} does not exist: create it first, or name a file in an existing folder`);
  try {
    accessSync(folder, constants.W_OK);
  } catch {
    throw InputError.one(flag, `the folder ${dirname(text)} cannot be written to`);
  }
  return text;
}

/** A file the command creates and fills from nothing: as outputFile, and it must not exist yet. */
export function newFile(text: string, flag: string, why: string): string {
  outputFile(text, flag);
  if (exists(resolve(text))) throw InputError.one(flag, `${text} already exists: ${why}; remove it or name a new file`);
  return text;
}

/** A file the command reads: it exists and is not a folder. */
export function existingFile(text: string, flag: string): string {
  if (text.trim() === '') throw InputError.one(flag, 'must name a file');
  const path = resolve(text);
  if (!exists(path)) throw InputError.one(flag, `file not found: ${text}`);
  if (isFolder(path)) throw InputError.one(flag, `${text} is a folder: give a file`);
  return text;
}

function exists(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false }) !== undefined;
}

function isFolder(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isDirectory() === true;
}
