import { afterEach, describe, expect, it } from 'vitest';
import { Decimal, formatDecimal } from '../../src/domain/money.ts';
import { parseFaultSpecs } from '../../src/sandbox/fault-spec.ts';
import type { SandboxOptions } from '../../src/sandbox/server.ts';
import { dca } from '../../strategies/dca.ts';
import { ENGINE_JOURNALS, type EngineWorld, engineWorld, runtimeOf } from './harness.ts';

// An exchange that answers an order with a status this stacker does not know (one it added for
// "accepted, not matched yet"), before the order has filled: the engine against the sandbox over
// HTTP on 127.0.0.1 and a real journal. The order must be followed as open, its budget counted,
// until the exchange shows how it ended; never taken for cancelled on the strength of a word.
const SLOT = Date.UTC(2026, 10, 22, 9);
const SCOPE = { instance: 'dca-btc', asset: 'USDT', timeZone: 'UTC' } as const;

const dcaBtc = () => ({
  ...runtimeOf({ instance: 'dca-btc', strategy: dca, env: { STRATEGY: 'dca', SCHEDULE: '0 9 * * *', MARKET: 'BTC_USDT', AMOUNT: '0.002' } }),
  budgets: { day: new Decimal('1000') },
});

describe.each(ENGINE_JOURNALS)('an order answered with a status stacker does not know (%s journal)', (kind) => {
  let world: EngineWorld;
  afterEach(async () => {
    await world.close();
  });

  /** The sandbox settling orders a little after it takes them, answering ACCEPTED for them on the create answer and in the active orders. */
  const start = async (options: SandboxOptions) => {
    world = await engineWorld(options, kind);
    const parsed = parseFaultSpecs(['unknown-status=ACCEPTED', 'unknown-status=ACCEPTED,path=/api/v4/orders']);
    if (!('ok' in parsed)) throw new Error(parsed.problems.join('; '));
    for (const fault of parsed.ok.faults) world.sandbox.faults.inject(fault);
    const engine = world.engine([dcaBtc()], { ledger: {} });
    expect(await engine.runSlot('dca-btc', SLOT)).toBe('done');
    return engine;
  };

  /** Track until the journal has nothing open (or give up after a few seconds). */
  const trackToTheEnd = async (engine: ReturnType<EngineWorld['engine']>) => {
    for (let poll = 0; poll < 60 && (await world.journal.openOrders()).length > 0; poll += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      await engine.track();
    }
  };

  const unrecognizedWarnings = () => world.logs.filter((line) => line.fields['event'] === 'order-status-unrecognized');

  /** While the exchange has not filled it: open in the journal, its estimate still counted against the budget. */
  const expectOpenAndCounted = async () => {
    const [order] = await world.journal.openOrders();
    expect(order).toMatchObject({ status: 'NEW', statusDerived: true });
    const [held] = await world.journal.heldBudgetReservations('dca-btc');
    expect(held?.amountQuote.gt(0)).toBe(true);
    expect((await world.journal.budgetSpent(SCOPE, SLOT)).day.eq(held?.amountQuote ?? 0)).toBe(true);
    return order?.orderId ?? '';
  };

  it('follows it until the exchange has filled it: FILLED in the journal, its spend counted once, the operator told once', async () => {
    const engine = await start({ settlement: { steps: 2, stepMs: 200 } });
    const orderId = await expectOpenAndCounted();
    await trackToTheEnd(engine);

    const atExchange = world.sandbox.exchange.order(orderId);
    expect(atExchange?.status).toBe('FILLED');
    const order = await world.journal.getOrder(orderId);
    expect(order).toMatchObject({ status: 'FILLED', statusDerived: false });
    expect(formatDecimal(order?.filledQuote ?? new Decimal(0))).toBe(formatDecimal(atExchange?.filledQuote ?? new Decimal(-1)));
    // The half-filled order was read from the active orders, still under the word it does not know.
    expect((await world.journal.orderTransitions(orderId)).map((t) => t.toStatus)).toEqual(['NEW', 'PARTIAL_FILLED', 'FILLED']);

    // Settled at what the exchange took, once: another pass and a read of the history change nothing.
    await engine.track();
    const report = await engine.checkLedger();
    expect(report).toMatchObject({ adopted: [], linked: [] });
    expect(await world.journal.heldBudgetReservations()).toEqual([]);
    expect(formatDecimal((await world.journal.budgetSpent(SCOPE, SLOT)).day)).toBe(formatDecimal(atExchange?.filledQuote ?? new Decimal(-1)));

    const warned = unrecognizedWarnings();
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ level: 'warn', fields: { orderId, status: 'ACCEPTED', derived: 'NEW', instance: 'dca-btc' } });
    expect(warned[0]?.message).toContain('"ACCEPTED"');
    expect(JSON.stringify(world.logs)).not.toContain(world.sandbox.apiSecret);
    expect(world.fatal).toEqual([]);
  });

  it('follows it until the exchange has cancelled it: CANCELED in the journal, and only then its budget given back', async () => {
    // Every ask is past the taker band: the exchange cancels the order without a fill when it gets to it.
    const engine = await start({ settlement: { steps: 1, stepMs: 200 }, fills: { slippagePct: '5', takerBandPct: '1' } });
    const orderId = await expectOpenAndCounted();
    await trackToTheEnd(engine);

    expect(world.sandbox.exchange.order(orderId)?.status).toBe('CANCELED');
    expect(await world.journal.getOrder(orderId)).toMatchObject({ status: 'CANCELED', statusDerived: false });
    expect(await world.journal.heldBudgetReservations()).toEqual([]);
    expect(formatDecimal((await world.journal.budgetSpent(SCOPE, SLOT)).day)).toBe('0');
    expect(unrecognizedWarnings()).toHaveLength(1);
    expect(world.fatal).toEqual([]);
  });
});
