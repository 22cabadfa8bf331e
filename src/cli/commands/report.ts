import { InputError } from '../../domain/errors.ts';
import { momentFlag } from '../moment-flag.ts';
import type { Decimal } from '../../domain/money.ts';
import { checkAll, nonEmpty, optional } from '../args.ts';
import type { CommandContext } from '../context.ts';
import { json, table } from '../output.ts';
import { PAGE_MARK } from '../../backtest/report/page-mark.ts';
import { reportFile, writeOutputFile } from '../file-flags.ts';
import { withJournal } from './journal.ts';
import { DEFAULT_ACCOUNT } from '../../domain/account.ts';
import { type PaperBalances, paperBalances } from '../../sim/paper-exchange.ts';
import { foldJournalOrders } from '../../report/report-fold.ts';
import type { StoredOrder } from '../../store/journal.ts';

export interface ReportFlags {
  readonly dataDir?: string;
  readonly mode?: string;
  /** A journal file named by its path, instead of the data dir's. */
  readonly journal?: string;
  readonly instance?: string;
  readonly account?: string;
  /** Only orders the exchange took from this moment (a date: its first moment, UTC)… */
  readonly from?: string;
  /** …through this one (a date: through its last moment, UTC). */
  readonly to?: string;
  readonly csv?: boolean;
  /** Also write the HTML page here. */
  readonly html?: string;
  readonly envFile?: string | undefined;
}

/**
 * `stacker report`: per market, what the journal says was bought (orders, base, quote, fees,
 * average cost with fees) and what it is worth at the exchange's last price now, with P&L; or
 * `--csv`, one line per filled order for a tax tool; `--html FILE` also writes the same figures
 * as a page with charts. Reads the journal only; the price comes
 * from the public ticker (no key).
 */
