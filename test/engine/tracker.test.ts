import { afterEach, describe, expect, it } from 'vitest';
import { Decimal } from '../../src/domain/money.ts';
import { dca } from '../../strategies/dca.ts';
import { type EngineWorld, engineWorld, runtimeOf } from './harness.ts';

// Orders that fill over time: the tracker follows each to its terminal status and logs every
// transition exactly once, however often it polls.
const SLOT = Date.UTC(2026, 10, 22, 9);
let world: EngineWorld;
afterEach(async () => {
  await world.close();
});

const dcaBtc = (amount: string) => runtimeOf({ instance: 'dca-btc', strategy: dca, env: { STRATEGY: 'dca', SCHEDULE: '0 9 * * *', MARKET: 'BTC_USDT', AMOUNT: amount } });
const transitionsLogged = () => world.logs.filter((line) => line.fields['event'] === 'order-transition').map((line) => `${String(line.fields['from'])}->${String(line.fields['to'])}`);

describe('the order tracker', () => {
  it('follows a gradually filling order NEW → PARTIAL_FILLED → FILLED, logging each transition once', async () => {
    world = await engineWorld({ settlement: { steps: 3, stepMs: 150 } });
    const engine = world.engine([dcaBtc('0.003')]);
    expect(await engine.runSlot('dca-btc', SLOT)).toBe('done');
    expect(await world.journal.openOrders()).toHaveLength(1);
    for (let poll = 0; poll < 12; poll += 1) {
      await engine.track();
      await new Promise((resolve) => setTimeout(resolve, 60));
    }
    expect(await world.journal.openOrders()).toHaveLength(0);
    const [order] = await world.journal.listOrders();
    const statuses = (await world.journal.orderTransitions(order?.orderId ?? '')).map((t) => t.toStatus);
    expect(statuses[0]).toBe('NEW');
    expect(statuses.at(-1)).toBe('FILLED');
    expect(statuses.filter((s) => s === 'PARTIAL_FILLED').length).toBeGreaterThanOrEqual(1);
    // Logged exactly as journalled: no repeat for the polls that saw nothing new.
    expect(transitionsLogged()).toHaveLength(statuses.length);
    // The fills only grow, and the last transition carries the whole order.
    const last = (await world.journal.orderTransitions(order?.orderId ?? '')).at(-1);
    expect(last?.filledBase.eq(new Decimal('0.003'))).toBe(true);
  });

  it('records a buy the taker band cut short as CANCELED_TAKER_BAND with what did fill', async () => {
    world = await engineWorld({ fills: { bookStepPct: '1', bookLevelBase: '0.001', takerBandPct: '1.5' } });
    const engine = world.engine([dcaBtc('0.005')]);
    expect(await engine.runSlot('dca-btc', SLOT)).toBe('done');
    const [order] = await world.journal.listOrders();
    expect(order?.status).toBe('CANCELED_TAKER_BAND');
    expect(order?.filledBase.gt(0) && order.filledBase.lt('0.005')).toBe(true);
    expect(transitionsLogged()).toEqual(['null->CANCELED_TAKER_BAND']);
  });
});
