import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrate } from '../../src/cli/commands/journal.ts';
import { CommandContext, type GlobalFlags, type RunState } from '../../src/cli/context.ts';
import type { Io } from '../../src/cli/output.ts';
import { Decimal, formatDecimal } from '../../src/domain/money.ts';
import type { Journal } from '../../src/store/journal.ts';
import { LockedError } from '../../src/store/errors.ts';
import { openStore, openStoreForReading } from '../../src/store/open-store.ts';
import { SqliteJournal } from '../../src/store/sqlite-journal.ts';
import { PgJournal } from '../../src/store/pg-journal.ts';
import { failure } from '../support/thrown.ts';
import { createDatabase, dropDatabase, pgCluster } from '../support/pg-databases.ts';
import { TempWorld, buy, order } from '../store/helpers.ts';

/**
 * `stacker journal migrate --to postgres://…` moves a data dir's SQLite journal into a real
 * PostgreSQL database: everything the daemon would read back is the same on both sides.
 */

let world: TempWorld;
let captured: string[];
beforeEach(() => {
  world = new TempWorld();
});
afterEach(async () => {
  await world.cleanup();
});

const PASSWORD = 'not-shown-anywhere';
const dataDir = (): string => join(world.dir, 'data');
const SLOT_1 = Date.UTC(2025, 0, 1, 9);
const SLOT_2 = SLOT_1 + 86_400_000;
const scope = { instance: 'dca-btc', asset: 'USDT', timeZone: 'Europe/Berlin' } as const;

function context(json: boolean): CommandContext {
  captured = [];
  const io: Io = { out: (text) => void captured.push(text), err: (text) => void captured.push(text) };
  const state: RunState = { json, verbose: false, lookupHint: undefined };
  return new CommandContext('journal', { json } satisfies GlobalFlags, io, state);
}

/** The target URL, with a password (the test cluster trusts loopback, so it is never checked). */
async function target(): Promise<string> {
  return (await world.pgUrl()).replace('postgres@', `postgres:${PASSWORD}@`);
}

/** A live journal with a filled buy, a transfer, state, budgets, an adopted order and a finding. */
async function writeSqliteJournal(): Promise<void> {
  const store = await openStore({ dataDir: dataDir(), mode: 'live', userLockDir: join(world.dir, 'locks') });
  const j = store.journal;
  const run = await j.startRun({ mode: 'live', pid: 7, version: 'test' });
  await j.claimSlot({
    ...{ instance: 'dca-btc', slotTimeMs: SLOT_1 },
    runId: run.runId,
    intents: [
      { index: 0, intent: buy('0.00051') },
      { index: 1, intent: { kind: 'set-state', key: 'last', value: 'bought' } },
      { index: 2, intent: { kind: 'transfer', ticker: 'USDT', amount: new Decimal('33.1'), from: 'main', to: 'spot' } },
    ],
  });
  const [first, , transfer] = await j.listIntents({ instance: 'dca-btc', slotTimeMs: SLOT_1 }).then((list) => [...list].sort((a, b) => a.index - b.index));
  await j.reserveBudget({ ...scope, reservationId: first!.intentId, atMs: SLOT_1, amountQuote: new Decimal('35.5'), limits: { day: new Decimal('100') } });
  await j.updateIntent(first!.intentId, { status: 'sent' });
  await j.recordOrderSnapshot(order({ orderId: '1001', clientOrderId: first!.clientOrderId ?? '' }));
  await j.recordOrderSnapshot(order({ orderId: '1001', clientOrderId: first!.clientOrderId ?? '', status: 'FILLED', left: new Decimal('0'), filledBase: new Decimal('0.00051'), filledQuote: new Decimal('32.50000001'), fee: new Decimal('0.0325'), feeAsset: 'USDT' }));
  await j.settleBudget(first!.intentId, new Decimal('32.50000001'));
  await j.updateIntent(first!.intentId, { status: 'done', result: { orderId: '1001' } });
  await j.recordTransfer({ intentId: transfer!.intentId, ticker: 'USDT', amount: new Decimal('33.1'), from: 'main', to: 'spot', status: 'done' });
  await j.finishSlot({ instance: 'dca-btc', slotTimeMs: SLOT_1, status: 'done' });
  await j.adoptOrder({
    instance: 'dca-btc',
    slotTimeMs: SLOT_2,
    index: 0,
    order: order({ orderId: '1002', clientOrderId: 'adopted-1', status: 'FILLED', left: new Decimal('0'), filledBase: new Decimal('0.0004'), filledQuote: new Decimal('40.123'), fee: new Decimal('0.04') }),
    asset: 'USDT',
    timeZone: 'Europe/Berlin',
    reason: 'found in the history',
  });
  await j.setLedgerCheckedThrough(SLOT_2);
  // An instance scheduled whose first slot is still to come: its catch-up counts from this time.
  await j.markScheduled('dca-eth', SLOT_2 + 1000);
  await j.finishRun(run.runId, 'stopped');
  await store.close();
}

