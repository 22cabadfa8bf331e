import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Decimal } from '../../src/domain/money.ts';
import type { FaultSpec } from '../../src/sandbox/faults.ts';
import { DEMO_FLEX_PLAN_ID } from '../../src/sim/seed.ts';
import { dca } from '../../strategies/dca.ts';
import { flexSweep } from '../../strategies/flex-sweep.ts';
import { type EngineWorld, engineWorld, runtimeOf } from './harness.ts';

// Every fault kind on each of the three writes (order, transfer, flex withdraw): afterwards the
// sandbox's books and the journal must agree — nothing done twice at the exchange, nothing done
// at the exchange that the journal does not know about.
const SLOT = Date.UTC(2026, 10, 22, 9);
const PATHS = { order: '/api/v4/order/stock_market', transfer: '/api/v4/main-account/transfer', withdraw: '/api/v4/main-account/smart-flex/investments/withdraw' } as const;
const FAULTS: ReadonlyArray<Omit<FaultSpec, 'path'>> = [
  { kind: 'drop-after-commit' },
  { kind: 'reset' },
  { kind: 'status', status: 502, body: { message: 'bad gateway' } },
  { kind: 'status', status: 503, body: { message: 'maintenance' }, commit: true },
  { kind: 'latency', latencyMs: 2300 },
  { kind: 'status', status: 429, body: { code: 0, errors: {}, message: 'Too many attempts' } },
  { kind: 'status', status: 429, body: { code: 0, errors: {}, message: 'Too many requests.' } },
];

let world: EngineWorld;
beforeEach(async () => {
  world = await engineWorld();
  // Funds on main only: every buy needs a transfer first.
  world.sandbox.exchange.transfer({ ticker: 'USDT', amount: new Decimal('1000'), from: 'spot', to: 'main' });
});
afterEach(async () => {
  await world.close();
});

const label = (fault: Omit<FaultSpec, 'path'>): string => `${fault.kind}${fault.status === undefined ? '' : ` ${fault.status}`}${fault.commit === true ? ' after commit' : ''}${typeof fault.body === 'object' && fault.body !== null && 'message' in fault.body ? ` "${String((fault.body as { message: string }).message)}"` : ''}`;

describe.each(Object.entries(PATHS))('faults on the %s request', (_name, path) => {
  it.each(FAULTS.map((fault) => [label(fault), fault] as const))('%s: 0 duplicates, 0 lost operations', async (_label, fault) => {
    world.sandbox.faults.inject({ path, ...fault });
    const engine = world.engine([
      runtimeOf({ instance: 'dca', strategy: dca, env: { STRATEGY: 'dca', SCHEDULE: '0 9 * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001', ALLOW_TRANSFER: 'true' } }),
      runtimeOf({ instance: 'sweep', strategy: flexSweep, env: { STRATEGY: 'flex-sweep', SCHEDULE: '0 9 * * *', PLAN: DEMO_FLEX_PLAN_ID, MODE: 'all' } }),
    ]);
    await engine.runSlot('dca', SLOT);
    await engine.runSlot('sweep', SLOT);
    await new Promise((resolve) => setTimeout(resolve, fault.kind === 'latency' ? 600 : 0));
    await engine.track();

    const ledger = world.sandbox.exchange.ledger();
    const orders = world.sandbox.exchange.orderHistory({});
    const transfers = ledger.filter((e) => e.reason === 'transfer' && e.account === 'spot' && e.delta.gt(0));
    const withdrawals = ledger.filter((e) => e.reason === 'flex-withdraw' && e.account === 'main');
    const intents = await world.journal.listIntents({ limit: 100 });
    const of = (kind: string) => intents.filter((i) => i.intent.kind === kind);

    // Nothing twice.
    expect(orders.length).toBeLessThanOrEqual(1);
    expect(transfers.length).toBeLessThanOrEqual(1);
    expect(withdrawals.length).toBeLessThanOrEqual(1);
    // Nothing the journal does not know: whatever happened at the exchange is `done` (or, for
    // the writes that cannot be looked up by id, at least `unknown`, never `failed`/`refused`).
    const buy = of('buy-stock-market')[0];
    if (orders.length === 1) expect(buy?.status).toBe('done');
    else expect(buy === undefined || ['refused', 'failed', 'unknown'].includes(buy.status)).toBe(true);
    const transfer = of('transfer')[0];
    if (transfers.length === 1) expect(['done', 'unknown']).toContain(transfer?.status);
    else expect(transfer === undefined || transfer.status !== 'done').toBe(true);
    const withdraw = of('flex-withdraw')[0];
    if (withdrawals.length === 1) expect(['done', 'unknown']).toContain(withdraw?.status);
    else expect(withdraw === undefined || withdraw.status !== 'done').toBe(true);
    // And a done buy has its order in the journal, with the exchange's fills.
    if (orders[0] !== undefined) expect((await world.journal.getOrder(orders[0].orderId))?.filledBase.eq(orders[0].filledBase)).toBe(true);
    expect(world.sandbox.exchange.verifyLedger()).toBe(true);
  }, 20_000);
});
