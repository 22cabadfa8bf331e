import { beforeEach, describe, expect, it } from 'vitest';
import { Decimal, formatDecimal } from '../../src/domain/money.ts';
import { MemoryJournal } from '../../src/store/memory-journal.ts';
import { buy, order } from './helpers.ts';

/**
 * A backtest over years asks its journal in memory to forget the slots that are over, so its
 * memory does not grow with every slot. Forgetting must not change what the engine can rely on:
 * a slot is never claimed twice, budgets keep counting, lastSlot stays right, and nothing
 * unresolved is forgotten.
 */
const INSTANCE = 'dca-btc';
const HOUR = 3_600_000;
const T0 = Date.UTC(2025, 0, 1, 10);
const LIMITS = { day: new Decimal('100'), week: new Decimal('1000'), month: new Decimal('10000') };

let now = T0;
let journal: MemoryJournal;
let runId: string;

beforeEach(async () => {
  now = T0;
  journal = new MemoryJournal({ clock: () => now });
  await journal.open();
  runId = (await journal.startRun({ mode: 'backtest', pid: 1, version: 'test' })).runId;
});

/** A slot that buys and fills: claimed with its buy, budget reserved and settled, order FILLED, slot done. */
async function filledSlot(slotTimeMs: number, quote = '30'): Promise<string> {
  now = slotTimeMs;
  expect(await journal.claimSlot({ instance: INSTANCE, slotTimeMs, runId, intents: [{ index: 0, intent: buy('0.001') }] })).toBe(true);
  const [intent] = await journal.listIntents({ instance: INSTANCE, slotTimeMs });
  if (intent === undefined) throw new Error('no intent');
  const reserved = await journal.reserveBudget({ reservationId: intent.intentId, instance: INSTANCE, asset: 'USDT', timeZone: 'UTC', atMs: slotTimeMs, amountQuote: new Decimal(quote), limits: LIMITS });
  expect(reserved.ok).toBe(true);
  await journal.updateIntent(intent.intentId, { status: 'sent' });
  const filled = order({
    orderId: `o-${slotTimeMs}`,
    clientOrderId: intent.clientOrderId ?? '',
    createdAtSec: slotTimeMs / 1000,
    left: new Decimal('0'),
    filledBase: new Decimal('0.001'),
    filledQuote: new Decimal(quote),
    status: 'FILLED',
  });
  await journal.recordOrderSnapshot(filled, { intentId: intent.intentId });
  await journal.settleBudget(intent.intentId, new Decimal(quote));
  await journal.updateIntent(intent.intentId, { status: 'done', result: { orderId: filled.orderId } });
  await journal.finishSlot({ instance: INSTANCE, slotTimeMs, status: 'done' });
  return intent.intentId;
}

