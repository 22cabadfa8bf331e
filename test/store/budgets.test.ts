import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Decimal, formatDecimal } from '../../src/domain/money.ts';
import { periodStarts, periodWindows } from '../../src/store/budget-periods.ts';
import type { BudgetReserveRequest, Journal } from '../../src/store/journal.ts';
import { JOURNAL_KINDS, TempWorld } from './helpers.ts';

let world: TempWorld;
beforeEach(() => {
  world = new TempWorld();
});
afterEach(async () => {
  await world.cleanup();
});

const WED_2025_01_01_10H_UTC = Date.UTC(2025, 0, 1, 10);
const scope = { instance: 'dca-btc', asset: 'USDT', timeZone: 'UTC' } as const;
let next = 0;

function request(amount: string, overrides: Partial<BudgetReserveRequest> = {}): BudgetReserveRequest {
  next += 1;
  return {
    ...scope,
    reservationId: `r-${next}`,
    atMs: WED_2025_01_01_10H_UTC,
    amountQuote: new Decimal(amount),
    limits: { day: new Decimal('100'), week: new Decimal('300'), month: new Decimal('1000') },
    ...overrides,
  };
}

async function spentText(journal: Journal, atMs = WED_2025_01_01_10H_UTC, timeZone = 'UTC'): Promise<string[]> {
  const spent = await journal.budgetSpent({ ...scope, timeZone }, atMs);
  return [spent.day, spent.week, spent.month].map(formatDecimal);
}

