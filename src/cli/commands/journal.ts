import { ConfigError, InputError } from '../../domain/errors.ts';
import { settledSince } from '../../daemon/slot-shortfall.ts';
import { TWIN } from '../../engine/exchange-ledger.ts';
import { DEFAULT_ACCOUNT } from '../../engine/runtime.ts';
import type { Intent } from '../../domain/intent.ts';
import { type Decimal, formatDecimal } from '../../domain/money.ts';
import { ORDER_STATUSES, type OrderStatus } from '../../domain/order.ts';
import { INTENT_STATUSES, type IntentRecord, type IntentStatus, type JournalEntry, type LedgerFinding, type SlotRecord, type StoredOrder } from '../../store/journal.ts';
import type { StoredJournal } from '../../store/open-store.ts';
import type { JournalLocation } from '../../config/journal-location.ts';
import { LIST_DEFAULT, LIST_LIMIT, checkAll, integerIn, nonEmpty, optional } from '../args.ts';
import type { CommandContext } from '../context.ts';
import { json, table } from '../output.ts';
import { shellWord } from '../shell-word.ts';

/**
 * `stacker orders` and `stacker journal`: read the SQLite journal a daemon writes, without the
 * daemon's lock and without writing, so both are safe beside a running `stacker run` (WAL lets
 * readers and the writer proceed together). The store and node:sqlite are imported only when
 * one of these commands runs.
 */

/** The global flags these commands read, merged into their own. */
export interface GlobalPart {
  readonly envFile?: string | undefined;
}

export interface OrdersFlags extends GlobalPart {
  readonly dataDir?: string;
  readonly mode?: string;
  /** A journal file named by its path, instead of the data dir's (withJournal). */
  readonly journal?: string;
  readonly instance?: string;
  readonly status?: string;
  readonly limit?: string;
}

export interface JournalFlags extends GlobalPart {
  readonly dataDir?: string;
  readonly mode?: string;
  /** A journal file named by its path, instead of the data dir's (withJournal). */
  readonly journal?: string;
  readonly instance?: string;
  readonly status?: string;
  readonly limit?: string;
}

/** For tests: the environment the data dir and mode are looked up in (default process.env). */
export interface ReadDeps {
  readonly env?: Readonly<Record<string, string | undefined>>;
}

const INTENT_STATUS_NAMES = INTENT_STATUSES;

export interface AcknowledgeFlags extends GlobalPart {
  readonly dataDir?: string;
  readonly mode?: string;
}

/** `stacker journal acknowledge`: a small write beside a running daemon, which reads it at its next health refresh. */
export async function acknowledge(ctx: CommandContext, flags: AcknowledgeFlags, deps: ReadDeps = {}): Promise<void> {
  await withJournal(flags, deps, async (store, label) => {
    const open = await store.listFindings({ unacknowledged: true });
    await store.acknowledgeFindings();
    if (ctx.json) {
      ctx.io.out(json({ journal: label.path, acknowledged: open.map(plainFinding) }));
      return;
    }
    if (open.length === 0) {
      ctx.io.out(`nothing to acknowledge in the ${label.mode} journal ${label.path}\n`);
      return;
    }
    ctx.io.out(findingsTable(open));
    ctx.io.out(`acknowledged ${open.length} finding(s)\n`);
    // Acknowledging says nothing of the money: a second order of one of this journal's intents is counted, and the operator is told where.
    for (const finding of open.filter(isSecondOrder)) {
      const recorded = finding.orderId === null ? null : await store.getOrder(finding.orderId);
      ctx.io.out(
        recorded === null
          ? `order ${finding.orderId ?? '?'} (${finding.clientOrderId}), a second order of one intent, is counted against ${finding.instance ?? 'its instance'} at the next start's read of the exchange's history\n`
          : `order ${recorded.orderId} (${finding.clientOrderId}), a second order of one intent, is recorded against ${finding.instance ?? 'its instance'} and counted in its budgets and reports\n`,
      );
    }
  }, { write: true });
}

export interface ResolveFlags extends GlobalPart {
  readonly dataDir?: string;
  readonly mode?: string;
  readonly intent?: string;
  readonly as?: string;
}

