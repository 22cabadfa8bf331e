/**
 * A .dockerignore read the way Docker (moby/patternmatcher) reads it, and the build context it
 * leaves: used by scripts/dockerfile-steps.sh (through dockerfile.ts) and test/docker.
 */
import { cpSync, lstatSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface IgnoreRule {
  readonly pattern: string;
  readonly negate: boolean;
  readonly regex: RegExp;
}

/** Docker's rules: one pattern a line, `#` comments, `!` exceptions, rooted at the context. */
export function parseDockerignore(text: string): IgnoreRule[] {
  const rules: IgnoreRule[] = [];
  for (const raw of text.split(/\r?\n/)) {
    let line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const negate = line.startsWith('!');
    if (negate) line = line.slice(1).trim();
    const pattern = cleanPattern(line);
    if (pattern === '') continue;
    rules.push({ pattern, negate, regex: globToRegex(pattern) });
  }
  return rules;
}

/** Like Go's filepath.Clean on a context-relative pattern: no leading `/` or `./`, no trailing `/`. */
function cleanPattern(pattern: string): string {
  const parts: string[] = [];
  for (const part of pattern.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') parts.pop();
    else parts.push(part);
  }
  return parts.join('/');
}

/** `**` spans any number of folders, `*` and `?` stay inside one, `[…]` is a class, `\` escapes. */
function globToRegex(pattern: string): RegExp {
  let out = '';
  for (let i = 0; i < pattern.length; i += 1) {
    const c = pattern[i] as string;
    if (c === '*' && pattern[i + 1] === '*') {
      i += 1;
      if (pattern[i + 1] === '/') {
        i += 1;
        out += '(?:.*/)?';
      } else {
        out += '.*';
      }
    } else if (c === '*') {
      out += '[^/]*';
    } else if (c === '?') {
      out += '[^/]';
    } else if (c === '[') {
      const end = pattern.indexOf(']', i + 1);
      if (end === -1) throw new Error(`unclosed [ in .dockerignore pattern ${pattern}`);
      const body = pattern.slice(i + 1, end).replace(/^!/, '^').replace(/\\/g, '\\\\');
      out += `[${body}]`;
      i = end;
    } else if (c === '\\' && i + 1 < pattern.length) {
      i += 1;
      out += escapeRegex(pattern[i] as string);
    } else {
      out += escapeRegex(c);
    }
  }
  return new RegExp(`^${out}$`);
}

function escapeRegex(c: string): string {
  return /[.+^${}()|[\]\\/]/.test(c) ? `\\${c}` : c;
}

/**
 * Whether Docker leaves a context-relative path (`a/b/c`, `/` separated) out of the context:
 * a rule applies when it matches the path or one of its parent folders; the last one that
 * applies wins.
 */
export function isIgnored(rules: readonly IgnoreRule[], path: string): boolean {
  const clean = cleanPattern(path);
  const parents: string[] = [];
  const parts = clean.split('/');
  for (let n = 1; n < parts.length; n += 1) parents.push(parts.slice(0, n).join('/'));
  let ignored = false;
  for (const rule of rules) {
    if (rule.regex.test(clean) || parents.some((parent) => rule.regex.test(parent))) ignored = !rule.negate;
  }
  return ignored;
}

/** Copy the build context to `dest`: every file under `root` that .dockerignore does not exclude. */
export function stageContext(root: string, dest: string): { files: number; ignored: string[] } {
  let text = '';
  try {
    text = readFileSync(join(root, '.dockerignore'), 'utf8');
  } catch {
    // No .dockerignore: everything is in the context.
  }
  const rules = parseDockerignore(text);
  // Without exceptions an ignored folder cannot contain anything kept: skip walking it.
  const canPrune = rules.every((rule) => !rule.negate);
  const ignored: string[] = [];
  let files = 0;
  const walk = (relative: string): void => {
    for (const entry of readdirSync(join(root, relative)).sort()) {
      const path = relative === '' ? entry : `${relative}/${entry}`;
      const stats = lstatSync(join(root, path));
      if (isIgnored(rules, path) && (!stats.isDirectory() || canPrune)) {
        ignored.push(stats.isDirectory() ? `${path}/` : path);
        continue;
      }
      if (stats.isDirectory()) {
        walk(path);
      } else {
        mkdirSync(dirname(join(dest, path)), { recursive: true });
        cpSync(join(root, path), join(dest, path), { verbatimSymlinks: true, preserveTimestamps: true });
        files += 1;
      }
    }
  };
  mkdirSync(dest, { recursive: true });
  walk('');
  return { files, ignored };
}
