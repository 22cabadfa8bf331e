import { closeSync, copyFileSync, openSync, renameSync, rmSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deriveClientOrderId } from '../../src/domain/client-order-id.ts';
import { Decimal, formatDecimal } from '../../src/domain/money.ts';
import { openStore, openStoreForReading } from '../../src/store/open-store.ts';
import { JOURNAL_KINDS, SLOT, TempWorld, order } from './helpers.ts';

let world: TempWorld;
const closers: (() => Promise<void>)[] = [];
beforeEach(() => {
  world = new TempWorld();
});
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  await world.cleanup();
});

const filled = (index: number, quote: string) =>
  order({
    orderId: `70${index}`,
    clientOrderId: deriveClientOrderId(SLOT.instance, SLOT.slotTimeMs, index),
    status: 'FILLED',
    left: new Decimal('0'),
    filledBase: new Decimal('0.0005'),
    filledQuote: new Decimal(quote),
    fee: new Decimal('0.03'),
    feeAsset: 'USDT',
  });

const adoption = (index: number, quote: string) => ({
  instance: SLOT.instance,
  slotTimeMs: SLOT.slotTimeMs,
  index,
  order: filled(index, quote),
  asset: 'USDT',
  timeZone: 'UTC',
  reason: 'found in the exchange history; not in the journal',
});

describe.each(JOURNAL_KINDS)('a second order of an intent the journal sent (%s journal)', (kind) => {
  beforeEach(() => {
    world.kind = kind;
  });

  it("journals it against the intent and counts it on the instance and its account cap under a reservation of its own, with the finding, all at once", async () => {
    const journal = await world.openJournal();
    const { intent } = await journal.adoptOrder(adoption(0, '30'));
    const twin = { ...filled(0, '31'), orderId: '799' };
    const cap = { scope: '@account:default', asset: 'USDT', timeZone: 'UTC' };
    const finding = { kind: 'foreign' as const, instance: SLOT.instance, clientOrderId: twin.clientOrderId, orderId: '799', market: 'BTC_USDT', detail: 'placed another order with the same id' };
    const transition = await journal.recordSecondOrder({ intentId: intent.intentId, instance: SLOT.instance, slotTimeMs: SLOT.slotTimeMs, order: twin, asset: 'USDT', timeZone: 'UTC', accountCap: cap, finding });
    expect(transition).toMatchObject({ orderId: '799', toStatus: 'FILLED' });
    expect((await journal.getOrder('799'))?.intentId).toBe(intent.intentId);
    expect(formatDecimal((await journal.budgetSpent({ instance: SLOT.instance, asset: 'USDT', timeZone: 'UTC' }, SLOT.slotTimeMs)).day)).toBe('61');
    expect(formatDecimal((await journal.budgetSpent({ instance: cap.scope, asset: 'USDT', timeZone: 'UTC' }, SLOT.slotTimeMs)).day)).toBe('31');
    expect((await journal.listFindings({ unacknowledged: true })).map((f) => [f.kind, f.orderId])).toEqual([['foreign', '799'], ['adopted', '700']]);
    // Another id than the intent's is not its second order; nothing is written.
    await expect(journal.recordSecondOrder({ intentId: intent.intentId, instance: SLOT.instance, slotTimeMs: SLOT.slotTimeMs, order: { ...filled(1, '5'), orderId: '800' }, asset: 'USDT', timeZone: 'UTC', finding: null })).rejects.toMatchObject({ reason: 'conflict' });
    expect(await journal.getOrder('800')).toBeNull();
  });
});

