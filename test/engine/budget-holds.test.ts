import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/engine.ts';
import type { AccountRouting } from '../../src/engine/runtime.ts';
import { Decimal, formatDecimal } from '../../src/domain/money.ts';
import type { IntentUpdate, Journal } from '../../src/store/journal.ts';
import { StoreError } from '../../src/store/errors.ts';
import type { MemoryJournal } from '../../src/store/memory-journal.ts';
import { dca } from '../../strategies/dca.ts';
import { ENGINE_JOURNALS, type EngineWorld, engineWorld, runtimeOf } from './harness.ts';

const SLOT = Date.UTC(2026, 10, 22, 9, 0, 0);

/**
 * The real journal, except that the write marking a buy sent fails as a journal taken away under
 * a running daemon fails (and, with `releaseFails`, so does giving a budget back: the state an
 * older stacker left such a stop in).
 */
function journalLostAtSend(journal: Journal, options: { releaseFails?: boolean } = {}): Journal {
  return new Proxy(journal, {
    get(target, property) {
      if (property === 'updateIntent') {
        return async (intentId: string, patch: IntentUpdate) => {
          if (patch.status === 'sent') throw new StoreError('journal-lost', 'the journal file was deleted while stacker was running');
          return target.updateIntent(intentId, patch);
        };
      }
      if (property === 'releaseBudget' && options.releaseFails === true) return async () => false;
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe.each(ENGINE_JOURNALS)('a budget held for a buy that was never sent (%s journal)', (kind) => {
  let world: EngineWorld;
  beforeEach(async () => {
    world = await engineWorld({}, kind);
  });
  afterEach(async () => {
    await world.close();
  });

  const budgeted = () =>
    runtimeOf({ instance: 'dca-btc', strategy: dca, env: { STRATEGY: 'dca', SCHEDULE: '0 9 * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001' }, budgets: { day: new Decimal('1000') } });

  it('is given back when trading stops between the reservation and the send: nothing was spent', async () => {
    const engine = new Engine({ ...world.deps(), journal: journalLostAtSend(world.journal) }, [budgeted()], { runId: null, onFatal: () => undefined });
    await engine.runSlot('dca-btc', SLOT).catch(() => undefined);
    expect(world.sandbox.exchange.orderHistory({})).toEqual([]);
    // It was reserved (65 USDT at the sandbox's price), then given back.
    const spent = await world.journal.budgetSpent({ instance: 'dca-btc', asset: 'USDT', timeZone: 'UTC' }, SLOT);
    expect(spent.day.toFixed()).toBe('0');
    expect(world.logs.some((line) => line.fields['event'] === 'trading-stopped')).toBe(true);
    const [intent] = await world.journal.listIntents({ instance: 'dca-btc' });
    expect(intent).toMatchObject({ status: 'failed', sentAtMs: null, error: { code: 'E_STOPPED' } });
    expect(await world.journal.heldBudgetReservations()).toEqual([]);
  });

  it('left held by an older stop, is given back at the next start, and the next buy is judged against the whole budget', async () => {
    const stopped = new Engine({ ...world.deps(), journal: journalLostAtSend(world.journal, { releaseFails: true }) }, [budgeted()], { runId: null, onFatal: () => undefined });
    await stopped.runSlot('dca-btc', SLOT).catch(() => undefined);
    expect((await world.journal.heldBudgetReservations()).map((held) => held.instance).sort()).toEqual(['account:default', 'dca-btc']);

    const next = world.engine([budgeted()]);
    await next.reconcile();
    expect(await world.journal.heldBudgetReservations()).toEqual([]);
    expect(world.logs.some((line) => line.fields['event'] === 'budget-released')).toBe(true);
    expect(await next.runSlot('dca-btc', SLOT + 3_600_000)).toBe('done');
    const spent = await world.journal.budgetSpent({ instance: 'dca-btc', asset: 'USDT', timeZone: 'UTC' }, SLOT + 3_600_000);
    expect(spent.day.toFixed()).toBe('65');
  });

  it('is given back while running once the journal takes writes again after they failed between the reservation and the send (a full disk), not only at the next start', async () => {
    let full = false;
    const fullDisk = new Proxy(world.journal, {
      get(target, property) {
        if (property === 'writeFailure') return () => (full ? { sinceMs: 0, message: 'database or disk is full' } : target.writeFailure());
        // The disk has room for a moment now and then: the buy's failure is journalled, giving its budget back and ending its slot are not.
        if (full && (property === 'releaseBudget' || property === 'finishSlot')) {
          return async () => {
            throw new StoreError('unwritable', 'the journal cannot be written: database or disk is full', { retryable: true });
          };
        }
        if (full && property === 'updateIntent') {
          return async (intentId: string, patch: IntentUpdate) => {
            if (patch.status === 'sent') throw new StoreError('unwritable', 'the journal cannot be written: database or disk is full', { retryable: true });
            return target.updateIntent(intentId, patch);
          };
        }
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const engine = new Engine({ ...world.deps(), journal: fullDisk as Journal }, [budgeted()], { runId: null, onFatal: () => undefined });
    // The disk fills once the buy has its reservation: its send is never marked, nor its end.
    const reserve = world.journal.reserveBudget.bind(world.journal);
    world.journal.reserveBudget = async (request) => {
      const decision = await reserve(request);
      full = true;
      return decision;
    };
    await engine.runSlot('dca-btc', SLOT).catch(() => undefined);
    expect(world.sandbox.exchange.orderHistory({})).toEqual([]);
    expect((await world.journal.heldBudgetReservations()).length).toBeGreaterThan(0);
    // Space again: the next round of tracking ends the slot's buy and gives its budget back.
    full = false;
    world.journal.reserveBudget = reserve;
    await engine.track();
    expect(await world.journal.heldBudgetReservations()).toEqual([]);
    expect(world.logs.some((line) => line.fields['event'] === 'budget-released')).toBe(true);
    expect(await engine.runSlot('dca-btc', SLOT + 3_600_000)).toBe('done');
  });

  it('counts a buy sent with its answer lost as unresolved while the journal cannot be written (a full disk), though the pass that would look it up fails', async () => {
    world.sandbox.faults.inject({ path: '/api/v4/order/stock_market', kind: 'reset' });
    const engine = world.engine([budgeted()]);
    await engine.runSlot('dca-btc', SLOT);
    expect((await world.journal.unresolvedIntents()).map((record) => record.status)).toEqual(['unknown']);
    // The disk fills: the lookup's writes fail, and the pass with them.
    const full = new Proxy(world.journal, {
      get(target, property) {
        if (property === 'updateIntent' || property === 'recordOrderSnapshot') {
          return async () => {
            throw new StoreError('unwritable', 'the journal cannot be written: database or disk is full', { retryable: true });
          };
        }
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const during = new Engine({ ...world.deps(), journal: full as Journal }, [budgeted()], { runId: null, onFatal: () => undefined });
    world.advance(60_000);
    await during.track();
    expect(during.health().unresolved.count).toBe(1);
  });

  it('settled at what the buy spent when the journal is lost between the order\'s final state and its settlement: the lookup of the next start settles it', async () => {
    // The account's settlement fails once, after the order's FILLED transition was committed (a connection lost there, a kill).
    let failures = 1;
    const lostAtSettle = new Proxy(world.journal, {
      get(target, property) {
        if (property === 'settleBudget') {
          return async (reservationId: string, spentQuote: Decimal) => {
            if (reservationId.endsWith('#account') && failures-- > 0) throw new StoreError('postgres', 'terminating connection due to administrator command');
            return target.settleBudget(reservationId, spentQuote);
          };
        }
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const first = new Engine({ ...world.deps(), journal: lostAtSettle }, [budgeted()], { runId: null, onFatal: () => undefined });
    expect(await first.runSlot('dca-btc', SLOT)).toBe('failed');
    expect((await world.journal.heldBudgetReservations()).map((held) => held.instance)).toEqual(['account:default']);

    await world.engine([budgeted()]).reconcile();
    expect(await world.journal.heldBudgetReservations()).toEqual([]);
    const [order] = world.sandbox.exchange.orderHistory({});
    const reservation = await world.journal.budgetReservation(`${(await world.journal.listIntents({ instance: 'dca-btc' }))[0]?.intentId}#account`);
    expect(reservation).toMatchObject({ state: 'settled' });
    expect(reservation?.amountQuote.toFixed()).toBe(order?.filledQuote.toFixed());
    expect(world.sandbox.exchange.orderHistory({})).toHaveLength(1);
  });

  it("counts a period's buys made before a budget or an account cap was set: one set later in the day is not a fresh one", async () => {
    const unbudgeted = runtimeOf({ instance: 'dca-btc', strategy: dca, env: { STRATEGY: 'dca', SCHEDULE: '0 9 * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001' } });
    // A buy of 65 USDT with no budget and no cap.
    expect(await world.engine([unbudgeted]).runSlot('dca-btc', SLOT)).toBe('done');
    // Restarted with a day's budget of 100: the morning's 65 counts, so a second 65 is over it.
    const budgetedLater = world.engine([{ ...unbudgeted, budgets: { day: new Decimal('100') } }]);
    expect(await budgetedLater.runSlot('dca-btc', SLOT + 3_600_000)).toBe('done');
    const [, refused] = (await world.journal.listIntents({ instance: 'dca-btc' })).sort((a, b) => a.slotTimeMs - b.slotTimeMs);
    expect(refused).toMatchObject({ status: 'refused', error: { code: 'over-budget', message: expect.stringMatching(/is above the budget left for this slot, 35 USDT \(what the instance's own budget leaves\)/) } });
    // The same with a cap on the account, set later.
    const capped: AccountRouting = {
      accountOf: () => 'default',
      exchangeOf: () => world.deps().exchange,
      capOf: () => ({ limits: { day: new Decimal('100') }, asset: 'USDT', timeZone: 'UTC' }),
      names: ['default'],
    };
    const cappedLater = new Engine({ ...world.deps(), accounts: capped }, [unbudgeted], { runId: null });
    expect(await cappedLater.runSlot('dca-btc', SLOT + 7_200_000)).toBe('done');
    const last = (await world.journal.listIntents({ instance: 'dca-btc' })).sort((a, b) => a.slotTimeMs - b.slotTimeMs).at(-1);
    expect(last).toMatchObject({ status: 'refused', error: { code: 'over-budget', message: expect.stringMatching(/is above the budget left for this slot, 35 USDT/) } });
    expect(world.sandbox.exchange.orderHistory({})).toHaveLength(1);
  });

  it('counts at start the buys a journal holds without a count (an older stacker counted a buy only under a budget or cap): a budget and cap set after an upgrade are not fresh ones', async () => {
    const unbudgeted = runtimeOf({ instance: 'dca-btc', strategy: dca, env: { STRATEGY: 'dca', SCHEDULE: '0 9 * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001' } });
    // The older build: a buy without a budget wrote no reservation.
    const oldBuild = new Proxy(world.journal, {
      get(target, property) {
        if (property === 'reserveBudget') return async () => ({ ok: true });
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    expect(await new Engine({ ...world.deps(), journal: oldBuild as Journal }, [unbudgeted], { runId: null }).runSlot('dca-btc', SLOT)).toBe('done');
    expect(await world.journal.budgetReservation((await world.journal.listIntents({ instance: 'dca-btc' }))[0]?.intentId ?? '')).toBeNull();

    // Upgraded, with a day's budget of 100 and an account cap of 100: the start counts the morning's 65.
    const capped: AccountRouting = {
      accountOf: () => 'default',
      exchangeOf: () => world.deps().exchange,
      capOf: () => ({ limits: { day: new Decimal('100') }, asset: 'USDT', timeZone: 'UTC' }),
      names: ['default'],
    };
    const upgraded = new Engine({ ...world.deps(), accounts: capped }, [{ ...unbudgeted, budgets: { day: new Decimal('100') } }], { runId: null });
    await upgraded.reconcile();
    const scope = { instance: 'dca-btc', asset: 'USDT', timeZone: 'UTC' };
    expect(formatDecimal((await world.journal.budgetSpent(scope, SLOT)).day)).toBe('65');
    expect(formatDecimal((await world.journal.budgetSpent({ ...scope, instance: 'account:default' }, SLOT)).day)).toBe('65');
    expect(world.logs.find((line) => line.fields['event'] === 'uncounted-buys-counted')?.fields).toMatchObject({ reservations: 2 });
    expect(await upgraded.runSlot('dca-btc', SLOT + 3_600_000)).toBe('done');
    const last = (await world.journal.listIntents({ instance: 'dca-btc' })).sort((a, b) => a.slotTimeMs - b.slotTimeMs).at(-1);
    expect(last).toMatchObject({ status: 'refused', error: { code: 'over-budget' } });
    expect(world.sandbox.exchange.orderHistory({})).toHaveLength(1);
    // A second start counts nothing again, and reads only what was journalled since the first (less an hour).
    expect(await world.journal.spendCountedThrough()).toEqual(expect.any(Number));
    await upgraded.reconcile();
    expect(world.logs.filter((line) => line.fields['event'] === 'uncounted-buys-counted')).toHaveLength(1);
  });
});

describe('a backtest buy under a budget of its instance alone', () => {
  it('holds nothing once filled, so its slot is retired: a reservation on an account without a cap would never be settled', async () => {
    const world = await engineWorld({}, 'memory');
    try {
      const journal = world.journal as MemoryJournal;
      const instance = runtimeOf({ instance: 'dca-btc', strategy: dca, env: { STRATEGY: 'dca', SCHEDULE: '0 9 * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001' }, budgets: { day: new Decimal('1000') } });
      const engine = new Engine({ ...world.deps(), mode: 'backtest' }, [instance], { runId: null });
      for (const hour of [0, 1, 2]) expect(await engine.runSlot('dca-btc', SLOT + hour * 3_600_000)).toBe('done');
      expect(await journal.heldBudgetReservations()).toEqual([]);
      // Every slot but the latest (which lastSlot reads) is over and forgotten.
      expect((await journal.retireSettled()).map((entry) => entry.intent.slotTimeMs)).toEqual([SLOT + 3_600_000, SLOT]);
    } finally {
      await world.close();
    }
  });
});

