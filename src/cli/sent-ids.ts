import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { apiKeyDigest } from '../store/lock.ts';

/**
 * The client order ids `stacker buy` sent with an API key, kept on this machine (in the lock
 * folder, one file per key, a JSON line each): the exchange's history shows an order seconds to
 * minutes late, so a command run again at once found nothing there and bought again. Written
 * before the order is sent, so a lost answer or a kill keeps the id too. Ids are compared in
 * lower case: an exchange may keep them in another case. Only lines of the last KEPT_DAYS count.
 */
export interface SentId {
  readonly id: string;
  readonly market: string;
  readonly atMs: number;
}

const KEPT_DAYS = 31;

export function sentIdsPath(lockDir: string, apiKey: string): string {
  return join(lockDir, `sent-client-order-ids-${apiKeyDigest(apiKey)}.jsonl`);
}

/** The id as sent before, when it was (case-folded); null when never, or longer ago than is kept. */
export function sentBefore(path: string, id: string, nowMs: number): SentId | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return null;
  }
  const folded = id.toLowerCase();
  let found: SentId | null = null;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const entry = JSON.parse(line) as Partial<SentId>;
      if (typeof entry.id !== 'string' || typeof entry.atMs !== 'number' || entry.id.toLowerCase() !== folded) continue;
      if (nowMs - entry.atMs > KEPT_DAYS * 86_400_000) continue;
      found = { id: entry.id, market: typeof entry.market === 'string' ? entry.market : '?', atMs: entry.atMs };
    } catch {
      // A line torn by a kill mid-write: the others still count.
    }
  }
  return found;
}

export function recordSent(path: string, entry: SentId): void {
  mkdirSync(join(path, '..'), { recursive: true, mode: 0o700 });
  appendFileSync(path, `${JSON.stringify(entry)}\n`, { mode: 0o600 });
}
