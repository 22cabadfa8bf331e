import { Decimal, formatDecimal } from '../../src/domain/money.ts';
import { SimCore, type SimExchangeOptions } from '../../src/sim/core.ts';
import { fixedPrices } from '../../src/sim/prices.ts';
import { SimRejection } from '../../src/sim/rejection.ts';
import { DEMO_PRICES, seedDemo } from '../../src/sim/seed.ts';
import { thrownBy } from '../support/thrown.ts';

/** A clock tests move by hand. */
export function manualClock(startMs = 1_760_000_000_000): { nowMs(): number; advance(ms: number): void } {
  let now = startMs;
  return {
    nowMs: () => now,
    advance: (ms) => {
      now += ms;
    },
  };
}

export function demoSim(options: SimExchangeOptions = {}): SimCore {
  const sim = new SimCore({ clock: manualClock(), prices: fixedPrices(DEMO_PRICES), ...options });
  seedDemo(sim);
  return sim;
}

export const d = (text: string): Decimal => new Decimal(text);
export const text = (value: Decimal): string => formatDecimal(value);

/** Run `fn`, expect a SimRejection, and return it for closer checks. */
export const rejectionOf = (fn: () => unknown): SimRejection => thrownBy(SimRejection, fn);
