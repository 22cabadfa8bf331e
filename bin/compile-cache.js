// Node's compile cache for commands run from the sources, kept where only this user can write.
// Node trusts what it finds in the cache (a checksum that anyone can compute is all it checks),
// so the code in it is the code that runs: its default folder, in the system's shared temp
// folder, let another user of the machine plant code that would run with the API key loaded.
// The cache lives in this checkout (node_modules/.cache, written by whoever installed it, who
// can change the code itself anyway), and is used only while that folder is a real folder,
// owned by this user and writable by nobody else; otherwise stacker runs without one.
import { lstatSync, mkdirSync } from 'node:fs';
import { enableCompileCache } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

export const COMPILE_CACHE_DIR = fileURLToPath(new URL('../node_modules/.cache/stacker-compile', import.meta.url));

/** Turn the cache on in this thread (a worker thread has its own, off until asked); the folder used, or null when none is safe. */
export function enablePrivateCompileCache() {
  const dir = privateFolder(COMPILE_CACHE_DIR);
  if (dir !== null) enableCompileCache(dir);
  return dir;
}

/** `dir`, made 0700 if missing, when only this user can write it; null otherwise (or when it cannot be made). */
export function privateFolder(dir) {
  try {
    // Only the cache's own folder is private: node_modules/.cache is shared with other tools
    // (and the compiled daemon a test builds there runs as another user).
    mkdirSync(dirname(dir), { recursive: true });
    try {
      mkdirSync(dir, { mode: 0o700 });
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
    }
    const stat = lstatSync(dir);
    if (!stat.isDirectory()) return null;
    if (process.platform === 'win32') return dir;
    if (stat.uid !== process.getuid() || (stat.mode & 0o022) !== 0) return null;
    return dir;
  } catch {
    return null;
  }
}
