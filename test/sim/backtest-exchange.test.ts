import { describe, expect, it } from 'vitest';
import { parseCandles } from '../../src/candles/index.ts';
import type { MarketRules } from '../../src/domain/market.ts';
import { BacktestExchange } from '../../src/sim/backtest-exchange.ts';
import { DEMO_MARKETS } from '../../src/sim/seed.ts';
import { d, manualClock, text } from './helpers.ts';

const T0 = 1_700_000_000_000;
const BTC_CSV = 'time,open,high,low,close,volume\n1700000000,37000.5,37100,36900,37050,1\n1700003600,37050,37200,37000,37180.25,1\n';
const ETH_CSV = 'time,open,high,low,close,volume\n1700000000,2000.12,2010,1990,2005,1\n1700003600,2005,2020,2000,2015.5,1\n';
const btc = () => parseCandles(BTC_CSV, { market: 'BTC_USDT' });
const eth = () => parseCandles(ETH_CSV, { market: 'ETH_USDT' });
const USDT_1000 = new Map([['USDT', d('1000')]]);

function world(options: { slippagePct?: string; rules?: MarketRules | readonly MarketRules[] } = {}) {
  const clock = manualClock(T0);
  const exchange = new BacktestExchange({
    clock,
    candles: [btc(), eth()],
    wallet: USDT_1000,
    ...(options.slippagePct === undefined ? {} : { slippagePct: d(options.slippagePct) }),
    ...(options.rules === undefined ? {} : { rules: options.rules }),
  });
  const buy = (baseAmount: string, market = 'BTC_USDT') => exchange.buyStockMarket({ market, baseAmount: d(baseAmount), clientOrderId: `b-${market}-${baseAmount}`, stp: 'no' });
  return { clock, exchange, buy };
}

describe('the backtest exchange: fill rule', () => {
  it('fills at the open of the candle opening exactly at the slot, with the taker fee of the market rules', async () => {
    const { buy } = world();
    const order = await buy('0.01');
    // 0.01 × 37000.5 = 370.005; fee 0.1 % = 0.370005.
    expect([order.status, text(order.filledQuote), text(order.fee)]).toEqual(['FILLED', '370.005', '0.370005']);
  });

  it('one millisecond into a candle, fills at the next candle’s open', async () => {
    const { clock, buy } = world();
    clock.advance(1);
    expect(text((await buy('0.01')).filledQuote)).toBe('370.5');
  });

  it('adds the configured slippage, rounded up to the price precision (default 0)', async () => {
    const { buy } = world({ slippagePct: '0.5' });
    // 37000.5 × 1.005 = 37185.5025 → 37185.51; × 0.01 = 371.8551; fee 0.3718551.
    const order = await buy('0.01');
    expect([text(order.filledQuote), text(order.fee)]).toEqual(['371.8551', '0.3718551']);
  });

  it('shows the last price known at the clock’s now as the ticker, without slippage: never a later candle’s', async () => {
    const { clock, exchange, buy } = world({ slippagePct: '0.5' });
    expect(text((await exchange.prices(['BTC_USDT'])).get('BTC_USDT') ?? d('0'))).toBe('37000.5');
    // Inside the first hour: its open is the last price known, although an order fills at the next open.
    clock.advance(1);
    const prices = await exchange.prices(['BTC_USDT', 'ETH_USDT', 'DOGE_USDT']);
    expect([...prices].map(([m, p]) => [m, text(p)])).toEqual([
      ['BTC_USDT', '37000.5'],
      ['ETH_USDT', '2000.12'],
    ]);
    expect(text(exchange.priceAt('BTC_USDT', clock.nowMs()) ?? d('0'))).toBe('37050');
    const order = await buy('0.001');
    expect(text(order.filledQuote)).toBe(text(d('37050').mul('1.005').mul('0.001')));
    // Past the last candle's close: its close, for the ticker and the fill rule alike.
    clock.advance(7200_000);
    expect(text((await exchange.prices(['BTC_USDT'])).get('BTC_USDT') ?? d('0'))).toBe('37180.25');
    expect(text(exchange.priceAt('BTC_USDT', clock.nowMs()) ?? d('0'))).toBe('37180.25');
  });

  it('trades every market it has candles for, each at its own price', async () => {
    const { buy } = world();
    // 0.1 ETH × 2000.12 = 200.012 (demo ETH rules: 4 base decimals).
    expect(text((await buy('0.1', 'ETH_USDT')).filledQuote)).toBe('200.012');
  });
});

