import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { firstAtLeast } from '../../src/domain/sorted.ts';

describe('firstAtLeast', () => {
  it('finds what a scan from the start finds, within the length given', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -50, max: 50 })), fc.integer({ min: -60, max: 60 }), fc.nat(), (values, value, cut) => {
        const sorted = values.sort((a, b) => a - b);
        const length = sorted.length === 0 ? 0 : cut % (sorted.length + 1);
        const scanned = sorted.slice(0, length).findIndex((v) => v >= value);
        expect(firstAtLeast(sorted, value, length)).toBe(scanned === -1 ? length : scanned);
      }),
    );
  });
});
