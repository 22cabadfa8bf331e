import type { ReportOrder } from '../../src/backtest/report/run.ts';
import { watchRun } from './observed.ts';
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadCandles } from '../../src/candles/index.ts';
import { runBacktest } from '../../src/backtest/driver.ts';
import { loadStrategyFiles } from '../../src/config/daemon-config.ts';
import { Decimal, formatDecimal } from '../../src/domain/money.ts';

const FIXTURE = new URL('../fixtures/candles/btc-1h-2021-03-01_14.csv', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'stacker-dip-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** One instance file (written from `text`) backtested over the fixture from 100000 USDT: its orders, in the journal's order. */
async function backtest(name: string, text: string): Promise<{ orders: ReportOrder[] }> {
  const file = join(dir, name);
  writeFileSync(file, text);
  const watched = watchRun();
  await runBacktest({
    candles: loadCandles(FIXTURE, { market: 'BTC_USDT' }),
    market: 'BTC_USDT',
    dataFile: FIXTURE,
    instances: await loadStrategyFiles([file]),
    wallet: new Map([['USDT', new Decimal('100000')]]),
    slippagePct: new Decimal(0),
    flex: null,
    observer: watched.observer,
  });
  return { orders: watched.orders() };
}

/** Candle rows (header first) and one instance file, backtested from `usdt` USDT: its orders. */
async function backtestRows(name: string, rows: readonly string[], text: string, usdt: string): Promise<ReportOrder[]> {
  const csv = join(dir, `${name}.csv`);
  writeFileSync(csv, `${rows.join('\n')}\n`);
  const file = join(dir, `${name}.env`);
  writeFileSync(file, text);
  const watched = watchRun();
  await runBacktest({ candles: loadCandles(csv, { market: 'BTC_USDT' }), market: 'BTC_USDT', dataFile: csv, instances: await loadStrategyFiles([file]), wallet: new Map([['USDT', new Decimal(usdt)]]), slippagePct: new Decimal(0), flex: null, observer: watched.observer });
  return watched.orders();
}

describe('dca buying the dip in a backtest (candles from the data, one code path with live)', () => {
  it('buys twice the amount exactly at the slots whose price is 3 % or more below the 24-hour average of the closes before it', async () => {
    const run = await backtest('dip.env', 'STRATEGY=dca\nSCHEDULE="0 */4 * * *"\nMARKET=BTC_USDT\nAMOUNT=0.001\nDIP_PCT=3\nDIP_LOOKBACK=24h\n');
    // The rule computed here from the file itself, independently of the engine.
    const rows = readFileSync(FIXTURE, 'utf8').trim().split('\n').slice(1).map((line) => line.split(','));
    const expected = run.orders.map((order) => {
      const slotSec = order.slotTimeMs / 1000;
      const window = rows.filter((r) => Number(r[0]) >= slotSec - 86_400 && Number(r[0]) < slotSec);
      const open = rows.find((r) => Number(r[0]) >= slotSec)?.[1] ?? '0';
      const average = window.reduce((sum, r) => sum.add(r[4] ?? '0'), new Decimal(0)).div(window.length || 1);
      const dip = window.length > 0 && average.sub(open).div(average).mul(100).gte(3);
      return dip ? '0.002' : '0.001';
    });
    expect(run.orders.map((o) => formatDecimal(o.amount))).toEqual(expected);
    expect(expected.filter((a) => a === '0.002').length).toBeGreaterThan(0);
  });
});

describe('a slot between two candle opens decides on what it could have seen', () => {
  it('sees the open of the candle under way, not the next open its order fills at: a crash at 09:00 is no dip at 08:30', async () => {
    // Hourly candles at 100 on 1 January 2024; the 08:00 hour closes at 1000, and 09:00 opens at 50.
    const rows = ['time,open,high,low,close,volume'];
    const midnight = Date.UTC(2024, 0, 1) / 1000;
    for (let hour = 0; hour <= 10; hour += 1) {
      const time = midnight + hour * 3600;
      rows.push(hour === 8 ? `${time},100,1000,100,1000,1` : hour === 9 ? `${time},50,100,50,100,1` : `${time},100,100,100,100,1`);
    }
    const orders = await backtestRows('crash-at-nine', rows, 'STRATEGY=dca\nSCHEDULE="30 8 * * *"\nMARKET=BTC_USDT\nAMOUNT=1\nDIP_PCT=10\nDIP_MULTIPLIER=3\nDIP_LOOKBACK=3h\n', '1000');
    expect(orders.map((o) => [formatDecimal(o.amount), formatDecimal(o.filledQuote)])).toEqual([['1', '50']]);
  });
});

describe('on candles coarser than an hour, a slot sees only the candles that have closed', () => {
  it("does not average in today's daily candle at 09:00: its close is tonight's price", async () => {
    // Daily candles at 100; 11 January opens at 100 and closes at 1000 (known only at midnight).
    const rows = ['time,open,high,low,close,volume'];
    const first = Date.UTC(2024, 0, 1) / 1000;
    for (let day = 0; day < 14; day += 1) rows.push(day === 10 ? `${first + day * 86_400},100,1000,100,1000,1` : `${first + day * 86_400},100,100,100,100,1`);
    const orders = await backtestRows('daily-spike', rows, 'STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nAMOUNT=1\nDIP_PCT=10\nDIP_MULTIPLIER=3\nDIP_LOOKBACK=2d\n', '10000');
    const bought = orders.map((o) => [new Date(o.slotTimeMs).toISOString().slice(5, 10), formatDecimal(o.amount)]);
    // At 09:00 on the 11th the two days' window holds the 10th's close (100): no dip. On the 12th it holds the 11th's 1000.
    expect(bought.filter(([, amount]) => amount !== '1')).toEqual([['01-12', '3']]);
  });
});

describe('dca by quote amount in a backtest', () => {
  it('never spends more than AMOUNT_QUOTE on a slot (the fill is at the price the slot saw), the fee on top', async () => {
    const run = await backtest('quote.env', 'STRATEGY=dca\nSCHEDULE="0 * * * *"\nMARKET=BTC_USDT\nAMOUNT_QUOTE=25\n');
    expect(run.orders.length).toBeGreaterThan(300);
    for (const order of run.orders) {
      expect(order.filledQuote.lte(25)).toBe(true);
      // Rounded down to 6 decimals: one more unit of base would have cost more than 25.
      expect(order.filledQuote.add(new Decimal('0.000001').mul(order.filledQuote.div(order.filledBase))).gt(25)).toBe(true);
    }
  });
});