/** `stacker journal resolve`: only transfers and withdrawals in `unknown` (a buy is looked up by the daemon itself). */
export async function resolveIntent(ctx: CommandContext, flags: ResolveFlags, deps: ReadDeps = {}): Promise<void> {
  const args = checkAll({
    intent: () => nonEmpty(flags.intent ?? '', '--intent', 'an intent id'),
    as: () => {
      if (flags.as !== 'done' && flags.as !== 'failed') throw InputError.one('--as', `must be done (it happened) or failed (it did not) (got ${JSON.stringify(flags.as ?? '')})`);
      return flags.as;
    },
  });
  await withJournal(flags, deps, async (store, label) => {
    const record = await store.getIntent(args.intent);
    if (record === null) throw InputError.one('--intent', `no intent ${args.intent} in the ${label.mode} journal ${label.path}`);
    const intent = record.intent;
    if (intent.kind !== 'transfer' && intent.kind !== 'flex-withdraw') {
      throw InputError.one('--intent', `${args.intent} is a ${intent.kind}: only a transfer or a flex withdrawal is resolved by hand (a buy is looked up at the exchange by the daemon)`);
    }
    if (record.status !== 'unknown') throw InputError.one('--intent', `${args.intent} is ${record.status}, not unknown: there is nothing to resolve`);
    const status = args.as === 'done' ? 'done' : 'failed';
    if (intent.kind === 'transfer') {
      await store.recordTransfer({ intentId: record.intentId, ticker: intent.ticker, amount: intent.amount, from: intent.from, to: intent.to, status });
    } else {
      await store.recordFlexOperation({ intentId: record.intentId, plan: intent.plan, amount: intent.amount, transactionId: null, status });
    }
    if (status === 'done') await store.updateIntent(record.intentId, { status: 'done', result: { resolvedBy: 'hand' } });
    else await store.updateIntent(record.intentId, { status: 'failed', error: { code: 'E_RESOLVED_BY_HAND', message: 'a human checked the balances: it did not happen' } });
    if (ctx.json) ctx.io.out(json({ journal: label.path, intentId: record.intentId, status }));
    else ctx.io.out(`${record.intentId} (${intentSummary(intent)}) is now ${status}\n`);
  }, { write: true });
}

export interface MigrateFlags extends GlobalPart {
  readonly dataDir?: string;
  readonly mode?: string;
  /** The parent command's (`journal --journal FILE`): refused, migrate copies a data dir's journal. */
  readonly journal?: string;
  readonly to?: string;
}

/**
 * `stacker journal migrate --to postgres://…`: copy the data dir's SQLite journal of a mode into
 * PostgreSQL (idempotent, verified by rows per table and sums of money before it commits). The
 * URL comes from --to or STACKER_DATABASE_URL and is printed without its password.
 */
export async function migrate(ctx: CommandContext, flags: MigrateFlags, deps: ReadDeps = {}): Promise<void> {
  if (flags.journal !== undefined) throw InputError.one('--journal', "migrate copies a data dir's journal: give --data-dir and --mode, not --journal");
  const { loadJournalLocation } = await import('../../config/journal-location.ts');
  const { makeDatabaseUrl } = await import('../../config/daemon-env.ts');
  const { databaseUrlProblem, hasPassword } = await import('../../store/pg-url.ts');
  const location = await loadJournalLocation({ envFile: flags.envFile, dataDir: flags.dataDir, mode: flags.mode }, deps.env === undefined ? {} : { env: deps.env });
  let target = location.databaseUrl;
  if (flags.to !== undefined) {
    const problem = databaseUrlProblem(flags.to);
    if (problem !== null) throw InputError.one('--to', problem);
    target = makeDatabaseUrl(flags.to);
    // Too late to keep it out of this shell's history, and the copy is wanted: said, so that the next time it is not typed.
    if (hasPassword(flags.to)) {
      ctx.io.err('warning: --to carries a password, which the shell history and ps keep: next time set STACKER_DATABASE_URL (in the environment or the --env-file file) and leave --to out\n');
    }
  }
  if (target === null) throw InputError.one('--to', 'name the PostgreSQL database to copy into: --to postgres://user@host/database, or set STACKER_DATABASE_URL (which keeps a password out of the shell history)');
  const { copySqliteJournalToPg } = await import('../../store/pg-copy.ts');
  const copy = await copySqliteJournalToPg({ dataDir: location.dataDir, mode: location.mode, url: target.url, timeoutMs: location.databaseTimeoutMs });
  if (ctx.json) {
    ctx.io.out(json({ from: copy.from, to: copy.to, journalId: copy.journalId, copied: copy.copied, writtenSince: copy.writtenSince, tables: copy.tables, sums: copy.sums.map((s) => ({ column: s.column, sqlite: s.source, postgres: s.target })) }));
    return;
  }
  ctx.io.out(`${copy.from} → ${copy.to} (journal ${copy.journalId})\n`);
  ctx.io.out(
    table(
      [{ header: 'TABLE' }, { header: 'SQLITE', align: 'right' }, { header: 'COPIED', align: 'right' }, { header: 'POSTGRESQL', align: 'right' }],
      copy.tables.map((t) => [t.table, String(t.source), String(t.copied), String(t.target)]),
    ),
  );
  ctx.io.out(
    table(
      [{ header: 'MONEY COLUMN' }, { header: 'SUM IN SQLITE', align: 'right' }, { header: 'SUM IN POSTGRESQL', align: 'right' }],
      copy.sums.map((s) => [s.column, formatDecimal(s.source), formatDecimal(s.target)]),
    ),
  );
  ctx.io.out(
    copy.writtenSince
      ? 'nothing new to copy: PostgreSQL holds every row of this journal and more, written there since it moved (by the daemon running on it); the SQLite file is the copy from before\n'
      : copy.copied === 0
      ? 'nothing new to copy: PostgreSQL already holds every row of this journal (rows and sums verified)\n'
      : `copied ${copy.copied} row(s); rows and sums verified. Set STACKER_DATABASE_URL to this database and start stacker; keep ${copy.from} as a backup.\n`,
  );
}

