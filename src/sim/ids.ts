/** What the sim needs fresh identifiers for. */
/** `counter-order`: the synthetic maker order a deal matched (the wire's `dealOrderId`). */
export type SimIdKind = 'order' | 'deal' | 'counter-order' | 'transaction' | 'investment';

/**
 * Source of identifiers. Order, deal and counter-order ids must be decimal integer text (the
 * wire sends them as JSON integers, so keep them below 2^53); the others are opaque text
 * (UUIDs on the wire).
 */
export interface SimIds {
  next(kind: SimIdKind): string;
}

const STARTS: Readonly<Record<SimIdKind, number>> = {
  order: 4_100_000_001,
  deal: 8_200_000_001,
  'counter-order': 3_900_000_001,
  transaction: 1,
  investment: 1,
};

/**
 * Deterministic ids: counters per kind, so two runs of the same scenario produce the same
 * ledger. Transaction and investment ids are shaped like UUIDs v4, as the exchange's are.
 * The counters can be read and continued from, so a paper account that lives across restarts
 * never hands out an id twice.
 */
export class SequentialIds implements SimIds {
  readonly #prefix: string;
  /** The next value of each kind: a record, not a map, since a backtest asks for three ids a fill. */
  readonly #counters: Record<SimIdKind, number> = { ...STARTS };

  constructor(prefix = '5e1d0000') {
    this.#prefix = prefix;
  }

  next(kind: SimIdKind): string {
    const value = this.#counters[kind];
    this.#counters[kind] = value + 1;
    if (kind === 'order' || kind === 'deal' || kind === 'counter-order') return String(value);
    const tag = kind === 'transaction' ? '7a00' : '1b00';
    return `${this.#prefix}-${tag}-4000-8000-${value.toString(16).padStart(12, '0')}`;
  }

  /** The next value of each kind. */
  counters(): Record<SimIdKind, number> {
    return { ...this.#counters };
  }

  /** Go on from counters read earlier (never backwards: a counter only grows). */
  continueFrom(counters: Readonly<Partial<Record<SimIdKind, number>>>): void {
    for (const kind of SIM_ID_KINDS) {
      const value = counters[kind];
      if (value === undefined) continue;
      if (!Number.isSafeInteger(value) || value < STARTS[kind]) throw new RangeError(`id counter ${kind} must be an integer >= ${STARTS[kind]} (got ${value})`);
      this.#counters[kind] = Math.max(value, this.#counters[kind]);
    }
  }
}

export const SIM_ID_KINDS: readonly SimIdKind[] = ['order', 'deal', 'counter-order', 'transaction', 'investment'];

export function sequentialIds(prefix = '5e1d0000'): SequentialIds {
  return new SequentialIds(prefix);
}

/** The first of 2026: where ids counted from the clock start. */
const CLOCK_IDS_FROM_MS = Date.UTC(2026, 0, 1);

/**
 * Ids that do not repeat across starts of a simulated exchange whose state starts afresh (the
 * sandbox): order, deal and counter-order ids begin at their usual start plus the milliseconds
 * since 2026 began, so a start begins past every id an earlier start could have handed out
 * unless it handed out more than one a millisecond. A daemon's journal that outlives a sandbox
 * then never meets a second order under an id it holds. Below 2^53 until far beyond 2100.
 */
export function idsCountedFromClock(nowMs: number, prefix?: string): SequentialIds {
  const ids = new SequentialIds(prefix);
  const offset = Math.max(0, Math.floor(nowMs) - CLOCK_IDS_FROM_MS);
  ids.continueFrom({ order: STARTS.order + offset, deal: STARTS.deal + offset, 'counter-order': STARTS['counter-order'] + offset });
  return ids;
}
