import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';
import { runBacktest } from '../../src/backtest/driver.ts';
import { buildReport } from '../../src/backtest/report/build.ts';
import { loadCandles } from '../../src/candles/index.ts';
import { loadStrategyFiles } from '../../src/config/daemon-config.ts';
import type { TradeBalance } from '../../src/domain/account.ts';
import type { Candle } from '../../src/domain/candle.ts';
import { Decimal, formatDecimal } from '../../src/domain/money.ts';
import { Engine } from '../../src/engine/engine.ts';
import { VirtualClock } from '../../src/engine/schedule/clock.ts';
import { ApiMarketData } from '../../src/exchange/market-data.ts';
import { PaperExchange } from '../../src/sim/paper-exchange.ts';
import { dca } from '../../strategies/dca.ts';
import { btcUsdt, decideWith } from '../../strategies/sdk-testing.ts';
import { type SlotView, defineStrategy, param } from '../../strategies/sdk.ts';
import { eachEngineWorld, runtimeOf } from './harness.ts';

// What a strategy's view hands out is the engine's own: the guards judge the slot's intents by
// it, the paper and backtest fills and every other instance read the same market rules. A
// strategy writing into it fails on its own, saying what it wrote, and changes nothing for the rest.
const SLOT = Date.UTC(2026, 10, 22, 9, 0, 0);
const FIXTURE = resolve(import.meta.dirname, '../fixtures/candles/btc-1h-2021-03-01_14.csv');

/**
 * The writes a strategy could try, each with what its failure says. Candles, read in bulk, are
 * frozen rather than behind a proxy: the runtime's TypeError says what was written, and stacker
 * says what it means.
 */
const WRITES = {
  rules: {
    write: (view: SlotView) =>
      Object.assign(view.market('BTC_USDT') ?? {}, { basePrecision: 12, minBaseAmount: new Decimal('0.000000000001'), minQuoteTotal: new Decimal(0), takerFeePct: new Decimal(0), maxQuoteTotal: null }),
    says: 'market rules are read-only: the strategy tried to set basePrecision',
  },
  'trade-balance': { write: (view: SlotView) => Object.assign(view.tradeBalance('USDT'), { available: new Decimal('1000000000') }), says: 'trade balances are read-only: the strategy tried to set available' },
  'trade-balances': {
    write: (view: SlotView) => (view.tradeBalances() as Map<string, TradeBalance>).set('USDT', { available: new Decimal('1000000000'), freeze: new Decimal(0) }),
    says: 'trade balances are read-only: the strategy tried to set USDT',
  },
  'main-balances': { write: (view: SlotView) => (view.mainBalances() as Map<string, Decimal>).clear(), says: 'main balances are read-only: the strategy tried to clear them' },
  budget: { write: (view: SlotView) => Object.assign(view.budget, { remainingQuote: () => null }), says: 'budget figures are read-only: the strategy tried to set remainingQuote' },
  flex: { write: (view: SlotView) => Object.assign(view.flexInvestments()[0] ?? {}, { invested: new Decimal('1000000') }), says: 'flex investments are read-only: the strategy tried to set invested' },
  candles: { write: (view: SlotView) => (view.candles('BTC_USDT') as Candle[]).reverse(), says: "Cannot assign to read only property '0' of object '[object Array]': what a slot's view hands a strategy is read-only" },
  candle: { write: (view: SlotView) => Object.assign(view.candles('BTC_USDT')[0] ?? {}, { close: new Decimal(1) }), says: "Cannot assign to read only property 'close' of object '#<Object>': what a slot's view hands a strategy is read-only" },
  state: { write: (view: SlotView) => (view.state as Map<string, string>).set('slots', '1'), says: 'state entries (intent.setState writes them) are read-only: the strategy tried to set slots' },
  view: { write: (view: SlotView) => Object.assign(view, { market: () => undefined }), says: "Cannot assign to read only property 'market' of object '#<Object>': what a slot's view hands a strategy is read-only" },
  // The SDK's Decimal is the program's: its settings are every instance's and every fill's rounding.
  'decimal-settings': { write: () => Decimal.set({ precision: 2, rounding: Decimal.ROUND_UP }), says: "Decimal's settings are the same for the whole program (precision 60, ROUND_HALF_EVEN) and cannot be changed" },
  'decimal-precision': { write: () => Object.assign(Decimal, { precision: 2 }), says: "Decimal is the whole program's: its settings and the methods every value shares cannot be changed (the strategy tried to change precision)" },
  // Every Decimal's methods: replacing one (to round, or to print two decimals by default) changed every instance's money.
  'decimal-methods': {
    write: () => Object.assign(Object.getPrototypeOf(new Decimal(1)) as object, { times: () => new Decimal(1) }),
    says: "Decimal is the whole program's: its settings and the methods every value shares cannot be changed (the strategy tried to change times)",
  },
} as const;