export interface UpgradeFlags extends GlobalPart {
  readonly dataDir?: string;
  readonly mode?: string;
  /** The parent command's (`journal --journal FILE`): refused, upgrade migrates a data dir's journal. */
  readonly journal?: string;
}

/**
 * `stacker journal upgrade`: migrate a mode's journal (SQLite or PostgreSQL) to this stacker's
 * schema as a daemon's start would, under the same lock (refused while a daemon holds it) and with
 * the same copy of the file as it was, and trade nothing: so the journal can be read with the new
 * build (`journal`, `orders`, `report`, `check`) before it is let trade.
 */
export async function upgrade(ctx: CommandContext, flags: UpgradeFlags, deps: ReadDeps = {}): Promise<void> {
  if (flags.journal !== undefined) throw InputError.one('--journal', "upgrade migrates a data dir's journal as a start of the daemon would: give --data-dir and --mode, not --journal");
  const { loadJournalLocation } = await import('../../config/journal-location.ts');
  const location = await loadJournalLocation({ envFile: flags.envFile, dataDir: flags.dataDir, mode: flags.mode }, deps.env === undefined ? {} : { env: deps.env });
  const { openStore } = await import('../../store/open-store.ts');
  const { SCHEMA_VERSION, describeMigration } = await import('../../store/migrations.ts');
  let store: Awaited<ReturnType<typeof openStore>>;
  try {
    store = await openStore({
      dataDir: location.dataDir,
      mode: location.mode,
      create: false,
      ...(location.databaseUrl === null ? {} : { databaseUrl: location.databaseUrl.url, databaseTimeoutMs: location.databaseTimeoutMs }),
    });
  } catch (error) {
    throw await noJournalThere(error, location, flags);
  }
  const where = store.journal.path;
  const { migrated, narrowed } = store;
  await store.close();
  if (!ctx.json && narrowed.length > 0) ctx.io.err(`made the journal's files yours alone (0600), which other users of this machine could read: ${narrowed.map((file) => file.path).join(', ')}\n`);
  if (ctx.json) {
    ctx.io.out(json({ journal: where, mode: location.mode, schema: SCHEMA_VERSION, migrated: migrated === null ? null : { from: migrated.from, to: migrated.to, migrations: migrated.applied, backup: migrated.backup } }));
    return;
  }
  if (migrated === null) {
    ctx.io.out(`the ${location.mode} journal ${where} is of schema ${SCHEMA_VERSION} already, this stacker's: nothing to upgrade\n`);
    return;
  }
  const back = migrated.backup === null ? 'to go back, restore the pg_dump taken before it' : `the file as it was is kept as ${migrated.backup}`;
  ctx.io.out(
    `upgraded the ${location.mode} journal ${where} ${describeMigration(migrated)}; ${back} (README "Upgrading" says how to go back: a stacker older than this one refuses the journal now). ` +
      'Nothing was traded: read it with `stacker journal`, `orders`, `report` or `check`, then start the daemon\n',
  );
}

