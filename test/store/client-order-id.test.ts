import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { deriveClientOrderId, instancePrefix } from '../../src/domain/client-order-id.ts';
import { isValidClientOrderId } from '../../src/domain/order.ts';

const instance = fc.oneof(fc.string({ maxLength: 80 }), fc.string({ unit: 'binary', maxLength: 80 }), fc.stringMatching(/^[a-z][a-z0-9-]{0,40}$/));
const slotTimeMs = fc.oneof(fc.integer({ min: 0, max: Date.UTC(2100, 0, 1) }), fc.constant(Number.MAX_SAFE_INTEGER));
const intentIndex = fc.integer({ min: 0, max: 999_999 });
const prefix = fc.option(fc.stringMatching(/^[A-Za-z0-9._-]{1,24}$/), { nil: undefined });

describe('deriveClientOrderId', () => {
  it('reads as prefix, instance hash, slot time and index', () => {
    expect(deriveClientOrderId('dca-btc', 1_735_689_600_000, 0)).toMatch(/^dca-btc-[0-9a-f]{12}-1735689600000-0$/);
    expect(deriveClientOrderId('dca-btc', 1_735_689_600_000, 3, 'weekly')).toMatch(/^weekly-[0-9a-f]{12}-1735689600000-3$/);
  });

  it('is deterministic: the same inputs give the same id in every process', () => {
    // Pinned: a change here would make a restarted daemon miss its own orders in the lookup.
    expect(deriveClientOrderId('dca-btc', 1_735_689_600_000, 0)).toBe('dca-btc-7d16a56a1027-1735689600000-0');
    fc.assert(
      fc.property(instance, slotTimeMs, intentIndex, prefix, (i, t, n, p) => {
        expect(deriveClientOrderId(i, t, n, p)).toBe(deriveClientOrderId(i, t, n, p));
      }),
    );
  });

  it('always fits the exchange: 1 to 64 characters of [A-Za-z0-9._-]', () => {
    fc.assert(
      fc.property(instance, slotTimeMs, intentIndex, prefix, (i, t, n, p) => {
        const id = deriveClientOrderId(i, t, n, p);
        expect(id.length).toBeLessThanOrEqual(64);
        expect(isValidClientOrderId(id)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('uses only letters, digits and dashes when no prefix is given', () => {
    fc.assert(
      fc.property(instance, slotTimeMs, intentIndex, (i, t, n) => {
        expect(deriveClientOrderId(i, t, n)).toMatch(/^[A-Za-z0-9-]+$/);
      }),
    );
  });

  it('gives distinct ids to distinct (instance, slot time, index), also for instances that sanitise alike', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.tuple(instance, slotTimeMs, intentIndex), { maxLength: 60, selector: ([i, t, n]) => JSON.stringify([i, t, n]) }), (inputs) => {
        const ids = new Set(inputs.map(([i, t, n]) => deriveClientOrderId(i, t, n)));
        expect(ids.size).toBe(inputs.length);
      }),
      { numRuns: 300 },
    );
    const lookalikes = ['dca btc', 'dca/btc', 'dca-btc', 'dca--btc', 'dca_btc', 'dca.btc', 'dca\u00a0btc', `dca-btc${'x'.repeat(40)}`, `dca-btc${'x'.repeat(41)}`];
    expect(new Set(lookalikes.map(instancePrefix)).size).toBeLessThan(lookalikes.length);
    expect(new Set(lookalikes.map((name) => deriveClientOrderId(name, 0, 0))).size).toBe(lookalikes.length);
    // Instances differing only in an unpaired surrogate stay apart (no UTF-8 folding to U+FFFD).
    expect(deriveClientOrderId('a\ud800', 0, 0)).not.toBe(deriveClientOrderId('a\udc00', 0, 0));
  });

  it('keeps two instances apart even under the same prefix', () => {
    expect(deriveClientOrderId('a', 0, 0, 'stk')).not.toBe(deriveClientOrderId('b', 0, 0, 'stk'));
  });

  it('refuses a slot time, index or prefix it cannot encode', () => {
    expect(() => deriveClientOrderId('x', -1, 0)).toThrow(RangeError);
    expect(() => deriveClientOrderId('x', 1.5, 0)).toThrow(RangeError);
    expect(() => deriveClientOrderId('x', 0, 1_000_000)).toThrow(RangeError);
    expect(() => deriveClientOrderId('x', 0, 0, 'has space')).toThrow(RangeError);
    expect(() => deriveClientOrderId('x', 0, 0, 'p'.repeat(25))).toThrow(RangeError);
  });

  it('falls back to a readable prefix when nothing of the instance name is usable', () => {
    expect(deriveClientOrderId('日本', 0, 0)).toMatch(/^stacker-[0-9a-f]{12}-0-0$/);
  });
});
