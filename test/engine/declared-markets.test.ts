import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';
import { runBacktest } from '../../src/backtest/driver.ts';
import { loadCandles } from '../../src/candles/index.ts';
import { loadStrategyFiles } from '../../src/config/daemon-config.ts';
import { Decimal } from '../../src/domain/money.ts';
import type { Strategy } from '../../src/engine/contract.ts';
import { Engine } from '../../src/engine/engine.ts';
import { preflight } from '../../src/engine/preflight.ts';
import { VirtualClock } from '../../src/engine/schedule/clock.ts';
import { ApiMarketData } from '../../src/exchange/market-data.ts';
import { PaperExchange } from '../../src/sim/paper-exchange.ts';
import { defineStrategy, intent, param } from '../../strategies/sdk.ts';
import { watchRun } from '../backtest/observed.ts';
import { eachEngineWorld, runtimeOf } from './harness.ts';

// An instance buys only on the markets it declares (its param.market values, the ones checked
// at start), and only in the asset its budgets count in. Live and dry-run bought a market the
// instance never declared while the backtest, whose exchange lists one market, refused it; a
// budget in USDT was compared with a buy's estimate in another asset. Every mode now refuses both
// the same way, before anything is sent.
const SLOT = Date.UTC(2026, 10, 22, 9, 0, 0);
const FIXTURE = resolve(import.meta.dirname, '../fixtures/candles/btc-1h-2021-03-01_14.csv');

/** Declares MARKET, buys OTHER. */
const stray = defineStrategy({
  name: 'stray',
  describe: 'Buys a market it does not declare.',
  params: {
    MARKET: param.market({ description: 'Where it says it buys.', example: 'BTC_USDT' }),
    OTHER: param.oneOf(['ETH_USDT', 'DOGE_USDT', 'btc_usdt'], { description: 'Where it buys.', example: 'ETH_USDT' }),
  },
  budgetAsset: (params) => params.MARKET.split('_')[1] ?? null,
  reads: () => ['markets', 'prices'],
  decide: async (_view, params) => [intent.buy(params.OTHER, new Decimal('0.01'))],
});

/** Buys MARKET but says its budgets count in MARKET's base. */
const baseBudget = defineStrategy({
  name: 'base-budget',
  describe: 'Counts its budget in the asset it buys.',
  params: { MARKET: param.market({ description: 'Where it buys.', example: 'BTC_USDT' }) },
  budgetAsset: (params) => params.MARKET.split('_')[0] ?? null,
  reads: () => ['markets', 'prices'],
  decide: async (_view, params) => [intent.buy(params.MARKET, new Decimal('0.001'))],
});

const CASES = [
  {
    name: 'a buy on a market the instance does not declare',
    strategy: stray as Strategy<unknown>,
    env: { MARKET: 'BTC_USDT', OTHER: 'ETH_USDT' },
    code: 'undeclared-market',
    message: 'the buy of 0.01 ETH_USDT is on a market this instance does not declare (MARKET=BTC_USDT): an instance buys only on the markets its param.market keys name, the ones checked at start',
  },
  {
    name: 'a buy spending another asset than its budgets count in',
    strategy: baseBudget as Strategy<unknown>,
    env: { MARKET: 'BTC_USDT' },
    code: 'budget-asset-mismatch',
    message: "the buy of 0.001 BTC_USDT spends USDT, not BTC, the asset this instance's budgets and MAX_ORDER_QUOTE count in (its strategy's budgetAsset): a buy is counted against them only in that asset",
  },
] as const;

describe.each(CASES)('$name is refused, naming the buy, the market and the rule, before anything is sent', ({ strategy, env, code, message }) => {
  const current = eachEngineWorld();
  const instance = () => runtimeOf({ instance: 'odd', strategy, env });

  it('live', async () => {
    expect(await current().engine([instance()]).runSlot('odd', SLOT)).toBe('done');
    const [record] = await current().journal.listIntents({ instance: 'odd' });
    expect([record?.status, record?.error]).toEqual(['refused', { code, message }]);
    expect(current().sandbox.exchange.orderHistory({})).toEqual([]);
  });

  it('dry-run', async () => {
    const clock = new VirtualClock(SLOT);
    const paper = new PaperExchange({ marketData: new ApiMarketData(new ApiClient({ baseUrl: current().sandbox.url })), wallet: new Map([['USDT', new Decimal('1000')]]), slippagePct: new Decimal(0), clock });
    try {
      expect(await new Engine({ ...current().deps(), exchange: paper, mode: 'dry-run', clock }, [instance()], { runId: null }).runSlot('odd', SLOT)).toBe('done');
      const [record] = await current().journal.listIntents({ instance: 'odd' });
      expect([record?.status, record?.error]).toEqual(['refused', { code, message }]);
      expect(await current().journal.listOrders({})).toEqual([]);
    } finally {
      await paper.close();
    }
  });

  it('stacker check', async () => {
    const runtime = instance();
    const [result] = await preflight({ mode: 'live', instances: [{ ...runtime, enabled: true }] }, current().deps().exchange, SLOT);
    expect(result).toMatchObject({ ok: false, intents: [{ verdict: 'refused', reason: `${code}: ${message}` }] });
  });
});

describe('the backtest refuses them alike', () => {
  const dir = mkdtempSync(join(tmpdir(), 'stacker-declared-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each(CASES)('$name', async ({ strategy, env, code, message }) => {
    const file = join(dir, `${strategy.name}.env`);
    writeFileSync(file, `STRATEGY=${strategy.name}\nSCHEDULE="0 9 * * *"\n${Object.entries(env).map(([key, value]) => `${key}=${value}`).join('\n')}\n`);
    const instances = await loadStrategyFiles([file], { strategies: new Map([[strategy.name, strategy as never]]) });
    const watched = watchRun();
    await runBacktest({ candles: loadCandles(FIXTURE, { market: 'BTC_USDT' }), market: 'BTC_USDT', dataFile: FIXTURE, instances, wallet: new Map([['USDT', new Decimal('1000')]]), slippagePct: new Decimal(0), flex: null, observer: watched.observer });
    expect(watched.orders()).toEqual([]);
    expect(new Set(watched.refusals().map((refusal) => `${refusal.reason}: ${refusal.message}`))).toEqual(new Set([`${code}: ${message}`]));
    expect(watched.refusals()).toHaveLength(14);
  });
});
