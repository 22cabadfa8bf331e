import { type Decimal, ZERO, formatDecimal } from '../domain/money.ts';
import type { Order } from '../domain/order.ts';
import type { StoredOrder } from '../store/journal.ts';

/**
 * What the journal says was bought, per market, and what it is worth now: the live answer to
 * "what did I pay on average, and what is it worth". Exact decimals; values and prices rounded
 * to 8 decimals and percentages to 4 (half-even) when written, as in the backtest report.
 */
export interface MarketPosition {
  market: string;
  /** Orders that filled anything. */
  orders: number;
  baseBought: string;
  /** Quote paid for it, fees not included. */
  quoteSpent: string;
  /** Fees per asset. */
  fees: Record<string, string>;
  /** (quote spent + fees in quote) / (base bought − fees in base): the average cost with fees; null when nothing was bought. */
  averageCost: string | null;
  /** The market's last price now; null when it could not be read. */
  price: string | null;
  /** (base bought − fees in base) × price. */
  value: string | null;
  /** value − (quote spent + fees in quote). */
  pnl: string | null;
  pnlPct: string | null;
}

const VALUE_PLACES = 8;
const PCT_PLACES = 4;

export function positions(orders: readonly StoredOrder[], prices: ReadonlyMap<string, Decimal> | null): MarketPosition[] {
  // One pass, each order pushed once: a copy of its market's list per order made a journal of 50k
  // orders take 13 s here, every /api/status refresh.
  const byMarket = Map.groupBy(
    orders.filter(countsInPosition),
    (order) => order.market,
  );
  return [...byMarket.keys()].sort().map((market) => {
    const filled = byMarket.get(market) ?? [];
    return positionOf(market, filled.length, sumFills(market, filled), prices?.get(market) ?? null);
  });
}

/** Whether an order counts in a position: a buy that filled something. */
export function countsInPosition(order: StoredOrder): boolean {
  return order.side === 'buy' && order.filledBase.gt(0);
}

/** One market's position from its sums over `orders` filled buys, valued at `price` (null: not known). */
export function positionOf(market: string, orders: number, sums: FillSums, price: Decimal | null): MarketPosition {
  const value = price === null ? null : sums.held.mul(price);
  const pnl = value === null ? null : value.sub(sums.cost);
  return {
    market,
    orders,
    baseBought: formatDecimal(sums.bought),
    quoteSpent: formatDecimal(sums.spent),
    fees: Object.fromEntries([...sums.fees].sort(([a], [b]) => (a < b ? -1 : 1)).map(([asset, amount]) => [asset, formatDecimal(amount)])),
    averageCost: sums.averageCost === null ? null : round(sums.averageCost, VALUE_PLACES),
    price: price === null ? null : formatDecimal(price),
    value: value === null ? null : round(value, VALUE_PLACES),
    pnl: pnl === null ? null : round(pnl, VALUE_PLACES),
    pnlPct: pnl === null || sums.cost.isZero() ? null : round(pnl.div(sums.cost).mul(100), PCT_PLACES),
  };
}

/**
 * What the average cost says of the fees: those in a market's own assets are in it; one paid in
 * another asset (WBT, say) has no price here, so it is listed and not counted, and said so: the
 * footer claimed every fee was counted.
 */
export function feesNote(positions: readonly MarketPosition[]): string {
  const outside = new Set<string>();
  for (const position of positions) {
    const own = new Set(assetsOf(position.market));
    for (const asset of Object.keys(position.fees)) if (!own.has(asset)) outside.add(asset);
  }
  if (outside.size === 0) return 'average cost counts the fees';
  return `average cost counts the fees paid in each market's own assets; those paid in ${[...outside].sort().join(', ')} are listed, not counted (no price to count them at)`;
}

