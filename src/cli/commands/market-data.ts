import type { MarketRules } from '../../domain/market.ts';
import { formatDecimal } from '../../domain/money.ts';
import { checkAll, marketName, optional } from '../args.ts';
import type { CommandContext } from '../context.ts';
import { fields, json, table, yesNo } from '../output.ts';

/** Public commands: no credentials needed. */

export async function ping(ctx: CommandContext): Promise<void> {
  const client = await ctx.publicClient();
  const settings = await ctx.settings();
  const startedMs = performance.now();
  await client.ping();
  const latencyMs = Math.round(performance.now() - startedMs);
  const baseUrl = (await import('../../api/client.ts')).resolveBaseUrl(settings.endpoint);
  if (ctx.json) ctx.io.out(json({ pong: true, baseUrl, latencyMs }));
  else ctx.io.out(`pong from ${baseUrl} in ${latencyMs} ms\n`);
}

export async function markets(ctx: CommandContext, flags: { market?: string }): Promise<void> {
  const args = checkAll({ market: () => optional(flags.market, (m) => marketName(m)) });
  const client = await ctx.publicClient();
  const list = args.market === undefined ? await client.markets() : [await client.market(args.market)];
  const sorted = [...list].sort((a, b) => a.name.localeCompare(b.name));
  if (ctx.json) {
    ctx.io.out(json(sorted));
    return;
  }
  ctx.io.out(
    table(
      [
        { header: 'MARKET' },
        { header: 'BASE DECIMALS', align: 'right' },
        { header: 'QUOTE DECIMALS', align: 'right' },
        { header: 'MIN AMOUNT', align: 'right' },
        { header: 'MIN TOTAL', align: 'right' },
        { header: 'MAX TOTAL', align: 'right' },
        { header: 'MAKER FEE %', align: 'right' },
        { header: 'TAKER FEE %', align: 'right' },
        { header: 'TRADING' },
      ],
      sorted.map(marketRow),
    ),
  );
}

function marketRow(m: MarketRules): string[] {
  return [
    m.name,
    String(m.basePrecision),
    String(m.quotePrecision),
    formatDecimal(m.minBaseAmount),
    formatDecimal(m.minQuoteTotal),
    m.maxQuoteTotal === null ? 'none' : formatDecimal(m.maxQuoteTotal),
    formatDecimal(m.makerFeePct),
    formatDecimal(m.takerFeePct),
    yesNo(m.tradesEnabled),
  ];
}

export async function ticker(ctx: CommandContext, flags: { market: string }): Promise<void> {
  const args = checkAll({ market: () => marketName(flags.market) });
  const client = await ctx.publicClient();
  const t = await client.ticker(args.market);
  if (ctx.json) {
    ctx.io.out(json(t));
    return;
  }
  ctx.io.out(
    fields([
      ['market', t.market],
      ['last price', formatDecimal(t.lastPrice)],
      ['24h change %', formatDecimal(t.changePct)],
      ['24h base volume', formatDecimal(t.baseVolume24h)],
      ['24h quote volume', formatDecimal(t.quoteVolume24h)],
      ['frozen', yesNo(t.frozen)],
    ]),
  );
}
