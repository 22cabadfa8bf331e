import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { trackLoop } from '../../src/daemon/track-loop.ts';

describe('the order tracking loop', () => {
  it('tracks once per interval and leaves no abort listener behind, however long it runs', async () => {
    const stop = new AbortController();
    let passes = 0;
    const listenersSeen: number[] = [];
    const loop = trackLoop(
      {
        track: async () => {
          passes += 1;
          listenersSeen.push(getEventListeners(stop.signal, 'abort').length);
          if (passes === 200) stop.abort();
        },
      },
      1,
      stop.signal,
    );
    await loop;
    expect(passes).toBe(200);
    // While tracking, no sleep is pending: nothing listens to the signal at all.
    expect(Math.max(...listenersSeen)).toBe(0);
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
  });

  it('stops at once when the signal aborts mid-wait, without another pass', async () => {
    const stop = new AbortController();
    let passes = 0;
    const loop = trackLoop({ track: async () => void (passes += 1) }, 60_000, stop.signal);
    setTimeout(() => stop.abort(), 10);
    const started = Date.now();
    await loop;
    expect(Date.now() - started).toBeLessThan(1000);
    expect(passes).toBe(0);
  });
});
