/**
 * Freezing for the validated config (fastify's habit: validate once, then deep-freeze). Only
 * plain objects and arrays are walked: a Decimal, a strategy module or a compiled schedule
 * belongs to its own module, which may keep caches in it.
 */

export function deepFreeze<T>(value: T): T {
  if (Array.isArray(value)) {
    for (const item of value) deepFreeze(item);
    return Object.freeze(value);
  }
  if (isPlainObject(value)) {
    for (const item of Object.values(value)) deepFreeze(item);
    return Object.freeze(value);
  }
  return value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** A Map whose set, delete and clear throw: Object.freeze alone leaves a Map's entries writable. */
export function frozenMap<K, V>(entries: Iterable<readonly [K, V]>): ReadonlyMap<K, V> {
  const map = new Map<K, V>(entries);
  const refuse = (): never => {
    throw new TypeError('the configuration is frozen');
  };
  Object.defineProperties(map, { set: { value: refuse }, delete: { value: refuse }, clear: { value: refuse } });
  return Object.freeze(map);
}
