import { existsSync } from 'node:fs';
import { type Decimal, ZERO, formatDecimal } from '../../../src/domain/money.ts';
import type { Sandbox } from '../../../src/sandbox/server.ts';
import type { Journal } from '../../../src/store/journal.ts';
import { SqliteJournal } from '../../../src/store/sqlite-journal.ts';

/**
 * Does the journal (or several, one per daemon) agree with the exchange? Counted, not assumed:
 * - placedTwice: clientOrderIds the exchange holds more than one order of (a doubled slot);
 * - notJournalled: exchange orders no journal holds (money spent that stacker does not know of);
 * - notAtExchange: journal orders the exchange does not have;
 * - unresolved: intents still pending, sent or unknown;
 * - spentPerDay: quote spent per UTC day by the journal's budgets, for "budgets never exceeded".
 */
export interface Agreement {
  readonly exchangeOrders: number;
  readonly placedTwice: readonly string[];
  readonly notJournalled: readonly string[];
  readonly notAtExchange: readonly string[];
  readonly unresolved: number;
  readonly spentPerDay: Readonly<Record<string, string>>;
}

/** agreement() over the SQLite journals at these paths (a path with no file yet holds nothing). */
export async function agreement(sandbox: Sandbox, journalPaths: readonly string[], instance = 'dca-btc'): Promise<Agreement> {
  const journals: SqliteJournal[] = [];
  try {
    for (const path of journalPaths) {
      if (!existsSync(path)) continue;
      const journal = new SqliteJournal({ path, readOnly: true });
      await journal.open();
      journals.push(journal);
    }
    return await agreementWith(sandbox, journals, instance);
  } finally {
    for (const journal of journals) await journal.close();
  }
}

/** agreement() over journals already open, of any store (SQLite, PostgreSQL). */
export async function agreementWith(sandbox: Sandbox, journals: readonly Journal[], instance = 'dca-btc'): Promise<Agreement> {
  const exchange = sandbox.exchange.orderHistory({});
  const byClientId = new Map<string, number>();
  for (const order of exchange) byClientId.set(order.clientOrderId, (byClientId.get(order.clientOrderId) ?? 0) + 1);
  const journalled = new Set<string>();
  let unresolved = 0;
  const spent = new Map<string, Decimal>();
  for (const journal of journals) {
    for (const order of await journal.listOrders({ limit: 100_000 })) {
      journalled.add(order.orderId);
      const intent = order.intentId === null ? null : await journal.getIntent(order.intentId);
      if (intent === null || intent.instance !== instance) continue;
      const day = new Date(intent.slotTimeMs).toISOString().slice(0, 10);
      spent.set(day, (spent.get(day) ?? ZERO).add(order.filledQuote));
    }
    unresolved += (await journal.unresolvedIntents()).length;
  }
  const atExchange = new Set(exchange.map((order) => order.orderId));
  return {
    exchangeOrders: exchange.length,
    placedTwice: [...byClientId].filter(([, n]) => n > 1).map(([id]) => id),
    notJournalled: exchange.filter((order) => !journalled.has(order.orderId)).map((order) => order.clientOrderId),
    notAtExchange: [...journalled].filter((id) => !atExchange.has(id)),
    unresolved,
    spentPerDay: Object.fromEntries([...spent].map(([day, amount]) => [day, formatDecimal(amount)])),
  };
}

/** One line of the fault matrix (fault × path → duplicates, lost, unresolved), printed for the record. */
export function report(row: string, result: Agreement): void {
  console.info(
    `[exactly-once] ${row}: exchange orders ${result.exchangeOrders}, placed twice ${result.placedTwice.length}, ` +
      `not journalled ${result.notJournalled.length}, journal-only ${result.notAtExchange.length}, unresolved ${result.unresolved}`,
  );
}

/** Poll until `check` holds (or fail with what was last seen). */
export async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, timeoutMs: number, what: string): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > until) throw new Error(`${what}: not within ${timeoutMs} ms; last seen ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The metrics server's base URL, as the daemon logs it (STACKER_METRICS_PORT=0 picks a free port). */
export function metricsUrl(output: string): string {
  const match = /"event":"metrics","url":"(http:\/\/[^"]+)"/.exec(output);
  if (match?.[1] === undefined) throw new Error(`no metrics URL in the daemon's output:\n${output.slice(-2000)}`);
  return match[1];
}
