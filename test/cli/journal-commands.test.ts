import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Command, CommanderError } from 'commander';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acknowledge, journal, orders } from '../../src/cli/commands/journal.ts';
import { CommandContext, type GlobalFlags, type RunState } from '../../src/cli/context.ts';
import type { Io } from '../../src/cli/output.ts';
import { runCli } from '../../src/cli/main.ts';
import { buildProgram } from '../../src/cli/program.ts';
import { ConfigError, EXIT, InputError, exitCodeFor } from '../../src/domain/errors.ts';
import { Decimal } from '../../src/domain/money.ts';
import { type OpenedStore, openStore } from '../../src/store/open-store.ts';
import { order } from '../store/helpers.ts';

/**
 * `stacker orders` and `stacker journal` against a real SQLite journal written by the store, as
 * a daemon writes it. The daemon's store stays open (and locked) while the commands read.
 */

const SLOT_1 = 1_735_722_000_000; // 2025-01-01 09:00:00Z
const SLOT_2 = SLOT_1 + 86_400_000;

let dataDir: string;
let daemon: OpenedStore;
let captured: { out: string[]; err: string[] };

function context(json: boolean): CommandContext {
  captured = { out: [], err: [] };
  const io: Io = { out: (text) => void captured.out.push(text), err: (text) => void captured.err.push(text) };
  const state: RunState = { json, verbose: false, lookupHint: undefined };
  return new CommandContext('orders', { json } satisfies GlobalFlags, io, state);
}

const stdout = (): string => captured.out.join('');
const stderr = (): string => captured.err.join('');

/** Two slots of dca-btc: a filled buy with a note and a refusal, then a transfer and an order still open. */
async function writeJournal(store: OpenedStore): Promise<void> {
  const j = store.journal;
  const run = await j.startRun({ mode: 'dry-run', pid: 4242, version: 'test' });
  const buy = { kind: 'buy-stock-market', market: 'BTC_USDT', amount: new Decimal('0.0005'), stp: 'cn' } as const;
  await j.claimSlot({
    instance: 'dca-btc',
    slotTimeMs: SLOT_1,
    runId: run.runId,
    intents: [
      { index: 0, intent: buy },
      { index: 1, intent: { kind: 'note', level: 'info', message: 'bought the dip' } },
      { index: 2, intent: { kind: 'refusal', reason: 'over-budget', message: 'week budget 250 USDT spent' } },
    ],
  });
  const [first] = await j.listIntents({ instance: 'dca-btc', slotTimeMs: SLOT_1 });
  if (first === undefined) throw new Error('no intent');
  await j.updateIntent(first.intentId, { status: 'sent' });
  await j.recordOrderSnapshot(order({ orderId: '1001', status: 'NEW' }), { intentId: first.intentId });
  await j.recordOrderSnapshot(
    order({ orderId: '1001', status: 'FILLED', left: new Decimal('0'), filledBase: new Decimal('0.0005'), filledQuote: new Decimal('32.50000001'), fee: new Decimal('0.0325'), feeAsset: 'USDT' }),
    { intentId: first.intentId },
  );
  await j.updateIntent(first.intentId, { status: 'done', result: { orderId: '1001' } });
  await j.finishSlot({ instance: 'dca-btc', slotTimeMs: SLOT_1, status: 'done' });

  await j.claimSlot({
    instance: 'dca-btc',
    slotTimeMs: SLOT_2,
    runId: run.runId,
    intents: [
      { index: 0, intent: { kind: 'transfer', ticker: 'USDT', amount: new Decimal('33'), from: 'main', to: 'spot' } },
      { index: 1, intent: buy },
    ],
  });
  const [transfer, second] = await j.listIntents({ instance: 'dca-btc', slotTimeMs: SLOT_2 }).then((list) => [...list].sort((a, b) => a.index - b.index));
  if (transfer === undefined || second === undefined) throw new Error('no intents');
  await j.updateIntent(transfer.intentId, { status: 'sent' });
  await j.recordTransfer({ intentId: transfer.intentId, ticker: 'USDT', amount: new Decimal('33'), from: 'main', to: 'spot', status: 'done' });
  await j.updateIntent(transfer.intentId, { status: 'done' });
  await j.updateIntent(second.intentId, { status: 'sent' });
  await j.recordOrderSnapshot(order({ orderId: '1002', status: 'NEW' }), { intentId: second.intentId });
}

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'stacker-journal-cli-'));
  daemon = await openStore({ dataDir, mode: 'dry-run', userLockDir: join(dataDir, 'locks') });
  await writeJournal(daemon);
});

