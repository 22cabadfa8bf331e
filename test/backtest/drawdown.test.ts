import { describe, expect, it } from 'vitest';
import { Decimal, roundUp } from '../../src/domain/money.ts';
import type { DrawdownEpisode as Episode } from '../../src/backtest/report/build.ts';
import { type CsvCandle, candlesBetween, reportOver, written as round } from './committed-candles.ts';

type Sample = { timeMs: number; value: Decimal };
type Fall = { peak: Sample; trough: Sample };

/** The deepest fall by amount and by share, by a brute-force walk over samples in time order. */
function deepestFalls(samples: readonly Sample[]): { byAmount: Fall; byShare: Fall } {
  let peak = samples[0] as Sample;
  let byAmount = { peak, trough: peak };
  let byShare = { peak, trough: peak };
  for (const sample of samples) {
    if (sample.value.gt(peak.value)) peak = sample;
    if (peak.value.sub(sample.value).gt(byAmount.peak.value.sub(byAmount.trough.value))) byAmount = { peak, trough: sample };
    if (peak.value.sub(sample.value).div(peak.value).gt(byShare.peak.value.sub(byShare.trough.value).div(byShare.peak.value))) byShare = { peak, trough: sample };
  }
  return { byAmount, byShare };
}

/** A fall as the report writes it. */
function episode(e: Fall): Episode {
  return {
    amount: round(e.peak.value.sub(e.trough.value), 8),
    pct: round(e.peak.value.sub(e.trough.value).div(e.peak.value).mul(100), 4),
    peakTimeMs: e.peak.timeMs,
    peakValue: round(e.peak.value, 8),
    troughTimeMs: e.trough.timeMs,
    troughValue: round(e.trough.value, 8),
  };
}

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
    // The samples: the wallet at the first open, each candle at its close, and the slot at its fill price, in time order.
    const first = candles[0] as CsvCandle;
    const samples = [{ timeMs: first.timeMs, value: valueAt(first.timeMs, first.open) }, ...candles.map((c) => ({ timeMs: c.timeMs + hour, value: valueAt(c.timeMs + hour, c.close) })), { timeMs: slotMs, value: valueAt(slotMs, buyPrice) }].sort((a, b) => a.timeMs - b.timeMs);

    const { byAmount, byShare } = deepestFalls(samples);
    expect(report.drawdown.samples).toBe(1 + report.data.candles + report.slots);
    expect(report.drawdown.max).toEqual(episode(byAmount));
    expect(report.drawdown.maxPct).toEqual(episode(byShare));
  });

  it('values every close after a 00:00 with the flex interest paid then, not only from the next slot on', async () => {
    // 10 M USDT in flex at 36.5 % a year pays 10000 USDT to the main balance at each 00:00 UTC
    // after the day it was put in (large, so that the account's value steps at each 00:00 and
    // its falls are the price's moves within a day); a buy of 0.01 BTC at each 09:00. Every
    // close between a 00:00 and that day's 09:00 slot used to be valued without the day's interest.
    const report = (await reportOver('STRATEGY=dca\nSCHEDULE="0 9 * * *"\nTIMEZONE=UTC\nMARKET=BTC_USDT\nAMOUNT=0.01\n', ['--from', '2022-01-01', '--to', '2022-01-31', '--wallet', 'USDT=20000', '--flex', 'USDT=10000000', '--flex-apr', '36.5'])) as { slots: number; data: { candles: number }; drawdown: { samples: number; max: Episode; maxPct: Episode }; flex: { interest: { amount: string } } };

    const hour = 3_600_000;
    const day = 24 * hour;
    const firstDay = Date.parse('2022-01-01T00:00:00Z');
    const candles = candlesBetween(firstDay, Date.parse('2022-01-31T23:59:59.999Z'));
    const buys = candles.filter((c) => (c.timeMs - 9 * hour) % day === 0);
    const btcAt = (timeMs: number): Decimal => new Decimal('0.01').mul(buys.filter((c) => c.timeMs <= timeMs).length);
    const spentAt = (timeMs: number): Decimal => buys.filter((c) => c.timeMs <= timeMs).reduce((sum, c) => sum.add(c.open.mul('0.01')).add(roundUp(c.open.mul('0.01').mul('0.001'), 8)), new Decimal(0));
    const interestAt = (timeMs: number): Decimal => new Decimal(10000).mul(Math.max(0, Math.floor((timeMs - firstDay) / day)));
    const valueAt = (timeMs: number, price: Decimal): Decimal => new Decimal(10020000).sub(spentAt(timeMs)).add(interestAt(timeMs)).add(btcAt(timeMs).mul(price));
    const periodEnd = Date.parse('2022-02-01T00:00:00Z');
    const samples = [
      { timeMs: firstDay, value: valueAt(firstDay, (candles[0] as CsvCandle).open) },
      ...candles.map((c) => ({ timeMs: c.timeMs + hour, value: valueAt(c.timeMs + hour, c.close) })),
      ...buys.map((c) => ({ timeMs: c.timeMs, value: valueAt(c.timeMs, c.open) })),
      { timeMs: periodEnd, value: valueAt(periodEnd, (candles[candles.length - 1] as CsvCandle).close) },
    ].sort((a, b) => a.timeMs - b.timeMs);
    expect(report.flex.interest.amount).toBe('310000');
    // The period's end is valued too, with the interest of its last days.
    expect(report.drawdown.samples).toBe(1 + report.data.candles + report.slots + 1);

    const { byAmount, byShare } = deepestFalls(samples);
    expect(report.drawdown.max).toEqual(episode(byAmount));
    expect(report.drawdown.maxPct).toEqual(episode(byShare));
  });

  it('walks every close of an account that holds no base (every buy refused), its value stepping only with flex interest', async () => {
    // 5 USDT cannot pay a buy of 0.01 BTC: the account is cash and flex interest, the same at every
    // close of a day, one step up at each 00:00; the closes of equal value are walked at once.
    const report = (await reportOver('STRATEGY=dca\nSCHEDULE="0 9 * * *"\nTIMEZONE=UTC\nMARKET=BTC_USDT\nAMOUNT=0.01\n', ['--from', '2022-01-01', '--to', '2022-01-31', '--wallet', 'USDT=5', '--flex', 'USDT=10000000', '--flex-apr', '36.5'])) as { slots: number; orders: unknown[]; data: { candles: number }; drawdown: { samples: number; max: Episode; maxPct: Episode } };

    const hour = 3_600_000;
    const day = 24 * hour;
    const firstDay = Date.parse('2022-01-01T00:00:00Z');
    const candles = candlesBetween(firstDay, Date.parse('2022-01-31T23:59:59.999Z'));
    const valueAt = (timeMs: number): Decimal => new Decimal(10000005).add(new Decimal(10000).mul(Math.max(0, Math.floor((timeMs - firstDay) / day))));
    const periodEnd = Date.parse('2022-02-01T00:00:00Z');
    const slots = candles.filter((c) => (c.timeMs - 9 * hour) % day === 0);
    const samples = [{ timeMs: firstDay, value: valueAt(firstDay) }, ...candles.map((c) => ({ timeMs: c.timeMs + hour, value: valueAt(c.timeMs + hour) })), ...slots.map((c) => ({ timeMs: c.timeMs, value: valueAt(c.timeMs) })), { timeMs: periodEnd, value: valueAt(periodEnd) }].sort((a, b) => a.timeMs - b.timeMs);

    expect(report.slots).toBe(slots.length);
    expect(report.drawdown.samples).toBe(1 + report.data.candles + report.slots + 1);
    const { byAmount, byShare } = deepestFalls(samples);
    expect(report.drawdown.max).toEqual(episode(byAmount));
    expect(report.drawdown.maxPct).toEqual(episode(byShare));
  });

  it('starts at the value of the wallet at the first open: a starting wallet of base that falls before the first close has fallen from there', async () => {
    // 1 BTC and no USDT (every buy is refused), from 8 May 2022: the first hour opened at 35472.4
    // and closed at 35107.02, the highest close of the ten days. Walked from the first close, the
    // account's high was 35107.02 and the first hour's fall went unseen.
    const report = (await reportOver('STRATEGY=dca\nSCHEDULE="0 9 * * *"\nTIMEZONE=UTC\nMARKET=BTC_USDT\nAMOUNT=0.01\n', ['--from', '2022-05-08', '--to', '2022-05-17', '--wallet', 'USDT=0,BTC=1'])) as { slots: number; data: { candles: number }; value: { initial: string }; drawdown: { samples: number; max: Episode; maxPct: Episode } };

    const hour = 3_600_000;
    const firstMs = Date.parse('2022-05-08T00:00:00Z');
    const candles = candlesBetween(firstMs, Date.parse('2022-05-17T23:59:59.999Z'));
    const first = candles[0] as CsvCandle;
    const slots = candles.filter((c) => new Date(c.timeMs).getUTCHours() === 9);
    const samples = [{ timeMs: firstMs, value: first.open }, ...candles.map((c) => ({ timeMs: c.timeMs + hour, value: c.close })), ...slots.map((c) => ({ timeMs: c.timeMs, value: c.open }))].sort((a, b) => a.timeMs - b.timeMs);

    expect(report.value.initial).toBe('35472.4');
    expect(report.drawdown.samples).toBe(1 + report.data.candles + report.slots);
    const { byAmount, byShare } = deepestFalls(samples);
    expect(byShare.peak).toEqual({ timeMs: firstMs, value: first.open });
    expect(report.drawdown.max).toEqual(episode(byAmount));
    expect(report.drawdown.maxPct).toEqual(episode(byShare));
    expect(report.drawdown.maxPct).toMatchObject({ peakTimeMs: firstMs, peakValue: '35472.4' });
  });
});
