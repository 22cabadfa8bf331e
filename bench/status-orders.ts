import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadStrategyFiles } from '../src/config/daemon-config.ts';
import type { InstanceConfig } from '../src/config/instance-config.ts';
import { Decimal } from '../src/domain/money.ts';
import { StatusBuilder } from '../src/daemon/status.ts';
import { positions } from '../src/report/cost-basis.ts';
import { SqliteJournal } from '../src/store/sqlite-journal.ts';

export interface StatusOrdersFigures {
  readonly orders: number;
  /** Reading every journalled order, as `stacker report` and the status document's first request do. */
  readonly readMs: number;
  /** Summing them into positions per market (exact decimals). */
  readonly positionsMs: number;
  /** The first /api/status document, two instances on it: every order read, a page at a time. */
  readonly firstDocumentMs: number;
  /** The longest the daemon's thread went without a turn for its other work (a timer due every millisecond) during that first document. */
  readonly longestStallMs: number;
  /** The heap the document keeps between refreshes, after a full collection (null without --expose-gc). */
  readonly heapKeptMb: number | null;
  /** A later /api/status document, after one more order: only what changed is read and put in the positions in place of what it was. */
  readonly refreshMs: number;
}

/** The per-minute instance whose orders the journal holds, and a balance report that has none (its recent orders are looked for all the same). */
async function benchInstances(): Promise<InstanceConfig[]> {
  const dir = mkdtempSync(join(tmpdir(), 'stacker-bench-status-config-'));
  try {
    writeFileSync(join(dir, 'per-minute.env'), 'STRATEGY=dca\nSCHEDULE="* * * * *"\nMARKET=BTC_USDT\nAMOUNT=0.0001\nSTP=cn\n');
    writeFileSync(join(dir, 'report.env'), 'STRATEGY=balance-report\nSCHEDULE="*/5 * * * *"\n');
    return [...(await loadStrategyFiles([join(dir, 'per-minute.env'), join(dir, 'report.env')]))];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * What /api/status costs a daemon whose journal holds many orders (a per-minute schedule makes
 * 50k in five weeks): it reads every order and sums the positions, synchronously, each refresh
 * of an open status page (every 5 s). Median of 3.
 */
export async function benchStatusOrders(orders = 50_000): Promise<StatusOrdersFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'stacker-bench-status-'));
  // Each order stamped at its own minute, as a daemon running for weeks stamps them.
  let stampMs = Date.UTC(2025, 0, 1);
  const journal = new SqliteJournal({ path: join(dir, 'stacker.db'), synchronous: 'NORMAL', clock: () => stampMs });
  await journal.open();
  try {
    for (let i = 0; i < orders; i += 1) {
      const slotTimeMs = Date.UTC(2025, 0, 1) + i * 60_000;
      stampMs = slotTimeMs;
      await journal.claimSlot({ instance: 'per-minute', slotTimeMs, runId: null, intents: [{ index: 0, intent: { kind: 'buy-stock-market', market: 'BTC_USDT', amount: new Decimal('0.0001') } }] });
      const [intent] = await journal.listIntents({ instance: 'per-minute', slotTimeMs });
      const filled = { left: new Decimal(0), filledBase: new Decimal('0.0001'), filledQuote: new Decimal('6.5123'), fee: new Decimal('0.0065123') };
      await journal.recordOrderSnapshot(
        { orderId: String(1e9 + i), clientOrderId: `bench-${i}`, market: 'BTC_USDT', side: 'buy', type: 'stock market', createdAtSec: slotTimeMs / 1000, amount: new Decimal('0.0001'), ...filled, feeAsset: 'USDT', price: null, status: 'FILLED', statusDerived: false, stp: 'no', stopActivated: null },
        { intentId: intent?.intentId ?? null },
      );
    }
    const reads: number[] = [];
    const sums: number[] = [];
    for (let round = 0; round < 3; round += 1) {
      const t0 = performance.now();
      const all = await journal.listOrders({ limit: -1 });
      const t1 = performance.now();
      positions(all, null);
      reads.push(t1 - t0);
      sums.push(performance.now() - t1);
    }
    const instances = await benchInstances();
    const collect = (globalThis as { gc?: () => void }).gc;
    collect?.();
    const heapBefore = process.memoryUsage().heapUsed;
    const status = new StatusBuilder({
      mode: 'live',
      version: 'bench',
      startedAtMs: 0,
      instances,
      journal,
      exchange: { prices: async () => new Map([['BTC_USDT', new Decimal('65123')]]) },
      engine: () => null,
      controls: { killSwitch: { active: () => null }, killSwitchSinceMs: null, accountKillSwitchSinceMs: () => null, pausedSinceMs: () => null } as never,
      configuredKillSwitch: () => null,
      controlsEnabled: false,
      health: () => ({ problems: [], stopping: false }),
      nowMs: () => stampMs,
    });
    let lastTurn = performance.now();
    let longestStallMs = 0;
    const turns = setInterval(() => {
      const now = performance.now();
      longestStallMs = Math.max(longestStallMs, now - lastTurn);
      lastTurn = now;
    }, 1);
    const first = performance.now();
    await status.document();
    const firstDocumentMs = performance.now() - first;
    longestStallMs = Math.max(longestStallMs, performance.now() - lastTurn);
    clearInterval(turns);
    collect?.();
    const heapKeptMb = collect === undefined ? null : (process.memoryUsage().heapUsed - heapBefore) / 1e6;
    const refreshes: number[] = [];
    for (let round = 0; round < 3; round += 1) {
      const slotTimeMs = Date.UTC(2025, 0, 1) + (orders + round) * 60_000;
      stampMs = slotTimeMs;
      await journal.claimSlot({ instance: 'per-minute', slotTimeMs, runId: null, intents: [{ index: 0, intent: { kind: 'buy-stock-market', market: 'BTC_USDT', amount: new Decimal('0.0001') } }] });
      const [intent] = await journal.listIntents({ instance: 'per-minute', slotTimeMs });
      await journal.recordOrderSnapshot(
        { orderId: String(2e9 + round), clientOrderId: `bench-new-${round}`, market: 'BTC_USDT', side: 'buy', type: 'stock market', createdAtSec: slotTimeMs / 1000, amount: new Decimal('0.0001'), left: new Decimal(0), filledBase: new Decimal('0.0001'), filledQuote: new Decimal('6.5123'), fee: new Decimal('0.0065123'), feeAsset: 'USDT', price: null, status: 'FILLED', statusDerived: false, stp: 'no', stopActivated: null },
        { intentId: intent?.intentId ?? null },
      );
      const t0 = performance.now();
      await status.document();
      refreshes.push(performance.now() - t0);
    }
    const median = (values: number[]): number => values.sort((a, b) => a - b)[1] ?? 0;
    return { orders, readMs: median(reads), positionsMs: median(sums), firstDocumentMs, longestStallMs, heapKeptMb, refreshMs: median(refreshes) };
  } finally {
    await journal.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