export async function report(ctx: CommandContext, flags: ReportFlags): Promise<void> {
  const args = checkAll({
    instance: () => optional(flags.instance, (text) => nonEmpty(text, '--instance', 'an instance name')),
    account: () => optional(flags.account, (text) => nonEmpty(text, '--account', 'an account name')),
    fromMs: () => optional(flags.from, (text) => momentFlag(text, '--from')),
    toMs: () => optional(flags.to, (text) => momentFlag(text, '--to', 'end')),
    csv: () => {
      if (flags.csv === true && ctx.json) throw InputError.one('--csv', 'is its own output; not with --json');
      return flags.csv === true;
    },
    html: () => {
      if (flags.html !== undefined && flags.csv === true) throw InputError.one('--html', 'is written beside the table, not with --csv');
      return optional(flags.html, (text) => reportFile(text, '--html', PAGE_MARK));
    },
  });
  if (args.fromMs !== undefined && args.toMs !== undefined && args.fromMs > args.toMs) throw InputError.one('--from', 'must not be after --to');
  const { feesNote } = await import('../../report/cost-basis.ts');
  await withJournal(flags, {}, async (store, label) => {
    // The period, by when the exchange took each order (what a tax year counts), as --csv shows it;
    // applied as the orders are read, so a year of a journal of five holds a fifth of them.
    const inPeriod = (order: StoredOrder): boolean => {
      const atMs = order.createdAtSec * 1000;
      return (args.fromMs === undefined || atMs >= args.fromMs) && (args.toMs === undefined || atMs <= args.toMs);
    };
    const fold = await foldJournalOrders(store, { csvRows: args.csv, buys: args.html !== undefined }, (order) => (args.instance === undefined || order.instance === args.instance) && (args.account === undefined || (order.account ?? DEFAULT_ACCOUNT) === args.account) && inPeriod(order));
    if (args.csv) {
      ctx.io.out(fold.csv());
      return;
    }
    const accountsRead = fold.accounts();
    // A backtest's orders are history replayed: today's prices would value them at a moment the run never reached, and ask the live exchange for it.
    const priced =
      label.mode === 'backtest'
        ? { of: () => null, shared: null, notes: ["a backtest's journal is not valued at today's prices: its own report (stacker backtest --json or --report) values it at the period's end"] }
        : await accountPrices(ctx, accountsRead);
    const priceNote = priced.notes.join('; ');
    // A paper account's cash and coins live in its journal: what no exchange can be asked for.
    const paper = label.mode === 'dry-run' ? await paperAccounts(store, args.account === undefined ? [...new Set([DEFAULT_ACCOUNT, ...accountsRead])] : [args.account]) : [];
    // All accounts together take one exchange's prices only when their orders all went to one.
    const prices = priced.shared;
    const rows = fold.positions(prices);
    const byAccount = fold.positionsByAccount(priced.of);
    if (args.html !== undefined) {
      const { renderLiveReportHtml } = await import('./report-html.ts');
      const page = renderLiveReportHtml({ journalPath: label.path, mode: label.mode, instance: args.instance, positions: rows, orders: fold.buys(), prices, ...(priceNote === '' ? {} : { priceNote }), generatedAtMs: Date.now() });
      // The page holds what the journal does, kept 0600: a backtest's is simulated and written as any file.
      writeOutputFile(args.html, page, '--html', label.mode === 'backtest' ? 'umask' : 'owner');
    }
    if (ctx.json) {
      ctx.io.out(
        json({
          journal: label.path,
          mode: label.mode,
          ...(args.instance === undefined ? {} : { instance: args.instance }),
          ...(args.account === undefined ? {} : { account: args.account }),
          ...(args.fromMs === undefined ? {} : { from: new Date(args.fromMs).toISOString() }),
          ...(args.toMs === undefined ? {} : { to: new Date(args.toMs).toISOString() }),
          markets: rows,
          accounts: byAccount,
          instances: fold.instances(),
          ...(paper.length === 0 ? {} : { paperAccounts: paper }),
          ...(priceNote === '' ? {} : { note: priceNote }),
        }),
      );
      return;
    }
    if (rows.length === 0) {
      const who = [
        args.instance === undefined ? '' : ` by ${args.instance}`,
        args.account === undefined ? '' : ` on account ${args.account}`,
        args.fromMs === undefined ? '' : ` from ${new Date(args.fromMs).toISOString()}`,
        args.toMs === undefined ? '' : ` through ${new Date(args.toMs).toISOString()}`,
      ].join('');
      ctx.io.err(`nothing bought${who} in the ${label.mode} journal ${label.path}\n`);
      for (const line of paperLines(paper)) ctx.io.out(line);
      // The page was written all the same (it says so too): the user asked for it and looks for this line.
      if (args.html !== undefined) ctx.io.out(`report: ${args.html}\n`);
      return;
    }
    const dash = (value: string | null): string => value ?? '-';
    ctx.io.out(
      table(
        [
          { header: 'ACCOUNT' },
          { header: 'MARKET' },
          { header: 'ORDERS', align: 'right' },
          { header: 'BOUGHT', align: 'right' },
          { header: 'SPENT', align: 'right' },
          { header: 'FEES', align: 'right' },
          { header: 'AVG COST', align: 'right' },
          { header: 'PRICE', align: 'right' },
          { header: 'VALUE', align: 'right' },
          { header: 'P&L', align: 'right' },
          { header: 'P&L %', align: 'right' },
        ],
        byAccount.flatMap(({ account, markets }) => markets.map((r) => [
          account,
          r.market,
          String(r.orders),
          r.baseBought,
          r.quoteSpent,
          Object.entries(r.fees).map(([asset, fee]) => `${fee} ${asset}`).join(' + ') || '0',
          dash(r.averageCost),
          dash(r.price),
          dash(r.value),
          dash(r.pnl),
          dash(r.pnlPct),
        ])),
      ),
    );
    if (args.account === undefined && accountsRead.length > 1) {
      ctx.io.out('\nall accounts together:\n');
      ctx.io.out(table([{ header: 'MARKET' }, { header: 'ORDERS', align: 'right' }, { header: 'BOUGHT', align: 'right' }, { header: 'SPENT', align: 'right' }, { header: 'VALUE', align: 'right' }, { header: 'P&L', align: 'right' }], rows.map((r) => [r.market, String(r.orders), r.baseBought, r.quoteSpent, dash(r.value), dash(r.pnl)])));
    }
    ctx.io.out(`\n${table([{ header: 'INSTANCE' }, { header: 'ACCOUNT' }, { header: 'ORDERS', align: 'right' }], fold.instances().map((r) => [r.instance, r.account, String(r.orders)]))}`);
    for (const line of paperLines(paper)) ctx.io.out(line);
    ctx.io.out(`\n${label.mode} journal ${label.path}; ${feesNote(rows)}${priceNote === '' ? '' : `; ${priceNote}`}\n`);
    if (args.html !== undefined) ctx.io.out(`report: ${args.html}\n`);
  });
}