/** Writes into what its view gave it (WRITE), then buys dust on BTC_USDT: only the write's failure stands between it and the exchange. */
const writer = defineStrategy({
  name: 'writer',
  describe: 'Writes into its view, then buys dust.',
  params: {
    MARKET: param.market({ description: 'Where to buy.', example: 'BTC_USDT' }),
    WRITE: param.oneOf(Object.keys(WRITES) as [keyof typeof WRITES, ...(keyof typeof WRITES)[]], { description: 'What to write into.', example: 'rules' }),
  },
  budgetAsset: () => 'USDT',
  reads: () => ['balances', 'markets', 'prices', 'flex', 'candles'],
  candleWindows: (params) => [{ market: params.MARKET, lookbackSec: 86_400 }],
  async decide(view, params) {
    WRITES[params.WRITE].write(view);
    return [{ kind: 'buy-stock-market', market: params.MARKET, amount: new Decimal('0.000000123456') }];
  },
});

/** dca buying 0.00051234 BTC: the market's 6 decimals round it to 0.000512, and the taker fee is 0.1 %. */
const dcaEnv = { STRATEGY: 'dca', SCHEDULE: '0 9 * * *', MARKET: 'BTC_USDT', AMOUNT: '0.00051234' };

describe('what a view hands a strategy is read-only (live on the sandbox, and dry-run on a paper account)', () => {
  const current = eachEngineWorld();

  it.each(Object.keys(WRITES) as (keyof typeof WRITES)[])('a strategy writing into its %s fails, saying what it wrote; nothing is sent and the other instance buys as before', async (write) => {
    const engine = current().engine([runtimeOf({ instance: 'a-writer', strategy: writer, env: { MARKET: 'BTC_USDT', WRITE: write } }), runtimeOf({ instance: 'b-dca', strategy: dca, env: dcaEnv })]);
    expect(await engine.runSlot('a-writer', SLOT)).toBe('disabled');
    expect(engine.health().disabledInstances).toEqual([{ instance: 'a-writer', slotTimeMs: SLOT, reason: expect.stringContaining(`strategy writer failed: ${WRITES[write].says}`) }]);
    expect(current().logs.find((line) => line.fields['event'] === 'strategy-disabled')?.fields).toMatchObject({ instance: 'a-writer', error: expect.stringContaining(WRITES[write].says) });

    expect(await engine.runSlot('b-dca', SLOT)).toBe('done');
    // Its own 0.00051234 rounded to the market's 6 decimals; a dust buy never reached the exchange.
    expect(current().sandbox.exchange.orderHistory({ market: 'BTC_USDT' }).map((order) => formatDecimal(order.amount))).toEqual(['0.000512']);
  });

  it("a strategy writing into the market rules changes neither the other instance's rounding nor the paper fill's fee", async () => {
    const clock = new VirtualClock(SLOT);
    const paper = new PaperExchange({ marketData: new ApiMarketData(new ApiClient({ baseUrl: current().sandbox.url })), wallet: new Map([['USDT', new Decimal('1000')]]), slippagePct: new Decimal(0), clock });
    const engine = new Engine({ ...current().deps(), exchange: paper, mode: 'dry-run', clock }, [
      runtimeOf({ instance: 'a-writer', strategy: writer, env: { MARKET: 'BTC_USDT', WRITE: 'rules' } }),
      runtimeOf({ instance: 'b-dca', strategy: dca, env: dcaEnv }),
    ], { runId: null });
    try {
      expect(await engine.runSlot('a-writer', SLOT)).toBe('disabled');
      expect(await engine.runSlot('b-dca', SLOT)).toBe('done');
      const [stored] = await current().journal.listOrders({ instance: 'b-dca' });
      expect(await current().journal.listOrders({ instance: 'a-writer' })).toEqual([]);
      expect(formatDecimal(stored?.filledBase ?? new Decimal(0))).toBe('0.000512');
      // The demo market's 0.1 % taker fee, rounded up to 8 decimals, on what was paid.
      expect(stored?.fee.eq(stored.filledQuote.mul('0.001').toDecimalPlaces(8, Decimal.ROUND_UP))).toBe(true);
      expect(stored?.fee.gt(0)).toBe(true);
    } finally {
      await paper.close();
    }
  });
});

