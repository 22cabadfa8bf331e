import { type ChartSpec, type Marker, type Series, chart } from '../../backtest/report/charts.ts';
import { figure, num, page, section, table, txt } from '../../backtest/report/html.ts';
import { escapeHtml, utcMinute } from '../../backtest/report/text.ts';
import { type Decimal, formatDecimal } from '../../domain/money.ts';
import { type MarketPosition, feesNote, runningSums } from '../../report/cost-basis.ts';
import type { StoredOrder } from '../../store/journal.ts';

/**
 * `stacker report --html FILE`: the live journal drawn as the backtest's HTML page draws a run,
 * with its chart and page primitives (one self-contained file: inline CSS and SVG, no script,
 * nothing fetched). Per market: every filled buy at its average price with the cost basis as it
 * grew (fees in) and the price now; and the quote invested over time. Figures in the tables are
 * `stacker report`'s own strings.
 */
export interface LiveReportInput {
  readonly journalPath: string;
  readonly mode: string;
  readonly instance: string | undefined;
  readonly positions: readonly MarketPosition[];
  /** Every order the report read (filled buys are drawn). */
  readonly orders: readonly StoredOrder[];
  readonly prices: ReadonlyMap<string, Decimal> | null;
  /** Why there are no prices, when there are none (a backtest's journal, an exchange that did not answer). */
  readonly priceNote?: string;
  readonly generatedAtMs: number;
}

const PRICE_PLACES = 8;

export function renderLiveReportHtml(input: LiveReportInput): string {
  const title = `stacker ${input.mode}${input.instance === undefined ? '' : ` · ${input.instance}`}: what was bought`;
  const body = [
    `<header><h1>${escapeHtml(title)}</h1>`,
    `<p class="sub">Journal <code>${escapeHtml(input.journalPath)}</code> · made ${utcMinute(input.generatedAtMs)} · ${escapeHtml(feesNote(input.positions))}</p></header>`,
    section('Markets', positionsTable(input.positions)),
  ];
  for (const position of input.positions) {
    const buys = filledBuys(input.orders, position.market);
    const priceNow = input.prices?.get(position.market) ?? null;
    body.push(
      section(
        position.market,
        [
          figure(buysChart(position.market, buys, priceNow), `Each filled buy (${buys.length}) at its average price${priceNow === null ? ' and' : ','} the average cost with fees as it grew${priceNow === null ? '' : ', and the price now'}.`),
          figure(investedChart(position.market, buys), 'Quote spent so far, fees in: the cost the average cost divides.'),
        ].join('\n'),
      ),
    );
  }
  if (input.positions.length === 0) body.push(`<p>Nothing bought yet in this journal.</p>`);
  // Without prices the page must not speak of a price now: Price, Value and P&L are empty, and say why.
  const valued = input.prices === null ? `no price was read (${input.priceNote ?? 'the exchange did not answer'}): Price, Value and P&L are left empty` : "the price now is the exchange's last price when the report was made";
  body.push(`<footer>From the journal only; ${escapeHtml(valued)}.</footer>`);
  return page(title, body);
}

function positionsTable(rows: readonly MarketPosition[]): string {
  const dash = (value: string | null): string => value ?? '-';
  return table(
    [txt('Market'), num('Orders'), num('Bought'), num('Spent (fees out)'), num('Fees'), num('Avg cost (fees in)'), num('Price'), num('Value'), num('P&L'), num('P&L %')],
    rows.map((r) => [
      txt(r.market),
      num(String(r.orders)),
      num(r.baseBought),
      num(r.quoteSpent),
      num(Object.entries(r.fees).map(([asset, fee]) => `${fee} ${asset}`).join(' + ') || '0'),
      num(dash(r.averageCost)),
      num(dash(r.price)),
      num(dash(r.value)),
      num(dash(r.pnl)),
      num(dash(r.pnlPct)),
    ]),
  );
}

/** Filled buys of one market, oldest first, as the cost basis counts them. */
function filledBuys(orders: readonly StoredOrder[], market: string): StoredOrder[] {
  return orders.filter((o) => o.market === market && o.side === 'buy' && o.filledBase.gt(0)).sort((a, b) => a.createdAtSec - b.createdAtSec || (a.orderId < b.orderId ? -1 : 1));
}

function buysChart(market: string, buys: readonly StoredOrder[], priceNow: Decimal | null): string {
  const quote = market.split('_')[1] ?? '';
  const sums = runningSums(market, buys);
  const basis = buys.flatMap((buy, i) => {
    const average = sums[i]?.averageCost ?? null;
    return average === null ? [] : [{ timeMs: buy.createdAtSec * 1000, value: average }];
  });
  const markers: Marker[] = buys.map((buy) => {
    const price = buy.filledQuote.div(buy.filledBase);
    return {
      timeMs: buy.createdAtSec * 1000,
      price,
      title: `${utcMinute(buy.createdAtSec * 1000)} ${formatDecimal(buy.filledBase)} at ${formatDecimal(price.toDecimalPlaces(PRICE_PLACES, 6))} ${quote} (${buy.clientOrderId})`,
    };
  });
  const series: Series[] = [{ cssClass: 'basis-line', label: 'average cost (fees in)', points: basis, step: true }];
  const first = basis[0];
  const last = basis.at(-1);
  if (priceNow !== null && first !== undefined && last !== undefined) {
    series.push({ cssClass: 'initial-line', label: `price now ${formatDecimal(priceNow)}`, points: [{ timeMs: first.timeMs, value: priceNow }, { timeMs: last.timeMs, value: priceNow }] });
  }
  const spec: ChartSpec = { id: `chart-buys-${market}`, title: `${market}: buys and average cost`, yLabel: quote, series, markers, markerLabel: 'buy' };
  return chart(spec);
}

function investedChart(market: string, buys: readonly StoredOrder[]): string {
  const quote = market.split('_')[1] ?? '';
  const sums = runningSums(market, buys);
  const points = buys.map((buy, i) => ({ timeMs: buy.createdAtSec * 1000, value: sums[i]?.cost ?? buy.filledQuote }));
  return chart({ id: `chart-invested-${market}`, title: `${market}: ${quote} invested`, yLabel: quote, series: [{ cssClass: 'equity-line', label: `${quote} spent, fees in`, points, step: true }] });
}