/**
 * The last prices each account's orders are valued at: its own exchange's public tickers (its
 * endpoint as the daemon reads it), each exchange asked once. `shared` is the one exchange's
 * prices when every account is on it, else null (a position summed over two exchanges has no one
 * price). What could not be read, or an account the env no longer sets up, is said in `notes`.
 */
async function accountPrices(
  ctx: CommandContext,
  accountNames: readonly string[],
): Promise<{ of: (account: string) => ReadonlyMap<string, Decimal> | null; shared: ReadonlyMap<string, Decimal> | null; notes: string[] }> {
  const notes: string[] = [];
  const originOf = new Map<string, string>();
  for (const account of accountNames) {
    const { origin, unknown } = await ctx.endpointOf(account);
    originOf.set(account, origin);
    if (unknown) notes.push(`account ${account} is not set up in the env any more: valued at ${origin}'s prices`);
  }
  const byOrigin = new Map<string, ReadonlyMap<string, Decimal> | null>();
  const origins = new Set(originOf.values());
  for (const origin of origins) {
    try {
      const client = await ctx.publicClientAt(origin);
      byOrigin.set(origin, new Map([...(await client.tickers())].map(([market, ticker]) => [market, ticker.lastPrice])));
    } catch (error) {
      byOrigin.set(origin, null);
      const whose = origins.size > 1 ? ` at ${origin}` : '';
      notes.push(`prices${whose} could not be read (${error instanceof Error ? error.message : String(error)}): values and P&L are left out`);
    }
  }
  const [only] = origins;
  return {
    of: (account) => byOrigin.get(originOf.get(account) ?? '') ?? null,
    shared: origins.size === 1 && only !== undefined ? (byOrigin.get(only) ?? null) : null,
    notes: origins.size > 1 ? [...notes, 'all accounts together are not valued: their orders went to different exchanges (each account is, above)'] : notes,
  };
}

/** A dry-run journal's paper accounts, as the daemon left them: each named account that has one. */
async function paperAccounts(store: { accountState(account?: string): Promise<string | null> }, names: readonly string[]): Promise<Array<{ account: string } & PaperBalances>> {
  const out: Array<{ account: string } & PaperBalances> = [];
  for (const account of names) {
    const saved = await store.accountState(account);
    if (saved !== null) out.push({ account, ...paperBalances(saved) });
  }
  return out;
}

function paperLines(paper: ReadonlyArray<{ account: string } & PaperBalances>): string[] {
  const amounts = (balances: Readonly<Record<string, string>>): string =>
    Object.entries(balances)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([asset, amount]) => `${amount} ${asset}`)
      .join(', ') || 'nothing';
  return paper.map(({ account, trade, main, startedFrom }) => `\npaper account${account === DEFAULT_ACCOUNT ? '' : ` ${account}`}: trade ${amounts(trade)}; main ${amounts(main)} (started from ${startedFrom || 'an empty wallet'})\n`);
}