describe('what a view hands a strategy is read-only (backtest)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'stacker-read-only-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string): string => {
    const path = join(dir, `${name}.env`);
    writeFileSync(path, text);
    return path;
  };
  const backtest = (instances: Awaited<ReturnType<typeof loadStrategyFiles>>) =>
    runBacktest({ candles: loadCandles(FIXTURE, { market: 'BTC_USDT' }), market: 'BTC_USDT', dataFile: FIXTURE, instances, wallet: new Map([['USDT', new Decimal('1000')]]), slippagePct: new Decimal(0), flex: null });

  it('a strategy writing into the market rules is reported failed, and the other instance buys and pays fees exactly as it does alone', async () => {
    const dcaFile = file('b-dca', 'STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nAMOUNT=0.00051234\n');
    const [writerInstance] = await loadStrategyFiles([file('a-writer', 'STRATEGY=writer\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nWRITE=rules\n')], { strategies: new Map([[writer.name, writer as never]]) });
    const alone = buildReport(await backtest(await loadStrategyFiles([dcaFile])));
    const beside = buildReport(await backtest([writerInstance!, ...(await loadStrategyFiles([dcaFile]))]));
    expect(beside.strategyFailures).toEqual([expect.objectContaining({ instance: 'a-writer', reason: expect.stringContaining('strategy writer failed: market rules are read-only: the strategy tried to set basePrecision') })]);
    expect(alone.orders.filled).toBe(14);
    expect(beside.totals).toEqual(alone.totals);
    expect(beside.totals.baseAcquired).toBe('0.007168');
  });
});

describe('the same holds where a strategy is tested and checked', () => {
  it("the SDK's test view refuses the writes a slot refuses, and so does checkParams's context at start", async () => {
    await expect(decideWith(writer, { MARKET: 'BTC_USDT', WRITE: 'rules' }, { markets: [btcUsdt()], prices: { BTC_USDT: '65000' }, candles: { BTC_USDT: [] } })).rejects.toThrow(
      'market rules are read-only: the strategy tried to set basePrecision',
    );
    const checking = defineStrategy({
      name: 'checking',
      describe: 'Lowers the minimum it is checked against.',
      params: { MARKET: param.market({ description: 'Where.', example: 'BTC_USDT' }) },
      checkParams(params, context) {
        Object.assign(context.market(params.MARKET) ?? {}, { minQuoteTotal: new Decimal(0) });
        return [];
      },
      decide: async () => [],
    });
    const rules = btcUsdt();
    const context = { market: (name: string) => (name === rules.name ? rules : undefined), marketNames: () => [rules.name], unlisted: (name: string) => `no ${name}` };
    expect(() => checking.checkParams?.({ MARKET: 'BTC_USDT' }, context, 'checking.env')).toThrow('market rules are read-only: the strategy tried to set minQuoteTotal');
    expect(formatDecimal(rules.minQuoteTotal)).toBe('5');
  });
});
