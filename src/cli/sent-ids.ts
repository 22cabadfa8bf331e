import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { apiKeyDigest } from '../store/lock.ts';

/**
 * The client order ids `stacker buy` sent with an API key, kept on this machine in the lock
 * folder: a file per id, made with O_EXCL before anything is asked of the exchange, so that of
 * two commands with one id started together only one goes on. The exchange's history shows an
 * order seconds to minutes late, so a command run again found nothing there and bought again.
 * Ids are compared in lower case (an exchange may keep them in another case); a claim older than
 * KEPT_DAYS is stale and taken over.
 */
export interface SentId {
  readonly id: string;
  readonly market: string;
  readonly atMs: number;
}

const KEPT_DAYS = 31;

export function sentIdsDir(lockDir: string, apiKey: string): string {
  return join(lockDir, `sent-client-order-ids-${apiKeyDigest(apiKey)}`);
}

function fileOf(dir: string, id: string): string {
  return join(dir, createHash('sha256').update(id.toLowerCase(), 'utf8').digest('hex').slice(0, 32));
}

/** Claims the id for this send: null when it is this command's now; the earlier send when one holds it. */
export function claimId(dir: string, entry: SentId): SentId | null {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = fileOf(dir, entry.id);
  const text = `${JSON.stringify(entry)}\n`;
  try {
    writeFileSync(file, text, { flag: 'wx', mode: 0o600 });
    return null;
  } catch (error) {
    if (!(typeof error === 'object' && error !== null && 'code' in error && error.code === 'EEXIST')) throw error;
  }
  const held = readClaim(file);
  if (held !== null && entry.atMs - held.atMs <= KEPT_DAYS * 86_400_000) return held;
  writeFileSync(file, text, { mode: 0o600 });
  return null;
}

/** Gives the id back: the exchange refused the order outright, so no order has it. */
export function releaseId(dir: string, id: string): void {
  rmSync(fileOf(dir, id), { force: true });
}

function readClaim(file: string): SentId | null {
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as Partial<SentId>;
    if (typeof value.id === 'string' && typeof value.atMs === 'number') return { id: value.id, market: typeof value.market === 'string' ? value.market : '?', atMs: value.atMs };
  } catch {
    // Torn by a kill mid-write: held all the same, since when is not known.
  }
  return { id: '?', market: '?', atMs: Number.MAX_SAFE_INTEGER };
}
