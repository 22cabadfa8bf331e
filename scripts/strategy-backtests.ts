/**
 * The README's strategy table: each buying strategy of config/backtest/ backtested alone over
 * the committed hourly BTC/USDT data, 2019-2023, from the same 30000 USDT wallet, and one
 * markdown row each. Run it with `npm run strategy-table`.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadCandles } from '../src/candles/index.ts';
import { runBacktest } from '../src/backtest/driver.ts';
import { buildReport } from '../src/backtest/report/build.ts';
import { loadStrategyFiles } from '../src/config/daemon-config.ts';
import { Decimal, formatDecimal } from '../src/domain/money.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const DATA = join(ROOT, 'data/BTCUSDT_1h_binance_2017-08-17_2024-04-21.csv');
const FROM_MS = Date.UTC(2019, 0, 1);
const TO_MS = Date.UTC(2024, 0, 1) - 1;
const WALLET = '30000';

const candles = loadCandles(DATA, { market: 'BTC_USDT', fromMs: FROM_MS, toMs: TO_MS });
// The hours before FROM_MS too, for the strategies' candle windows (as `stacker backtest --from` reads them).
const history = loadCandles(DATA, { market: 'BTC_USDT', toMs: TO_MS });
const files = readdirSync(join(ROOT, 'config/backtest'))
  .filter((name) => name.endsWith('.env'))
  .sort()
  .map((name) => join(ROOT, 'config/backtest', name));

console.log(`BTC/USDT hourly candles (data/), ${new Date(FROM_MS).toISOString().slice(0, 10)} to ${new Date(TO_MS).toISOString().slice(0, 10)}, wallet ${WALLET} USDT, no slippage, taker fee 0.1 %\n`);
console.log('| instance (config/backtest/) | strategy | orders | invested (USDT, fees in) | average cost (fees in) | value at the end | return on invested | max drawdown of the account |');
console.log('|---|---|---:|---:|---:|---:|---:|---:|');
for (const file of files) {
  const instances = await loadStrategyFiles([file]);
  const instance = instances[0];
  if (instance === undefined || instance.strategy.budgetAsset === undefined) continue;
  const run = await runBacktest({ candles, history, market: 'BTC_USDT', dataFile: DATA, instances, wallet: new Map([['USDT', new Decimal(WALLET)]]), slippagePct: new Decimal(0), flex: null });
  const report = buildReport(run);
  const invested = new Decimal(report.totals.quoteSpentWithFees);
  const held = new Decimal(report.totals.baseAcquired).sub(report.totals.fees[report.base] ?? '0');
  const value = held.mul(report.value.finalPrice);
  const returnPct = invested.isZero() ? null : value.sub(invested).div(invested).mul(100);
  const cells = [
    instance.instance,
    instance.strategy.name,
    String(report.orders.filled),
    formatDecimal(invested.toDecimalPlaces(2)),
    report.totals.averagePriceWithFees === null ? '—' : formatDecimal(new Decimal(report.totals.averagePriceWithFees).toDecimalPlaces(2)),
    formatDecimal(value.toDecimalPlaces(2)),
    returnPct === null ? '—' : `${formatDecimal(returnPct.toDecimalPlaces(1))} %`,
    report.drawdown.maxPct?.pct === null || report.drawdown.maxPct === null ? '—' : `${formatDecimal(new Decimal(report.drawdown.maxPct.pct).toDecimalPlaces(1))} %`,
  ];
  console.log(`| ${cells.join(' | ')} |`);
}
