import { type Decimal, ZERO, isAboveZero, roughNumber } from '../../domain/money.ts';

/**
 * The facts of a backtest folded as they happen: every figure the report writes is a sum, a
 * count, a first or last, a running peak or a bounded sample of them, so a run keeps the same
 * few kilobytes whether it has a hundred slots or a hundred thousand. Sums are exact (Decimal,
 * 60 significant digits), so the order facts arrive in changes no figure; where the report
 * shows one fact among several (the first message of a reason, the orders shown at each end of
 * the table), the choice follows the journal's order (time, then instance and intent) and not
 * the order of arrival. Account samples must arrive in time order: a drawdown is a walk.
 */

/** One order the engine placed (buys only: stacker never sells). */
export interface ReportOrder {
  instance: string;
  slotTimeMs: number;
  clientOrderId: string;
  market: string;
  /** Domain OrderStatus: FILLED, PARTIAL_FILLED, CANCELED, ... */
  status: string;
  /** Base asked. */
  amount: Decimal;
  filledBase: Decimal;
  /** Quote paid for the filled base, fee not included. */
  filledQuote: Decimal;
  fee: Decimal;
  feeAsset: string | null;
  /** When the fill happened (open time of the filling candle). The slot time when absent. */
  fillTimeMs?: number;
}

/** A decision the guards refused before anything was sent. */
export interface ReportRefusal {
  instance: string;
  slotTimeMs: number;
  reason: string;
  message: string;
}

export interface ReportFlexOp {
  instance: string;
  slotTimeMs: number;
  plan: string;
  ticker: string;
  amount: Decimal;
  status: 'done' | 'refused' | 'failed';
}

export interface EquityPoint {
  timeMs: number;
  /** Market close/open at that time. */
  price: Decimal;
  /** Quote held + base held × price (each main + trade + flex): what the account is worth. */
  value: Decimal;
}

/** Where a fact sits in the journal: ties between facts are broken as the journal orders them. */
export interface FactPlace {
  readonly slotTimeMs: number;
  readonly instance: string;
  readonly index: number;
}

/** Oldest first; at the same time, as the report always listed them (instance, then intent, descending). */
export function compareFactPlaces(a: FactPlace, b: FactPlace): number {
  return a.slotTimeMs - b.slotTimeMs || (a.instance < b.instance ? 1 : a.instance > b.instance ? -1 : 0) || b.index - a.index;
}

export interface OrderTotals {
  orders: number;
  filled: number;
  base: Decimal;
  quote: Decimal;
}

export interface InstanceFacts extends OrderTotals {
  refusals: number;
}

/** What a UTC year or month saw: its filled buys and the last price seen in it. */
export interface PeriodFacts {
  quote: Decimal;
  base: Decimal;
  /** Fees paid in the quote asset. */
  fees: Decimal;
  /** Fees paid in the base asset (taken off what was bought). */
  baseFees: Decimal;
  lastPrice: Decimal;
  /** -1 until a price is seen. */
  lastTimeMs: number;
}

export interface ReasonFacts {
  reason: string;
  count: number;
  firstTimeMs: number;
  lastTimeMs: number;
  byYear: Map<string, number>;
  /** The message of the reason's first refusal (journal order). */
  firstMessage: string;
  firstPlace: FactPlace;
}

export interface DrawdownFacts {
  samples: number;
  peak: EquityPoint | null;
  max: { peak: EquityPoint; trough: EquityPoint; amount: Decimal } | null;
  maxPct: { peak: EquityPoint; trough: EquityPoint; amount: Decimal } | null;
}

/** A filled order as the charts draw it: its fill time and its own average price. */
export interface Buy {
  timeMs: number;
  price: Decimal;
  base: Decimal;
  quote: Decimal;
  instance: string;
  clientOrderId: string;
}

/** An account sample as sketched: its value as a float ranks it among its bucket's samples. */
type SketchedPoint = EquityPoint & { readonly rank: number };

/** A buy while it is sketched: a float rank in place of the exact price. */
type SketchedBuy = Omit<Buy, 'price'> & { readonly rank: number };

/** Time buckets a chart series is kept in; each keeps its first, lowest, highest and last point (at most 1728 points: a chart draws about 1730 without thinning again). */
export const SKETCH_BUCKETS = 432;

/** Which of the SKETCH_BUCKETS equal spans of [fromMs, fromMs + spanMs) a time falls in (clamped to the ends). */
function bucketOf(timeMs: number, fromMs: number, spanMs: number): number {
  return Math.min(SKETCH_BUCKETS - 1, Math.max(0, Math.floor(((timeMs - fromMs) / spanMs) * SKETCH_BUCKETS)));
}

