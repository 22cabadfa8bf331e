import { describe, expect, it } from 'vitest';
import { ExchangeRefusedError, ExchangeValidationError, NetworkError, outcomeUnknown } from '../../src/domain/errors.ts';
import type { MarketRules } from '../../src/domain/market.ts';
import { Decimal } from '../../src/domain/money.ts';
import { PaperExchange, type PaperMarketData } from '../../src/sim/paper-exchange.ts';
import { DEMO_MARKETS } from '../../src/sim/seed.ts';
import { d, manualClock, text } from './helpers.ts';

interface FakeMarketData extends PaperMarketData {
  marketReads: number;
  bookReads: number;
  depthAsked: number | null;
}

/** Public market data as the exchange would answer it: BTC_USDT rules, a last price, a book. */
function marketData(options: { asks?: Array<[string, string]> | null; last?: string | null; rules?: readonly MarketRules[]; fail?: Error } = {}): FakeMarketData {
  const { asks = [['65000', '1']], last = '65000', rules = DEMO_MARKETS } = options;
  const data: FakeMarketData = {
    marketReads: 0,
    bookReads: 0,
    depthAsked: null,
    markets: async () => {
      data.marketReads += 1;
      if (options.fail) throw options.fail;
      return rules;
    },
    prices: async (markets) => new Map(last === null ? [] : markets.filter((m) => m === 'BTC_USDT').map((m) => [m, d(last)] as const)),
  };
  if (asks !== null) {
    data.orderBook = async (_market, depth) => {
      data.bookReads += 1;
      data.depthAsked = depth;
      return { asks: asks.map(([price, amount]) => [d(price), d(amount)] as const) };
    };
  }
  return data;
}

const USDT_10000 = new Map([['USDT', d('10000')]]);
const paperOver = (data: PaperMarketData, slippagePct = '0', wallet: ReadonlyMap<string, Decimal> = USDT_10000) =>
  new PaperExchange({ marketData: data, wallet, slippagePct: d(slippagePct), clock: manualClock(1_760_000_000_000) });
const buy = (paper: PaperExchange, amount: string, market = 'BTC_USDT') =>
  paper.buyStockMarket({ market, baseAmount: d(amount), clientOrderId: `p-${amount}`, stp: 'no' });
const deals = (paper: PaperExchange, orderId: string) => paper.sim.orderDeals(orderId).map((deal) => [text(deal.price), text(deal.baseAmount), text(deal.quoteAmount)]);

describe('the paper (dry-run) exchange: a buy walks the real order book', () => {
  it('fills at the best ask when the first level covers the buy, with the market taker fee', async () => {
    const paper = paperOver(marketData({ asks: [['65010.5', '1']] }));
    const order = await buy(paper, '0.001');
    // 0.001 × 65010.5 = 65.0105; taker fee 0.1 % = 0.0650105.
    expect([order.status, text(order.filledBase), text(order.filledQuote), text(order.fee), order.feeAsset]).toEqual(['FILLED', '0.001', '65.0105', '0.0650105', 'USDT']);
    // 10000 − 65.0105 − 0.0650105.
    expect(text((await paper.tradeBalances()).get('USDT')?.available ?? d('0'))).toBe('9934.9244895');
    expect(text((await paper.tradeBalances()).get('BTC')?.available ?? d('0'))).toBe('0.001');
  });

  it('takes level after level, one deal per level at that level’s price, exact to the last digit', async () => {
    const paper = paperOver(marketData({ asks: [['65000', '0.001'], ['65100', '0.001'], ['65300', '5']] }));
    const order = await buy(paper, '0.0025');
    // 0.001 × 65000 + 0.001 × 65100 + 0.0005 × 65300 = 65 + 65.1 + 32.65 = 162.75; fee 0.16275.
    expect(deals(paper, order.orderId)).toEqual([
      ['65000', '0.001', '65'],
      ['65100', '0.001', '65.1'],
      ['65300', '0.0005', '32.65'],
    ]);
    expect([text(order.filledQuote), text(order.fee)]).toEqual(['162.75', '0.16275']);
    expect(paper.sim.verifyLedger()).toBe(true);
  });

  it('past the depth it fetched, fills the rest at the worst ask seen plus slippage', async () => {
    const paper = paperOver(marketData({ asks: [['65000', '0.001'], ['65100', '0.001']] }), '0.5');
    const order = await buy(paper, '0.003');
    // The third 0.001 at 65100 × 1.005 = 65425.5: 65 + 65.1 + 65.4255 = 195.5255.
    expect(deals(paper, order.orderId)).toEqual([
      ['65000', '0.001', '65'],
      ['65100', '0.001', '65.1'],
      ['65425.5', '0.001', '65.4255'],
    ]);
    expect(text(order.filledQuote)).toBe('195.5255');
  });

  it('asks for the exchange’s full depth (100 levels) by default', async () => {
    const data = marketData();
    await buy(paperOver(data), '0.001');
    expect([data.bookReads, data.depthAsked]).toEqual([1, 100]);
  });

  it('without a book fills at the last price plus slippage, rounded up to the price precision', async () => {
    const paper = paperOver(marketData({ asks: null, last: '64000.01' }), '0.5');
    const order = await buy(paper, '0.001');
    // 64000.01 × 1.005 = 64320.01005 → 64320.02; × 0.001 = 64.32002.
    expect(deals(paper, order.orderId)).toEqual([['64320.02', '0.001', '64.32002']]);
  });

  it('treats an empty ask side as no book', async () => {
    const paper = paperOver(marketData({ asks: [], last: '64000' }), '0');
    expect(text((await buy(paper, '0.001')).filledQuote)).toBe('64');
  });

  it('checks the minimum total at the best ask of the real book', async () => {
    // 0.0001 × 49000 = 4.9 < 5 even though the last price says 65000 × 0.0001 = 6.5.
    const paper = paperOver(marketData({ asks: [['49000', '1']] }));
    const error = await buy(paper, '0.0001').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExchangeValidationError);
    expect((error as ExchangeValidationError).fieldErrors).toEqual({ total: ['Total (amount * price) is less than 5'] });
  });
});

