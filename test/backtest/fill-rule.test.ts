import { describe, expect, it } from 'vitest';
import { parseCandles } from '../../src/candles/index.ts';
import { ExchangeValidationError } from '../../src/domain/errors.ts';
import { Decimal, formatDecimal } from '../../src/domain/money.ts';
import { VirtualClock } from '../../src/engine/schedule/clock.ts';
import { BacktestExchange } from '../../src/sim/backtest-exchange.ts';

const CSV = 'time,open,high,low,close,volume\n1700000000,37000.5,37100,36900,37050,1\n1700003600,37050,37200,37000,37180.25,1\n';

function world(slippagePct: string) {
  const candles = parseCandles(CSV, { market: 'BTC_USDT' });
  const clock = new VirtualClock(1_700_000_000_000);
  const exchange = new BacktestExchange({ clock, market: 'BTC_USDT', candles, wallet: new Map([['USDT', new Decimal('1000')]]), slippagePct: new Decimal(slippagePct) });
  return { clock, exchange };
}

describe('the backtest fill rule', () => {
  it('fills a slot at the open of the first candle opening at or after it, with the taker fee', async () => {
    const { clock, exchange } = world('0');
    clock.set(1_700_000_000_000 + 1); // one millisecond after the first candle opened: the next candle's open
    const order = await exchange.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.01'), clientOrderId: 'a-1', stp: 'no' });
    // 0.01 × 37050 = 370.5; fee 0.1 % = 0.3705 (BTC_USDT demo rules: taker 0.1 %, fee precision 8).
    expect([order.status, formatDecimal(order.filledQuote), formatDecimal(order.fee)]).toEqual(['FILLED', '370.5', '0.3705']);
  });

  it('adds slippage to the price, rounded up to the market price precision', async () => {
    const { exchange } = world('0.5');
    const order = await exchange.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.01'), clientOrderId: 'a-2', stp: 'no' });
    // 37000.5 × 1.005 = 37185.5025 → 37185.51 (2 decimals, up); × 0.01 = 371.8551; fee 0.3718551.
    expect([formatDecimal(order.filledQuote), formatDecimal(order.fee)]).toEqual(['371.8551', '0.3718551']);
  });

  it('refuses what the market rules refuse, as the exchange would', async () => {
    const { exchange } = world('0');
    await expect(exchange.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.0001'), clientOrderId: 'a-3', stp: 'no' })).rejects.toBeInstanceOf(ExchangeValidationError);
  });
});
