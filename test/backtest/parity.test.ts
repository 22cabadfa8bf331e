import { watchRun } from './observed.ts';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.ts';
import { loadCandles } from '../../src/candles/index.ts';
import { runBacktest } from '../../src/backtest/driver.ts';
import { loadDaemonConfig } from '../../src/config/daemon-config.ts';
import { runDaemon } from '../../src/daemon/daemon.ts';
import { Decimal, formatDecimal } from '../../src/domain/money.ts';
import { INSTANT_TIMING } from '../../src/engine/runtime.ts';
import { VirtualClock } from '../../src/engine/schedule/clock.ts';
import { VirtualScheduler } from '../../src/engine/schedule/virtual-scheduler.ts';
import { ApiMarketData } from '../../src/exchange/market-data.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { startSandbox } from '../../src/sandbox/server.ts';
import { PaperExchange } from '../../src/sim/paper-exchange.ts';
import { SqliteJournal } from '../../src/store/sqlite-journal.ts';

// Parity: one strategy set (a) as a backtest over real candles, and (b) as the dry-run daemon —
// paper account, public prices read over HTTP from the sandbox replaying the same candles —
// in accelerated (virtual) time. The two journals must hold the same orders to the last digit.
const FIXTURE = resolve(import.meta.dirname, '../fixtures/candles/btc-1h-2021-03-01_14.csv');
const dir = mkdtempSync(join(tmpdir(), 'stacker-parity-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const STRATEGY = 'STRATEGY=dca\nSCHEDULE="30 */5 * * *"\nMARKET=BTC_USDT\nAMOUNT=0.00123\nSTP=cancel_new\nBUDGET_QUOTE_PER_DAY=200\n';
// Sized in quote at slots between two opens: its amount is worked out from the price the slot
// sees, the open under way, in both (never the next open it fills at, a price from the future).
const QUOTE_STRATEGY = 'STRATEGY=dca\nSCHEDULE="30 */7 * * *"\nMARKET=BTC_USDT\nAMOUNT_QUOTE=25\nSTP=cancel_new\n';
const WALLET = 'USDT=2000';

interface Row {
  clientOrderId: string;
  status: string;
  amount: string;
  filledBase: string;
  filledQuote: string;
  fee: string;
  price: string;
}

const row = (o: { clientOrderId: string; status: string; amount: Decimal; filledBase: Decimal; filledQuote: Decimal; fee: Decimal }): Row => ({
  clientOrderId: o.clientOrderId,
  status: o.status,
  amount: formatDecimal(o.amount),
  filledBase: formatDecimal(o.filledBase),
  filledQuote: formatDecimal(o.filledQuote),
  fee: formatDecimal(o.fee),
  price: formatDecimal(o.filledQuote.div(o.filledBase)),
});

describe('backtest and dry-run parity', () => {
  it('the same strategies over the same candles give identical orders, amounts, prices and fees', async () => {
    const strategies = join(dir, 'strategies');
    mkdirSync(strategies);
    writeFileSync(join(strategies, 'dca-btc.env'), STRATEGY);
    writeFileSync(join(strategies, 'dca-quote.env'), QUOTE_STRATEGY);
    const candles = loadCandles(FIXTURE, { market: 'BTC_USDT' });
    const firstMs = candles.timeSec(0) * 1000;
    const lastMs = candles.timeSec(candles.length - 1) * 1000;

    // (a) the backtest
    const config = await loadDaemonConfig({ strategiesDir: strategies, dataDir: join(dir, 'data') }, { env: { STACKER_DRY_RUN_WALLET: WALLET } });
    const watched = watchRun();
    await runBacktest({ candles, market: 'BTC_USDT', dataFile: FIXTURE, instances: config.instances, wallet: config.dryRunWallet, slippagePct: new Decimal(0), flex: null, observer: watched.observer });

    // (b) the dry-run daemon in virtual time against the sandbox replaying the candles
    const clock = new VirtualClock(firstMs);
    const sandbox = await startSandbox({
      clock,
      rateLimits: false,
      // As a replay prices them: fills at the first open at or after, the ticker at the last price known.
      prices: { priceAt: (market, timeMs) => (market === 'BTC_USDT' ? candles.priceAt(timeMs) : null), knownPriceAt: (market, timeMs) => (market === 'BTC_USDT' ? candles.priceKnownAt(timeMs) : null) },
    });
    try {
      const dryConfig = await loadDaemonConfig(
        { strategiesDir: strategies, dataDir: join(dir, 'data') },
        { env: { STACKER_MODE: 'dry-run', STACKER_BASE_URL: sandbox.url, STACKER_DRY_RUN_WALLET: WALLET, STACKER_LOG_LEVEL: 'warn' } },
      );
      expect(dryConfig.mode).toBe('dry-run');
      const exchange = new PaperExchange({ marketData: new ApiMarketData(new ApiClient({ baseUrl: sandbox.url })), wallet: dryConfig.dryRunWallet, slippagePct: dryConfig.dryRunSlippagePct, clock });
      const scheduler = new VirtualScheduler({ clock, fromMs: firstMs - 1, toMs: lastMs });
      const stop = new AbortController();
      const result = await runDaemon({
        config: dryConfig,
        logger: await createLogger({ level: 'warn', destination: new Writable({ write: (_chunk, _encoding, done) => done() }) }),
        exchange,
        metrics: new Metrics({ mode: 'dry-run' }),
        clock,
        scheduler,
        stop: stop.signal,
        timing: INSTANT_TIMING,
        onReady: () => void scheduler.done().then(() => stop.abort()),
      });
      expect(result.exitCode).toBe(0);
    } finally {
      await sandbox.stop();
    }

    const journal = new SqliteJournal({ path: join(dir, 'data', 'stacker-dry-run.db'), readOnly: true });
    await journal.open();
    const dryRun = (await journal.listOrders({ limit: 10_000 })).map(row).sort((a, b) => a.clientOrderId.localeCompare(b.clientOrderId));
    await journal.close();
    const backtested = watched.orders().map(row).sort((a, b) => a.clientOrderId.localeCompare(b.clientOrderId));

    expect(backtested.length).toBeGreaterThan(30);
    expect(backtested.filter((order) => order.clientOrderId.startsWith('dca-quote-')).length).toBeGreaterThan(20);
    expect(watched.refusals().some((r) => r.reason === 'over-budget')).toBe(true);
    expect(dryRun).toEqual(backtested);
  }, 60_000);
});
