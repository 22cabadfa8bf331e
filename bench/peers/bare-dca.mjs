// The floor a backtest is measured against: read the candle file, split its lines, and buy a
// fixed base amount at the open of the first candle of every slot (hourly or daily, UTC) with
// exact decimals and a 0.1 % taker fee. No engine, journal, guards, report or account: what any
// DCA backtest must do at least. Usage: node bare-dca.mjs FILE hour|day COPIES AMOUNT [LOOPS]
// (LOOPS: the loop run that many times over the one parse, a sweep's floor; default 1).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(new URL('../../package.json', import.meta.url));
const Decimal = require('decimal.js');
const [file, every, copiesText = '1', amountText = '0.001', loopsText = '1'] = process.argv.slice(2);
const started = performance.now();
const text = readFileSync(file, 'latin1');
const times = [];
const opens = [];
let at = text.indexOf('\n') + 1;
while (at < text.length) {
  const end = text.indexOf('\n', at);
  const line = text.slice(at, end === -1 ? text.length : end);
  at = end === -1 ? text.length : end + 1;
  if (line === '') continue;
  const first = line.indexOf(',');
  const second = line.indexOf(',', first + 1);
  times.push(Number(line.slice(0, first)));
  opens.push(line.slice(first + 1, second));
}
const copies = Number(copiesText);
const span = times[times.length - 1] - times[0] + (times[1] - times[0]);
const slotSec = every === 'day' ? 86_400 : every === 'minute' ? 60 : 3_600;
const fee = new Decimal('0.001');
let base = new Decimal(0);
let spent = new Decimal(0);
let slots = 0;
for (let loop = 1; loop <= Number(loopsText); loop += 1) {
  const amount = new Decimal(amountText).mul(loop);
  let lastSlot = -1;
  for (let c = 0; c < copies; c += 1) {
    for (let i = 0; i < times.length; i += 1) {
      const slot = Math.floor((times[i] + c * span) / slotSec);
      if (slot === lastSlot) continue;
      lastSlot = slot;
      const quote = amount.mul(opens[i]);
      spent = spent.add(quote).add(quote.mul(fee).toDecimalPlaces(8, Decimal.ROUND_UP));
      base = base.add(amount);
      slots += 1;
    }
  }
}
process.stdout.write(`${JSON.stringify({ candles: times.length * copies, slots, base: base.toString(), spent: spent.toString(), wallMs: performance.now() - started, peakRssMb: process.resourceUsage().maxRSS / 1024 })}\n`);
