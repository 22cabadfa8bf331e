import { StackerError } from '../domain/errors.ts';

/**
 * What the engine hands a strategy is the engine's own: the market rules a view gives are the
 * ones the guards, the paper and backtest fills and every other instance read after `decide`,
 * and the balances, budget and flex a view gives are what the guards judge its intents by.
 * TypeScript's `readonly` does not reach `Object.assign`, nor a module Node runs without a type
 * check, so a strategy gets them behind a proxy that refuses every write, naming what it tried
 * to change: the strategy fails on its own mistake instead of quietly changing what the others see.
 */
export class ReadOnlyError extends StackerError {
  /** A bug in the strategy, not a condition of the world. */
  readonly code = 'E_UNEXPECTED' as const;
  readonly retryable = false;
  constructor(what: string, attempt: string) {
    super(`${what} are read-only: the strategy tried to ${attempt}; copy what it needs ({ ...value }, [...list], new Map(map)) and change the copy`);
    this.name = 'ReadOnlyError';
  }
}

const kept = new WeakMap<object, object>();
const handlers = new Map<string, ProxyHandler<object>>();

/**
 * `target` behind a proxy that reads through and refuses every write with a ReadOnlyError
 * naming `what` ("market rules"). Nested objects are not wrapped (a Decimal is an immutable
 * value already).
 */
export function readOnly<T extends object>(target: T, what: string): T {
  return new Proxy<T>(target, handlerFor(what) as ProxyHandler<T>);
}

/**
 * readOnly for an object that outlives the slot (the market rules a book keeps): wrapped once,
 * the proxy kept while the object lives. A slot's own objects are not kept: a weak map of
 * objects made every slot costs a backtest's garbage collector more than the proxy itself.
 */
export function readOnlyKept<T extends object>(target: T, what: string): T {
  const known = kept.get(target);
  if (known !== undefined) return known as T;
  const made = readOnly(target, what);
  kept.set(target, made);
  return made;
}

/**
 * An instance's params as its strategy's decide gets them: parsed once from its file and frozen
 * there, and read-only here with an error that says so, naming the instance and the key (the
 * runtime's own said only "Cannot assign to read only property 'AMOUNT_QUOTE'").
 */
export function readOnlyParams<P>(params: P, instance: string): P {
  return params !== null && typeof params === 'object' ? readOnlyKept(params, `params of ${instance}`) : params;
}

/** A list whose items are wrapped as `what` too (flex investments, codes). */
export function readOnlyList<T extends object>(items: readonly T[], what: string): readonly T[] {
  return readOnly(Object.freeze(items.map((item) => readOnly(item, what))), what);
}

/**
 * Candles are the one part read in bulk (a 30-day window is 720 of them, every slot), where a
 * proxy's reads cost a backtest more than all the rest of its slot: they are plain frozen
 * objects in a frozen list instead, and a write into them throws the runtime's own TypeError.
 * This is that error's message with what it means for a strategy said after it.
 */
export function strategyErrorMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (!(error instanceof TypeError) || !FROZEN_WRITE.test(message)) return message;
  // The runtime names Decimal by its whole source text: said in a line instead (src/domain/money.ts says why it is fixed).
  if (DECIMAL_TARGET.test(message)) {
    const name = /property:? '?([\w$]+)/.exec(message)?.[1] ?? 'it';
    return `Decimal is the whole program's: its settings and the methods every value shares cannot be changed (the strategy tried to change ${name}); Decimal.clone({ ... }) makes a constructor of its own`;
  }
  return `${message}: what a slot's view hands a strategy is read-only; copy what it needs ([...list], { ...value }) and change the copy`;
}

/** The runtime's words for a write into a frozen object (V8). */
const FROZEN_WRITE = /^Cannot (assign to read only property|add property|delete property|define property|redefine property)/;
/** …of the Decimal constructor, or of the prototype every Decimal shares. */
const DECIMAL_TARGET = /of (?:function 'function Decimal\(|object '\[object Decimal\]')/;

function handlerFor(what: string): ProxyHandler<object> {
  let handler = handlers.get(what);
  if (handler === undefined) {
    const refuse = (attempt: string): never => {
      throw new ReadOnlyError(what, attempt);
    };
    handler = {
      set: (target, key) => refuse(change(target, 'set', key)),
      defineProperty: (target, key) => refuse(change(target, 'define', key)),
      deleteProperty: (target, key) => refuse(change(target, 'delete', key)),
      setPrototypeOf: () => refuse('change their prototype'),
      // Freezing the proxy would freeze the owner's object under it (the sim's own records).
      preventExtensions: (target) => (Object.isExtensible(target) ? refuse('freeze them') : Reflect.preventExtensions(target)),
    };
    handlers.set(what, handler);
  }
  return handler;
}

function change(target: object, verb: string, key: string | symbol): string {
  if (Array.isArray(target)) return `change the list in place (${verb} ${String(key)}: sort, reverse, push, splice and the like change it)`;
  return `${verb} ${String(key)}`;
}

/**
 * A ReadonlyMap over `source` that refuses set, delete and clear with a ReadOnlyError, and hands
 * each value through `wrap` (a trade balance behind readOnly). No copy is made: the view's own
 * reads and the guards keep reading `source`, which no strategy can reach through this.
 */
export class ReadOnlyMap<K, V> implements ReadonlyMap<K, V> {
  readonly #source: ReadonlyMap<K, V>;
  readonly #what: string;
  readonly #wrap: (value: V) => V;

  constructor(source: ReadonlyMap<K, V>, what: string, wrap: (value: V) => V = (value) => value) {
    this.#source = source;
    this.#what = what;
    this.#wrap = wrap;
    // Not frozen (a slot makes one for its state, and freezing cost a backtest more than the
    // rest of the wrapping): whatever a strategy sets on it stays on this wrapper of its own view.
  }

  get size(): number {
    return this.#source.size;
  }
  get(key: K): V | undefined {
    const value = this.#source.get(key);
    return value === undefined ? undefined : this.#wrap(value);
  }
  has(key: K): boolean {
    return this.#source.has(key);
  }
  forEach(callback: (value: V, key: K, map: ReadonlyMap<K, V>) => void, thisArg?: unknown): void {
    for (const [key, value] of this.entries()) callback.call(thisArg, value, key, this);
  }
  *entries(): MapIterator<[K, V]> {
    for (const [key, value] of this.#source) yield [key, this.#wrap(value)];
  }
  keys(): MapIterator<K> {
    return this.#source.keys();
  }
  *values(): MapIterator<V> {
    for (const value of this.#source.values()) yield this.#wrap(value);
  }
  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.entries();
  }
  get [Symbol.toStringTag](): string {
    return 'Map';
  }
  set(key: K): never {
    throw new ReadOnlyError(this.#what, `set ${String(key)}`);
  }
  delete(key: K): never {
    throw new ReadOnlyError(this.#what, `delete ${String(key)}`);
  }
  clear(): never {
    throw new ReadOnlyError(this.#what, 'clear them');
  }
}