describe.each(JOURNAL_KINDS)('adopting an order the journal never sent (%s journal)', (kind) => {
  beforeEach(() => {
    world.kind = kind;
  });

  it('journals its slot, a done intent of origin adopted, the order and its transition, the spend and a finding, all at once', async () => {
    const journal = await world.openJournal();
    const adopted = await journal.adoptOrder(adoption(1, '30'));
    expect(adopted.intent).toMatchObject({ status: 'done', origin: 'adopted', index: 1, clientOrderId: filled(1, '30').clientOrderId, attempts: 0 });
    expect(adopted.transition).toMatchObject({ fromStatus: null, toStatus: 'FILLED' });
    expect(await journal.getSlot(SLOT)).toMatchObject({ status: 'done' });
    expect((await journal.getOrder('701'))?.intentId).toBe(adopted.intent.intentId);
    const spent = await journal.budgetSpent({ instance: SLOT.instance, asset: 'USDT', timeZone: 'UTC' }, SLOT.slotTimeMs);
    expect(formatDecimal(spent.day)).toBe('30');
    expect(await journal.listFindings({ unacknowledged: true })).toMatchObject([{ kind: 'adopted', orderId: '701', instance: SLOT.instance }]);
  });

  it('journals the STP mode of an adopted order only when the exchange said it: a history row says none, and is not written as `no`', async () => {
    const journal = await world.openJournal();
    const fromHistory = await journal.adoptOrder(adoption(1, '30'));
    expect(fromHistory.intent.intent).toEqual({ kind: 'buy-stock-market', market: 'BTC_USDT', amount: filled(1, '30').amount });
    const nextDay = SLOT.slotTimeMs + 86_400_000;
    const answered = await journal.adoptOrder({ ...adoption(0, '30'), slotTimeMs: nextDay, order: { ...filled(0, '30'), orderId: '798', clientOrderId: deriveClientOrderId(SLOT.instance, nextDay, 0), stp: 'cn' } });
    expect(answered.intent.intent).toMatchObject({ stp: 'cn' });
  });

  it("counts the order on its account's cap in the same transaction: both scopes or, when the adoption fails, neither", async () => {
    const journal = await world.openJournal();
    const capScope = { instance: 'account:kids', asset: 'USDT', timeZone: 'UTC' };
    const onCap = { accountCap: { scope: capScope.instance, asset: 'USDT', timeZone: 'UTC' } };
    const adopted = await journal.adoptOrder({ ...adoption(1, '30'), ...onCap });
    expect(formatDecimal((await journal.budgetSpent({ instance: SLOT.instance, asset: 'USDT', timeZone: 'UTC' }, SLOT.slotTimeMs)).day)).toBe('30');
    expect(formatDecimal((await journal.budgetSpent(capScope, SLOT.slotTimeMs)).day)).toBe('30');
    expect(await journal.heldBudgetReservations()).toEqual([]);
    expect(adopted.intent.intentId).not.toBe('');

    // A second adoption into the same slot is refused whole: no spend on either scope.
    await expect(journal.adoptOrder({ ...adoption(2, '40'), ...onCap })).rejects.toMatchObject({ reason: 'conflict' });
    expect(formatDecimal((await journal.budgetSpent(capScope, SLOT.slotTimeMs)).day)).toBe('30');
    expect(formatDecimal((await journal.budgetSpent({ instance: SLOT.instance, asset: 'USDT', timeZone: 'UTC' }, SLOT.slotTimeMs)).day)).toBe('30');
  });

  it('holds the account cap while an adopted order still fills, and counts nothing on it for an order that filled nothing', async () => {
    const journal = await world.openJournal();
    const capScope = { instance: 'account:kids', asset: 'USDT', timeZone: 'UTC' };
    const onCap = { accountCap: { scope: capScope.instance, asset: 'USDT', timeZone: 'UTC' } };
    const partial = { ...adoption(1, '12'), order: { ...filled(1, '12'), status: 'PARTIAL_FILLED' as const } };
    const adopted = await journal.adoptOrder({ ...partial, ...onCap });
    const held = (await journal.heldBudgetReservations()).map((r) => r.reservationId).sort();
    expect(held).toEqual([adopted.intent.intentId, `${adopted.intent.intentId}#account`].sort());
    expect(formatDecimal((await journal.budgetSpent(capScope, SLOT.slotTimeMs)).day)).toBe('12');

    const other = { ...SLOT, slotTimeMs: SLOT.slotTimeMs + 86_400_000 };
    const empty = order({ orderId: '799', clientOrderId: deriveClientOrderId(other.instance, other.slotTimeMs, 0), status: 'CANCELED', filledBase: new Decimal('0'), filledQuote: new Decimal('0'), fee: new Decimal('0') });
    await journal.adoptOrder({ ...adoption(0, '0'), slotTimeMs: other.slotTimeMs, order: empty, ...onCap });
    expect(formatDecimal((await journal.budgetSpent(capScope, other.slotTimeMs)).day)).toBe('0');
  });

  it('refuses to adopt into a slot the journal already has: that order was sent by someone else', async () => {
    const journal = await world.openJournal();
    await journal.claimSlot({ ...SLOT, runId: null });
    await expect(journal.adoptOrder(adoption(0, '30'))).rejects.toMatchObject({ reason: 'conflict' });
    expect(await journal.getOrder('700')).toBeNull();
    expect(await journal.listFindings()).toEqual([]);
  });

  it('acknowledges findings, and remembers up to when the exchange history was read', async () => {
    const journal = await world.openJournal();
    await journal.recordFinding({ kind: 'foreign', instance: SLOT.instance, clientOrderId: 'x-1', orderId: '1', market: 'BTC_USDT', detail: 'placed twice' });
    expect(await journal.listFindings({ unacknowledged: true })).toHaveLength(1);
    expect(await journal.acknowledgeFindings()).toBe(1);
    expect(await journal.listFindings({ unacknowledged: true })).toEqual([]);
    expect(await journal.listFindings()).toMatchObject([{ kind: 'foreign', acknowledgedAtMs: world.nowMs }]);
    expect(await journal.ledgerCheckedThrough()).toBeNull();
    await journal.setLedgerCheckedThrough(123_000);
    expect(await journal.ledgerCheckedThrough()).toBe(123_000);
    // Apart from it, up to when the buys were checked for a budget count.
    expect(await journal.spendCountedThrough()).toBeNull();
    await journal.setSpendCountedThrough(456_000);
    expect([await journal.spendCountedThrough(), await journal.ledgerCheckedThrough()]).toEqual([456_000, 123_000]);
  });
});

