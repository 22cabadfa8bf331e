import { describe, expect, it } from 'vitest';
import { Decimal, formatDecimal } from '../../src/domain/money.ts';
import { PaperExchange, type PaperMarketData } from '../../src/sim/paper-exchange.ts';
import { DEMO_MARKETS } from '../../src/sim/seed.ts';

const d = (text: string) => new Decimal(text);

function marketData(asks: Array<[string, string]>, last = '65000'): PaperMarketData & { bookReads: number } {
  const data = {
    bookReads: 0,
    markets: async () => DEMO_MARKETS,
    prices: async (markets: readonly string[]) => new Map(markets.filter((m) => m === 'BTC_USDT').map((m) => [m, d(last)] as const)),
    orderBook: async () => {
      data.bookReads += 1;
      return { asks: asks.map(([price, amount]) => [d(price), d(amount)] as const) };
    },
  };
  return data;
}

const wallet = new Map([['USDT', d('10000')]]);
const buy = (paper: PaperExchange, amount: string) => paper.buyStockMarket({ market: 'BTC_USDT', baseAmount: d(amount), clientOrderId: `p-${amount}`, stp: 'no' });

describe('the paper (dry-run) exchange', () => {
  it('fills at the best ask when the first level covers the buy', async () => {
    const paper = new PaperExchange({ marketData: marketData([['65010.5', '1']]), wallet, slippagePct: d('0') });
    const order = await buy(paper, '0.001');
    // 0.001 × 65010.5 = 65.0105; taker fee 0.1 % = 0.0650105.
    expect([order.status, formatDecimal(order.filledQuote), formatDecimal(order.fee)]).toEqual(['FILLED', '65.0105', '0.0650105']);
    expect(formatDecimal((await paper.tradeBalances()).get('USDT')?.available ?? d('0'))).toBe('9934.9244895');
  });

  it('walks the real book across levels and fills at the volume-weighted price, rounded up to the price precision', async () => {
    const paper = new PaperExchange({ marketData: marketData([['65000', '0.001'], ['65100', '0.001'], ['65300', '5']]), wallet, slippagePct: d('0') });
    const order = await buy(paper, '0.003');
    // Levels taken: 0.001 × 65000 + 0.001 × 65100 + 0.001 × 65300 = 195.4; / 0.003 = 65133.333… → 65133.34 (up); × 0.003 = 195.40002.
    expect(formatDecimal(order.filledQuote)).toBe('195.40002');
  });

  it('falls back to the last price plus slippage when the book cannot fill the amount', async () => {
    const paper = new PaperExchange({ marketData: marketData([['65000', '0.0001']], '64000'), wallet, slippagePct: d('0.5') });
    const order = await buy(paper, '0.001');
    // 64000 × 1.005 = 64320; × 0.001 = 64.32.
    expect(formatDecimal(order.filledQuote)).toBe('64.32');
  });

  it('refuses what the exchange would refuse, as the exchange error, and moves no money', async () => {
    const paper = new PaperExchange({ marketData: marketData([['65000', '1']]), wallet: new Map([['USDT', d('10')]]), slippagePct: d('0') });
    await expect(buy(paper, '0.001')).rejects.toMatchObject({ code: 'E_EXCHANGE_REFUSED' });
    expect(formatDecimal((await paper.tradeBalances()).get('USDT')?.available ?? d('0'))).toBe('10');
    expect(paper.sim.verifyLedger()).toBe(true);
  });
});
