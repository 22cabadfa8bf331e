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
