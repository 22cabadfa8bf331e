import { readFileSync } from 'node:fs';
import { ConfigError, type InputProblem } from '../domain/errors.ts';

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
  /** Keys set on more than one line (dotenv keeps the last silently), with the 1-based lines. */
  readonly duplicates: readonly DuplicateKey[];
  /** Keys whose unquoted value has a "#" right after other characters, which dotenv reads as a comment (cutAtHashRule). */
  readonly cutAtHash: readonly CutAtHash[];
}

export interface CutAtHash {
  readonly key: string;
  readonly line: number;
}

/**
 * The problem a value cut at its "#" is: `KEY=sec#ret` is `sec` to dotenv (stacker --env-file)
 * and `sec#ret` to docker --env-file, and the secret, token or webhook URL (a #fragment) is
 * wrong without a word (an API secret fails as E_AUTH). Never the value, which may be a secret.
 */
export function cutAtHashRule(cut: CutAtHash): string {
  return `holds a "#" right after other characters (line ${cut.line}): stacker --env-file (dotenv) reads the value only up to it, as a comment, where docker --env-file keeps all of it; put the value in quotes for stacker --env-file (docker --env-file would pass the quotes on), or put a blank before the "#" if a comment starts there`;
}

export interface DuplicateKey {
  readonly key: string;
  readonly lines: readonly number[];
}

/** The problem a key given twice is: which lines, and why it is refused. */
export function duplicateRule(duplicate: DuplicateKey): string {
  return `is set on lines ${duplicate.lines.join(' and ')}; dotenv would keep the last one without a word, so say it once`;
}

/**
 * dotenv's own line pattern (dotenv/lib/main.js `LINE`, v17), used only to find the lines its
 * `parse` silently skips: a skipped `ALLOW_TRANSFER true` would otherwise fall back to a default
 * without a word. Values are never returned for those lines, only their numbers.
 */
const DOTENV_LINE = /(?:^|^)\s*(?:export\s+)?([\w.-]+)(?:\s*=\s*?|:\s+?)(\s*'(?:\\'|[^'])*'|\s*"(?:\\"|[^"])*"|\s*`(?:\\`|[^`])*`|[^#\r\n]+)?\s*(?:#.*)?(?:$|$)/gm;

/** Parse dotenv text exactly as dotenv does, and name the lines it skipped and the keys it set twice. */
export async function parseEnvText(text: string): Promise<ParsedEnvText> {
  const { parse } = await import('dotenv');
  return { values: parse(text), badLines: skippedLines(text), duplicates: repeatedKeys(text), cutAtHash: valuesCutAtHash(text) };
}

/** An unquoted KEY=value line whose value has a "#" glued to what comes before it. */
const GLUED_HASH = /^\s*(?:export\s+)?([\w.-]+)\s*=[ \t]*([^'"`\s#][^\n]*)$/;

function valuesCutAtHash(text: string): CutAtHash[] {
  const cut: CutAtHash[] = [];
  text
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .forEach((line, index) => {
      const match = GLUED_HASH.exec(line);
      if (match !== null && /\S#/.test(match[2] as string)) cut.push({ key: match[1] as string, line: index + 1 });
    });
  return cut;
}

function repeatedKeys(text: string): DuplicateKey[] {
  const normalised = text.replace(/\r\n?/g, '\n');
  const linesOf = new Map<string, number[]>();
  for (const match of normalised.matchAll(DOTENV_LINE)) {
    const key = match[1];
    if (key === undefined || match[0].trim() === '') continue;
    // The line of the key itself: a match may start with the blank lines before it.
    const at = match.index + match[0].search(/\S/);
    const line = normalised.slice(0, at).split('\n').length;
    linesOf.set(key, [...(linesOf.get(key) ?? []), line]);
  }
  return [...linesOf].filter(([, lines]) => lines.length > 1).map(([key, lines]) => ({ key, lines }));
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

/**
 * readEnvFile, also naming the lines dotenv skipped and the keys set twice. A key set twice is
 * refused (ConfigError naming the file, the key and its lines) unless `duplicates` is 'keep':
 * then the caller reports them with the file's other problems (duplicateProblems).
 */
export async function readEnvFileChecked(path: string, duplicates: 'refuse' | 'keep' = 'refuse'): Promise<ParsedEnvText> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError([{ field: '--env-file', rule: `${unreadable(error)}: ${path}` }]);
  }
  const parsed = await parseEnvText(text);
  if (duplicates === 'refuse' && parsed.duplicates.length > 0) throw new ConfigError(duplicateProblems(path, parsed.duplicates));
  return parsed;
}

/** The keys of an env file set more than once, as problems naming the file, the key and its lines. */
export function duplicateProblems(path: string, duplicates: readonly DuplicateKey[]): InputProblem[] {
  return duplicates.map((duplicate) => ({ source: path, field: duplicate.key, rule: duplicateRule(duplicate) }));
}

/** Why a file could not be read, without its contents. */
export function unreadable(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'file not found';
  if (code === 'EISDIR') return 'is a directory, not a file';
  return `cannot be read (${code ?? 'error'})`;
}