describe('the journal in memory forgetting the slots that are over (backtests)', () => {
  it('hands back what a settled slot journalled and forgets it, keeping the latest slot of each instance', async () => {
    const first = await filledSlot(T0);
    await filledSlot(T0 + HOUR);
    const retired = await journal.retireSettled();
    expect(retired.map((entry) => [entry.intent.intentId, entry.intent.status, entry.orders.map((o) => [o.orderId, o.status])])).toEqual([
      [first, 'done', [[`o-${T0}`, 'FILLED']]],
    ]);
    expect(await journal.getIntent(first)).toBeNull();
    expect(await journal.getOrder(`o-${T0}`)).toBeNull();
    expect((await journal.lastSlot(INSTANCE))?.slotTimeMs).toBe(T0 + HOUR);
    // Nothing is handed back twice.
    expect(await journal.retireSettled()).toEqual([]);
  });

  it('never lets a forgotten slot be claimed, skipped or adopted again', async () => {
    await filledSlot(T0);
    await filledSlot(T0 + HOUR);
    expect(await journal.retireSettled()).toHaveLength(1);
    expect(await journal.claimSlot({ instance: INSTANCE, slotTimeMs: T0, runId, intents: [{ index: 0, intent: buy('0.001') }] })).toBe(false);
    expect(await journal.skipSlot({ instance: INSTANCE, slotTimeMs: T0, runId, status: 'missed', reason: 'test' })).toBe(false);
    await expect(
      journal.adoptOrder({ order: order({ orderId: 'late', clientOrderId: 'late-1', status: 'FILLED' }), instance: INSTANCE, slotTimeMs: T0, index: 0, asset: 'USDT', timeZone: 'UTC', reason: 'test' }),
    ).rejects.toMatchObject({ reason: 'conflict' });
  });

  it('keeps counting the budget a forgotten slot spent', async () => {
    await filledSlot(T0, '60');
    await filledSlot(T0 + HOUR, '30');
    await journal.retireSettled();
    const spent = await journal.budgetSpent({ instance: INSTANCE, asset: 'USDT', timeZone: 'UTC' }, T0 + HOUR);
    expect(formatDecimal(spent.day)).toBe('90');
    now = T0 + 2 * HOUR;
    await journal.claimSlot({ instance: INSTANCE, slotTimeMs: now, runId });
    const refused = await journal.reserveBudget({ reservationId: 'over', instance: INSTANCE, asset: 'USDT', timeZone: 'UTC', atMs: now, amountQuote: new Decimal('10.01'), limits: LIMITS });
    expect(refused.ok).toBe(false);
  });

  it('refuses to count a budget in another time zone once it forgot reservations it would have to recount', async () => {
    await filledSlot(T0, '60');
    await filledSlot(T0 + HOUR, '30');
    await journal.retireSettled();
    // The same zone still reads its counters.
    expect(formatDecimal((await journal.budgetSpent({ instance: INSTANCE, asset: 'USDT', timeZone: 'UTC' }, T0 + HOUR)).day)).toBe('90');
    now = T0 + 2 * HOUR;
    await journal.claimSlot({ instance: INSTANCE, slotTimeMs: now, runId });
    const berlin = { reservationId: 'berlin', instance: INSTANCE, asset: 'USDT', timeZone: 'Europe/Berlin', atMs: now, amountQuote: new Decimal('1'), limits: LIMITS };
    const refusal = { reason: 'invalid-argument', message: expect.stringMatching(/time zone changed to Europe\/Berlin after settled slots were retired/) };
    await expect(journal.reserveBudget(berlin)).rejects.toMatchObject(refusal);
    await expect(journal.budgetSpent({ instance: INSTANCE, asset: 'USDT', timeZone: 'Europe/Berlin' }, now)).rejects.toMatchObject(refusal);
  });

  it('keeps a slot whose answer is still unresolved, whose order is open or whose budget is held', async () => {
    // Sent, never answered: unresolved.
    now = T0;
    await journal.claimSlot({ instance: INSTANCE, slotTimeMs: T0, runId, intents: [{ index: 0, intent: buy('0.001') }] });
    const [sent] = await journal.listIntents({ instance: INSTANCE, slotTimeMs: T0 });
    await journal.updateIntent(sent!.intentId, { status: 'sent' });
    await journal.finishSlot({ instance: INSTANCE, slotTimeMs: T0, status: 'failed', reason: 'test' });
    // Done, but its order is still open at the exchange.
    now = T0 + HOUR;
    await journal.claimSlot({ instance: INSTANCE, slotTimeMs: now, runId, intents: [{ index: 0, intent: buy('0.001') }] });
    const [open] = await journal.listIntents({ instance: INSTANCE, slotTimeMs: now });
    await journal.updateIntent(open!.intentId, { status: 'sent' });
    await journal.recordOrderSnapshot(order({ orderId: 'open', clientOrderId: open!.clientOrderId ?? '', status: 'NEW' }), { intentId: open!.intentId });
    await journal.updateIntent(open!.intentId, { status: 'done', result: { orderId: 'open' } });
    await journal.finishSlot({ instance: INSTANCE, slotTimeMs: now, status: 'done' });
    await filledSlot(T0 + 2 * HOUR);

    expect(await journal.retireSettled()).toEqual([]);
    expect((await journal.unresolvedIntents()).map((i) => i.intentId)).toEqual([sent!.intentId]);
    expect((await journal.openOrders()).map((o) => o.orderId)).toEqual(['open']);
  });

  it('remembers slots retired out of time order: an older slot that settles late is never claimed again either', async () => {
    // T0's answer is lost (unresolved) while the next two slots settle and retire first.
    now = T0;
    await journal.claimSlot({ instance: INSTANCE, slotTimeMs: T0, runId, intents: [{ index: 0, intent: buy('0.001') }] });
    const [late] = await journal.listIntents({ instance: INSTANCE, slotTimeMs: T0 });
    await journal.updateIntent(late!.intentId, { status: 'sent' });
    await journal.finishSlot({ instance: INSTANCE, slotTimeMs: T0, status: 'failed', reason: 'answer lost' });
    await filledSlot(T0 + HOUR, '10');
    await filledSlot(T0 + 2 * HOUR, '10');
    await filledSlot(T0 + 3 * HOUR, '10');
    expect((await journal.retireSettled()).map((entry) => entry.intent.slotTimeMs)).toEqual([T0 + 2 * HOUR, T0 + HOUR]);
    await journal.updateIntent(late!.intentId, { status: 'not-found', error: { code: 'E_NOT_FOUND', message: 'test' } });
    await filledSlot(T0 + 4 * HOUR, '10');
    expect((await journal.retireSettled()).map((entry) => entry.intent.slotTimeMs)).toEqual([T0 + 3 * HOUR, T0]);
    for (const slotTimeMs of [T0, T0 + HOUR, T0 + 2 * HOUR, T0 + 3 * HOUR, T0 + 4 * HOUR]) {
      expect(await journal.claimSlot({ instance: INSTANCE, slotTimeMs, runId })).toBe(false);
    }
    expect(await journal.claimSlot({ instance: INSTANCE, slotTimeMs: T0 - HOUR, runId })).toBe(true);
  });

  it('keeps a claimed slot (one in flight, or left by a crash) for reconciliation', async () => {
    now = T0;
    await journal.claimSlot({ instance: INSTANCE, slotTimeMs: T0, runId });
    await filledSlot(T0 + HOUR);
    expect(await journal.retireSettled()).toEqual([]);
    expect((await journal.listSlots({ status: 'claimed' })).map((s) => s.slotTimeMs)).toEqual([T0]);
  });
});
