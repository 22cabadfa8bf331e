import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Decimal, formatDecimal } from '../../src/domain/money.ts';
import { SchemaTooNewError, StoreError } from '../../src/store/errors.ts';
import type { BudgetReserveRequest } from '../../src/store/journal.ts';
import { PG_MIGRATIONS, SHARED_SCHEMA_HISTORY, migratePg } from '../../src/store/pg-migrations.ts';
import { PgJournal } from '../../src/store/pg-journal.ts';
import { inTransaction, openPool } from '../../src/store/pg-db.ts';
import { failure } from '../support/thrown.ts';
import { pgCluster } from '../support/pg-databases.ts';
import { SLOT, TempWorld, buy, order } from './helpers.ts';

/**
 * What the PostgreSQL journal promises beyond the contract suites it shares with SQLite and
 * memory (slots, intents, orders, budgets, adoption): its schema history, exact decimals, and
 * the guarantees two daemons on one database rely on.
 */

let world: TempWorld;
beforeEach(() => {
  world = new TempWorld();
  world.kind = 'pg';
});
afterEach(async () => {
  await world.cleanup();
});

const SCHEMA = 'stacker_live';

async function sql<T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: await world.pgUrl() });
  await client.connect();
  try {
    return (await client.query(text, params)).rows as T[];
  } finally {
    await client.end();
  }
}

async function journal(options: { readOnly?: boolean; url?: string } = {}): Promise<PgJournal> {
  const opened = new PgJournal({ url: options.url ?? (await world.pgUrl()), schema: SCHEMA, clock: () => world.nowMs, ...(options.readOnly === undefined ? {} : { readOnly: options.readOnly }) });
  await opened.open();
  return opened;
}