/** What buys on one market add up to, exactly: the figures of a position and of a day's summary. */
export interface FillSums {
  readonly bought: Decimal;
  /** Quote paid, fees not included. */
  readonly spent: Decimal;
  readonly fees: ReadonlyMap<string, Decimal>;
  /** spent + fees paid in the quote asset. */
  readonly cost: Decimal;
  /** bought − fees paid in the base asset: what the account holds of it. */
  readonly held: Decimal;
  /** cost / held; null when nothing is held. */
  readonly averageCost: Decimal | null;
}

/**
 * The sums over every order. The totals only: no sums after each order (a map of fees and a
 * division each), which made a daemon's status refresh over 50k orders spend most of its time here.
 */
export function sumFills(market: string, orders: readonly Order[]): FillSums {
  let bought = ZERO;
  let spent = ZERO;
  const fees = new Map<string, Decimal>();
  for (const order of orders) {
    bought = bought.add(order.filledBase);
    spent = spent.add(order.filledQuote);
    addFee(fees, order);
  }
  return fillSums(market, bought, spent, fees);
}

/** The sums after each order, in the order given: a cost basis as it grew (the HTML report draws it). */
export function runningSums(market: string, orders: readonly Order[]): FillSums[] {
  const out: FillSums[] = [];
  for (const order of orders) {
    const before = out.at(-1);
    const fees = new Map(before?.fees ?? []);
    addFee(fees, order);
    out.push(fillSums(market, (before?.bought ?? ZERO).add(order.filledBase), (before?.spent ?? ZERO).add(order.filledQuote), fees));
  }
  return out;
}

function addFee(fees: Map<string, Decimal>, order: Order): void {
  if (order.fee.isZero()) return;
  const asset = order.feeAsset ?? '?';
  fees.set(asset, (fees.get(asset) ?? ZERO).add(order.fee));
}

/** A market's base and quote, as its name (`BTC_USDT`) says them. */
function assetsOf(market: string): [base: string, quote: string] {
  return market.split('_') as [string, string];
}

export function fillSums(market: string, bought: Decimal, spent: Decimal, fees: ReadonlyMap<string, Decimal>): FillSums {
  const [base, quote] = assetsOf(market);
  const cost = spent.add(fees.get(quote) ?? ZERO);
  const held = bought.sub(fees.get(base) ?? ZERO);
  return { bought, spent, fees, cost, held, averageCost: held.gt(0) ? cost.div(held) : null };
}

/** One row per filled order, oldest first: what a tax tool imports. The journal keeps each order's total fill, not its deals. */
export function fillsCsv(orders: readonly StoredOrder[]): string {
  const rows = orders.filter((o) => o.filledBase.gt(0)).sort((a, b) => a.createdAtSec - b.createdAtSec || (a.orderId < b.orderId ? -1 : 1));
  return `${[fillsCsvHeader(), ...rows.map(fillsCsvRow)].join('\n')}\n`;
}

export function fillsCsvHeader(): string {
  return 'time,market,side,base,quote,price,fee,fee_asset,order_id,client_order_id';
}

/** The CSV line of one filled order (fillsCsv's row). */
export function fillsCsvRow(o: StoredOrder): string {
  const price = round(o.filledQuote.div(o.filledBase), VALUE_PLACES);
  return [new Date(Math.round(o.createdAtSec * 1000)).toISOString(), o.market, o.side, formatDecimal(o.filledBase), formatDecimal(o.filledQuote), price, formatDecimal(o.fee), o.feeAsset ?? '', o.orderId, o.clientOrderId].map(csvCell).join(',');
}

function round(value: Decimal, places: number): string {
  return formatDecimal(value.toDecimalPlaces(places, 6 /* ROUND_HALF_EVEN */));
}

/**
 * Quoted when it holds a comma, a quote or a line break (RFC 4180). A text cell starting as a
 * spreadsheet formula (=, +, -, @, tab or carriage return) is made plain text with a leading
 * apostrophe: the file is opened in spreadsheets and tax tools. Numbers never start so: they
 * are positive, and stay untouched.
 */
function csvCell(text: string): string {
  const plain = /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
  return /[",\n\r]/.test(plain) ? `"${plain.replaceAll('"', '""')}"` : plain;
}