/** `stacker orders`. */
export async function orders(ctx: CommandContext, flags: OrdersFlags, deps: ReadDeps = {}): Promise<void> {
  const args = checkAll({
    instance: () => optional(flags.instance, (text) => nonEmpty(text, '--instance', 'an instance name')),
    status: () => optional(flags.status, orderStatus),
    limit: () => (flags.limit === undefined ? LIST_DEFAULT : integerIn(flags.limit, '--limit', LIST_LIMIT)),
  });
  await withJournal(flags, deps, async (store, label) => {
    // The store filters by instance, status and limit: a status read over every order decoded
    // each of a year's half million to print none.
    const chosen = await store.listOrders({ ...(args.instance === undefined ? {} : { instance: args.instance }), ...(args.status === undefined ? {} : { status: args.status }), limit: args.limit });
    const seconds = new Set((await store.listFindings()).flatMap((finding) => (isSecondOrder(finding) && finding.orderId !== null ? [finding.orderId] : [])));
    const rows = await Promise.all(chosen.map(async (order) => describeOrder(store, order, seconds)));
    const inDoubt = await buysInDoubt(store, args.instance);
    if (ctx.json) {
      ctx.io.out(json({ journal: label.path, mode: label.mode, orders: rows, buysInDoubt: inDoubt.map(plainBuyInDoubt) }));
      return;
    }
    // After a crash the journal may hold a buy sent with no order yet: "no orders" alone read as "nothing was bought".
    const doubt = inDoubt.length === 0 ? '' : buysInDoubtNote(inDoubt, args.instance);
    if (rows.length === 0) {
      ctx.io.err(`no orders${args.status === undefined ? '' : ` in status ${args.status}`}${args.instance === undefined ? '' : ` of ${args.instance}`} in the ${label.mode} journal ${label.path}\n${doubt}`);
      return;
    }
    ctx.io.out(
      table(
        [
          { header: 'FIRST SEEN (UTC)' },
          { header: 'INSTANCE' },
          { header: 'ACCOUNT' },
          { header: 'MARKET' },
          { header: 'SIDE' },
          { header: 'STATUS' },
          { header: 'AMOUNT', align: 'right' },
          { header: 'FILLED BASE', align: 'right' },
          { header: 'FILLED QUOTE', align: 'right' },
          { header: 'FEE', align: 'right' },
          { header: 'TRANSITIONS', align: 'right' },
          { header: 'ORDER ID' },
          { header: 'CLIENT ORDER ID' },
        ],
        rows.map((row) => [
          time(row.firstSeenAtMs),
          row.instance ?? '-',
          row.account ?? '-',
          row.market,
          row.side,
          row.status,
          formatDecimal(row.amount),
          formatDecimal(row.filledBase),
          formatDecimal(row.filledQuote),
          withAsset(row.fee, row.feeAsset),
          String(row.transitionCount),
          row.orderId,
          row.clientOrderId || '-',
        ]),
      ),
    );
    for (const row of rows.filter((r) => r.secondOrderOf !== null)) {
      ctx.io.out(`order ${row.orderId} is a second order of intent ${row.secondOrderOf ?? ''} (its slot was bought twice): counted in ${row.instance ?? 'its instance'}'s budgets and reports\n`);
    }
    if (rows.length === args.limit) ctx.io.err(`(the ${args.limit} newest; --limit shows more)\n`);
    if (doubt !== '') ctx.io.err(doubt);
  });
}

/**
 * The buys sent (or about to be) whose order the journal does not hold yet: pending, sent or
 * unknown, with no order linked since they were journalled (a sent buy whose order is recorded
 * and still open is listed as that order).
 */
async function buysInDoubt(store: StoredJournal, instance: string | undefined): Promise<IntentRecord[]> {
  const unresolved = (await store.unresolvedIntents()).filter((record) => record.intent.kind === 'buy-stock-market' && (instance === undefined || record.instance === instance));
  const orderless: IntentRecord[] = [];
  for (const record of unresolved) {
    const since = await store.listOrders({ instance: record.instance, firstSeenFromMs: record.createdAtMs, limit: -1 });
    if (!since.some((order) => order.intentId === record.intentId)) orderless.push(record);
  }
  return orderless;
}

function plainBuyInDoubt(record: IntentRecord): Record<string, unknown> {
  return {
    intentId: record.intentId,
    instance: record.instance,
    slotTime: new Date(record.slotTimeMs).toISOString(),
    status: record.status,
    clientOrderId: record.clientOrderId,
    intent: intentSummary(record.intent),
    sentAt: record.sentAtMs === null ? null : new Date(record.sentAtMs).toISOString(),
  };
}

