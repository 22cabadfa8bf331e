import { describe, expect, it } from 'vitest';
import { HeapCeiling } from '../../src/backtest/heap-ceiling.ts';

describe('the heap ceiling of a long backtest', () => {
  it('looks at the heap every checkEvery slots and collects only when it is past the ceiling', () => {
    let used = 10 * 1024 * 1024;
    let reads = 0;
    let collected = 0;
    const ceiling = new HeapCeiling({
      ceilingMb: 64,
      checkEvery: 4,
      usedBytes: () => {
        reads += 1;
        return used;
      },
      collect: () => {
        collected += 1;
        used = 15 * 1024 * 1024;
      },
    });
    for (let slot = 0; slot < 8; slot += 1) ceiling.slotRan();
    expect({ reads, collected }).toEqual({ reads: 2, collected: 0 });
    used = 65 * 1024 * 1024;
    for (let slot = 0; slot < 3; slot += 1) ceiling.slotRan();
    expect(collected).toBe(0); // not a fourth slot yet: not looked at
    ceiling.slotRan();
    expect({ reads, collected, collections: ceiling.collections }).toEqual({ reads: 3, collected: 1, collections: 1 });
    for (let slot = 0; slot < 4; slot += 1) ceiling.slotRan();
    expect(collected).toBe(1); // back under the ceiling after collecting
  });

  it("collects with V8's own full collection by default, which frees what nothing holds", async () => {
    const ceiling = new HeapCeiling({ ceilingMb: 0, checkEvery: 1 });
    const held = new WeakRef(Array.from({ length: 100_000 }, (_, i) => ({ i })));
    // A WeakRef keeps its target until the job that made it ends.
    await new Promise((resolve) => setImmediate(resolve));
    ceiling.slotRan();
    expect(ceiling.collections).toBe(1);
    expect(held.deref()).toBeUndefined();
  });
});
