import { type CodeRecord, maskCode } from '../../domain/account.ts';
import { InputError } from '../../domain/errors.ts';
import { formatDecimal } from '../../domain/money.ts';
import { CODE_LIMIT, CODE_OFFSET, checkAll, integerIn, optional } from '../args.ts';
import type { CommandContext } from '../context.ts';
import { json, table, utcTime } from '../output.ts';

export interface CodesFlags {
  readonly limit?: string;
  readonly offset?: string;
  readonly all?: boolean;
  readonly reveal?: boolean;
}

/**
 * `stacker codes`: the account's codes. A code value redeems money, so it is masked in every
 * output (table and JSON) unless `--reveal` is given.
 */
export async function codes(ctx: CommandContext, flags: CodesFlags): Promise<void> {
  const args = checkAll({
    limit: () => optional(flags.limit, (text) => integerIn(text, '--limit', CODE_LIMIT)),
    offset: () => optional(flags.offset, (text) => integerIn(text, '--offset', CODE_OFFSET)),
    all: () => {
      if (flags.all === true && flags.offset !== undefined) throw InputError.one('--offset', 'cannot be combined with --all (which starts at 0)');
      return flags.all === true;
    },
  });
  const client = await ctx.privateClient();
  const show = (record: CodeRecord): CodeRecord => (flags.reveal === true ? record : { ...record, code: maskCode(record.code) });

  if (args.all) {
    const records: CodeRecord[] = [];
    for await (const record of client.allCodes(args.limit === undefined ? {} : { pageSize: args.limit })) records.push(show(record));
    if (ctx.json) ctx.io.out(json({ total: records.length, codes: records }));
    else print(ctx, records, `${records.length} code${records.length === 1 ? '' : 's'}`);
    return;
  }
  const page = await client.codes({
    ...(args.limit === undefined ? {} : { limit: args.limit }),
    ...(args.offset === undefined ? {} : { offset: args.offset }),
  });
  const records = page.codes.map(show);
  if (ctx.json) {
    ctx.io.out(json({ total: page.total, limit: page.limit, offset: page.offset, codes: records }));
    return;
  }
  const range = records.length === 0 ? 'none' : `${page.offset + 1}-${page.offset + records.length}`;
  const more = page.offset + records.length < page.total ? `; next page: --offset ${page.offset + records.length}, or --all` : '';
  print(ctx, records, `codes ${range} of ${page.total}${more}`);
}

function print(ctx: CommandContext, records: readonly CodeRecord[], summary: string): void {
  ctx.io.out(
    table(
      [{ header: 'DATE (UTC)' }, { header: 'TICKER' }, { header: 'AMOUNT', align: 'right' }, { header: 'STATUS' }, { header: 'CODE' }, { header: 'EXTERNAL ID' }],
      records.map((r) => [utcTime(r.dateSec), r.ticker, formatDecimal(r.amount), r.status, r.code, r.externalId]),
    ),
  );
  ctx.io.err(`(${summary})\n`);
}
