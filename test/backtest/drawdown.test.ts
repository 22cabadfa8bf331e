import { describe, expect, it } from 'vitest';
import { Decimal, roundUp } from '../../src/domain/money.ts';
import type { DrawdownEpisode as Episode } from '../../src/backtest/report/build.ts';
import { candlesBetween, reportOver, written as round } from './committed-candles.ts';

describe('the max drawdown of a backtest report', () => {
  it('is the deepest fall over every candle close and every slot, found by a brute-force walk over the CSV', async () => {
    // One buy of 0.01 BTC at 09:00 UTC on 1 January 2022, then the 2022 fall: the account is
    // 1000 USDT less the buy, plus 0.01 BTC at each price.
    const report = (await reportOver('STRATEGY=dca\nSCHEDULE="0 9 1 1 *"\nTIMEZONE=UTC\nMARKET=BTC_USDT\nAMOUNT=0.01\n', ['--from', '2022-01-01', '--to', '2022-12-31', '--wallet', 'USDT=1000'])) as { slots: number; data: { candles: number }; drawdown: { samples: number; max: Episode; maxPct: Episode } };

    const hour = 3_600_000;
    const candles = candlesBetween(Date.parse('2022-01-01T00:00:00Z'), Date.parse('2022-12-31T23:59:59.999Z'));
    const slotMs = Date.parse('2022-01-01T09:00:00Z');
    const buyPrice = (candles.find((c) => c.timeMs === slotMs) as { open: Decimal }).open;
    const quote = buyPrice.mul('0.01');
    const cashAfter = new Decimal(1000).sub(quote).sub(roundUp(quote.mul('0.001'), 8));
    const valueAt = (timeMs: number, price: Decimal): Decimal => (timeMs >= slotMs ? cashAfter.add(price.mul('0.01')) : new Decimal(1000));
    // The samples: each candle at its close, and the slot at its fill price, in time order.
    const samples = [...candles.map((c) => ({ timeMs: c.timeMs + hour, value: valueAt(c.timeMs + hour, c.close) })), { timeMs: slotMs, value: valueAt(slotMs, buyPrice) }].sort((a, b) => a.timeMs - b.timeMs);

    let peak = samples[0] as { timeMs: number; value: Decimal };
    let byAmount = { peak, trough: peak };
    let byShare = { peak, trough: peak };
    for (const sample of samples) {
      if (sample.value.gt(peak.value)) peak = sample;
      if (peak.value.sub(sample.value).gt(byAmount.peak.value.sub(byAmount.trough.value))) byAmount = { peak, trough: sample };
      if (peak.value.sub(sample.value).div(peak.value).gt(byShare.peak.value.sub(byShare.trough.value).div(byShare.peak.value))) byShare = { peak, trough: sample };
    }
    const episode = (e: typeof byAmount): Episode => ({
      amount: round(e.peak.value.sub(e.trough.value), 8),
      pct: round(e.peak.value.sub(e.trough.value).div(e.peak.value).mul(100), 4),
      peakTimeMs: e.peak.timeMs,
      peakValue: round(e.peak.value, 8),
      troughTimeMs: e.trough.timeMs,
      troughValue: round(e.trough.value, 8),
    });
    expect(report.drawdown.samples).toBe(report.data.candles + report.slots);
    expect(report.drawdown.max).toEqual(episode(byAmount));
    expect(report.drawdown.maxPct).toEqual(episode(byShare));
  });
});