describe('a journal file that is deleted or replaced under a running daemon', () => {
  it('is noticed before the next send', async () => {
    const journal = await world.opened();
    await journal.claimSlot({ ...SLOT, runId: null });
    await expect(journal.assertIntact()).resolves.toBeUndefined();
    for (const suffix of ['', '-wal', '-shm']) rmSync(world.path() + suffix, { force: true });
    // SQLite keeps writing to the unlinked file without a word: only the check says so.
    await journal.claimSlot({ ...SLOT, slotTimeMs: SLOT.slotTimeMs + 1, runId: null });
    await expect(journal.assertIntact()).rejects.toMatchObject({ code: 'E_STORE', reason: 'journal-lost', message: expect.stringContaining('was deleted') });
  });

  it('is noticed when another file takes its name', async () => {
    const journal = await world.opened();
    copyFileSync(world.path(), join(world.dir, 'copy.db'));
    renameSync(join(world.dir, 'copy.db'), world.path());
    await expect(journal.assertIntact()).rejects.toMatchObject({ reason: 'journal-lost', message: expect.stringContaining('replaced') });
  });
});

describe('a data dir whose journal is lost between runs', () => {
  const dataDir = (): string => join(world.dir, 'data');

  async function firstRun(): Promise<void> {
    const store = await openStore({ dataDir: dataDir(), mode: 'live' });
    await store.journal.claimSlot({ ...SLOT, runId: null });
    await store.close();
  }

  it('refuses to start on a journal truncated to 0 bytes, naming it and the way on, and changes nothing', async () => {
    await firstRun();
    truncateSync(join(dataDir(), 'stacker.db'), 0);
    const error = await openStore({ dataDir: dataDir(), mode: 'live' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'E_STORE', reason: 'journal-lost' });
    expect(String((error as Error).message)).toMatch(/stacker\.db is empty/);
    expect(String((error as Error).message)).toMatch(/--rebuild-journal/);
    // The lock was released: the next attempt is refused for the same reason, not E_LOCKED.
    await expect(openStore({ dataDir: dataDir(), mode: 'live' })).rejects.toMatchObject({ reason: 'journal-lost' });
  });

  it('refuses a journal damaged in its pages (a disk fault), saying so and the way on; --rebuild-journal keeps it aside and starts a new one', async () => {
    await firstRun();
    // Garbage over the pages after the first (the tables' data), as a disk fault or a stray write leaves it.
    const path = join(dataDir(), 'stacker.db');
    const fd = openSync(path, 'r+');
    writeSync(fd, Buffer.alloc(8192, 0xa5), 0, 8192, 4096);
    closeSync(fd);
    const error = await openStore({ dataDir: dataDir(), mode: 'live' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'E_STORE', reason: 'journal-lost' });
    expect(String((error as Error).message)).toMatch(/stacker\.db is damaged \(/);
    expect(String((error as Error).message)).toMatch(/Restore .* from a backup, or rebuild it from the exchange's order history: `stacker run --rebuild-journal`/);
    // The readers (check, orders, journal, report) refuse it too, as run does, instead of reporting from it.
    await expect(openStoreForReading({ dataDir: dataDir(), mode: 'live' })).rejects.toMatchObject({ code: 'E_STORE', reason: 'journal-lost', message: expect.stringMatching(/stacker\.db is damaged \(/) });
    const store = await openStore({ dataDir: dataDir(), mode: 'live', onLostJournal: 'rebuild', clock: () => Date.UTC(2026, 10, 24) });
    closers.push(() => store.close());
    expect(store.rebuilt?.reason).toMatch(/is damaged/);
    expect(store.rebuilt?.movedAside).toContain(join(dataDir(), 'stacker.db.lost-2026-11-24T00-00-00-000Z'));
    expect(await store.journal.getSlot(SLOT)).toBeNull();
  });

  it('refuses a missing journal and a journal swapped for another one', async () => {
    await firstRun();
    rmSync(join(dataDir(), 'stacker.db'));
    await expect(openStore({ dataDir: dataDir(), mode: 'live' })).rejects.toMatchObject({ reason: 'journal-lost', message: expect.stringMatching(/is missing/) });
    const other = await openStore({ dataDir: join(world.dir, 'other'), mode: 'live' });
    await other.close();
    copyFileSync(join(world.dir, 'other', 'stacker.db'), join(dataDir(), 'stacker.db'));
    await expect(openStore({ dataDir: dataDir(), mode: 'live' })).rejects.toMatchObject({ reason: 'journal-lost', message: expect.stringMatching(/not the one that was here/) });
  });

  it('rebuilds on request: the lost files are kept under a dated name and a new journal takes their place', async () => {
    await firstRun();
    writeFileSync(join(dataDir(), 'stacker.db'), '');
    const store = await openStore({ dataDir: dataDir(), mode: 'live', onLostJournal: 'rebuild', clock: () => Date.UTC(2026, 10, 24) });
    closers.push(() => store.close());
    expect(store.rebuilt?.movedAside).toEqual([join(dataDir(), 'stacker.db.lost-2026-11-24T00-00-00-000Z')]);
    expect(await store.journal.getSlot(SLOT)).toBeNull();
  });

  it('refuses to "rebuild" an intact journal', async () => {
    await firstRun();
    await expect(openStore({ dataDir: dataDir(), mode: 'live', onLostJournal: 'rebuild' })).rejects.toMatchObject({ reason: 'conflict' });
  });

  it('starts a new journal in a data dir that never had one', async () => {
    const store = await openStore({ dataDir: dataDir(), mode: 'live' });
    closers.push(() => store.close());
    expect(store.rebuilt).toBeNull();
  });
});

describe('a journal the file system will not write', () => {
  it('reports the failure (read-only) until a write succeeds, and classes it as unwritable, never as a bug', async () => {
    const writer = await world.opened();
    await writer.claimSlot({ ...SLOT, runId: null });
    const reader = await world.opened({ readOnly: true });
    expect(reader.writeFailure()).toBeNull();
    await expect(reader.claimSlot({ ...SLOT, slotTimeMs: SLOT.slotTimeMs + 1, runId: null })).rejects.toMatchObject({ code: 'E_STORE', reason: 'unwritable', retryable: true });
    expect(reader.writeFailure()?.message).toMatch(/cannot be written: .*readonly/i);
    // Failing again later, it is still failing since the first time.
    const since = reader.writeFailure()?.atMs;
    world.nowMs += 15_000;
    await expect(reader.claimSlot({ ...SLOT, slotTimeMs: SLOT.slotTimeMs + 3, runId: null })).rejects.toMatchObject({ reason: 'unwritable' });
    expect(reader.writeFailure()?.atMs).toBe(since);
    // The writer is not affected: its writes go on, and so does its clean record.
    await writer.claimSlot({ ...SLOT, slotTimeMs: SLOT.slotTimeMs + 2, runId: null });
    expect(writer.writeFailure()).toBeNull();
  });
});
