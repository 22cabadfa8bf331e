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
 */
export function sequentialIds(prefix = '5e1d0000'): SimIds {
  const counters = new Map<SimIdKind, number>();
  return {
    next(kind) {
      const value = counters.get(kind) ?? STARTS[kind];
      counters.set(kind, value + 1);
      if (kind === 'order' || kind === 'deal' || kind === 'counter-order') return String(value);
      const tag = kind === 'transaction' ? '7a00' : '1b00';
      return `${prefix}-${tag}-4000-8000-${value.toString(16).padStart(12, '0')}`;
    },
  };
}
