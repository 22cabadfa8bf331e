import type { TradeBalance } from '../../domain/account.ts';
import { type Decimal, formatDecimal } from '../../domain/money.ts';
import { checkAll, optional, tickerName } from '../args.ts';
import type { CommandContext } from '../context.ts';
import { json, table } from '../output.ts';

export interface BalanceFlags {
  readonly ticker?: string;
  readonly trade?: boolean;
}

/**
 * `stacker balance`: the main account by default (deposits, codes, flex), `--trade` for the
 * spot balance that orders spend. Without `--ticker` the table hides zero balances (the real
 * exchange lists every asset it has); `--json` always has every asset the exchange returned.
 */
export async function balance(ctx: CommandContext, flags: BalanceFlags): Promise<void> {
  const args = checkAll({ ticker: () => optional(flags.ticker, (t) => tickerName(t)) });
  const client = await ctx.privateClient();
  if (flags.trade === true) {
    const balances =
      args.ticker === undefined ? await client.tradeBalances() : new Map([[args.ticker, await client.tradeBalance(args.ticker)]]);
    printTrade(ctx, balances, args.ticker === undefined);
  } else {
    const balances =
      args.ticker === undefined ? await client.mainBalances() : new Map([[args.ticker, await client.mainBalance(args.ticker)]]);
    printMain(ctx, balances, args.ticker === undefined);
  }
}

const byTicker = <T>(balances: ReadonlyMap<string, T>): Array<[string, T]> =>
  [...balances.entries()].sort(([a], [b]) => a.localeCompare(b));

function printMain(ctx: CommandContext, balances: ReadonlyMap<string, Decimal>, hideZero: boolean): void {
  if (ctx.json) {
    ctx.io.out(json({ account: 'main', balances: Object.fromEntries(byTicker(balances)) }));
    return;
  }
  const rows = byTicker(balances).filter(([, amount]) => !hideZero || !amount.isZero());
  ctx.io.out(table([{ header: 'TICKER' }, { header: 'MAIN BALANCE', align: 'right' }], rows.map(([t, amount]) => [t, formatDecimal(amount)])));
  footer(ctx, balances.size - rows.length);
}

function printTrade(ctx: CommandContext, balances: ReadonlyMap<string, TradeBalance>, hideZero: boolean): void {
  if (ctx.json) {
    ctx.io.out(json({ account: 'trade', balances: Object.fromEntries(byTicker(balances)) }));
    return;
  }
  const rows = byTicker(balances).filter(([, b]) => !hideZero || !(b.available.isZero() && b.freeze.isZero()));
  ctx.io.out(
    table(
      [{ header: 'TICKER' }, { header: 'AVAILABLE', align: 'right' }, { header: 'FREEZE', align: 'right' }],
      rows.map(([t, b]) => [t, formatDecimal(b.available), formatDecimal(b.freeze)]),
    ),
  );
  footer(ctx, balances.size - rows.length);
}

function footer(ctx: CommandContext, hidden: number): void {
  if (hidden > 0) ctx.io.err(`(${hidden} asset${hidden === 1 ? '' : 's'} with a zero balance not shown; --json lists all)\n`);
}