let daemonOpen = true;

afterEach(async () => {
  if (daemonOpen) await daemon.close();
  daemonOpen = true;
  rmSync(dataDir, { recursive: true, force: true });
});

describe('stacker orders', () => {
  it('lists stored orders newest first, with fills and fee as decimal strings and the number of logged transitions, while a daemon holds the journal', async () => {
    await orders(context(true), { dataDir, mode: 'dry-run' }, { env: {} });
    const result = JSON.parse(stdout()) as { journal: string; mode: string; orders: Array<Record<string, unknown>> };
    expect(result.mode).toBe('dry-run');
    expect(result.journal).toBe(join(dataDir, 'stacker-dry-run.db'));
    expect(result.orders.map((o) => [o['orderId'], o['status'], o['transitionCount']])).toEqual([
      ['1002', 'NEW', 1],
      ['1001', 'FILLED', 2],
    ]);
    expect(result.orders[1]).toMatchObject({
      instance: 'dca-btc',
      slotTimeMs: SLOT_1,
      market: 'BTC_USDT',
      amount: '0.0005',
      filledBase: '0.0005',
      filledQuote: '32.50000001',
      fee: '0.0325',
      feeAsset: 'USDT',
    });
    expect((result.orders[1]?.['transitions'] as unknown[])[1]).toMatchObject({ seq: 2, from: 'NEW', to: 'FILLED', filledQuote: '32.50000001' });
  });

  it("flags a second order of one intent (its slot bought twice), which counts against the intent's instance, and acknowledge says it is counted", async () => {
    const [first] = await daemon.journal.listIntents({ instance: 'dca-btc', slotTimeMs: SLOT_1 });
    if (first === undefined || first.clientOrderId === null) throw new Error('no intent');
    const twin = order({ orderId: '1003', clientOrderId: first.clientOrderId, status: 'FILLED', left: new Decimal('0'), filledBase: new Decimal('0.0005'), filledQuote: new Decimal('32.6'), fee: new Decimal('0.0326'), feeAsset: 'USDT' });
    await daemon.journal.recordSecondOrder({
      intentId: first.intentId,
      instance: 'dca-btc',
      slotTimeMs: SLOT_1,
      order: twin,
      asset: 'USDT',
      timeZone: 'UTC',
      finding: { kind: 'foreign', instance: 'dca-btc', clientOrderId: twin.clientOrderId, orderId: '1003', market: 'BTC_USDT', detail: `this journal's intent ${first.intentId} placed another order with the same id: the slot was bought twice` },
    });
    await orders(context(true), { dataDir, mode: 'dry-run', instance: 'dca-btc' }, { env: {} });
    const listed = (JSON.parse(stdout()) as { orders: Array<{ orderId: string; instance: string; secondOrderOf: string | null }> }).orders;
    expect(listed.find((o) => o.orderId === '1003')).toMatchObject({ instance: 'dca-btc', secondOrderOf: first.intentId });
    expect(listed.find((o) => o.orderId === '1001')).toMatchObject({ secondOrderOf: null });
    await orders(context(false), { dataDir, mode: 'dry-run' }, { env: {} });
    expect(stdout()).toContain(`order 1003 is a second order of intent ${first.intentId} (its slot was bought twice): counted in dca-btc's budgets and reports\n`);
    await acknowledge(context(false), { dataDir, mode: 'dry-run' }, { env: {} });
    expect(stdout()).toContain(`acknowledged 1 finding(s)\norder 1003 (${twin.clientOrderId}), a second order of one intent, is recorded against dca-btc and counted in its budgets and reports\n`);
  });

  it('prints a table whose amounts are the exact decimals', async () => {
    await orders(context(false), { dataDir, mode: 'dry-run' }, { env: {} });
    const [header, newest, oldest] = stdout().trimEnd().split('\n');
    expect(header).toMatch(/^FIRST SEEN \(UTC\)\s+INSTANCE\s+ACCOUNT\s+MARKET\s+SIDE\s+STATUS\s+AMOUNT\s+FILLED BASE\s+FILLED QUOTE\s+FEE\s+TRANSITIONS\s+ORDER ID\s+CLIENT ORDER ID$/);
    expect(newest).toMatch(/dca-btc\s+default\s+BTC_USDT\s+buy\s+NEW\s+0\.0005\s+0\s+0\s+0\s+1\s+1002/);
    expect(oldest).toMatch(/dca-btc\s+default\s+BTC_USDT\s+buy\s+FILLED\s+0\.0005\s+0\.0005\s+32\.50000001\s+0\.0325 USDT\s+2\s+1001/);
  });

  it('filters by status (any case) and instance, and --limit counts matching orders', async () => {
    await orders(context(true), { dataDir, mode: 'dry-run', status: 'filled' }, { env: {} });
    expect((JSON.parse(stdout()) as { orders: Array<{ orderId: string }> }).orders.map((o) => o.orderId)).toEqual(['1001']);
    await orders(context(true), { dataDir, mode: 'dry-run', status: 'FILLED', limit: '1' }, { env: {} });
    expect((JSON.parse(stdout()) as { orders: Array<{ orderId: string }> }).orders.map((o) => o.orderId)).toEqual(['1001']);
    await orders(context(true), { dataDir, mode: 'dry-run', instance: 'flex-sweep-usdt' }, { env: {} });
    expect((JSON.parse(stdout()) as { orders: unknown[] }).orders).toEqual([]);
    await orders(context(false), { dataDir, mode: 'dry-run', instance: 'flex-sweep-usdt' }, { env: {} });
    expect(stdout()).toBe('');
    expect(stderr()).toContain('no orders of flex-sweep-usdt in the dry-run journal');
  });

  it('names the buys sent with no order recorded yet (a kill -9 before the answer): "no orders" alone read as "nothing was bought"', async () => {
    const j = daemon.journal;
    const run = await j.startRun({ mode: 'dry-run', pid: 4243, version: 'test' });
    const buy = { kind: 'buy-stock-market', market: 'ETH_USDT', amount: new Decimal('0.01'), stp: 'cn' } as const;
    await j.claimSlot({ instance: 'dca-eth', slotTimeMs: SLOT_2, runId: run.runId, intents: [{ index: 0, intent: buy }] });
    const [sent] = await j.listIntents({ instance: 'dca-eth' });
    if (sent === undefined) throw new Error('no intent');
    await j.updateIntent(sent.intentId, { status: 'sent' });

    await orders(context(false), { dataDir, mode: 'dry-run', instance: 'dca-eth' }, { env: {} });
    expect(stdout()).toBe('');
    expect(stderr()).toBe(
      `no orders of dca-eth in the dry-run journal ${join(dataDir, 'stacker-dry-run.db')}\n` +
        '1 buy is in the journal without its order yet (sent, or about to be, when stacker stopped or lost the answer): the exchange may hold it, and the daemon looks it up by clientOrderId (never sending again) at its next start or slot. ' +
        '`stacker journal --status pending,sent,unknown --instance dca-eth` shows it:\n' +
        `  ${sent.clientOrderId} dca-eth sent buy 0.01 ETH_USDT stp=cn\n`,
    );
    // dca-btc's sent buy has its order (1002, still open): listed as that order, not in doubt.
    await orders(context(true), { dataDir, mode: 'dry-run' }, { env: {} });
    const listed = JSON.parse(stdout()) as { orders: Array<{ orderId: string }>; buysInDoubt: Array<Record<string, unknown>> };
    expect(listed.orders.map((o) => o.orderId)).toEqual(['1002', '1001']);
    expect(listed.buysInDoubt).toEqual([
      { intentId: sent.intentId, instance: 'dca-eth', slotTime: new Date(SLOT_2).toISOString(), status: 'sent', clientOrderId: sent.clientOrderId, intent: 'buy 0.01 ETH_USDT stp=cn', sentAt: expect.any(String) },
    ]);
    await orders(context(false), { dataDir, mode: 'dry-run' }, { env: {} });
    expect(stderr()).toMatch(/^1 buy is in the journal without its order yet/);
  });

  it('reads the journal after the daemon has stopped too (no WAL files left beside it)', async () => {
    await daemon.close();
    daemonOpen = false;
    await orders(context(true), { dataDir, mode: 'dry-run' }, { env: {} });
    expect((JSON.parse(stdout()) as { orders: unknown[] }).orders).toHaveLength(2);
  });

  it('says when --limit cut the list', async () => {
    await orders(context(false), { dataDir, mode: 'dry-run', limit: '1' }, { env: {} });
    expect(stdout().trimEnd().split('\n')).toHaveLength(2);
    expect(stderr()).toBe('(the 1 newest; --limit shows more)\n');
  });

  it('refuses a bad --status and --limit together, before opening anything', async () => {
    const error = await orders(context(false), { dataDir: join(dataDir, 'nowhere'), status: 'DONE', limit: '0' }, { env: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).problems.map((p) => p.field)).toEqual(['--status', '--limit']);
    expect(exitCodeFor(error)).toBe(EXIT.badInput);
  });
});