describe.skipIf(pgCluster() === null)('the PostgreSQL journal', () => {
  it('numbers and names its migrations as the SQLite journal does, applies each once, and nothing on reopen', async () => {
    expect(SHARED_SCHEMA_HISTORY.postgres).toEqual(SHARED_SCHEMA_HISTORY.sqlite);
    world.nowMs = 111;
    await (await journal()).close();
    world.nowMs = 222;
    await (await journal()).close();
    const applied = await sql(`SELECT version, name, applied_at_ms FROM ${SCHEMA}.schema_migrations ORDER BY version`);
    expect(applied).toEqual(PG_MIGRATIONS.map((m) => ({ version: m.version, name: m.name, applied_at_ms: '111' })));
  });

  it("migration 6 lets the kill switch name an account, keeping a version-5 journal's controls", async () => {
    const pool = openPool({ url: await world.pgUrl(), schema: SCHEMA });
    try {
      expect(await migratePg(pool, SCHEMA, 'test', () => 1, PG_MIGRATIONS.filter((m) => m.version <= 5))).toEqual([1, 2, 3, 4, 5]);
    } finally {
      await pool.end();
    }
    await sql(`INSERT INTO ${SCHEMA}.operator_controls (control, target, since_ms) VALUES ('pause', 'dca', 5), ('kill-switch', '', 6)`);
    const opened = await journal();
    try {
      expect(await opened.operatorControls()).toEqual({ paused: new Map([['dca', 5]]), killSwitchSinceMs: 6, accountKillSwitches: new Map() });
      world.nowMs = 7;
      expect((await opened.setOperatorControl({ control: 'kill-switch', account: 'kids', on: true })).accountKillSwitches).toEqual(new Map([['kids', 7]]));
    } finally {
      await opened.close();
    }
    await expect(sql(`INSERT INTO ${SCHEMA}.operator_controls (control, target, since_ms) VALUES ('pause', '', 8)`)).rejects.toThrow(/check constraint/);
  });

  it('migration 7 adds when each instance was first scheduled to a version-6 journal, empty, its slots kept', async () => {
    const pool = openPool({ url: await world.pgUrl(), schema: SCHEMA });
    try {
      expect(await migratePg(pool, SCHEMA, 'test', () => 1, PG_MIGRATIONS.filter((m) => m.version <= 6))).toEqual([1, 2, 3, 4, 5, 6]);
    } finally {
      await pool.end();
    }
    await sql(`INSERT INTO ${SCHEMA}.slots (instance, slot_time_ms, status, reason, run_id, claimed_at_ms, finished_at_ms) VALUES ('dca', 1000, 'done', NULL, NULL, 1000, 1001)`);
    const opened = await journal();
    try {
      expect(await opened.lastSlot('dca')).toMatchObject({ slotTimeMs: 1000, status: 'done' });
      expect(await opened.scheduledSince('dca')).toBeNull();
      expect(await opened.markScheduled('new', 42)).toBe(42);
    } finally {
      await opened.close();
    }
    expect(await sql(`SELECT instance, since_ms FROM ${SCHEMA}.scheduled_instances`)).toEqual([{ instance: 'new', since_ms: '42' }]);
    await expect(sql(`INSERT INTO ${SCHEMA}.scheduled_instances (instance, since_ms) VALUES ('', 1)`)).rejects.toThrow(/check constraint/);
  });

  it('refuses a schema written by a newer stacker, and changes nothing', async () => {
    await (await journal()).close();
    await sql(`INSERT INTO ${SCHEMA}.schema_migrations (version, name, applied_at_ms) VALUES (99, 'from the future', 1)`);
    const error = await failure(journal());
    expect(error).toBeInstanceOf(SchemaTooNewError);
    expect(error).toMatchObject({ reason: 'schema-too-new', databaseVersion: 99, knownVersion: PG_MIGRATIONS.length });
    expect(await sql(`SELECT count(*)::int AS n FROM ${SCHEMA}.schema_migrations`)).toEqual([{ n: PG_MIGRATIONS.length + 1 }]);
  });

  // Exact round trips of 50-digit amounts are the contract suite's (decimals.test.ts, every journal).
  it('keeps money in numeric columns, never float; the only float is the exchange\'s order time in seconds', async () => {
    await (await journal()).close();
    const columns = await sql<{ table_name: string; column_name: string; data_type: string }>(
      `SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = $1 AND data_type IN ('numeric', 'real', 'double precision') ORDER BY table_name, column_name`,
      [SCHEMA],
    );
    expect(columns.filter((c) => c.data_type !== 'numeric')).toEqual([{ table_name: 'orders', column_name: 'exchange_created_at_sec', data_type: 'double precision' }]);
    expect(columns.filter((c) => c.data_type === 'numeric').map((c) => `${c.table_name}.${c.column_name}`)).toEqual([
      'budget_reservations.amount_quote',
      'budgets.spent_quote',
      'flex_operations.amount',
      'order_transitions.fee',
      'order_transitions.filled_base',
      'order_transitions.filled_quote',
      'orders.amount',
      'orders.fee',
      'orders.filled_base',
      'orders.filled_quote',
      'orders.left_amount',
      'orders.price',
      'transfers.amount',
    ]);
  });

  it('lets exactly one of ten daemons claim a slot they race for', async () => {
    const daemons = await Promise.all(Array.from({ length: 10 }, async () => journal()));
    const claims = await Promise.all(daemons.map((d) => d.claimSlot({ ...SLOT, runId: null, intents: [{ index: 0, intent: buy('0.001') }] })));
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await daemons[0]!.listIntents(SLOT)).toHaveLength(1);
    for (const d of daemons) await d.close();
  });

  it('never lets daemons reserving at once spend past a limit: each reservation sees the others', async () => {
    const daemons = await Promise.all(Array.from({ length: 4 }, async () => journal()));
    const request = (i: number): BudgetReserveRequest => ({
      instance: 'dca-btc',
      asset: 'USDT',
      timeZone: 'UTC',
      reservationId: `r-${i}`,
      atMs: Date.UTC(2025, 0, 1, 10),
      amountQuote: new Decimal('10'),
      limits: { day: new Decimal('55') },
    });
    const decisions = await Promise.all(Array.from({ length: 12 }, async (_, i) => daemons[i % daemons.length]!.reserveBudget(request(i))));
    expect(decisions.filter((d) => d.ok)).toHaveLength(5);
    const spent = await daemons[0]!.budgetSpent({ instance: 'dca-btc', asset: 'USDT', timeZone: 'UTC' }, Date.UTC(2025, 0, 1, 10));
    expect(formatDecimal(spent.day)).toBe('50');
    for (const d of daemons) await d.close();
  });

  it('refuses to read a time beyond 2^53 rather than rounding it', async () => {
    const store = await journal();
    await store.claimSlot({ ...SLOT, runId: null });
    await sql(`UPDATE ${SCHEMA}.slots SET claimed_at_ms = 9007199254740993`);
    expect(await failure(store.getSlot(SLOT))).toMatchObject({ reason: 'corrupt' });
    await store.close();
  });

  it('opens read-only beside a writer: reads, but writes nothing, and will not migrate', async () => {
    await expect(journal({ readOnly: true })).rejects.toMatchObject({ reason: 'schema-outdated' });
    const writer = await journal();
    await writer.claimSlot({ ...SLOT, runId: null });
    const reader = await journal({ readOnly: true });
    expect(await reader.getSlot(SLOT)).toMatchObject({ status: 'claimed' });
    expect(await failure(reader.claimSlot({ instance: 'other', slotTimeMs: 0, runId: null }))).toBeInstanceOf(StoreError);
    expect(await writer.getSlot({ instance: 'other', slotTimeMs: 0 })).toBeNull();
    await reader.close();
    await writer.close();
  });

  it('notices before the next send that its journal was dropped or replaced', async () => {
    const store = await journal();
    await store.assertIntact();
    await sql(`UPDATE ${SCHEMA}.journal_meta SET value = 'another' WHERE key = 'journal_id'`);
    expect(await failure(store.assertIntact())).toMatchObject({ reason: 'journal-lost' });
    await sql(`DROP SCHEMA ${SCHEMA} CASCADE`);
    expect(await failure(store.assertIntact())).toMatchObject({ reason: 'journal-lost' });
    await store.close();
  });

  it('reports an unreachable database as unwritable (retryable), never printing its password', async () => {
    const unreachable = new PgJournal({ url: 'postgres://stacker:s3cret-pw@127.0.0.1:1/nowhere', schema: SCHEMA });
    const error = await failure(unreachable.open());
    expect(error).toMatchObject({ reason: 'unwritable', retryable: true });
    expect((error as Error).message).not.toContain('s3cret-pw');
    expect(unreachable.where).toBe('postgres://stacker:***@127.0.0.1:1/nowhere (schema stacker_live)');
  });

  it('survives its connection closed by the server in the middle of a transaction, between two statements: the transaction fails, the process does not', async () => {
    // node-postgres tells a connection lost while no statement runs as an 'error' event on the
    // checked-out client; without a listener that event ended the whole daemon (an uncaught exception).
    const pool = openPool({ url: await world.pgUrl(), schema: 'public' });
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown): void => void uncaught.push(error);
    process.on('uncaughtException', onUncaught);
    try {
      const outcome = await inTransaction(pool, 'write', async (tx) => {
        const pid = (await tx.one('SELECT pg_backend_pid() AS pid'))?.['pid'];
        await sql('SELECT pg_terminate_backend($1)', [pid]);
        // The server's close arrives while this transaction runs no statement.
        await new Promise((resolve) => setTimeout(resolve, 300));
        return tx.one('SELECT 1');
      }).then(
        () => 'committed',
        (error: unknown) => (error instanceof Error ? error.message : String(error)),
      );
      expect(outcome).not.toBe('committed');
      expect(uncaught).toEqual([]);
      // The pool hands out a working connection next.
      expect(await inTransaction(pool, 'read', async (tx) => (await tx.one('SELECT 2 AS two'))?.['two'])).toBe(2);
    } finally {
      process.off('uncaughtException', onUncaught);
      await pool.end();
    }
  });

  it('carries on after the server closed its connections (a restart, a failover): the next operation reconnects', async () => {
    const store = await journal();
    await store.claimSlot({ ...SLOT, runId: null });
    await sql('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [new URL(await world.pgUrl()).pathname.slice(1)]);
    // The first use of a dropped connection may fail as unwritable; nothing is half-written either way.
    await store.recordHeartbeat().catch((error: unknown) => expect(error).toMatchObject({ reason: 'unwritable' }));
    await store.recordHeartbeat();
    expect(store.writeFailure()).toBeNull();
    expect(await store.getSlot(SLOT)).toMatchObject({ status: 'claimed' });
    await store.close();
  });
});