describe('the backtest exchange: market rules', () => {
  it('uses the demo rules of the sim for its markets by default', async () => {
    const { exchange } = world();
    expect(await exchange.markets()).toEqual(DEMO_MARKETS);
  });

  it('takes rules per market, matched by name, the rest from the demo rules', async () => {
    const cheap: MarketRules = { ...DEMO_MARKETS[0]!, takerFeePct: d('0.05') };
    const { exchange, buy } = world({ rules: [cheap] });
    expect((await exchange.markets()).map((m) => text(m.takerFeePct))).toEqual(['0.05', '0.1']);
    expect(text((await buy('0.01')).fee)).toBe('0.1850025');
  });

  it('refuses precision, minimums and balance as the exchange would', async () => {
    const { buy } = world();
    await expect(buy('0.0000001')).rejects.toMatchObject({ code: 'E_EXCHANGE_VALIDATION', exchangeCode: 32 });
    await expect(buy('0.00001')).rejects.toMatchObject({ code: 'E_EXCHANGE_VALIDATION', fieldErrors: { total: ['Total (amount * price) is less than 5'] } });
    await expect(buy('1')).rejects.toMatchObject({ code: 'E_EXCHANGE_REFUSED', refusal: 'insufficient-funds', exchangeCode: 10 });
    await expect(buy('1', 'DOGE_USDT')).rejects.toMatchObject({ exchangeCode: 31 });
  });

  it('refuses a set-up it cannot price or rule', () => {
    const clock = manualClock(T0);
    const base = { clock, wallet: USDT_1000 };
    expect(() => new BacktestExchange({ ...base, candles: parseCandles(BTC_CSV, { market: 'SOL_USDT' }) })).toThrow(/no market rules for SOL_USDT/);
    expect(() => new BacktestExchange({ ...base, candles: btc(), market: 'ETH_USDT' })).toThrow(/no candles for ETH_USDT/);
    expect(() => new BacktestExchange({ ...base, candles: btc(), rules: DEMO_MARKETS[1]! })).toThrow(/ETH_USDT, which has no candles/);
    expect(() => new BacktestExchange({ ...base, candles: [btc(), btc()] })).toThrow(/one candle series per market/);
  });
});

describe('the backtest account', () => {
  it('starts with the wallet on the trade balance, optional main balances, no codes', async () => {
    const exchange = new BacktestExchange({ clock: manualClock(T0), candles: btc(), wallet: USDT_1000, main: new Map([['BTC', d('0.5')]]) });
    expect(text((await exchange.tradeBalances()).get('USDT')?.available ?? d('0'))).toBe('1000');
    expect(text((await exchange.mainBalances()).get('BTC') ?? d('0'))).toBe('0.5');
    expect(await exchange.codes()).toEqual([]);
    expect(exchange.kind).toBe('backtest');
  });

  it('keeps exact books through a run of buys', async () => {
    const { clock, exchange, buy } = world();
    await buy('0.001');
    clock.advance(3600_000);
    await buy('0.002');
    const balances = await exchange.tradeBalances();
    // 0.001 × 37000.5 = 37.0005 (+0.0370005); 0.002 × 37050 = 74.1 (+0.0741).
    expect(text(balances.get('USDT')?.available ?? d('0'))).toBe('888.7883995');
    expect(text(balances.get('BTC')?.available ?? d('0'))).toBe('0.003');
    expect(exchange.sim.verifyLedger()).toBe(true);
  });
});