/**
 * A long series kept in bounded memory for drawing: the span is cut into equal time buckets,
 * and each keeps its first, lowest, highest and last point (so spikes survive, as the chart's
 * own thinning keeps them).
 */
export class SeriesSketch<T> {
  readonly #fromMs: number;
  readonly #spanMs: number;
  readonly #timeOf: (item: T) => number;
  readonly #less: (a: T, b: T) => boolean;
  readonly #buckets = new Map<number, { first: T; low: T; high: T; last: T }>();
  #count = 0;

  constructor(fromMs: number, toMs: number, timeOf: (item: T) => number, less: (a: T, b: T) => boolean) {
    this.#fromMs = fromMs;
    this.#spanMs = Math.max(1, toMs - fromMs);
    this.#timeOf = timeOf;
    this.#less = less;
  }

  add(item: T): void {
    this.#count += 1;
    const timeMs = this.#timeOf(item);
    const at = bucketOf(timeMs, this.#fromMs, this.#spanMs);
    const bucket = this.#buckets.get(at);
    if (bucket === undefined) {
      this.#buckets.set(at, { first: item, low: item, high: item, last: item });
      return;
    }
    if (timeMs < this.#timeOf(bucket.first)) bucket.first = item;
    if (timeMs >= this.#timeOf(bucket.last)) bucket.last = item;
    if (this.#less(item, bucket.low)) bucket.low = item;
    if (this.#less(bucket.high, item)) bucket.high = item;
  }

  /** How many points were added. */
  get count(): number {
    return this.#count;
  }

  /** The kept points, time-ascending, each once. */
  points(): T[] {
    const out: T[] = [];
    for (const at of [...this.#buckets.keys()].sort((a, b) => a - b)) {
      const { first, low, high, last } = this.#buckets.get(at) as { first: T; low: T; high: T; last: T };
      const kept = [...new Set([first, low, high, last])].sort((a, b) => this.#timeOf(a) - this.#timeOf(b));
      out.push(...kept);
    }
    return out;
  }
}

/** The running cost basis (fees in), kept per time bucket as sums so arrival order does not matter. */
export class BasisSketch {
  readonly #fromMs: number;
  readonly #spanMs: number;
  readonly #buckets = new Map<number, { quote: Decimal; base: Decimal; lastTimeMs: number }>();

  constructor(fromMs: number, toMs: number) {
    this.#fromMs = fromMs;
    this.#spanMs = Math.max(1, toMs - fromMs);
  }

  add(buy: Pick<Buy, 'timeMs' | 'base' | 'quote'>): void {
    const at = bucketOf(buy.timeMs, this.#fromMs, this.#spanMs);
    const bucket = this.#buckets.get(at);
    if (bucket === undefined) this.#buckets.set(at, { quote: buy.quote, base: buy.base, lastTimeMs: buy.timeMs });
    else {
      bucket.quote = bucket.quote.add(buy.quote);
      bucket.base = bucket.base.add(buy.base);
      bucket.lastTimeMs = Math.max(bucket.lastTimeMs, buy.timeMs);
    }
  }

  /** Quote spent so far ÷ base bought so far, at the last buy of each bucket. */
  points(): Array<{ timeMs: number; value: Decimal }> {
    let quote = ZERO;
    let base = ZERO;
    const out: Array<{ timeMs: number; value: Decimal }> = [];
    for (const at of [...this.#buckets.keys()].sort((a, b) => a - b)) {
      const bucket = this.#buckets.get(at) as { quote: Decimal; base: Decimal; lastTimeMs: number };
      quote = quote.add(bucket.quote);
      base = base.add(bucket.base);
      if (base.gt(0)) out.push({ timeMs: bucket.lastTimeMs, value: quote.div(base) });
    }
    return out;
  }
}

/** Fee rows whose asset the exchange did not name are kept under this key, never dropped. */
export const UNKNOWN_ASSET = '?';

/** Orders shown at each end of the report's table. */
export const ORDERS_SHOWN_EACH_END = 25;

interface PlacedOrder {
  readonly order: ReportOrder;
  readonly place: FactPlace;
}

export interface RunFactsOptions {
  readonly base: string;
  readonly quote: string;
  /** The run's span: periods' ends, chart buckets. */
  readonly fromMs: number;
  readonly toMs: number;
}

/** The fold itself. The driver adds what the journal recorded and what the account was worth; build.ts reads. */
export class RunFacts {
  readonly base: string;
  readonly quote: string;
  readonly fromMs: number;
  readonly toMs: number;

  readonly byStatus = new Map<string, number>();
  /** Fees per asset; a fee whose asset the exchange did not name is kept under UNKNOWN_ASSET. */
  readonly fees = new Map<string, Decimal>();
  readonly byInstance = new Map<string, InstanceFacts>();
  /** Per UTC month; a year is the sum of its months (`years`), worked out when read. */
  readonly months = new Map<string, PeriodFacts>();

  refusalCount = 0;
  readonly byReason = new Map<string, ReasonFacts>();
  /**
   * The first and last slots refused for insufficient funds, how many were (a slot counts once:
   * a transfer refused for main's funds and the buy it was to fund are one slot that ran out),
   * and how many buys still filled after the first.
   */
  ranOut: { atMs: number; lastAtMs: number; count: number; filledAfter: number } | null = null;
  /** The slot the last insufficient-funds refusal was of: a slot's refusals are folded together. */
  #ranOutSlot: string | null = null;

  flexCount = 0;
  readonly flexByStatus = new Map<string, number>();

  readonly drawdown: DrawdownFacts = { samples: 0, peak: null, max: null, maxPct: null };
  readonly equity: SeriesSketch<SketchedPoint>;
  readonly drawdownCurve: SeriesSketch<{ timeMs: number; pct: number }>;
  readonly #buys: SeriesSketch<SketchedBuy>;
  readonly basis: BasisSketch;

  readonly #head: PlacedOrder[] = [];
  readonly #tail: PlacedOrder[] = [];
  #lastSampleMs = Number.NEGATIVE_INFINITY;

  constructor(options: RunFactsOptions) {
    this.base = options.base;
    this.quote = options.quote;
    this.fromMs = options.fromMs;
    this.toMs = options.toMs;
    this.equity = new SeriesSketch(options.fromMs, options.toMs, (p) => p.timeMs, (a, b) => a.rank < b.rank);
    this.drawdownCurve = new SeriesSketch(options.fromMs, options.toMs, (p) => p.timeMs, (a, b) => a.pct < b.pct);
    this.#buys = new SeriesSketch(options.fromMs, options.toMs, (b) => b.timeMs, (a, b) => a.rank < b.rank);
    this.basis = new BasisSketch(options.fromMs, options.toMs);
  }

  addOrder(order: ReportOrder, place: FactPlace): void {
    const filled = isAboveZero(order.filledBase);
    addTotals(this.#instance(order.instance), order, filled);
    this.byStatus.set(order.status, (this.byStatus.get(order.status) ?? 0) + 1);
    if (!order.fee.isZero()) {
      const asset = order.feeAsset ?? UNKNOWN_ASSET;
      this.fees.set(asset, (this.fees.get(asset) ?? ZERO).add(order.fee));
    }
    this.#keepForTable({ order, place });
    if (!filled) return;
    // Money came back (a transfer, a cheaper price, a new period's budget): the run did not end there.
    if (this.ranOut !== null && order.slotTimeMs > this.ranOut.atMs) this.ranOut.filledAfter += 1;
    const timeMs = order.fillTimeMs ?? order.slotTimeMs;
    const row = this.#period(this.months, monthOf(timeMs));
    row.quote = row.quote.add(order.filledQuote);
    row.base = row.base.add(order.filledBase);
    if (order.feeAsset === this.quote) row.fees = row.fees.add(order.fee);
    if (order.feeAsset === this.base) row.baseFees = row.baseFees.add(order.fee);
    // The sketch picks a bucket's cheapest and dearest buys by a float (a pixel's worth); the
    // exact average price is worked out only for the buys it keeps.
    const buy: SketchedBuy = { timeMs, rank: roughNumber(order.filledQuote) / roughNumber(order.filledBase), base: order.filledBase, quote: order.filledQuote, instance: order.instance, clientOrderId: order.clientOrderId };
    this.#buys.add(buy);
    // Fees in, as the report's average cost is: a fee in quote paid on top, one in base taken off what was bought.
    this.basis.add({
      timeMs,
      quote: order.feeAsset === this.quote ? order.filledQuote.add(order.fee) : order.filledQuote,
      base: order.feeAsset === this.base ? order.filledBase.sub(order.fee) : order.filledBase,
    });
  }

  addRefusal(refusal: ReportRefusal, place: FactPlace): void {
    this.refusalCount += 1;
    this.#instance(refusal.instance).refusals += 1;
    const year = yearOf(refusal.slotTimeMs);
    const seen = this.byReason.get(refusal.reason);
    if (seen === undefined) {
      this.byReason.set(refusal.reason, {
        reason: refusal.reason,
        count: 1,
        firstTimeMs: refusal.slotTimeMs,
        lastTimeMs: refusal.slotTimeMs,
        byYear: new Map([[year, 1]]),
        firstMessage: refusal.message,
        firstPlace: place,
      });
    } else {
      seen.count += 1;
      seen.firstTimeMs = Math.min(seen.firstTimeMs, refusal.slotTimeMs);
      seen.lastTimeMs = Math.max(seen.lastTimeMs, refusal.slotTimeMs);
      seen.byYear.set(year, (seen.byYear.get(year) ?? 0) + 1);
      if (compareFactPlaces(place, seen.firstPlace) < 0) {
        seen.firstMessage = refusal.message;
        seen.firstPlace = place;
      }
    }
    const slot = `${refusal.slotTimeMs} ${refusal.instance}`;
    if (refusal.reason === 'insufficient-funds' && slot !== this.#ranOutSlot) {
      this.#ranOutSlot = slot;
      const was = this.ranOut;
      this.ranOut = {
        atMs: Math.min(was?.atMs ?? refusal.slotTimeMs, refusal.slotTimeMs),
        lastAtMs: Math.max(was?.lastAtMs ?? refusal.slotTimeMs, refusal.slotTimeMs),
        count: (was?.count ?? 0) + 1,
        filledAfter: was?.filledAfter ?? 0,
      };
    }
  }

  addFlex(op: ReportFlexOp): void {
    this.flexCount += 1;
    this.flexByStatus.set(op.status, (this.flexByStatus.get(op.status) ?? 0) + 1);
  }

  /**
   * What the account was worth at a moment; samples come in time order. It is drawn (equity
   * chart, the period's price) and walked for the drawdown.
   */
  addSample(point: EquityPoint): void {
    this.#inOrder(point.timeMs);
    // For drawing (which sample of a bucket is lowest, a drawdown's pixel) and for ruling out: one float a sample.
    const rank = roughNumber(point.value);
    this.equity.add({ timeMs: point.timeMs, price: point.price, value: point.value, rank });
    this.#priceSeen(point.timeMs, point.price);
    this.#walk(point, rank);
  }

  /**
   * A candle's close between the drawn samples, for the drawdown only: the account valued at it
   * as a float (holdings × close), and how to value it exactly (`exact(index)`). A drawdown's peak and trough are
   * closes like any other, so every one is walked; only a close the float cannot rule out (a new
   * peak, a deeper drawdown, by addSample's own margin) is valued exactly. The decision stays
   * the exact one, at the cost of a float per candle.
   */
  offerClose(timeMs: number, valueF: number, index: number, exact: (index: number) => EquityPoint): void {
    this.#inOrder(timeMs);
    if (this.#mayDeepen(valueF)) {
      const point = exact(index);
      this.#walk(point, roughNumber(point.value));
      return;
    }
    // Walked, and ruled out: it is drawn only if it is a chart point (an object per candle would cost more than the walk).
    this.drawdown.samples += 1;
  }

  /**
   * `count` closes between drawn samples, at the same holdings, whose values as floats lie
   * within [lowF, highF], the last at `lastTimeMs`: walked at once when neither end could be a
   * new peak or a deeper drawdown (at fixed holdings a value moves with the close, so no close
   * between could either), and then true; false, with nothing walked, when the caller must
   * offer them one by one (offerClose).
   */
  offerCloses(count: number, lowF: number, highF: number, lastTimeMs: number): boolean {
    if (this.#mayDeepen(lowF) || this.#mayDeepen(highF)) return false;
    this.#inOrder(lastTimeMs);
    this.drawdown.samples += count;
    return true;
  }

  /**
   * `count` closes after the one just offered, the last at `lastTimeMs`, that value the account
   * exactly as it did (nothing of the base held, holdings fixed): a value already walked can be
   * neither a new peak nor a deeper drawdown than it was, so they are walked at once.
   */
  offerRepeats(count: number, lastTimeMs: number): void {
    this.#inOrder(lastTimeMs);
    this.drawdown.samples += count;
  }

  #inOrder(timeMs: number): void {
    if (timeMs < this.#lastSampleMs) throw new RangeError(`account samples must come in time order (${timeMs} after ${this.#lastSampleMs})`);
    this.#lastSampleMs = timeMs;
  }

  /** Whether a value (a float) could be a new peak or a deeper drawdown than the deepest so far; when unsure, yes. */
  #mayDeepen(valueF: number): boolean {
    const dd = this.drawdown;
    const peakRank = this.#peakRank;
    if (dd.peak === null || dd.maxPct === null || !(peakRank > 0)) return true;
    const slack = Math.abs(peakRank) * 1e-12;
    const amountF = peakRank - valueF;
    if (amountF <= slack || amountF >= this.#maxAmountF - slack) return true;
    return dd.maxPct.amount.isZero() || amountF / peakRank >= this.#maxShareF - 1e-12;
  }

  /**
   * The drawdown walk, build.ts's rule: the running peak is the highest value so far, and the
   * deepest episode by amount and by share of its peak (compared as a cross product: no division
   * per sample). Most samples below the peak are nowhere near the deepest episode: floats (each
   * within a few parts in 10^16 of the exact value) rule those out with a margin of a part in
   * 10^12, and only the samples left are compared exactly. The decision stays the exact one.
   */
  #walk(point: EquityPoint, rank: number): void {
    const dd = this.drawdown;
    dd.samples += 1;
    if (dd.peak === null) {
      dd.peak = point;
      this.#peakRank = rank;
      dd.max = { peak: point, trough: point, amount: ZERO };
      dd.maxPct = { peak: point, trough: point, amount: ZERO };
      this.drawdownCurve.add({ timeMs: point.timeMs, pct: 0 });
      return;
    }
    const abovePeak = point.value.cmp(dd.peak.value);
    if (abovePeak >= 0) {
      if (abovePeak > 0) {
        dd.peak = point;
        this.#peakRank = rank;
      }
      this.drawdownCurve.add({ timeMs: point.timeMs, pct: 0 });
      return;
    }
    const peak = dd.peak;
    const peakRank = this.#peakRank;
    const amountF = peakRank - rank;
    const slack = Math.abs(peakRank) * 1e-12;
    let amount: Decimal | null = null;
    if (amountF >= this.#maxAmountF - slack) {
      amount = peak.value.sub(point.value);
      if (amount.gt((dd.max as NonNullable<DrawdownFacts['max']>).amount)) {
        dd.max = { peak, trough: point, amount };
        // A float to rank later samples by, not a figure: the Decimal comparison above decided.
        this.#maxAmountF = roughNumber(amount);
      }
    }
    const maxPct = dd.maxPct as NonNullable<DrawdownFacts['maxPct']>;
    if (isAboveZero(peak.value) && (maxPct.amount.isZero() || !(peakRank > 0) || amountF / peakRank >= this.#maxShareF - 1e-12)) {
      amount ??= peak.value.sub(point.value);
      if (maxPct.amount.isZero() || amount.mul(maxPct.peak.value).gt(maxPct.amount.mul(peak.value))) {
        dd.maxPct = { peak, trough: point, amount };
        // As #maxAmountF: a ranking float; what the report prints is `amount`, a Decimal.
        this.#maxShareF = roughNumber(amount) / peakRank;
      }
    }
    this.drawdownCurve.add({ timeMs: point.timeMs, pct: peakRank > 0 ? (-100 * amountF) / peakRank : 0 });
  }

  /** The deepest drawdown so far as floats (amount, and share of its peak): what rules samples out. */
  #maxAmountF = 0;
  #maxShareF = 0;

  /** The running peak as a float, for drawing. */
  #peakRank = 0;

  /** Every order, all instances together. */
  get orders(): OrderTotals {
    const all: OrderTotals = { orders: 0, filled: 0, base: ZERO, quote: ZERO };
    for (const instance of this.byInstance.values()) {
      all.orders += instance.orders;
      all.filled += instance.filled;
      all.base = all.base.add(instance.base);
      all.quote = all.quote.add(instance.quote);
    }
    return all;
  }

  /** Per UTC year: its months added up; its last price is that of its latest month that saw one. */
  get years(): Map<string, PeriodFacts> {
    const years = new Map<string, PeriodFacts>();
    for (const [month, row] of [...this.months].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const year = years.get(month.slice(0, 4));
      if (year === undefined) {
        years.set(month.slice(0, 4), { ...row });
        continue;
      }
      year.quote = year.quote.add(row.quote);
      year.base = year.base.add(row.base);
      year.fees = year.fees.add(row.fees);
      year.baseFees = year.baseFees.add(row.baseFees);
      if (row.lastTimeMs >= year.lastTimeMs) {
        year.lastTimeMs = row.lastTimeMs;
        year.lastPrice = row.lastPrice;
      }
    }
    return years;
  }

  /**
   * A price seen outside the account samples: a chart candle's close (it belongs to the period its
   * candle ends in: give the last millisecond before the next opens) and the run's last close.
   * Periods take their last price from these and from the samples.
   */
  priceSeen(timeMs: number, price: Decimal): void {
    this.#priceSeen(timeMs, price);
  }

  /** The buys the price chart marks (see SeriesSketch), each with its exact average price. */
  buys(): Buy[] {
    return this.#buys.points().map(({ rank: _rank, ...buy }) => ({ ...buy, price: buy.quote.div(buy.base) }));
  }

  /** Orders at the start and the end of the table, in the journal's order, and how many lie between. */
  tableOrders(): { head: ReportOrder[]; tail: ReportOrder[]; hidden: number } {
    const total = this.orders.orders;
    if (total <= 2 * ORDERS_SHOWN_EACH_END) {
      const all = [...this.#head, ...this.#tail].sort((a, b) => compareFactPlaces(a.place, b.place)).map((p) => p.order);
      return { head: all, tail: [], hidden: 0 };
    }
    return { head: this.#head.map((p) => p.order), tail: this.#tail.map((p) => p.order), hidden: total - 2 * ORDERS_SHOWN_EACH_END };
  }

  #keepForTable(placed: PlacedOrder): void {
    // The first N by journal order, and the last N; an order pushed out of the head may belong to the tail.
    let out: PlacedOrder | undefined = placed;
    if (this.#head.length < ORDERS_SHOWN_EACH_END || compareFactPlaces(placed.place, (this.#head.at(-1) as PlacedOrder).place) < 0) {
      insertSorted(this.#head, placed);
      out = this.#head.length > ORDERS_SHOWN_EACH_END ? this.#head.pop() : undefined;
    }
    if (out === undefined) return;
    if (this.#tail.length < ORDERS_SHOWN_EACH_END || compareFactPlaces(out.place, (this.#tail[0] as PlacedOrder).place) >= 0) {
      insertSorted(this.#tail, out);
      if (this.#tail.length > ORDERS_SHOWN_EACH_END) this.#tail.shift();
    }
  }

  #instance(name: string): InstanceFacts {
    let found = this.byInstance.get(name);
    if (found === undefined) {
      found = { orders: 0, filled: 0, base: ZERO, quote: ZERO, refusals: 0 };
      this.byInstance.set(name, found);
    }
    return found;
  }

  #period(rows: Map<string, PeriodFacts>, key: string): PeriodFacts {
    let row = rows.get(key);
    if (row === undefined) {
      row = { quote: ZERO, base: ZERO, fees: ZERO, baseFees: ZERO, lastPrice: ZERO, lastTimeMs: -1 };
      rows.set(key, row);
    }
    return row;
  }

  #priceSeen(timeMs: number, price: Decimal): void {
    // A sample taken as the run ends (at its end time) still belongs to its last period.
    const at = Math.min(timeMs, this.toMs - 1);
    const row = this.#period(this.months, monthOf(at));
    if (timeMs >= row.lastTimeMs) {
      row.lastTimeMs = timeMs;
      row.lastPrice = price;
    }
  }
}

function addTotals(totals: OrderTotals, order: ReportOrder, filled: boolean): void {
  totals.orders += 1;
  if (filled) totals.filled += 1;
  totals.base = totals.base.add(order.filledBase);
  totals.quote = totals.quote.add(order.filledQuote);
}

function insertSorted(list: PlacedOrder[], item: PlacedOrder): void {
  let at = list.length;
  while (at > 0 && compareFactPlaces(item.place, (list[at - 1] as PlacedOrder).place) < 0) at -= 1;
  list.splice(at, 0, item);
}

/** UTC year and month keys, cached per UTC day: a run asks for the same few thousand days again and again. */
const DAY_MS = 86_400_000;
const dayKeys = new Map<number, string>();

function monthOf(ms: number): string {
  const day = Math.floor(ms / DAY_MS);
  let key = dayKeys.get(day);
  if (key === undefined) {
    key = new Date(day * DAY_MS).toISOString().slice(0, 7);
    dayKeys.set(day, key);
  }
  return key;
}

function yearOf(ms: number): string {
  return monthOf(ms).slice(0, 4);
}
