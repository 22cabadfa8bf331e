import { describe, expect, it } from 'vitest';
import { liveEnv, sandboxPerTest, startDaemon } from './daemon-process.ts';

// The exchange's clock, this many ms ahead of this machine's.
let skewMs = 0;
const world = sandboxPerTest({ clock: { nowMs: () => Date.now() + skewMs } });

describe('a request the exchange refuses for its nonce', () => {
  it("is signed afresh and sent again once the exchange's clock is measured, and the log says so without the key or the signature", async () => {
    // The exchange's clock jumps 20 s ahead while the daemon runs (an NTP step on its side): the
    // nonces drawn from the clock the daemon measured at start fall outside its ±5 s window.
    skewMs = 0;
    const { sandbox, dir } = world;
    dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '*/2 * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.0001' });
    const daemon = startDaemon(['--live', '--strategies', dir.strategies, '--data-dir', dir.data], liveEnv(sandbox, dir));
    await daemon.waitFor('"to":"FILLED"', 20_000);
    skewMs = 20_000;
    await daemon.waitFor('"event":"nonce-refused"', 20_000);
    const filledBefore = daemon.output().split('"to":"FILLED"').length;
    // Trading goes on: the next slot's order fills.
    await expect.poll(() => daemon.output().split('"to":"FILLED"').length, { timeout: 20_000 }).toBeGreaterThan(filledBefore);
    daemon.child.kill('SIGTERM');
    expect(await daemon.exited).toBe(0);

    const line = daemon.output().split('\n').find((text) => text.includes('"event":"nonce-refused"')) as string;
    const logged = JSON.parse(line) as Record<string, unknown>;
    expect(logged).toMatchObject({ level: 40, refusal: 'window', account: 'default' });
    expect(logged['msg']).toMatch(/^the exchange refused POST \/api\/v4\/\S+ for its nonce: its nonce was outside the exchange's ±5 s window: this machine's clock and the exchange's disagree; stacker signs a read afresh/);
    expect(daemon.output()).not.toContain(sandbox.apiSecret);
    expect(daemon.output()).not.toContain(sandbox.apiKey);
    // Each order once at the exchange, and the slot whose request was refused did not fail.
    const ids = sandbox.exchange.orderHistory({}).map((order) => order.clientOrderId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(daemon.output()).not.toContain('"outcome":"failed"');
  }, 60_000);
});