describe.each(JOURNAL_KINDS)('budgets (%s journal)', (kind) => {
  beforeEach(() => {
    world.kind = kind;
  });

  it('reserves within the limit, up to exactly the limit, and refuses beyond it naming the period', async () => {
    const journal = await world.openJournal();
    expect(await journal.reserveBudget(request('60.5'))).toMatchObject({ ok: true, repeated: false });
    expect(await journal.reserveBudget(request('39.5'))).toMatchObject({ ok: true });
    const refused = await journal.reserveBudget(request('0.00000001'));
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    expect(refused.exceeded.map((e) => [e.period, formatDecimal(e.limitQuote), formatDecimal(e.spentQuote), formatDecimal(e.requestedQuote)])).toEqual([
      ['day', '100', '100', '0.00000001'],
    ]);
    expect(await spentText(journal)).toEqual(['100', '100', '100']);
  });

  it('counts day, ISO week (Monday first) and month separately in UTC', async () => {
    const journal = await world.openJournal();
    const limits = { day: new Decimal('100'), week: new Decimal('150'), month: new Decimal('1000') };
    await journal.reserveBudget(request('100', { limits }));
    // Thursday: a new day, the same week, which has 50 left.
    const thursday = Date.UTC(2025, 0, 2, 0, 0, 0);
    expect(await journal.reserveBudget(request('60', { atMs: thursday, limits }))).toMatchObject({ ok: false, exceeded: [{ period: 'week' }] });
    expect(await journal.reserveBudget(request('50', { atMs: thursday, limits }))).toMatchObject({ ok: true });
    // Sunday 23:59:59.999 is still the week; Monday 00:00 is a new one.
    expect(await journal.reserveBudget(request('1', { atMs: Date.UTC(2025, 0, 5, 23, 59, 59, 999), limits }))).toMatchObject({ ok: false });
    expect(await journal.reserveBudget(request('100', { atMs: Date.UTC(2025, 0, 6), limits }))).toMatchObject({ ok: true });
    expect(await spentText(journal, Date.UTC(2025, 0, 6, 12))).toEqual(['100', '100', '250']);
    // February starts a new month.
    expect(await spentText(journal, Date.UTC(2025, 1, 1))).toEqual(['0', '0', '0']);
  });

  it('counts periods on the wall clock of the given time zone', async () => {
    const journal = await world.openJournal();
    // 23:30 UTC on Dec 31 is already Jan 1 in Berlin: a new day, week day and month there.
    const lateUtc = Date.UTC(2024, 11, 31, 23, 30);
    await journal.reserveBudget(request('10', { atMs: lateUtc, timeZone: 'Europe/Berlin' }));
    expect(await spentText(journal, Date.UTC(2025, 0, 1, 12), 'Europe/Berlin')).toEqual(['10', '10', '10']);
    expect(await spentText(journal, Date.UTC(2024, 11, 31, 12), 'Europe/Berlin')).toEqual(['0', '10', '0']);
  });

  it('keeps what was spent when the time zone changes mid-period: each reservation counts in the periods its instant falls in', async () => {
    const journal = await world.openJournal();
    const limits = { day: new Decimal('100'), week: new Decimal('300'), month: new Decimal('1000') };
    // Under UTC on Wednesday Jan 1: 07:00 reserved 35 and settled at 30, 09:00 holds 20, 09:30 was given back.
    await journal.reserveBudget(request('35', { reservationId: 'utc-7h', atMs: Date.UTC(2025, 0, 1, 7), limits }));
    await journal.settleBudget('utc-7h', new Decimal('30'));
    await journal.reserveBudget(request('20', { reservationId: 'utc-9h', atMs: Date.UTC(2025, 0, 1, 9), limits }));
    await journal.reserveBudget(request('40', { reservationId: 'utc-9h30', atMs: Date.UTC(2025, 0, 1, 9, 30), limits }));
    await journal.releaseBudget('utc-9h30');

    // Berlin's Jan 1 began at 23:00 UTC the day before: all of it is in Berlin's day, week and month.
    const noon = Date.UTC(2025, 0, 1, 12);
    expect(await spentText(journal, noon, 'Europe/Berlin')).toEqual(['50', '50', '50']);
    const refused = await journal.reserveBudget(request('51', { atMs: noon, timeZone: 'Europe/Berlin', limits }));
    expect(refused).toMatchObject({ ok: false, exceeded: [{ period: 'day', periodStartMs: Date.UTC(2024, 11, 31, 23) }] });
    if (!refused.ok) expect(formatDecimal(refused.exceeded[0]?.spentQuote ?? new Decimal(-1))).toBe('50');
    expect(await journal.reserveBudget(request('50', { reservationId: 'berlin-12h', atMs: noon, timeZone: 'Europe/Berlin', limits }))).toMatchObject({ ok: true });

    // Los Angeles' Jan 1 began at 08:00 UTC: the 07:00 buy was its Dec 31, in its week but not its day or month.
    expect(await spentText(journal, Date.UTC(2025, 0, 1, 20), 'America/Los_Angeles')).toEqual(['70', '100', '70']);
    // Back on UTC, the buy made on Berlin time counts too.
    expect(await spentText(journal, Date.UTC(2025, 0, 1, 13))).toEqual(['100', '100', '100']);
    expect(await journal.reserveBudget(request('1', { atMs: Date.UTC(2025, 0, 1, 13), limits }))).toMatchObject({ ok: false, exceeded: [{ period: 'day' }] });
    // The next UTC day starts fresh; the week still counts all of it.
    expect(await spentText(journal, Date.UTC(2025, 0, 2, 1))).toEqual(['0', '100', '100']);
  });

  it('holds across close and reopen', async () => {
    const first = await world.openJournal();
    await first.reserveBudget(request('99'));
    await first.close();
    const second = await world.openJournal();
    expect(await second.reserveBudget(request('2'))).toMatchObject({ ok: false });
    expect(await spentText(second)).toEqual(['99', '99', '99']);
  });

  it('counts a repeated reservation id once', async () => {
    const journal = await world.openJournal();
    const first = request('40', { reservationId: 'intent-7' });
    await journal.reserveBudget(first);
    const again = await journal.reserveBudget(first);
    expect(again).toMatchObject({ ok: true, repeated: true, reservation: { reservationId: 'intent-7', state: 'held' } });
    expect(await spentText(journal)).toEqual(['40', '40', '40']);
    await expect(journal.reserveBudget({ ...first, instance: 'other' })).rejects.toMatchObject({ reason: 'conflict' });
  });

  it('releases a reservation once, and settles one at what was really spent', async () => {
    const journal = await world.openJournal();
    await journal.reserveBudget(request('40', { reservationId: 'a' }));
    await journal.reserveBudget(request('30', { reservationId: 'b' }));
    expect((await journal.heldBudgetReservations('dca-btc')).map((r) => r.reservationId)).toEqual(['a', 'b']);
    expect(await journal.releaseBudget('a')).toBe(true);
    expect(await journal.releaseBudget('a')).toBe(false);
    expect(await journal.releaseBudget('never-reserved')).toBe(false);
    const settled = await journal.settleBudget('b', new Decimal('30.123'));
    expect(settled).toMatchObject({ state: 'settled' });
    expect(formatDecimal(settled.amountQuote)).toBe('30.123');
    expect(await journal.settleBudget('b', new Decimal('30.123'))).toMatchObject({ state: 'settled' });
    // Settled again at more (the exchange's history corrected the order's fill), never at less.
    await expect(journal.settleBudget('b', new Decimal('30'))).rejects.toMatchObject({ reason: 'conflict' });
    expect(formatDecimal((await journal.settleBudget('b', new Decimal('31'))).amountQuote)).toBe('31');
    await expect(journal.releaseBudget('b')).rejects.toMatchObject({ reason: 'illegal-transition' });
    expect(await spentText(journal)).toEqual(['31', '31', '31']);
    expect(await journal.heldBudgetReservations()).toEqual([]);
  });

  it('counts in full a released reservation whose order turned up after all (an answer lost beyond its settle window)', async () => {
    const journal = await world.openJournal();
    await journal.reserveBudget(request('40', { reservationId: 'late' }));
    expect(await journal.releaseBudget('late')).toBe(true);
    expect(await spentText(journal)).toEqual(['0', '0', '0']);
    expect(await journal.settleBudget('late', new Decimal('39.5'))).toMatchObject({ state: 'settled' });
    expect(await spentText(journal)).toEqual(['39.5', '39.5', '39.5']);
  });

  it('reads one reservation in whatever state it is in, and none under an id never reserved', async () => {
    const journal = await world.openJournal();
    await journal.reserveBudget(request('40', { reservationId: 'one' }));
    expect(await journal.budgetReservation('one')).toMatchObject({ reservationId: 'one', state: 'held', instance: 'dca-btc' });
    await journal.releaseBudget('one');
    expect(await journal.budgetReservation('one')).toMatchObject({ state: 'released' });
    await journal.settleBudget('one', new Decimal('41'));
    expect(formatDecimal((await journal.budgetReservation('one'))?.amountQuote ?? new Decimal(0))).toBe('41');
    expect(await journal.budgetReservation('never-reserved')).toBeNull();
  });

  it('keeps instances and quote assets apart', async () => {
    const journal = await world.openJournal();
    await journal.reserveBudget(request('100'));
    expect(await journal.reserveBudget(request('100', { asset: 'EUR' }))).toMatchObject({ ok: true });
    expect(await journal.reserveBudget(request('100', { instance: 'dca-eth' }))).toMatchObject({ ok: true });
  });

  it('adds decimals exactly, where binary floats would drift', async () => {
    const journal = await world.openJournal();
    for (let i = 0; i < 10; i += 1) await journal.reserveBudget(request('0.1', { limits: { day: new Decimal('1') } }));
    expect(await spentText(journal)).toEqual(['1', '1', '1']);
    expect(await journal.reserveBudget(request('0.000000000000000001', { limits: { day: new Decimal('1') } }))).toMatchObject({ ok: false });
  });

  it('refuses a zero or negative amount and an unknown time zone', async () => {
    const journal = await world.openJournal();
    await expect(journal.reserveBudget(request('0'))).rejects.toMatchObject({ reason: 'invalid-argument' });
    await expect(journal.reserveBudget(request('-1'))).rejects.toMatchObject({ reason: 'invalid-argument' });
    await expect(journal.reserveBudget(request('1', { timeZone: 'Mars/Olympus' }))).rejects.toMatchObject({ reason: 'invalid-argument' });
  });
});