describe('stacker journal', () => {
  it('shows recent intents with what became of each (JSON, decimals as strings)', async () => {
    await journal(context(true), { dataDir, mode: 'dry-run' }, { env: {} });
    const result = JSON.parse(stdout()) as { entries: Array<Record<string, unknown>> };
    expect(result.entries.map((e) => [e['slotTimeMs'], e['index'], e['kind'], e['status']])).toEqual([
      [SLOT_2, 0, 'transfer', 'done'],
      [SLOT_2, 1, 'buy-stock-market', 'sent'],
      [SLOT_1, 0, 'buy-stock-market', 'done'],
      [SLOT_1, 1, 'note', 'done'],
      [SLOT_1, 2, 'refusal', 'refused'],
    ]);
    const filled = result.entries[2];
    expect(filled).toMatchObject({ instance: 'dca-btc', slotTime: '2025-01-01T09:00:00.000Z', intent: { amount: '0.0005', market: 'BTC_USDT' }, result: { orderId: '1001' } });
    expect((filled?.['orders'] as Array<Record<string, unknown>>)[0]).toMatchObject({ orderId: '1001', status: 'FILLED', filledQuote: '32.50000001' });
    expect(result.entries[0]?.['transfer']).toMatchObject({ ticker: 'USDT', amount: '33', status: 'done' });
  });

  it('prints one line per intent: the intent in words and its outcome', async () => {
    await journal(context(false), { dataDir, mode: 'dry-run' }, { env: {} });
    const text = stdout();
    expect(text).toMatch(/^SLOT \(UTC\)\s+INSTANCE\s+ACCOUNT\s+#\s+STATUS\s+INTENT\s+OUTCOME\n/);
    expect(text).toMatch(/2025-01-01 09:00:00Z\s+dca-btc\s+default\s+0\s+done\s+buy 0\.0005 BTC_USDT stp=cn\s+order 1001 FILLED: 0\.0005 for 32\.50000001, fee 0\.0325 USDT\n/);
    expect(text).toMatch(/2025-01-02 09:00:00Z\s+dca-btc\s+default\s+0\s+done\s+transfer 33 USDT main→spot\s+transfer done\n/);
    expect(text).toMatch(/dca-btc\s+default\s+2\s+refused\s+refusal over-budget: week budget 250 USDT spent\s+-\n/);
    expect(text).toMatch(/dca-btc\s+default\s+1\s+done\s+note \(info\): bought the dip/);
  });

  it('prints, beside a transfer or flex withdrawal left unknown, the journal resolve command with its intent id, which settles it', async () => {
    const run = await daemon.journal.startRun({ mode: 'dry-run', pid: 4243, version: 'test' });
    const slot = { instance: 'sweep', slotTimeMs: SLOT_2 + 86_400_000 };
    const plan = '3f1c9a52-7d4e-4b8a-9e61-2c5d8f0a7b13';
    await daemon.journal.claimSlot({ ...slot, runId: run.runId, intents: [{ index: 0, intent: { kind: 'flex-withdraw', plan, amount: new Decimal('100') } }] });
    const [lost] = await daemon.journal.listIntents(slot);
    if (lost === undefined) throw new Error('no intent');
    await daemon.journal.updateIntent(lost.intentId, { status: 'sent' });
    await daemon.journal.updateIntent(lost.intentId, { status: 'unknown', error: { code: 'E_NETWORK', message: 'connection reset' } });

    await journal(context(false), { dataDir, mode: 'dry-run' }, { env: {} });
    const line = stdout().split('\n').find((text) => text.includes('flex withdraw 100')) ?? '';
    const printed = /check the balances, then: (stacker journal resolve .*) --as done\|failed$/.exec(line)?.[1] ?? '';
    expect(printed).toBe(`stacker journal resolve --mode dry-run --data-dir ${dataDir} --intent ${lost.intentId}`);
    // Only what a human must settle carries it: not the buy still open, not the transfer done.
    expect(stdout().match(/journal resolve/g)).toHaveLength(1);

    const out: string[] = [];
    const code = await runCli([...printed.split(' ').slice(1), '--as', 'done'], { out: (text) => void out.push(text), err: (text) => void out.push(text) });
    expect([code, out.join('')]).toEqual([0, `${lost.intentId} (flex withdraw 100 from plan ${plan}) is now done\n`]);
    expect((await daemon.journal.getIntent(lost.intentId))?.status).toBe('done');
  });

  it('says beside a slot that failed on a lost answer that its order was found since, as the status page does', async () => {
    const j = daemon.journal;
    const slot = SLOT_2 + 86_400_000;
    await j.claimSlot({ instance: 'dca-btc', slotTimeMs: slot, runId: null, intents: [{ index: 0, intent: { kind: 'buy-stock-market', market: 'BTC_USDT', amount: new Decimal('0.0005'), stp: 'cn' } }] });
    const [buy] = await j.listIntents({ instance: 'dca-btc', slotTimeMs: slot });
    if (buy === undefined) throw new Error('no intent');
    await j.updateIntent(buy.intentId, { status: 'sent' });
    await j.updateIntent(buy.intentId, { status: 'unknown', error: { code: 'E_NETWORK', message: 'answer lost' } });
    await j.finishSlot({ instance: 'dca-btc', slotTimeMs: slot, status: 'failed', reason: 'the answer to the order was lost' });
    // Reconciliation found it a minute later.
    await j.recordOrderSnapshot(order({ orderId: '1003', status: 'FILLED', left: new Decimal('0'), filledBase: new Decimal('0.0005'), filledQuote: new Decimal('32.5') }), { intentId: buy.intentId });
    await j.updateIntent(buy.intentId, { status: 'done', result: { orderId: '1003' } });

    await journal(context(true), { dataDir, mode: 'dry-run' }, { env: {} });
    const listed = (JSON.parse(stdout()) as { slotsNotDone: Array<Record<string, unknown>> }).slotsNotDone;
    expect(listed).toEqual([expect.objectContaining({ slotTimeMs: slot, status: 'failed', settled: 'done' })]);
    await journal(context(false), { dataDir, mode: 'dry-run' }, { env: {} });
    expect(stdout()).toMatch(/dca-btc\s+failed, settled since \(every order found\)\s+the answer to the order was lost/);
  });

  it('filters by intent status, several at once', async () => {
    await journal(context(true), { dataDir, mode: 'dry-run', status: 'refused,sent' }, { env: {} });
    expect((JSON.parse(stdout()) as { entries: Array<{ status: string }> }).entries.map((e) => e.status)).toEqual(['sent', 'refused']);
    const error = await journal(context(true), { dataDir, mode: 'dry-run', status: 'done,lost' }, { env: {} }).catch((e: unknown) => e);
    expect((error as InputError).problems[0]?.field).toBe('--status');
  });
});

describe('choosing the journal', () => {
  it('takes the data dir and the mode from STACKER_DATA_DIR and STACKER_MODE when no flag is given', async () => {
    await orders(context(true), {}, { env: { STACKER_DATA_DIR: dataDir, STACKER_MODE: 'dry-run' } });
    expect((JSON.parse(stdout()) as { orders: unknown[] }).orders).toHaveLength(2);
  });

  it('answers a journal that does not exist with exit 2, its path, and the journals that do exist', async () => {
    const error = await orders(context(false), { dataDir, mode: 'live' }, { env: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect(exitCodeFor(error)).toBe(EXIT.badInput);
    expect((error as ConfigError).message).toBe(
      `--mode: no live journal at ${join(dataDir, 'stacker.db')}: this data dir has a dry-run journal (--mode dry-run)`,
    );
    const byDefault = await journal(context(false), {}, { env: { STACKER_DATA_DIR: dataDir, STACKER_MODE: 'live' } }).catch((e: unknown) => e);
    expect((byDefault as ConfigError).message).toBe(
      `journal: no live journal at ${join(dataDir, 'stacker.db')}: this data dir has a dry-run journal (--mode dry-run) (the mode comes from STACKER_MODE (environment); --mode chooses another journal)`,
    );
    const empty = join(dataDir, 'empty');
    mkdirSync(empty);
    const nothing = await journal(context(false), { dataDir: empty }, { env: {} }).catch((e: unknown) => e);
    expect((nothing as ConfigError).message).toBe(
      `journal: no dry-run journal at ${join(empty, 'stacker-dry-run.db')}: stacker has not run in this data dir yet (dry-run is the default; --mode chooses another journal)`,
    );
  });

  it('answers a journal that was here and is lost (its identity file outlived it) as lost, exit 3, not as a data dir stacker never ran in', async () => {
    const lost = join(dataDir, 'lost');
    mkdirSync(lost);
    const path = join(lost, 'stacker-dry-run.db');
    writeFileSync(`${path}.id`, `${JSON.stringify({ journalId: 'j-1', createdAtMs: SLOT_1, file: 'stacker-dry-run.db' })}\n`);
    for (const command of [journal, orders]) {
      const error = await command(context(false), { dataDir: lost }, { env: {} }).catch((e: unknown) => e);
      expect(exitCodeFor(error)).toBe(EXIT.refused);
      expect(error).toMatchObject({ code: 'E_STORE', reason: 'journal-lost' });
      expect((error as Error).message).toBe(
        `the journal ${path} is missing, but ${path}.id says journal j-1 was created here on 2025-01-01T09:00:00.000Z. ` +
          `Restore ${path} from a backup, or rebuild it from the exchange's order history: \`stacker run --rebuild-journal\` (the live journal: \`STACKER_MODE=live stacker run --live --rebuild-journal\`)`,
      );
    }
  });

  it('answers a data dir that does not exist with exit 2', async () => {
    const missing = join(dataDir, 'missing');
    const error = await journal(context(false), { dataDir: missing }, { env: {} }).catch((e: unknown) => e);
    expect((error as ConfigError).message).toBe(`--data-dir: folder not found: ${missing}`);
    expect(exitCodeFor(error)).toBe(EXIT.badInput);
  });

  it('refuses an unknown --mode', async () => {
    const error = await journal(context(false), { dataDir, mode: 'paper' }, { env: {} }).catch((e: unknown) => e);
    expect((error as ConfigError).message).toBe('--mode: must be one of live, dry-run, backtest (got "paper")');
  });
});

describe('registration', () => {
  /** The real command tree of `stacker`. */
  function program(io: Io): Command {
    return buildProgram(io, { json: false, verbose: false, lookupHint: undefined });
  }

  it('registers `orders` and `journal`, reading --env-file and --json given before or after the command', async () => {
    const out: string[] = [];
    const io: Io = { out: (text) => void out.push(text), err: () => undefined };
    const envFile = join(dataDir, 'stacker.env');
    writeFileSync(envFile, `STACKER_DATA_DIR=${dataDir}\nSTACKER_MODE=dry-run\n`);
    await program(io).parseAsync(['--env-file', envFile, 'orders', '--json', '--status', 'NEW'], { from: 'user' });
    expect((JSON.parse(out.join('')) as { orders: Array<{ orderId: string }> }).orders.map((o) => o.orderId)).toEqual(['1002']);
    out.length = 0;
    await program(io).parseAsync(['journal', '--env-file', envFile, '--instance', 'dca-btc', '--limit', '2', '--json'], { from: 'user' });
    expect((JSON.parse(out.join('')) as { entries: unknown[] }).entries).toHaveLength(2);
  });

  it('refuses an unknown flag through commander', async () => {
    const io: Io = { out: () => undefined, err: () => undefined };
    await expect(program(io).parseAsync(['orders', '--colour'], { from: 'user' })).rejects.toBeInstanceOf(CommanderError);
  });
});

describe('the subcommands of `stacker journal`', () => {
  /** The real CLI in this process: its exit code, stdout and stderr. */
  async function stacker(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(args, { out: (text) => void out.push(text), err: (text) => void err.push(text) });
    return { code, stdout: out.join(''), stderr: err.join('') };
  }

  /** Every long flag a help text lists, sorted. */
  const flagsOf = (help: string): string[] => [...help.matchAll(/^ {2}(?:-\w, )?(--[\w-]+)/gm)].map((m) => m[1] as string).sort();
  const GLOBALS = ['--base-url', '--env-file', '--help', '--json', '--region', '--version'];

  it('list in --help only the options each takes, beside the global ones', async () => {
    const expected: Record<string, readonly string[]> = {
      acknowledge: ['--data-dir', '--journal', '--mode'],
      resolve: ['--as', '--data-dir', '--intent', '--journal', '--mode'],
      migrate: ['--data-dir', '--mode', '--to'],
    };
    for (const [sub, own] of Object.entries(expected)) {
      const help = await stacker(['journal', sub, '--help']);
      expect(help.code).toBe(0);
      expect(flagsOf(help.stdout), sub).toEqual([...own, ...GLOBALS].sort());
    }
    // The listing itself keeps its filters.
    expect(flagsOf((await stacker(['journal', '--help'])).stdout)).toEqual(['--data-dir', '--instance', '--journal', '--limit', '--mode', '--status', ...GLOBALS].sort());
  });

  it("refuse an option of the listing they do not take, before or after their name: exit 2, naming it, nothing done", async () => {
    const given = { '--instance': 'dca-btc', '--status': 'unknown', '--limit': '5' };
    const subcommands: Record<string, readonly string[]> = {
      acknowledge: ['--data-dir', dataDir],
      resolve: ['--data-dir', dataDir, '--intent', 'x', '--as', 'done'],
      migrate: ['--data-dir', dataDir, '--to', 'postgres://nobody@127.0.0.1:1/none'],
    };
    for (const [sub, rest] of Object.entries(subcommands)) {
      for (const [flag, value] of Object.entries(given)) {
        const message = `error: unknown option '${flag}' for 'stacker journal ${sub}': it is an option of 'stacker journal' (see stacker journal ${sub} --help)\n(run with --help for usage)\n`;
        for (const args of [['journal', sub, ...rest, flag, value], ['journal', flag, value, sub, ...rest]]) {
          const result = await stacker(args);
          expect([result.code, result.stderr, result.stdout], args.join(' ')).toEqual([2, message, '']);
        }
      }
    }
  });

  it('still take the data dir and mode given before their name', async () => {
    const result = await stacker(['journal', '--data-dir', dataDir, '--mode', 'dry-run', 'acknowledge']);
    expect([result.code, result.stderr]).toEqual([0, '']);
    expect(result.stdout).toBe(`nothing to acknowledge in the dry-run journal ${join(dataDir, 'stacker-dry-run.db')}\n`);
  });
});
