import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deriveClientOrderId } from '../src/domain/client-order-id.ts';
import { Decimal } from '../src/domain/money.ts';
import type { Journal } from '../src/store/journal.ts';
import { PgJournal } from '../src/store/pg-journal.ts';
import { SqliteJournal } from '../src/store/sqlite-journal.ts';
import { clusterUrl, findBinDir, startCluster } from '../test/support/pg-cluster.ts';

export interface DurabilityFigures {
  readonly slots: number;
  /** Per slot, median of the rounds. */
  readonly fullMs: number;
  readonly normalMs: number;
}

/**
 * What `synchronous=FULL` costs a live daemon: the journal writes of one buy slot (the history
 * check's watermark, the claim with its intent, the budget reservation, `sent`, the order and
 * its transition, `done`, the settlement, the slot's end), on a real file in the temp dir, with
 * FULL (what stacker runs: every commit is on disk before the order leaves) and with NORMAL
 * (commits since the last checkpoint can be lost on power loss).
 */
export async function benchJournalDurability(slots = 300, rounds = 3): Promise<DurabilityFigures> {
  const perSlot = async (synchronous: 'FULL' | 'NORMAL'): Promise<number> => {
    const dir = mkdtempSync(join(tmpdir(), 'stacker-bench-journal-'));
    const journal = new SqliteJournal({ path: join(dir, 'stacker.db'), synchronous });
    await journal.open();
    try {
      const start = performance.now();
      for (let i = 0; i < slots; i += 1) await oneSlot(journal, Date.UTC(2026, 0, 1) + i * 3_600_000);
      return (performance.now() - start) / slots;
    } finally {
      await journal.close();
      rmSync(dir, { recursive: true, force: true });
    }
  };
  const median = (values: number[]): number => values.sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
  const full: number[] = [];
  const normal: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    full.push(await perSlot('FULL'));
    normal.push(await perSlot('NORMAL'));
  }
  return { slots, fullMs: median(full), normalMs: median(normal) };
}

/**
 * The same slot on a PostgreSQL journal (a throwaway local cluster, fsync on, over loopback TCP;
 * commits with synchronous_commit=on, writes SERIALIZABLE), per slot, median of the rounds.
 * null when PostgreSQL is not installed.
 */
export async function benchPgJournal(slots = 300, rounds = 3): Promise<{ readonly slots: number; readonly ms: number } | null> {
  const binDir = findBinDir();
  if (binDir === null) return null;
  const cluster = await startCluster(binDir);
  try {
    const perSlot: number[] = [];
    for (let round = 0; round < rounds; round += 1) {
      const journal = new PgJournal({ url: clusterUrl(cluster, 'postgres'), schema: `bench_${round}` });
      await journal.open();
      try {
        const start = performance.now();
        for (let i = 0; i < slots; i += 1) await oneSlot(journal, Date.UTC(2026, 0, 1) + i * 3_600_000);
        perSlot.push((performance.now() - start) / slots);
      } finally {
        await journal.close();
      }
    }
    return { slots, ms: perSlot.sort((a, b) => a - b)[Math.floor(perSlot.length / 2)] ?? Number.NaN };
  } finally {
    cluster.stop();
  }
}

async function oneSlot(journal: Journal, slotTimeMs: number): Promise<void> {
  const instance = 'dca-btc';
  await journal.setLedgerCheckedThrough(slotTimeMs);
  await journal.claimSlot({ instance, slotTimeMs, runId: null, intents: [{ index: 0, intent: { kind: 'buy-stock-market', market: 'BTC_USDT', amount: new Decimal('0.001') } }] });
  const [intent] = await journal.listIntents({ instance, slotTimeMs });
  if (intent === undefined) throw new Error('no intent');
  await journal.reserveBudget({ reservationId: intent.intentId, instance, asset: 'USDT', timeZone: 'UTC', atMs: slotTimeMs, amountQuote: new Decimal('65'), limits: { day: new Decimal('1000000') } });
  await journal.updateIntent(intent.intentId, { status: 'sent' });
  const orderId = String(4_100_000_000 + slotTimeMs / 3_600_000);
  await journal.recordOrderSnapshot(
    {
      orderId,
      clientOrderId: deriveClientOrderId(instance, slotTimeMs, 0),
      market: 'BTC_USDT',
      side: 'buy',
      type: 'stock market',
      createdAtSec: slotTimeMs / 1000,
      amount: new Decimal('0.001'),
      left: new Decimal('0'),
      filledBase: new Decimal('0.001'),
      filledQuote: new Decimal('65'),
      fee: new Decimal('0.065'),
      feeAsset: 'USDT',
      price: null,
      status: 'FILLED',
      statusDerived: false,
      stp: 'no',
      stopActivated: null,
    },
    { intentId: intent.intentId },
  );
  await journal.settleBudget(intent.intentId, new Decimal('65'));
  await journal.updateIntent(intent.intentId, { status: 'done', result: { orderId, status: 'FILLED' } });
  await journal.finishSlot({ instance, slotTimeMs, status: 'done' });
}