describe('the paper account', () => {
  it('starts with the configured trade and main balances, flex investments and no codes', async () => {
    const paper = new PaperExchange({
      marketData: marketData(),
      wallet: new Map([['USDT', d('1000')], ['BTC', d('0')]]),
      main: new Map([['USDT', d('250')]]),
      slippagePct: d('0'),
      flex: [{ planId: '00000000-0000-4000-8000-0000000000f1', ticker: 'USDT', amount: d('500') }],
      clock: manualClock(),
    });
    expect(text((await paper.tradeBalances()).get('USDT')?.available ?? d('0'))).toBe('1000');
    expect(text((await paper.mainBalances()).get('USDT') ?? d('0'))).toBe('250');
    expect((await paper.flexInvestments()).map((i) => [i.planId, text(i.invested)])).toEqual([['00000000-0000-4000-8000-0000000000f1', '500']]);
    expect(await paper.codes()).toEqual([]);
    expect(paper.kind).toBe('dry-run');
  });

  it('moves money between main, spot and flex the way the exchange does', async () => {
    const paper = new PaperExchange({
      marketData: marketData(),
      wallet: new Map(),
      slippagePct: d('0'),
      flex: [{ planId: '00000000-0000-4000-8000-0000000000f1', ticker: 'USDT', amount: d('500') }],
      clock: manualClock(),
    });
    await paper.flexWithdraw({ plan: '00000000-0000-4000-8000-0000000000f1', amount: d('120') });
    await paper.transferToSpot({ ticker: 'USDT', amount: d('100') });
    expect(text((await paper.mainBalances()).get('USDT') ?? d('0'))).toBe('20');
    expect(text((await paper.tradeBalances()).get('USDT')?.available ?? d('0'))).toBe('100');
    expect((await paper.flexInvestments()).map((i) => text(i.invested))).toEqual(['380']);
    await expect(paper.transferToSpot({ ticker: 'USDT', amount: d('21') })).rejects.toMatchObject({ code: 'E_EXCHANGE_REFUSED', exchangeCode: 3 });
  });

  it('stamps orders with its injected clock', async () => {
    const clock = manualClock(1_760_000_123_000);
    const paper = new PaperExchange({ marketData: marketData(), wallet: USDT_10000, slippagePct: d('0'), clock });
    expect((await buy(paper, '0.001')).createdAtSec).toBe(1_760_000_123);
  });

  it('loads market rules on first use and keeps them for later buys', async () => {
    const data = marketData();
    const paper = paperOver(data);
    await buy(paper, '0.001');
    await paper.buyStockMarket({ market: 'BTC_USDT', baseAmount: d('0.001'), clientOrderId: 'p-again', stp: 'no' });
    expect(data.marketReads).toBe(1);
    expect((await paper.markets()).map((m) => m.name)).toEqual(['BTC_USDT', 'ETH_USDT']);
  });

  it('refuses what the exchange would refuse, as the exchange error, and moves no money', async () => {
    const paper = paperOver(marketData(), '0', new Map([['USDT', d('10')]]));
    const error = await buy(paper, '0.001').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExchangeRefusedError);
    expect(error).toMatchObject({ code: 'E_EXCHANGE_REFUSED', refusal: 'insufficient-funds', exchangeCode: 10, fieldErrors: { amount: ['Not enough balance.'] } });
    expect(text((await paper.tradeBalances()).get('USDT')?.available ?? d('0'))).toBe('10');
    expect(paper.sim.verifyLedger()).toBe(true);
  });

  it('refuses a market the exchange does not list as "Market is not available."', async () => {
    const error = await buy(paperOver(marketData()), '1', 'DOGE_USDT').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'E_EXCHANGE_VALIDATION', exchangeCode: 31, fieldErrors: { market: ['Market is not available.'] } });
  });

  it('raises a market-data failure as a network error that provably sent nothing', async () => {
    const paper = paperOver(marketData({ fail: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) }));
    const error = await buy(paper, '0.001').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).toMatchObject({ requestSent: false, retryable: true, causeCode: 'ECONNRESET' });
    expect(outcomeUnknown(error)).toBe(false);
    expect(paper.sim.orderHistory()).toEqual([]);
  });

  it('finds its orders by clientOrderId and by id, within the market asked', async () => {
    const paper = paperOver(marketData());
    const order = await buy(paper, '0.001');
    expect(await paper.findOrder({ market: 'BTC_USDT', clientOrderId: 'p-0.001' })).toEqual(order);
    expect(await paper.findOrder({ market: 'BTC_USDT', clientOrderId: 'never-sent' })).toBeNull();
    expect(await paper.orderStatus({ market: 'BTC_USDT', orderId: order.orderId, clientOrderId: 'p-0.001' })).toEqual(order);
    expect(await paper.orderStatus({ market: 'ETH_USDT', orderId: order.orderId, clientOrderId: 'p-0.001' })).toBeNull();
  });

  it('passes prices through from the market data and closes it', async () => {
    let closed = false;
    const data = { ...marketData(), close: async () => void (closed = true) };
    const paper = paperOver(data);
    expect([...(await paper.prices(['BTC_USDT', 'ETH_USDT']))].map(([m, p]) => [m, text(p)])).toEqual([['BTC_USDT', '65000']]);
    await paper.close();
    expect(closed).toBe(true);
  });

  it('keeps the wallet it started from across restarts whatever the wallet setting says meanwhile, so each start names the real one', async () => {
    const start = (wallet: string): PaperExchange =>
      new PaperExchange({ marketData: marketData(), wallet: new Map([['USDT', d(wallet)]]), slippagePct: d('0'), clock: manualClock(1_760_000_000_000) });
    const first = start('300');
    await buy(first, '0.001');
    // Started again with another setting: told so, and the account continues (65.065 USDT spent).
    const second = start('5000');
    expect(second.keptAccount.resume(first.keptAccount.state()).note).toBe('the configured wallet (USDT=5000) differs from the one this paper account started from (USDT=300)');
    expect(text((await second.tradeBalances()).get('USDT')?.available ?? d('0'))).toBe('234.935');
    // What it saves still says USDT=300: the next start with 5000 is told again, one with 300 is not.
    const saved = second.keptAccount.state();
    expect(JSON.parse(saved)).toMatchObject({ seed: 'USDT=300' });
    expect(start('5000').keptAccount.resume(saved).note).toBe('the configured wallet (USDT=5000) differs from the one this paper account started from (USDT=300)');
    expect(start('300').keptAccount.resume(saved).note).toBeNull();
  });

  it('still finds, after a restart, an order it filled just before a kill: a lost answer is looked up, not called not-found while the wallet shows the fill', async () => {
    const start = (): PaperExchange => new PaperExchange({ marketData: marketData(), wallet: USDT_10000, slippagePct: d('0'), clock: manualClock(1_760_000_000_000) });
    const before = start();
    const order = await buy(before, '0.001');
    const after = start();
    after.keptAccount.resume(before.keptAccount.state());
    expect(await after.findOrder({ market: 'BTC_USDT', clientOrderId: 'p-0.001' })).toEqual(order);
    expect(await after.orderStatus({ market: 'BTC_USDT', orderId: order.orderId, clientOrderId: 'p-0.001' })).toEqual(order);
    expect(await after.orderHistory({ sinceSec: 0, untilSec: 2_000_000_000 })).toEqual([order]);
    // Its ids go on from there, and the next order is found beside it.
    const next = await buy(after, '0.002');
    expect(next.orderId).not.toBe(order.orderId);
    expect((await after.orderHistory({ sinceSec: 0, untilSec: 2_000_000_000 })).map((o) => o.orderId)).toEqual([order.orderId, next.orderId]);
  });

  it('refuses a book depth that is not a positive integer', () => {
    expect(() => new PaperExchange({ marketData: marketData(), wallet: USDT_10000, slippagePct: new Decimal(0), bookDepth: 0 })).toThrow(RangeError);
  });
});