function buysInDoubtNote(records: readonly IntentRecord[], instance: string | undefined): string {
  const one = records.length === 1;
  // A buy's intent id is its clientOrderId.
  const lines = records.map((record) => `  ${record.intentId} ${record.instance} ${record.status} ${intentSummary(record.intent)}\n`);
  return (
    `${records.length} buy${one ? '' : 's'} ${one ? 'is' : 'are'} in the journal without ${one ? 'its' : 'their'} order yet (sent, or about to be, when stacker stopped or lost the answer): ` +
    `the exchange may hold ${one ? 'it' : 'them'}, and the daemon looks ${one ? 'it' : 'them'} up by clientOrderId (never sending again) at its next start or slot. ` +
    `\`stacker journal --status pending,sent,unknown${instance === undefined ? '' : ` --instance ${shellWord(instance)}`}\` shows ${one ? 'it' : 'them'}:\n${lines.join('')}`
  );
}

/** A finding of a second order under the id of an intent this journal sent (TWIN in its text). */
function isSecondOrder(finding: LedgerFinding): boolean {
  return finding.kind === 'foreign' && finding.detail.includes(TWIN);
}

/** `stacker journal`. */
export async function journal(ctx: CommandContext, flags: JournalFlags, deps: ReadDeps = {}): Promise<void> {
  const args = checkAll({
    instance: () => optional(flags.instance, (text) => nonEmpty(text, '--instance', 'an instance name')),
    statuses: () => optional(flags.status, intentStatuses),
    limit: () => (flags.limit === undefined ? LIST_DEFAULT : integerIn(flags.limit, '--limit', LIST_LIMIT)),
  });
  await withJournal(flags, deps, async (store, label) => {
    const entries = await store.recentJournal({
      ...(args.instance === undefined ? {} : { instance: args.instance }),
      ...(args.statuses === undefined ? {} : { statuses: args.statuses }),
      limit: args.limit,
    });
    // Slots that did not end done: a strategy that failed, a snapshot that could not be read, a slot
    // missed while stacker was down leave no intent to list, and `run --once` sends people here.
    const notDone = args.statuses !== undefined ? [] : await slotsNotDone(store, args.instance, args.limit);
    // What the history check found and nobody acknowledged: `acknowledge` listed them only as it marked them seen.
    // Of the instance asked for (and those of no instance); acknowledging is for the whole journal, so the others are counted.
    const allFindings = await store.listFindings({ unacknowledged: true });
    const findings = args.instance === undefined ? allFindings : allFindings.filter((finding) => finding.instance === args.instance || finding.instance === null);
    const othersFound = allFindings.length - findings.length;
    if (ctx.json) {
      ctx.io.out(
        json({
          journal: label.path,
          mode: label.mode,
          findings: findings.map(plainFinding),
          entries: entries.map(plainEntry),
          slotsNotDone: notDone.map(({ slot, settled }) => ({ instance: slot.instance, slotTimeMs: slot.slotTimeMs, slotTime: new Date(slot.slotTimeMs).toISOString(), status: slot.status, reason: slot.reason, settled })),
        }),
      );
      return;
    }
    if (findings.length > 0) {
      ctx.io.out(
        `found at the exchange and not acknowledged (read them, then \`stacker journal acknowledge\`${findings.some((f) => f.kind === 'foreign') ? '; a foreign order stops trading until then' : ''}):\n${findingsTable(findings)}\n`,
      );
    }
    if (othersFound > 0) ctx.io.out(`and ${othersFound} more of other instances, not acknowledged (\`stacker journal\` without --instance lists them; acknowledging is for the whole journal)\n`);
    if (notDone.length > 0) {
      const status = ({ slot, settled }: SlotNotDone): string => (settled === 'done' ? `${slot.status}, settled since (every order found)` : slot.status);
      ctx.io.out(
        `slots that did not end done (newest first):\n${table([{ header: 'SLOT (UTC)' }, { header: 'INSTANCE' }, { header: 'STATUS' }, { header: 'REASON' }], notDone.map((row) => [time(row.slot.slotTimeMs), row.slot.instance, status(row), row.slot.reason ?? '']))}\n`,
      );
    }
    if (entries.length === 0) {
      ctx.io.err(`no intents${args.instance === undefined ? '' : ` of ${args.instance}`} in the ${label.mode} journal ${label.path}\n`);
      return;
    }
    ctx.io.out(
      table(
        [{ header: 'SLOT (UTC)' }, { header: 'INSTANCE' }, { header: 'ACCOUNT' }, { header: '#', align: 'right' }, { header: 'STATUS' }, { header: 'INTENT' }, { header: 'OUTCOME' }],
        entries.map((entry) => [
          time(entry.intent.slotTimeMs),
          entry.intent.instance,
          accountShown(entry.intent.account),
          String(entry.intent.index),
          entry.intent.status,
          intentSummary(entry.intent.intent),
          outcome(entry, flags),
        ]),
      ),
    );
    if (entries.length === args.limit) ctx.io.err(`(the ${args.limit} newest; --limit shows more)\n`);
  });
}

