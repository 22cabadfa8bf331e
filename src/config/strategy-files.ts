import { type Dirent, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { InputProblem } from '../domain/errors.ts';
import { type Located, problemAt } from './daemon-env.ts';

/**
 * The instance files of a strategies folder: every `*.env` directly in it, sorted by name.
 * Hidden files are skipped like a shell's `*` skips them (a Kubernetes ConfigMap mount keeps
 * its own `..data` entries there); symbolic links to files count as files (and dangling ones too, so
 * they are reported rather than skipped).
 */
export function listStrategyFiles(folder: Located, problems: InputProblem[]): string[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(folder.value, { withFileTypes: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const rule =
      code === 'ENOENT'
        ? `strategies folder not found: ${folder.value}; it should hold one NAME.env file per strategy instance (examples: config/strategies/ in the stacker repository)`
        : code === 'ENOTDIR'
          ? `is not a folder: ${folder.value}`
          : `strategies folder cannot be read (${code ?? 'error'}): ${folder.value}`;
    problems.push(problemAt(folder.origin, rule));
    return [];
  }
  const names: string[] = [];
  for (const entry of entries) {
    // Backups (NAME.env.bak, NAME.env~), hidden files and notes are left alone; NAME.ENV is an
    // instance file by intent that would silently never run.
    if (!entry.name.startsWith('.') && !entry.name.endsWith('.env') && entry.name.toLowerCase().endsWith('.env')) {
      const meant = `${entry.name.slice(0, -'.env'.length)}.env`;
      problems.push(problemAt(folder.origin, `${join(folder.value, entry.name)} is not read: instance files end in .env in lower case; rename it ${meant}`));
      continue;
    }
    if (!entry.name.endsWith('.env') || entry.name.startsWith('.')) continue;
    if (isFile(folder.value, entry)) names.push(entry.name);
    // A folder named like an instance file is a mistake (Docker makes one when the file bind-mounted
    // there is missing on the host): said, not skipped, or an instance the operator expects would never run.
    else problems.push(problemAt(folder.origin, `${join(folder.value, entry.name)} is not a file (a folder, or a link to one): an instance is a NAME.env file`));
  }
  const files = names
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .map((name) => join(folder.value, name));
  if (files.length === 0) {
    problems.push(problemAt(folder.origin, `the strategies folder ${folder.value} holds no instance file (NAME.env), so there is nothing to run`));
  }
  for (const same of sameFiles(files)) {
    problems.push(problemAt(folder.origin, `${same.join(' and ')} are one file (links to it): each name is an instance, so its settings would buy twice, with a budget each; copy the file if two instances are meant`));
  }
  return files;
}

/** Instance files that are the same file under several names (symbolic or hard links), in groups; a dangling link is in none. */
function sameFiles(files: readonly string[]): string[][] {
  const byIdentity = new Map<string, string[]>();
  for (const file of files) {
    let identity: string;
    try {
      const stat = statSync(file);
      identity = `${stat.dev}:${stat.ino}`;
    } catch {
      continue;
    }
    byIdentity.set(identity, [...(byIdentity.get(identity) ?? []), file]);
  }
  return [...byIdentity.values()].filter((group) => group.length > 1);
}

function isFile(folder: string, entry: Dirent): boolean {
  if (entry.isFile()) return true;
  if (!entry.isSymbolicLink()) return false;
  try {
    return statSync(join(folder, entry.name)).isFile();
  } catch {
    // A dangling link is kept, so reading it reports the missing target instead of skipping the instance.
    return true;
  }
}
