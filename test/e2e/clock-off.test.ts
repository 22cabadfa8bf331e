import { describe, expect, it } from 'vitest';
import { liveEnv, sandboxPerTest, startDaemon } from './daemon-process.ts';

/**
 * Slots and budget days follow this machine's clock. Far behind the exchange's (a board without a
 * real-time clock booting at an old date, a mistyped `date -s`), every slot is one the journal has
 * never seen: set right again, the daemon bought the same real slot twice, past the day's
 * budget. Five minutes or more off, nothing that moves money is sent.
 */
// The exchange six years ahead: this machine's clock is that far behind.
const skewMs = 6 * 365 * 86_400_000;
const world = sandboxPerTest({ clock: { nowMs: () => Date.now() + skewMs } });

describe("a daemon whose machine's clock is far off the exchange's", () => {
  it('sends nothing, run --once included, saying why in the refusal, while /healthz names the clock', async () => {
    const { sandbox, dir } = world;
    dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '* * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001' });
    const env = liveEnv(sandbox, dir);

    const once = startDaemon(['--live', '--once', '--strategies', dir.strategies, '--data-dir', dir.data], env);
    // A refused buy, as run --once reports any refusal: the slot is done, nothing was sent.
    expect(await once.exited).toBe(0);
    expect(once.output()).toMatch(/this machine's clock is \d+\.\d s behind the exchange's, and slots and budget days follow this machine's clock: nothing that moves money is sent/);

    const daemon = startDaemon(['--live', '--strategies', dir.strategies, '--data-dir', dir.data], { ...env, STACKER_METRICS_PORT: '0' });
    await daemon.waitFor('"event":"refusal"', 15_000);
    const line = daemon.output().split('\n').find((text) => text.includes('"event":"metrics"'));
    const url = (JSON.parse(line as string) as { url: string }).url;
    const health = await fetch(`${url}/healthz`);
    expect(health.status).toBe(503);
    expect(JSON.stringify(await health.json())).toContain("this machine's clock is");
    daemon.child.kill('SIGTERM');
    expect(await daemon.exited).toBe(0);
    expect(daemon.output()).toContain('"reason":"kill-switch"');
    expect(sandbox.exchange.orderHistory({})).toHaveLength(0);
  }, 40_000);
});