/** A finding of the history check as JSON. */
function plainFinding(f: LedgerFinding): Record<string, unknown> {
  return { kind: f.kind, instance: f.instance, clientOrderId: f.clientOrderId, orderId: f.orderId, market: f.market, detail: f.detail, foundAt: new Date(f.foundAtMs).toISOString() };
}

function findingsTable(findings: readonly LedgerFinding[]): string {
  return table(
    [{ header: 'FOUND (UTC)' }, { header: 'KIND' }, { header: 'INSTANCE' }, { header: 'CLIENT ORDER ID' }, { header: 'ORDER' }, { header: 'WHY' }],
    findings.map((f) => [time(f.foundAtMs), f.kind, f.instance ?? '', f.clientOrderId, f.orderId ?? '', f.detail]),
  );
}

/** A slot that ended other than done, and whether its money intents have all been done since (a lost answer's order found). */
interface SlotNotDone {
  readonly slot: SlotRecord;
  readonly settled: 'done' | null;
}

/**
 * The newest slots that ended other than done (failed, skipped, missed), at most `limit`, among
 * the last few hundred slots. A finished slot's record is never rewritten, so a slot that failed
 * on a lost answer stays `failed` after reconciliation found its order: said beside it, as the
 * status page says it.
 */
async function slotsNotDone(store: StoredJournal, instance: string | undefined, limit: number): Promise<SlotNotDone[]> {
  const recent = await store.listSlots({ ...(instance === undefined ? {} : { instance }), limit: 500 });
  const chosen = recent.filter((slot) => slot.status !== 'done' && slot.status !== 'claimed').slice(0, limit);
  return Promise.all(chosen.map(async (slot) => ({ slot, settled: slot.status === 'failed' ? await settledSince(store, slot.instance, slot.slotTimeMs) : null })));
}

interface OrderRow extends StoredOrder {
  readonly instance: string | null;
  /** The account its intent was sent on (`default` for intents from before accounts); null for an order no intent sent. */
  readonly account: string | null;
  readonly slotTimeMs: number | null;
  /** The intent it is a second order of (its slot bought twice, counted all the same); null for an intent's own order. */
  readonly secondOrderOf: string | null;
  readonly transitionCount: number;
  readonly transitions: ReadonlyArray<{ seq: number; from: OrderStatus | null; to: OrderStatus; filledBase: Decimal; filledQuote: Decimal; fee: Decimal; atMs: number }>;
}

async function describeOrder(store: StoredJournal, order: StoredOrder, seconds: ReadonlySet<string>): Promise<OrderRow> {
  const [intent, transitions] = await Promise.all([order.intentId === null ? null : store.getIntent(order.intentId), store.orderTransitions(order.orderId)]);
  return {
    ...order,
    secondOrderOf: seconds.has(order.orderId) ? order.intentId : null,
    instance: intent?.instance ?? null,
    account: intent === null ? null : accountShown(intent.account),
    slotTimeMs: intent?.slotTimeMs ?? null,
    transitionCount: transitions.length,
    transitions: transitions.map((t) => ({ seq: t.seq, from: t.fromStatus, to: t.toStatus, filledBase: t.filledBase, filledQuote: t.filledQuote, fee: t.fee, atMs: t.atMs })),
  };
}

interface JournalLabel {
  readonly path: string;
  readonly mode: string;
}

/** Open the chosen journal read-only, run `work`, close it. A journal that does not exist yet is bad input (exit 2), not a failure. */
export async function withJournal(
  flags: GlobalPart & { readonly dataDir?: string; readonly mode?: string; readonly journal?: string },
  deps: ReadDeps,
  work: (store: StoredJournal, label: JournalLabel) => Promise<void>,
  options: { readonly write?: boolean } = {},
): Promise<void> {
  if (flags.journal !== undefined) {
    await withJournalFile(flags, work, options);
    return;
  }
  const { loadJournalLocation } = await import('../../config/journal-location.ts');
  const location = await loadJournalLocation({ envFile: flags.envFile, dataDir: flags.dataDir, mode: flags.mode }, deps.env === undefined ? {} : { env: deps.env });
  const { openStoreForReading } = await import('../../store/open-store.ts');
  let store: StoredJournal;
  try {
    store = await openStoreForReading({
      dataDir: location.dataDir,
      mode: location.mode,
      ...(options.write === true ? { write: true } : {}),
      ...(location.databaseUrl === null ? {} : { databaseUrl: location.databaseUrl.url, databaseTimeoutMs: location.databaseTimeoutMs }),
    });
  } catch (error) {
    throw await noJournalThere(error, location, flags);
  }
  try {
    await work(store, { path: store.path, mode: location.mode });
  } finally {
    await store.close();
  }
}

