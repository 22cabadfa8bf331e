import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Decimal } from '../../src/domain/money.ts';
import type { Order } from '../../src/domain/order.ts';
import type { Journal } from '../../src/store/journal.ts';
import { MemoryJournal } from '../../src/store/memory-journal.ts';
import { PgJournal } from '../../src/store/pg-journal.ts';
import { SqliteJournal, type SqliteJournalOptions } from '../../src/store/sqlite-journal.ts';
import { createDatabase, dropDatabase, pgCluster } from '../support/pg-databases.ts';

export type JournalKind = 'sqlite' | 'memory' | 'pg';

/**
 * The journals that keep the Journal contract: the contract suites (slots, intents, orders,
 * budgets, adoption) run against each, so the backtest's journal in memory, the daemon's
 * SQLite file and its PostgreSQL database cannot drift apart. PostgreSQL joins when the test
 * run started a cluster (test/support/pg-global-setup.ts says so when it could not).
 */
export const JOURNAL_KINDS: readonly JournalKind[] = pgCluster() === null ? ['sqlite', 'memory'] : ['sqlite', 'memory', 'pg'];

/** A fresh temp dir per test; `cleanup` closes what was opened in it and removes it. */
export class TempWorld {
  readonly dir: string;
  readonly #journals: Array<SqliteJournal | PgJournal> = [];
  #memory: MemoryJournal | null = null;
  /** The PostgreSQL database of this world (created on first use, dropped by cleanup). */
  #pgUrl: Promise<string> | null = null;
  /** Which journal `openJournal` opens. */
  kind: JournalKind = 'sqlite';
  nowMs = 1_700_000_000_000;
  #ids = 0;

  constructor() {
    this.dir = mkdtempSync(join(tmpdir(), 'stacker-store-'));
  }

  path(name = 'stacker.db'): string {
    return join(this.dir, name);
  }

  /** A journal on a real file in the temp dir, with a fake clock and counting run ids. */
  journal(options: Partial<SqliteJournalOptions> = {}): SqliteJournal {
    const journal = new SqliteJournal({
      path: this.path(),
      clock: () => this.nowMs,
      newId: () => `run-${++this.#ids}`,
      ...options,
    });
    this.#journals.push(journal);
    return journal;
  }

  async opened(options: Partial<SqliteJournalOptions> = {}): Promise<SqliteJournal> {
    const journal = this.journal(options);
    await journal.open();
    return journal;
  }

  /**
   * A journal of this world's kind. The memory journal stands for one file: opening it again
   * (after a close, or as a second connection) gives the same journal, as a file would.
   */
  async openJournal(): Promise<Journal> {
    if (this.kind === 'sqlite') return this.opened();
    if (this.kind === 'pg') {
      const journal = new PgJournal({ url: await this.pgUrl(), schema: 'stacker_live', clock: () => this.nowMs, newId: () => `run-${++this.#ids}` });
      this.#journals.push(journal);
      await journal.open();
      return journal;
    }
    this.#memory ??= new MemoryJournal({ clock: () => this.nowMs, newId: () => `run-${++this.#ids}` });
    await this.#memory.open();
    return this.#memory;
  }

  /** This world's PostgreSQL database (a new one on the test cluster), as a URL. */
  async pgUrl(): Promise<string> {
    const cluster = pgCluster();
    if (cluster === null) throw new Error('no PostgreSQL cluster in this test run');
    // The promise is kept, so journals opened at once share one database.
    this.#pgUrl ??= createDatabase(cluster);
    return this.#pgUrl;
  }

  async cleanup(): Promise<void> {
    for (const journal of this.#journals) await journal.close();
    const cluster = pgCluster();
    if (this.#pgUrl !== null && cluster !== null) await dropDatabase(cluster, await this.#pgUrl);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export const SLOT = { instance: 'dca-btc', slotTimeMs: 1_735_689_600_000 } as const;

export function buy(amount: string, market = 'BTC_USDT') {
  return { kind: 'buy-stock-market', market, amount: new Decimal(amount) } as const;
}

/** Claim SLOT with one pending buy and return its intent id. */
export async function claimWithBuy(journal: Journal, amount = '0.0005', slot: { instance: string; slotTimeMs: number } = SLOT): Promise<string> {
  const run = await journal.startRun({ mode: 'live', pid: 1234, version: 'test' });
  const claimed = await journal.claimSlot({ ...slot, runId: run.runId, intents: [{ index: 0, intent: buy(amount) }] });
  if (!claimed) throw new Error('slot was already claimed');
  const [intent] = await journal.listIntents(slot);
  if (intent === undefined) throw new Error('no intent journalled');
  return intent.intentId;
}

export function order(overrides: Partial<Order> = {}): Order {
  return {
    orderId: '5123456789',
    clientOrderId: '',
    market: 'BTC_USDT',
    side: 'buy',
    type: 'stock market',
    createdAtSec: 1_735_689_600.123456,
    amount: new Decimal('0.0005'),
    left: new Decimal('0.0005'),
    filledBase: new Decimal('0'),
    filledQuote: new Decimal('0'),
    fee: new Decimal('0'),
    feeAsset: null,
    price: null,
    status: 'NEW',
    statusDerived: false,
    stp: 'no',
    stopActivated: null,
    ...overrides,
  };
}
