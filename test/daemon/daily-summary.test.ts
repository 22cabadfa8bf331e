import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { accountCapsLeft, dailySummary, nextUtcMidnightMs, scheduleDailySummary } from '../../src/daemon/daily-summary.ts';
import { Decimal } from '../../src/domain/money.ts';
import type { NotifyEvent } from '../../src/domain/notification.ts';
import { budgetLeft } from '../../src/engine/runtime.ts';
import { dca } from '../../strategies/dca.ts';
import { type EngineWorld, engineWorld, runtimeOf } from '../engine/harness.ts';

const DAY_MS = 86_400_000;

describe('nextUtcMidnightMs', () => {
  it('is the coming 00:00 UTC, and a moment at midnight itself waits a whole day', () => {
    expect(nextUtcMidnightMs(Date.UTC(2026, 0, 1, 23, 59, 59, 999))).toBe(Date.UTC(2026, 0, 2));
    expect(nextUtcMidnightMs(Date.UTC(2026, 0, 2))).toBe(Date.UTC(2026, 0, 3));
  });
});

describe('the daily summary', () => {
  let world: EngineWorld;
  beforeEach(async () => {
    world = await engineWorld();
  });
  afterEach(async () => {
    await world.close();
  });

  // The sandbox stamps orders with its own time (now): the day summed up is today, and its slots are today's.
  const TODAY = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  const SLOT = TODAY + 1_000;
  const budgeted = (instance = 'dca-btc', day = '1000') => ({ ...runtimeOf({ instance, strategy: dca, env: { STRATEGY: 'dca', SCHEDULE: '0 9 * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001' } }), budgets: { day: new Decimal(day) } });

  it("sums each instance's fills of the UTC day from the journal, with average cost (fees in) and budget left", async () => {
    const runtime = budgeted();
    const engine = world.engine([runtime]);
    await engine.runSlot('dca-btc', SLOT);
    await engine.runSlot('dca-btc', SLOT + 60_000);
    const fees = world.sandbox.exchange.orderHistory({}).reduce((sum, order) => sum.add(order.fee), new Decimal(0));
    // The sandbox stamps orders with its own time (now): the day that ends at the coming midnight.
    const dayEndMs = nextUtcMidnightMs(Date.now());
    const deps = {
      journal: world.journal,
      instances: [{ instance: 'dca-btc', budgetAsset: 'USDT' }, { instance: 'quiet', budgetAsset: null }],
      mode: 'live' as const,
      clock: { nowMs: () => SLOT + 120_000 },
      budgetLeft: (instance: string, atMs: number) => (instance === 'dca-btc' ? budgetLeft(world.journal, runtime, atMs) : Promise.resolve(null)),
    };
    const event = await dailySummary(deps, dayEndMs);
    expect(event).toMatchObject({ kind: 'daily-summary', mode: 'live', day: new Date(dayEndMs - DAY_MS).toISOString().slice(0, 10) });
    if (event.kind !== 'daily-summary') throw new Error('not a summary');
    const [mine, quiet] = event.instances;
    expect(mine).toMatchObject({ instance: 'dca-btc', state: 'enabled', account: 'default', market: 'BTC_USDT', orders: 2, budgetAsset: 'USDT' });
    expect([mine?.bought, mine?.spent, mine?.budgetLeft].map((d) => d?.toFixed())).toEqual(['0.002', '130', '870']);
    expect(mine?.averageCost?.toFixed()).toBe(new Decimal(130).add(fees).div('0.002').toFixed());
    expect(quiet).toMatchObject({ instance: 'quiet', market: null, orders: 0, averageCost: null, budgetLeft: null });

    const dayBefore = await dailySummary(deps, dayEndMs - DAY_MS);
    expect(dayBefore.kind === 'daily-summary' && dayBefore.instances.map((day) => day.orders)).toEqual([0, 0]);
  });

  it("ends with what each capped account's cap leaves, counted in its own calendar", async () => {
    // Kids spent 65.13 USDT (fee in) on its 100-a-day cap at 23:30 UTC on 2 March: the 3rd in
    // Berlin, so a read at 23:45 UTC sees the cap of that Berlin day.
    const spentAt = Date.UTC(2026, 2, 2, 23, 30);
    await world.journal.reserveBudget({ reservationId: 'r1#account', instance: 'account:kids', asset: 'USDT', timeZone: 'Europe/Berlin', atMs: spentAt, amountQuote: new Decimal('65.13'), limits: {} });
    const accounts = {
      names: ['default', 'kids'],
      capOf: (account: string) => (account === 'kids' ? { limits: { day: new Decimal('100') }, asset: 'USDT', timeZone: 'Europe/Berlin' } : null),
    };
    expect(await accountCapsLeft(world.journal, accounts, () => Date.UTC(2026, 2, 2, 23, 45))).toEqual([{ account: 'kids', capLeft: new Decimal('34.87'), capAsset: 'USDT', timeZone: 'Europe/Berlin' }]);
    // 22:45 UTC is still the 2nd in Berlin: nothing spent that day.
    expect((await accountCapsLeft(world.journal, accounts, () => Date.UTC(2026, 2, 2, 22, 45)))[0]?.capLeft.toFixed()).toBe('100');
  });

  it("shows each budget and cap as its own calendar's day of the summary's date left it, not the next day's in a zone east of UTC", async () => {
    // 20 a day in Berlin: 13 spent at 22:59 Berlin time on 2 March (21:59 UTC), 5 at 00:30 on the 3rd (23:30 UTC on the 2nd).
    const berlin = { ...budgeted('dca-berlin', '20'), timezone: 'Europe/Berlin' };
    // 20 a day in New York, 4 spent at 18:30 there on 2 March (23:30 UTC): its day runs on past the summary.
    const newYork = { ...budgeted('dca-ny', '20'), timezone: 'America/New_York' };
    const reserve = (reservationId: string, instance: string, timeZone: string, atMs: number, amount: string) =>
      world.journal.reserveBudget({ reservationId, instance, asset: 'USDT', timeZone, atMs, amountQuote: new Decimal(amount), limits: {} });
    await reserve('b1', 'dca-berlin', 'Europe/Berlin', Date.UTC(2026, 2, 2, 21, 59), '13');
    await reserve('b2', 'dca-berlin', 'Europe/Berlin', Date.UTC(2026, 2, 2, 23, 30), '5');
    await reserve('n1', 'dca-ny', 'America/New_York', Date.UTC(2026, 2, 2, 23, 30), '4');
    await reserve('k1#account', 'account:kids', 'Europe/Berlin', Date.UTC(2026, 2, 2, 21, 30), '65.13');
    await reserve('k2#account', 'account:kids', 'Europe/Berlin', Date.UTC(2026, 2, 2, 23, 30), '10');
    const accounts = { names: ['kids'], capOf: () => ({ limits: { day: new Decimal('100') }, asset: 'USDT', timeZone: 'Europe/Berlin' }) };
    const runtimes = new Map([berlin, newYork].map((runtime) => [runtime.instance, runtime]));
    const event = await dailySummary(
      {
        journal: world.journal,
        instances: [berlin, newYork].map((runtime) => ({ instance: runtime.instance, budgetAsset: 'USDT', budgetTimeZone: runtime.timezone })),
        mode: 'live',
        clock: { nowMs: () => Date.UTC(2026, 2, 3) },
        budgetLeft: (instance, atMs) => budgetLeft(world.journal, runtimes.get(instance) ?? berlin, atMs),
        accountCaps: (readAtMs) => accountCapsLeft(world.journal, accounts, readAtMs),
      },
      Date.UTC(2026, 2, 3),
    );
    if (event.kind !== 'daily-summary') throw new Error('not a summary');
    expect(event.day).toBe('2026-03-02');
    expect(event.instances.map((day) => [day.instance, day.budgetLeft?.toFixed(), day.budgetTimeZone])).toEqual([
      ['dca-berlin', '7', 'Europe/Berlin'],
      ['dca-ny', '16', 'America/New_York'],
    ]);
    expect(event.accountCaps.map((cap) => [cap.account, cap.capLeft.toFixed(), cap.timeZone])).toEqual([['kids', '34.87', 'Europe/Berlin']]);
  });

  it("sent just after midnight, covers every instance that bought that day, configured or not, with budgets and caps left as at the day's end", async () => {
    // dca-btc runs; `off` was disabled during the day; `old-name` bought, then its file was renamed.
    const [running, off, renamed] = [budgeted('dca-btc', '100'), budgeted('off', '100'), budgeted('old-name', '100')];
    const engine = world.engine([running, off, renamed]);
    for (const [index, instance] of ['dca-btc', 'off', 'old-name'].entries()) await engine.runSlot(instance, SLOT + index * 1_000);
    const capped = { names: ['default'], capOf: () => ({ limits: { day: new Decimal('500') }, asset: 'USDT', timeZone: 'UTC' }) };
    // A clock 80 ms before the end of the day the orders were made in: the summary is read in the next one.
    const offsetMs = nextUtcMidnightMs(Date.now()) - Date.now() - 80;
    const sent: NotifyEvent[] = [];
    const timer = scheduleDailySummary({
      journal: world.journal,
      instances: [
        { instance: 'dca-btc', budgetAsset: 'USDT', account: 'default' },
        { instance: 'off', budgetAsset: 'USDT', account: 'default', enabled: false },
        { instance: 'quiet-off', budgetAsset: 'USDT', account: 'default', enabled: false },
      ],
      mode: 'live',
      clock: { nowMs: () => Date.now() + offsetMs },
      budgetLeft: (instance, atMs) => budgetLeft(world.journal, instance === 'dca-btc' ? running : off, atMs),
      accountCaps: (readAtMs) => accountCapsLeft(world.journal, capped, readAtMs),
      notify: (event) => sent.push(event),
      onError: (error) => {
        throw error;
      },
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 400));
    } finally {
      timer.stop();
    }
    expect(sent).toHaveLength(1);
    const [event] = sent;
    if (event?.kind !== 'daily-summary') throw new Error('not a summary');
    expect(event.atMs).toBeGreaterThanOrEqual(TODAY + DAY_MS);
    expect(event.day).toBe(new Date(TODAY).toISOString().slice(0, 10));
    // Each spent 65 of its 100 that day; a disabled instance that bought nothing is left out.
    expect(event.instances.map((day) => [day.instance, day.state, day.orders, day.spent.toFixed(), day.budgetLeft?.toFixed() ?? null])).toEqual([
      ['dca-btc', 'enabled', 1, '65', '35'],
      ['off', 'disabled', 1, '65', '35'],
      ['old-name', 'no-file', 1, '65', null],
    ]);
    // The cap counted all three: 500 - 3 × 65.
    expect(event.accountCaps.map((cap) => [cap.account, cap.capLeft.toFixed()])).toEqual([['default', '305']]);
  });

  it('is sent once at 00:00 UTC and the timer re-arms for the next day', async () => {
    const runtime = budgeted();
    // A clock 80 ms before a UTC midnight.
    const offsetMs = nextUtcMidnightMs(Date.now()) - Date.now() - 80;
    const sent: NotifyEvent[] = [];
    const timer = scheduleDailySummary({
      journal: world.journal,
      instances: [{ instance: 'dca-btc', budgetAsset: 'USDT' }],
      mode: 'dry-run',
      clock: { nowMs: () => Date.now() + offsetMs },
      budgetLeft: (_, atMs) => budgetLeft(world.journal, runtime, atMs),
      notify: (event) => sent.push(event),
      onError: (error) => {
        throw error;
      },
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(sent).toHaveLength(1);
      expect(sent[0]).toMatchObject({ kind: 'daily-summary', mode: 'dry-run' });
    } finally {
      timer.stop();
    }
  });
});
