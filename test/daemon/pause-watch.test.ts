import { describe, expect, it } from 'vitest';
import { watchForPauses } from '../../src/daemon/pause-watch.ts';

describe('the watch for pauses of this process', () => {
  it('says how long the process did not run once it runs again (a paused VM, SIGSTOP), and nothing for a mere late timer', async () => {
    const lines: Array<{ fields: Record<string, unknown>; message: string }> = [];
    let now = 0;
    let looks = 0;
    const monotonic = (): number => {
      looks += 1;
      return now;
    };
    const nextLook = async (): Promise<void> => {
      const seen = looks;
      await expect.poll(() => looks, { timeout: 5_000 }).toBeGreaterThan(seen);
    };
    const stop = watchForPauses({ warn: (fields: Record<string, unknown>, message: string) => lines.push({ fields, message }) } as never, monotonic);
    try {
      // A look three seconds late: not a pause.
      now += 1_000 + 3_000;
      await nextLook();
      expect(lines).toEqual([]);
      // Stopped for a minute.
      now += 1_000 + 60_000;
      await nextLook();
      expect(lines.map((line) => line.fields)).toEqual([{ event: 'process-paused', seconds: 60 }]);
      expect(lines[0]?.message).toMatch(/did not run for 60 s .* a timeout or lost answer logged now is this pause's, not the exchange's or the database's/);
    } finally {
      stop();
    }
  });
});
