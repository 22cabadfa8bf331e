import { createHash } from 'node:crypto';

/** Longest prefix (a strategy's `tag` or the configured one); the derived suffix takes at most 36 more + a dash. */
export const CLIENT_ORDER_ID_PREFIX_MAX = 24;
const PREFIX_PATTERN = /^[A-Za-z0-9._-]{1,24}$/;
/** A strategy emitting more intents than this in one slot is a bug, not a workload. */
export const MAX_INTENT_INDEX = 999_999;
const INSTANCE_HASH_HEX = 12;

/**
 * The clientOrderId of the order an intent places, derived so that a retried, replayed or
 * reconciled slot sends the same id and the lost-response lookup can find it:
 *
 *     <prefix>-<instance hash>-<slot time ms>-<intent index>
 *     dca-btc-2f1c0a9be4d7-1735689600000-0
 *
 * - `prefix` is a label for humans reading the exchange's history: the given one (a strategy's
 *   `tag` or a configured prefix), else the instance name cut to the allowed characters and 24
 *   characters. It never decides uniqueness.
 * - the instance hash (first 48 bits of SHA-256 over the exact name) keeps two instances apart
 *   even when their sanitised names or prefixes are equal;
 * - slot time and index are written in full, so one instance's ids never collide at all.
 *
 * The three suffix fields contain no dash and have a fixed order, so the id reads back
 * unambiguously from the right whatever the prefix holds. At most 24 + 1 + 12 + 1 + 16 + 1 + 6
 * = 61 characters, only `[A-Za-z0-9._-]`, and no `.` or `_` outside a caller's own prefix (an older
 * WhiteBIT validation message admits only letters, digits and dashes).
 */
export function deriveClientOrderId(instance: string, slotTimeMs: number, intentIndex: number, prefix?: string): string {
  if (!Number.isSafeInteger(slotTimeMs) || slotTimeMs < 0) {
    throw new RangeError(`slotTimeMs must be a non-negative integer of milliseconds (got ${slotTimeMs})`);
  }
  if (!Number.isSafeInteger(intentIndex) || intentIndex < 0 || intentIndex > MAX_INTENT_INDEX) {
    throw new RangeError(`intentIndex must be an integer from 0 to ${MAX_INTENT_INDEX} (got ${intentIndex})`);
  }
  if (prefix !== undefined && !PREFIX_PATTERN.test(prefix)) {
    throw new RangeError(`clientOrderId prefix must be 1 to ${CLIENT_ORDER_ID_PREFIX_MAX} letters, digits, dots, dashes or underscores (got ${JSON.stringify(prefix)})`);
  }
  const head = prefix ?? instancePrefix(instance);
  return `${head}-${instanceHash(instance)}-${slotTimeMs}-${intentIndex}`;
}

/**
 * A function of an instance's name, worked out once per name: a process runs a handful of
 * instances, and a backtest derives ids for each of its slots (bounded, should names be many).
 */
function perInstance(work: (instance: string) => string): (instance: string) => string {
  const known = new Map<string, string>();
  return (instance) => {
    let value = known.get(instance);
    if (value === undefined) {
      value = work(instance);
      if (known.size < 1024) known.set(instance, value);
    }
    return value;
  };
}

/** The instance name as a readable prefix: letters, digits and single dashes, at most 24 characters. */
export const instancePrefix = perInstance(cleanPrefix);

function cleanPrefix(instance: string): string {
  const cleaned = instance
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-+/, '')
    .slice(0, CLIENT_ORDER_ID_PREFIX_MAX)
    .replace(/-+$/, '');
  return cleaned === '' ? 'stacker' : cleaned;
}

/** What a clientOrderId of our scheme says: which instance (by its hash), which slot, which intent. */
export interface ClientOrderIdParts {
  readonly instanceHash: string;
  readonly slotTimeMs: number;
  readonly index: number;
}

const SUFFIX = /-([0-9a-f]{12})-(\d{1,16})-(\d{1,6})$/i;

/**
 * Read an id back (from the right, so the prefix may hold anything); null when it is not of our
 * scheme. Who it belongs to is decided by comparing `instanceHash` with instanceHash(name). An
 * id the exchange gives back in capitals is ours all the same (the hash is read in lower case):
 * skipped, a lost order in its history was never found, and was cleared as never placed.
 */
export function parseClientOrderId(clientOrderId: string): ClientOrderIdParts | null {
  const match = SUFFIX.exec(clientOrderId);
  if (match === null || match.index === 0) return null;
  const slotTimeMs = Number(match[2]);
  const index = Number(match[3]);
  if (!Number.isSafeInteger(slotTimeMs) || index > MAX_INTENT_INDEX) return null;
  return { instanceHash: (match[1] as string).toLowerCase(), slotTimeMs, index };
}

/**
 * Hash the UTF-16 code units in big-endian order, not a UTF-8 encoding (UTF-8 folds lone
 * surrogates into U+FFFD) nor the platform's byte order (the id must not change with the machine).
 */
export const instanceHash = perInstance(hashInstance);

function hashInstance(instance: string): string {
  const units = Buffer.alloc(instance.length * 2);
  for (let i = 0; i < instance.length; i += 1) units.writeUInt16BE(instance.charCodeAt(i), i * 2);
  return createHash('sha256').update(units).digest('hex').slice(0, INSTANCE_HASH_HEX);
}
