import { describe, expect, it } from 'vitest';
import { SimCore } from '../../src/sim/core.ts';
import { fixedPrices } from '../../src/sim/prices.ts';
import { DEMO_PRICES, seedDemo } from '../../src/sim/seed.ts';
import { d, manualClock, rejectionOf, text } from './helpers.ts';

function gradualSim(steps: number, stepMs: number) {
  const clock = manualClock();
  const sim = new SimCore({ clock, prices: fixedPrices(DEMO_PRICES), settlement: { steps, stepMs } });
  seedDemo(sim);
  return { sim, clock };
}

describe('gradual settlement', () => {
  it('goes NEW → PARTIAL_FILLED → FILLED as the sim clock passes, freezing and spending exactly', () => {
    const { sim, clock } = gradualSim(3, 1000);
    const placed = sim.buyStockMarket({ market: 'BTC_USDT', baseAmount: d('0.001'), clientOrderId: 'track-me' });
    expect(placed.status).toBe('NEW');
    expect([text(placed.filledBase), text(placed.left), text(placed.fee)]).toEqual(['0', '0.001', '0']);
    // 65 + 0.065 frozen at once.
    expect([text(sim.tradeBalance('USDT').available), text(sim.tradeBalance('USDT').freeze)]).toEqual(['934.935', '65.065']);
    expect(sim.activeOrders({ market: 'BTC_USDT' }).map((o) => o.orderId)).toEqual([placed.orderId]);
    expect(sim.orderHistory()).toEqual([]);

    clock.advance(999);
    expect(sim.order(placed.orderId)?.status).toBe('NEW');

    clock.advance(1);
    // Step 1: 0.000333 @ 65000 = 21.645, fee 0.021645.
    const partial = sim.order(placed.orderId)!;
    expect(partial.status).toBe('PARTIAL_FILLED');
    expect([text(partial.filledBase), text(partial.filledQuote), text(partial.fee), text(partial.left)]).toEqual(['0.000333', '21.645', '0.021645', '0.000667']);
    expect(text(sim.tradeBalance('USDT').freeze)).toBe('43.398355');
    expect(sim.activeOrders().map((o) => o.status)).toEqual(['PARTIAL_FILLED']);

    clock.advance(5000);
    const filled = sim.order(placed.orderId)!;
    expect(filled.status).toBe('FILLED');
    expect([text(filled.filledBase), text(filled.filledQuote), text(filled.fee), text(filled.left)]).toEqual(['0.001', '65', '0.065', '0']);
    // Finished at the third step's time, not at the time it was read.
    expect(filled.finishedAtSec).toBe(placed.createdAtSec + 3);
    expect(sim.orderDeals(placed.orderId).map((x) => [text(x.baseAmount), text(x.fee)])).toEqual([
      ['0.000333', '0.021645'],
      ['0.000333', '0.021645'],
      ['0.000334', '0.02171'],
    ]);
    expect([text(sim.tradeBalance('USDT').available), text(sim.tradeBalance('USDT').freeze)]).toEqual(['934.935', '0']);
    expect(text(sim.tradeBalance('BTC').available)).toBe('0.001');
    expect(sim.activeOrders()).toEqual([]);
    expect(sim.orderHistory({ clientOrderId: 'track-me' }).map((o) => o.status)).toEqual(['FILLED']);
    expect(sim.ledgerMismatches()).toEqual([]);
    expect(sim.verifyLedger()).toBe(true);
    const reasons = sim.ledger().filter((e) => e.ref === placed.orderId).map((e) => e.reason);
    expect(reasons.slice(0, 2)).toEqual(['freeze', 'freeze']);
  });

  it('refuses a clientOrderId already used by an open order on the same market (code 36), not by a finished one', () => {
    const { sim, clock } = gradualSim(2, 500);
    sim.buyStockMarket({ market: 'BTC_USDT', baseAmount: d('0.001'), clientOrderId: 'dup' });
    const r = rejectionOf(() => sim.buyStockMarket({ market: 'BTC_USDT', baseAmount: d('0.001'), clientOrderId: 'dup' }));
    expect([r.exchangeCode, r.field, r.message]).toEqual([36, 'clientOrderId', 'This client order id is already used by the current account.']);
    // Another market is fine.
    expect(sim.buyStockMarket({ market: 'ETH_USDT', baseAmount: d('0.01'), clientOrderId: 'dup' }).status).toBe('NEW');
    clock.advance(1000);
    expect(sim.buyStockMarket({ market: 'BTC_USDT', baseAmount: d('0.001'), clientOrderId: 'dup' }).status).toBe('NEW');
  });

  it('settles interleaved orders in time order and counts frozen funds against new orders', () => {
    const { sim, clock } = gradualSim(2, 1000);
    const first = sim.buyMarket({ market: 'ETH_USDT', quoteAmount: d('600') });
    clock.advance(500);
    // 600 + fee is frozen: 400 no longer fits.
    expect(rejectionOf(() => sim.buyMarket({ market: 'ETH_USDT', quoteAmount: d('400') })).message).toBe('Not enough balance.');
    const second = sim.buyMarket({ market: 'ETH_USDT', quoteAmount: d('300') });
    clock.advance(2000);
    expect([sim.order(first.orderId)?.status, sim.order(second.orderId)?.status]).toEqual(['FILLED', 'FILLED']);
    const times = sim.ledger().map((e) => e.timeMs);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(text(sim.tradeBalance('USDT').freeze)).toBe('0');
    expect(sim.ledgerMismatches()).toEqual([]);
    expect(sim.verifyLedger()).toBe(true);
  });
});