/** A journal that is not there yet is bad input (exit 2), naming the journals the data dir does have; any other error passes as it is. */
async function noJournalThere(error: unknown, location: JournalLocation, flags: { readonly mode?: string }): Promise<unknown> {
  const { StoreError } = await import('../../store/errors.ts');
  if (!(error instanceof StoreError) || error.reason !== 'not-found') return error;
  const field = flags.mode === undefined ? 'journal' : '--mode';
  if (location.databaseUrl !== null) return new ConfigError([{ field, rule: `${error.message}${modeOrigin(location.modeSource)}` }]);
  const { JOURNAL_FILES, journalPath } = await import('../../store/open-store.ts');
  const { existsSync } = await import('node:fs');
  const { resolve } = await import('node:path');
  const others = (Object.keys(JOURNAL_FILES) as Array<keyof typeof JOURNAL_FILES>).filter((mode) => mode !== location.mode && existsSync(journalPath(resolve(location.dataDir), mode)));
  const hint = others.length === 0 ? 'stacker has not run in this data dir yet' : `this data dir has ${others.map((mode) => `a ${mode} journal (--mode ${mode})`).join(' and ')}`;
  return new ConfigError([{ field, rule: `no ${location.mode} journal at ${journalPath(resolve(location.dataDir), location.mode)}: ${hint}${modeOrigin(location.modeSource)}` }]);
}

/**
 * `--journal FILE`: a SQLite journal named by its path instead of found in a data dir, such as
 * the one `stacker backtest --journal FILE` kept. Its mode is the one its runs recorded.
 */
async function withJournalFile(
  flags: { readonly dataDir?: string; readonly mode?: string; readonly journal?: string },
  work: (store: StoredJournal, label: JournalLabel) => Promise<void>,
  options: { readonly write?: boolean },
): Promise<void> {
  const { existingFile } = await import('../file-flags.ts');
  const path = checkAll({
    journal: () => existingFile(flags.journal as string, '--journal'),
    dataDir: () => {
      if (flags.dataDir !== undefined) throw InputError.one('--journal', 'names the journal file itself: not with --data-dir');
    },
    mode: () => {
      if (flags.mode !== undefined) throw InputError.one('--journal', "names the journal file itself (its mode is the one it recorded): not with --mode");
    },
  }).journal;
  const { openJournalFile } = await import('../../store/open-store.ts');
  const { StoreError } = await import('../../store/errors.ts');
  let store: StoredJournal;
  try {
    store = await openJournalFile(path, options);
  } catch (error) {
    if (error instanceof StoreError) throw InputError.one('--journal', `${path} is not a stacker journal this version reads: ${error.message}`);
    throw error;
  }
  try {
    await work(store, { path: store.path, mode: (await store.listRuns(1))[0]?.mode ?? 'unused' });
  } finally {
    await store.close();
  }
}

/** Why this mode was read, when the user did not type --mode. */
function modeOrigin(source: string): string {
  if (source === '--mode') return '';
  return source === 'default' ? ' (dry-run is the default; --mode chooses another journal)' : ` (the mode comes from ${source}; --mode chooses another journal)`;
}

function orderStatus(text: string): OrderStatus {
  const upper = text.trim().toUpperCase();
  if ((ORDER_STATUSES as readonly string[]).includes(upper)) return upper as OrderStatus;
  throw InputError.one('--status', `must be one of ${ORDER_STATUSES.join(', ')} (got ${JSON.stringify(text)})`);
}

function intentStatuses(text: string): IntentStatus[] {
  const items = text.split(',').map((item) => item.trim().toLowerCase());
  const bad = items.filter((item) => !(INTENT_STATUS_NAMES as readonly string[]).includes(item));
  if (bad.length > 0 || items.length === 0) {
    throw InputError.one('--status', `must be intent statuses separated by commas, from ${INTENT_STATUS_NAMES.join(', ')} (got ${JSON.stringify(text)})`);
  }
  return [...new Set(items)] as IntentStatus[];
}