describe('budget periods', () => {
  it('starts days, ISO weeks and months at midnight UTC', () => {
    expect(periodStarts(WED_2025_01_01_10H_UTC, 'UTC')).toEqual({
      day: Date.UTC(2025, 0, 1),
      week: Date.UTC(2024, 11, 30),
      month: Date.UTC(2025, 0, 1),
    });
  });

  it('follows daylight saving time: a Berlin day in summer starts at 22:00 UTC the day before', () => {
    expect(periodStarts(Date.UTC(2025, 6, 15, 12), 'Europe/Berlin').day).toBe(Date.UTC(2025, 6, 14, 22));
    expect(periodStarts(Date.UTC(2025, 0, 15, 12), 'Europe/Berlin').day).toBe(Date.UTC(2025, 0, 14, 23));
  });

  it('starts a day whose midnight was skipped (São Paulo, 2018-11-04) at the first instant that exists', () => {
    expect(periodStarts(Date.UTC(2018, 10, 4, 15), 'America/Sao_Paulo').day).toBe(Date.UTC(2018, 10, 4, 3));
  });

  it('ends the day before a date the zone skipped whole where the next date starts (Pacific/Apia, 2011-12-30)', () => {
    // Apia went from 2011-12-29 23:59:59 (UTC−10) to 2011-12-31 00:00 (UTC+14): 2011-12-31 began at 10:00 UTC on the 30th.
    const { starts, ends } = periodWindows(Date.UTC(2011, 11, 29, 20), 'Pacific/Apia');
    expect(starts.day).toBe(Date.UTC(2011, 11, 29, 10));
    expect(ends.day).toBe(Date.UTC(2011, 11, 30, 10));
    expect(periodStarts(ends.day, 'Pacific/Apia').day).toBe(ends.day);
  });

  it('always puts the instant inside its day, week and month, each starting on its local date', () => {
    const zones = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe', 'America/Sao_Paulo', 'Pacific/Chatham'];
    const localDate = (ms: number, timeZone: string): string => new Date(ms).toLocaleDateString('en-CA', { timeZone });
    const localWeekday = (ms: number, timeZone: string): string => new Date(ms).toLocaleDateString('en-US', { timeZone, weekday: 'short' });
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2040, 0, 1) }), fc.constantFrom(...zones), (atMs, zone) => {
        const starts = periodStarts(atMs, zone);
        expect(starts.month).toBeLessThanOrEqual(atMs);
        expect(starts.week).toBeLessThanOrEqual(atMs);
        expect(starts.day).toBeLessThanOrEqual(atMs);
        expect(localDate(starts.day, zone)).toBe(localDate(atMs, zone));
        expect(localDate(starts.day - 1, zone)).not.toBe(localDate(atMs, zone));
        expect(localDate(starts.month, zone).slice(0, 7)).toBe(localDate(atMs, zone).slice(0, 7));
        expect(localDate(starts.month, zone).slice(8)).toBe('01');
        expect(localWeekday(starts.week, zone)).toBe('Mon');
        expect(atMs - starts.week).toBeLessThan(7 * 86_400_000 + 3_600_000);
      }),
      { numRuns: 300 },
    );
  });

  it('ends each period where the next one starts, so the periods around any instant tile time', () => {
    const zones = ['UTC', 'Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'America/Sao_Paulo', 'Pacific/Chatham'];
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2040, 0, 1) }), fc.constantFrom(...zones), (atMs, zone) => {
        const { starts, ends } = periodWindows(atMs, zone);
        expect(starts).toEqual(periodStarts(atMs, zone));
        for (const period of ['day', 'week', 'month'] as const) {
          expect(ends[period]).toBeGreaterThan(atMs);
          expect(periodStarts(ends[period], zone)[period]).toBe(ends[period]);
          expect(periodStarts(ends[period] - 1, zone)[period]).toBe(starts[period]);
        }
      }),
      { numRuns: 300 },
    );
  });
});
