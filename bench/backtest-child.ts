// One backtest in its own process, so its peak RSS is its own: prints one JSON line.
import { existsSync } from 'node:fs';
import { loadCandles, repeatSeries } from '../src/backtest/candles/index.ts';
import { runBacktest } from '../src/backtest/driver.ts';
import { loadStrategyFiles } from '../src/config/daemon-config.ts';
import { Decimal } from '../src/domain/money.ts';

const SHARED = new URL('../../shared/data/BTCUSDT_1m_binance_2025-05-20_2025-08-18.csv', import.meta.url).pathname;
const COMMITTED = new URL('../data/BTCUSDT_1h_binance_2017-08-17_2024-04-21.csv', import.meta.url).pathname;
const TARGET = 1_000_000;

const file = existsSync(SHARED) ? SHARED : COMMITTED;
const started = performance.now();
const once = loadCandles(file, { market: 'BTC_USDT' });
const parseMs = performance.now() - started;

// Replay the file end to end as many times as it takes to pass a million candles, each copy
// shifted by the file's span, so the schedule keeps firing across the whole replay.
const copies = Math.ceil(TARGET / once.length);
const candles = repeatSeries(once, copies);
const instances = await loadStrategyFiles([new URL('../config/backtest/dca-btc-daily.env', import.meta.url).pathname]);
const runStarted = performance.now();
const run = await runBacktest({ candles, market: 'BTC_USDT', dataFile: file, instances, wallet: new Map([['USDT', new Decimal('100000000')]]), slippagePct: new Decimal(0), flex: null });
const runMs = performance.now() - runStarted;
process.stdout.write(
  `${JSON.stringify({ file: file === SHARED ? 'BTC 1m (../shared/data)' : 'BTC 1h (data/, ../shared absent)', rows: once.length, copies, candles: candles.length, slots: run.slots, orders: run.orders.length, parseMs, runMs, peakRssMb: process.resourceUsage().maxRSS / 1024 })}\n`,
);