function time(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

function withAsset(amount: Decimal, asset: string | null): string {
  return asset === null ? formatDecimal(amount) : `${formatDecimal(amount)} ${asset}`;
}

/** One line per intent kind, money as decimal text. */
export function intentSummary(intent: Intent): string {
  switch (intent.kind) {
    case 'buy-stock-market':
      return `buy ${formatDecimal(intent.amount)} ${intent.market}${intent.stp === undefined ? '' : ` stp=${intent.stp}`}`;
    case 'transfer':
      return `transfer ${formatDecimal(intent.amount)} ${intent.ticker} ${intent.from}→${intent.to}`;
    case 'flex-withdraw':
      return `flex withdraw ${formatDecimal(intent.amount)} from plan ${intent.plan}`;
    case 'note':
      return `note (${intent.level}): ${intent.message}`;
    case 'refusal':
      return `refusal ${intent.reason}: ${intent.message}`;
    case 'set-state':
      return intent.value === null ? `state: delete ${intent.key}` : `state: ${intent.key}=${intent.value}`;
    default:
      return String((intent as { kind?: unknown }).kind);
  }
}

/**
 * What settles an intent only a human can settle: a transfer or flex withdrawal whose answer was
 * lost (no lookup by id exists) and that the balances did not settle. Its id is printed nowhere
 * else in this table, and `journal resolve` needs it, on the journal this listing read.
 */
function resolveHint(intent: IntentRecord, flags: JournalFlags): string | null {
  if (intent.status !== 'unknown' || (intent.intent.kind !== 'transfer' && intent.intent.kind !== 'flex-withdraw')) return null;
  const words = ['stacker', 'journal', 'resolve'];
  if (flags.journal !== undefined) words.push('--journal', flags.journal);
  if (flags.mode !== undefined) words.push('--mode', flags.mode);
  if (flags.dataDir !== undefined) words.push('--data-dir', flags.dataDir);
  if (flags.envFile !== undefined) words.push('--env-file', flags.envFile);
  words.push('--intent', intent.intentId);
  return `check the balances, then: ${words.map(shellWord).join(' ')} --as done|failed`;
}

function outcome(entry: JournalEntry, flags: JournalFlags): string {
  const parts: string[] = [];
  for (const order of entry.orders) {
    parts.push(`order ${order.orderId} ${order.status}: ${formatDecimal(order.filledBase)} for ${formatDecimal(order.filledQuote)}, fee ${withAsset(order.fee, order.feeAsset)}`);
  }
  if (entry.transfer !== null) parts.push(`transfer ${entry.transfer.status}`);
  if (entry.flexOperation !== null) {
    const tx = entry.flexOperation.transactionId === null ? '' : ` (transaction ${entry.flexOperation.transactionId})`;
    parts.push(`flex withdraw ${entry.flexOperation.status}${tx}`);
  }
  const { intent } = entry;
  if (intent.error !== null && intent.intent.kind !== 'refusal') parts.push(`${intent.error.code}: ${intent.error.message}`);
  if (parts.length === 0 && intent.result !== null) parts.push(Object.entries(intent.result).map(([key, value]) => `${key}=${value}`).join(' '));
  if (intent.attempts > 1) parts.push(`sent ${intent.attempts} times`);
  const resolve = resolveHint(intent, flags);
  if (resolve !== null) parts.push(resolve);
  return parts.join('; ') || '-';
}

function plainEntry(entry: JournalEntry): Record<string, unknown> {
  const intent: IntentRecord = entry.intent;
  return {
    intentId: intent.intentId,
    instance: intent.instance,
    account: accountShown(intent.account),
    slotTimeMs: intent.slotTimeMs,
    slotTime: new Date(intent.slotTimeMs).toISOString(),
    index: intent.index,
    kind: intent.intent.kind,
    intent: intent.intent,
    clientOrderId: intent.clientOrderId,
    status: intent.status,
    attempts: intent.attempts,
    result: intent.result,
    error: intent.error,
    createdAtMs: intent.createdAtMs,
    updatedAtMs: intent.updatedAtMs,
    orders: entry.orders,
    flexOperation: entry.flexOperation,
    transfer: entry.transfer,
  };
}

/** Intents journalled before accounts went out on the one key of their time: the default account's. */
function accountShown(account: string | null): string {
  return account ?? DEFAULT_ACCOUNT;
}
