import { readFileSync } from 'node:fs';
import { ConfigError } from '../domain/errors.ts';

/**
 * Read a dotenv-format file into key → value. Loaded only when `--env-file` is given, so the
 * parser is imported lazily. An unreadable file is a configuration problem naming the file;
 * the file's contents never appear in the message (it holds the API secret).
 */
export async function readEnvFile(path: string): Promise<Record<string, string>> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : `cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`;
    throw new ConfigError([{ field: '--env-file', rule: `${reason}: ${path}` }]);
  }
  const { parse } = await import('dotenv');
  return parse(text);
}

export interface ParsedEnvText {
  readonly values: Record<string, string>;
  /** 1-based numbers of lines dotenv skipped although they are neither blank nor a comment (`AMOUNT 0.5`, a missing `=`). */
  readonly badLines: readonly number[];
}

/**
 * dotenv's own line pattern (dotenv/lib/main.js `LINE`, v17), used only to find the lines its
 * `parse` silently skips: a skipped `ALLOW_TRANSFER true` would otherwise fall back to a default
 * without a word. Values are never returned for those lines, only their numbers.
 */
const DOTENV_LINE = /(?:^|^)\s*(?:export\s+)?([\w.-]+)(?:\s*=\s*?|:\s+?)(\s*'(?:\\'|[^'])*'|\s*"(?:\\"|[^"])*"|\s*`(?:\\`|[^`])*`|[^#\r\n]+)?\s*(?:#.*)?(?:$|$)/gm;

/** Parse dotenv text exactly as dotenv does, and name the lines it skipped. */
export async function parseEnvText(text: string): Promise<ParsedEnvText> {
  const { parse } = await import('dotenv');
  return { values: parse(text), badLines: skippedLines(text) };
}

function skippedLines(text: string): number[] {
  const normalised = text.replace(/\r\n?/g, '\n');
  const covered: Array<[number, number]> = [];
  for (const match of normalised.matchAll(DOTENV_LINE)) {
    if (match[0].length > 0) covered.push([match.index, match.index + match[0].length]);
  }
  const bad: number[] = [];
  let lineStart = 0;
  normalised.split('\n').forEach((line, index) => {
    const content = line.search(/\S/);
    if (content !== -1 && line[content] !== '#') {
      // A line counts as read when a match covers its first visible character (a match's
      // trailing blanks may reach into the next line's indentation without reading it).
      const at = lineStart + content;
      if (!covered.some(([start, end]) => start <= at && at < end)) bad.push(index + 1);
    }
    lineStart += line.length + 1;
  });
  return bad;
}

/** readEnvFile, also naming the lines dotenv skipped. */
export async function readEnvFileChecked(path: string): Promise<ParsedEnvText> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError([{ field: '--env-file', rule: `${unreadable(error)}: ${path}` }]);
  }
  return parseEnvText(text);
}

/** Why a file could not be read, without its contents. */
export function unreadable(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'file not found';
  if (code === 'EISDIR') return 'is a directory, not a file';
  return `cannot be read (${code ?? 'error'})`;
}