/** What a daemon reads back from a journal: the same from SQLite and from its copy. */
async function readBack(j: Journal): Promise<unknown> {
  const spent = await j.budgetSpent(scope, SLOT_2);
  return {
    runs: await j.listRuns(),
    slots: await j.listSlots(),
    entries: await j.recentJournal({ limit: 100 }),
    transitions: await j.orderTransitions('1001'),
    state: [...(await j.getState('dca-btc'))],
    spent: [spent.day, spent.week, spent.month].map(formatDecimal),
    held: await j.heldBudgetReservations(),
    findings: await j.listFindings(),
    checked: await j.ledgerCheckedThrough(),
    scheduledSince: [await j.scheduledSince('dca-eth'), await j.scheduledSince('dca-btc')],
  };
}

describe.skipIf(pgCluster() === null)('stacker journal migrate --to postgres://…', () => {
  it('copies every table, verifies rows and money sums, and the copy reads back exactly as the SQLite journal', async () => {
    await writeSqliteJournal();
    await migrate(context(false), { dataDir: dataDir(), mode: 'live', to: await target() }, { env: {} });
    const out = captured.join('');
    expect(out).toMatch(/stacker\.db → postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/t_[0-9a-f]+ \(schema stacker_live\)/);
    expect(out).toMatch(/order_transitions\s+3\s+3\s+3/);
    expect(out).toMatch(/scheduled_instances\s+1\s+1\s+1/);
    expect(out).toMatch(/budgets\.spent_quote\s+217\.86900003\s+217\.86900003/);
    expect(out).toMatch(/rows and sums verified/);
    expect(out).not.toContain(PASSWORD);

    // The data dir's journal lives in PostgreSQL now: a daemon or a reader started without STACKER_DATABASE_URL
    // is refused rather than run on the copy from before (a start on it bought over a budget).
    const moved = await openStore({ dataDir: dataDir(), mode: 'live', userLockDir: join(world.dir, 'locks') }).catch((error: unknown) => error);
    expect(moved).toMatchObject({ code: 'E_STORE', reason: 'conflict', message: expect.stringMatching(/^the live journal of the data dir .* lives in PostgreSQL \(postgres:\/\/postgres:\*\*\*@.*\): .*stacker\.db is its copy from before it moved, .* Set STACKER_DATABASE_URL to that database/) });
    expect(String((moved as Error).message)).not.toContain(PASSWORD);
    await expect(openStoreForReading({ dataDir: dataDir(), mode: 'live' })).rejects.toMatchObject({ reason: 'conflict' });
    const sqlite = { journal: new SqliteJournal({ path: join(dataDir(), 'stacker.db'), readOnly: true }) };
    await sqlite.journal.open();
    const copy = new PgJournal({ url: await world.pgUrl(), schema: 'stacker_live' });
    await copy.open();
    try {
      expect(await readBack(copy)).toEqual(await readBack(sqlite.journal));
      expect(await copy.journalId()).toBe(await sqlite.journal.journalId());
      // A finding journalled after the move gets the next number, not one the copy already holds.
      const next = await copy.recordFinding({ kind: 'foreign', instance: 'dca-btc', clientOrderId: 'x', orderId: null, market: null, detail: 'later' });
      expect(next.findingId).toBe(2);
    } finally {
      await copy.close();
      await sqlite.journal.close();
    }
  });

  it('copies a table larger than one INSERT (some 3000 rows of orders) whole, a batch at a time, rows and sums verified', async () => {
    const store = await openStore({ dataDir: dataDir(), mode: 'live', userLockDir: join(world.dir, 'locks') });
    const orders = 3_500;
    for (let i = 0; i < orders; i += 1) {
      await store.journal.recordOrderSnapshot(
        order({ orderId: String(9_000_000 + i), clientOrderId: `hand-${i}`, status: 'FILLED', left: new Decimal(0), filledBase: new Decimal('0.0001'), filledQuote: new Decimal('6.5'), fee: new Decimal('0.0065'), feeAsset: 'USDT' }),
        { intentId: null },
      );
    }
    await store.close();
    await migrate(context(false), { dataDir: dataDir(), mode: 'live', to: await target() }, { env: {} });
    const out = captured.join('');
    expect(out).toMatch(new RegExp(`\\borders\\s+${orders}\\s+${orders}\\s+${orders}\\b`));
    expect(out).toMatch(/orders\.filled_quote\s+22750\s+22750/);
    expect(out).toMatch(/rows and sums verified/);
  });

  it('is idempotent: a second run copies nothing and says so, in JSON too', async () => {
    await writeSqliteJournal();
    await migrate(context(false), { dataDir: dataDir(), mode: 'live', to: await target() }, { env: {} });
    await migrate(context(false), { dataDir: dataDir(), mode: 'live', to: await target() }, { env: {} });
    expect(captured.join('')).toMatch(/nothing new to copy: PostgreSQL already holds every row of this journal/);
    await migrate(context(true), { dataDir: dataDir(), mode: 'live' }, { env: { STACKER_DATABASE_URL: await target() } });
    const result = JSON.parse(captured.join('')) as { copied: number; to: string; tables: Array<{ table: string; source: number; copied: number; target: number }> };
    expect(result.copied).toBe(0);
    expect(result.to).not.toContain(PASSWORD);
    expect(result.tables.find((t) => t.table === 'intents')).toEqual({ table: 'intents', source: 4, copied: 0, target: 4 });
  });

  it('refuses a database that holds another journal, and one a running daemon holds, changing nothing', async () => {
    await writeSqliteJournal();
    const other = await openStore({ dataDir: join(world.dir, 'other'), mode: 'live', databaseUrl: await world.pgUrl() });
    await other.journal.claimSlot({ instance: 'x', slotTimeMs: 0, runId: null });
    await expect(migrate(context(false), { dataDir: dataDir(), mode: 'live', to: await target() }, { env: {} })).rejects.toBeInstanceOf(LockedError);
    await other.close();
    const error = await failure(migrate(context(false), { dataDir: dataDir(), mode: 'live', to: await target() }, { env: {} }));
    expect(error).toMatchObject({ reason: 'conflict', message: expect.stringMatching(/already holds another journal .*nothing was changed/) });
    expect((error as Error).message).not.toContain(PASSWORD);
  });

  it('refuses to copy the SQLite file into another database once the journal moved: that would start it from the state before the move', async () => {
    await writeSqliteJournal();
    await migrate(context(false), { dataDir: dataDir(), mode: 'live', to: await target() }, { env: {} });
    // The operator's kill switch, set on PostgreSQL after the move: the SQLite copy never had it.
    const moved = await openStore({ dataDir: dataDir(), mode: 'live', databaseUrl: await world.pgUrl() });
    await moved.journal.setOperatorControl({ control: 'kill-switch', on: true });
    await moved.close();
    const cluster = pgCluster();
    if (cluster === null) throw new Error('no cluster');
    const second = await createDatabase(cluster);
    try {
      const error = await failure(migrate(context(false), { dataDir: dataDir(), mode: 'live', to: second.replace('postgres@', `postgres:${PASSWORD}@`) }, { env: {} }));
      expect(error).toMatchObject({ reason: 'conflict', message: expect.stringMatching(/moved to PostgreSQL already .*Nothing was changed\. To move the journal to another database, copy that database/) });
      expect((error as Error).message).not.toContain(PASSWORD);
      // Nothing was written there: the marker still names the first database, where the kill switch is.
      const untouched = new PgJournal({ url: second, schema: 'stacker_live' });
      await expect(untouched.open()).resolves.toBeUndefined();
      expect(await untouched.listIntents({})).toEqual([]);
      await untouched.close();
    } finally {
      await dropDatabase(cluster, second);
    }
  });

  it('copies again into the same database reached at another address (a pooler, a host name for an IP): the journal id it holds says it is the one the journal moved to', async () => {
    await writeSqliteJournal();
    await migrate(context(false), { dataDir: dataDir(), mode: 'live', to: await target() }, { env: {} });
    const elsewhere = new URL(await target());
    expect(elsewhere.hostname).toBe('127.0.0.1');
    elsewhere.hostname = 'localhost';
    await migrate(context(false), { dataDir: dataDir(), mode: 'live', to: elsewhere.toString() }, { env: {} });
    expect(captured.join('')).toMatch(/nothing new to copy/);
  });

  it('run again after the daemon has written the database copies nothing and says so: it holds every row of the file and more', async () => {
    await writeSqliteJournal();
    await migrate(context(false), { dataDir: dataDir(), mode: 'live', to: await target() }, { env: {} });
    const daemon = await openStore({ dataDir: dataDir(), mode: 'live', databaseUrl: await world.pgUrl(), userLockDir: join(world.dir, 'locks') });
    await daemon.journal.claimSlot({ instance: 'dca-btc', slotTimeMs: Date.UTC(2026, 0, 9, 9), runId: null });
    await daemon.close();
    await migrate(context(false), { dataDir: dataDir(), mode: 'live', to: await target() }, { env: {} });
    expect(captured.join('')).toMatch(/nothing new to copy: PostgreSQL holds every row of this journal and more, written there since it moved/);
  });

  it('asks for a target, and refuses one that is not a PostgreSQL URL without echoing it', async () => {
    await writeSqliteJournal();
    await expect(migrate(context(false), { dataDir: dataDir(), mode: 'live' }, { env: {} })).rejects.toMatchObject({ code: 'E_INPUT', message: expect.stringMatching(/--to/) });
    const error = await failure(migrate(context(false), { dataDir: dataDir(), mode: 'live', to: `mysql://root:${PASSWORD}@db/x` }, { env: {} }));
    expect(error).toMatchObject({ code: 'E_INPUT' });
    expect((error as Error).message).not.toContain(PASSWORD);
  });
});
