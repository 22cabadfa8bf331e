import { basename } from 'node:path';
import type { InstanceConfig } from '../config/instance-config.ts';
import { type Decimal, ZERO, roughNumber } from '../domain/money.ts';
import type { MarketRules } from '../domain/market.ts';
import { Engine } from '../engine/engine.ts';
import { neverKilled } from '../engine/kill-switch.ts';
import { type EngineLogger, type EngineMetrics, noEngineMetrics, noNotifier, silentLogger } from '../engine/observer.ts';
import { type AccountCap, type AccountRouting, INSTANT_TIMING } from '../engine/runtime.ts';
import { VirtualClock } from '../engine/schedule/clock.ts';
import { VirtualScheduler } from '../engine/schedule/virtual-scheduler.ts';
import { toRuntime, startupProblems } from '../config/instance-runtime.ts';
import { ConfigError, type InputProblem } from '../domain/errors.ts';
import { firstAtLeast } from '../domain/sorted.ts';
import { wallTimeText } from '../domain/zone.ts';
import { BacktestExchange } from '../sim/backtest-exchange.ts';
import type { CandleSeries } from '../candles/index.ts';
import type { RulesOrigin } from './rules/origin.ts';
import { type FactPlace, RunFacts } from './report/facts.ts';
import type { BacktestRun, EquityPoint, ReportFlexOp, ReportOrder, ReportRefusal, SkippedWallTimes, SlotRun, StrategyFailure } from './report/run.ts';
import type { Journal, JournalEntry } from '../store/journal.ts';
import { MemoryJournal } from '../store/memory-journal.ts';
import { HeapCeiling } from './heap-ceiling.ts';
import { monthEndCandles } from './month-ends.ts';
import { SqliteJournal } from '../store/sqlite-journal.ts';

export interface BacktestInput {
  readonly candles: CandleSeries;
  readonly market: string;
  /** Shown in the report (base name only). */
  readonly dataFile: string;
  readonly instances: readonly InstanceConfig[];
  readonly wallet: ReadonlyMap<string, Decimal>;
  readonly slippagePct: Decimal;
  /** Flex investments to seed (plan and amount) and the APR they earn; none when null. */
  readonly flex: { readonly planId: string; readonly ticker: string; readonly amount: Decimal; readonly aprPct: Decimal } | null;
  /** Override the market rules (default: the sim's demo rules for the market). */
  readonly rules?: MarketRules;
  /** Where `rules` came from, for the report; required with `rules` (without both: the demo rules). */
  readonly rulesOrigin?: RulesOrigin;
  /**
   * The same market's candles from before the period (the file read from earlier than --from):
   * what the strategies' candle windows read, so a window reaching back past the period's start
   * is whole. The period itself (slots, fills, the report) stays `candles`.
   */
  readonly history?: CandleSeries;
  /** A file to keep the journal in, for `stacker journal --mode backtest` afterwards; in memory when absent. */
  readonly journalPath?: string;
  readonly logger?: EngineLogger;
  readonly metrics?: EngineMetrics;
  /** Called as candles are processed: (done, total). */
  readonly onProgress?: (done: number, total: number) => void;
  /** Told every fact the report folds, as the journal hands it over (the run itself keeps only the fold). */
  readonly observer?: RunObserver;
  /**
   * The caps of the instances' accounts (STACKER_ACCOUNT_<NAME>_BUDGET_QUOTE_PER_*), counted over
   * all of an account's instances as the daemon counts them; none when absent or empty.
   */
  readonly accountCaps?: ReadonlyMap<string, AccountCap>;
  /** What keeps the run's memory flat (default: a full collection past 48 MB in use, looked at every 1024 slots). */
  readonly heapCeiling?: HeapCeiling;
}

/** The daemon's start-up checks of the instances, against the one market a backtest trades. */
export function backtestStartupProblems(instances: readonly InstanceConfig[], market: string, markets: readonly MarketRules[]): InputProblem[] {
  // Its exchange lists the one market of the candles: a file for another market is the wrong pairing, not a typo.
  const unlisted = (name: string): string =>
    `is ${name}, but this backtest trades ${market} only (--market, the market of its --data candles): give --market ${name} with ${name} candles, or an instance file for ${market}`;
  return startupProblems(instances, markets, { unlisted });
}

/**
 * Accounts for a run with account caps: every account on the one simulated exchange (one wallet,
 * as --together promises), each counting its own cap. Without caps the engine runs without
 * routing, every instance on the one account, as before.
 */
function capRouting(instances: readonly InstanceConfig[], exchange: BacktestExchange, caps: ReadonlyMap<string, AccountCap>): AccountRouting {
  const accountOf = new Map(instances.map((instance) => [instance.instance, instance.account]));
  const names = Object.freeze([...new Set(accountOf.values())].sort());
  return {
    accountOf: (instance) => accountOf.get(instance) ?? (names[0] as string),
    exchangeOf: (account) => (names.includes(account) ? exchange : undefined),
    capOf: (account) => caps.get(account) ?? null,
    names,
  };
}

/** Sees each order, refusal and flex operation of a run, with its place in the journal. */
export interface RunObserver {
  order?(order: ReportOrder, place: FactPlace): void;
  refusal?(refusal: ReportRefusal, place: FactPlace): void;
  flex?(op: ReportFlexOp, place: FactPlace): void;
}

/** Most points a chart needs: more than the pixels of a wide screen, few enough for a light page. */
const CHART_POINTS = 2000;

/**
 * A backtest: the same engine, strategies, guards and journal code as live, on a simulated
 * account whose clock is virtual and whose prices come from the candles (fill rule: the open of
 * the first candle at or after the slot, in src/sim/backtest-exchange.ts). The virtual scheduler
 * evaluates the instances' own cron schedules over the candles' period. Nothing here decides a
 * trade: it only moves time, samples the account for the report, and collects the journal.
 */
export async function runBacktest(input: BacktestInput): Promise<BacktestRun> {
  const candles = input.candles;
  if ((input.rules === undefined) !== (input.rulesOrigin === undefined)) throw new RangeError('give rules and rulesOrigin together: the report says where the rules came from');
  if (candles.length === 0) throw new ConfigError([{ field: '--data', rule: 'has no candles in the chosen period' }]);
  const firstMs = candles.timeSec(0) * 1000;
  const lastMs = candles.timeSec(candles.length - 1) * 1000;
  const clock = new VirtualClock(firstMs);
  const exchange = new BacktestExchange({
    clock,
    market: input.market,
    candles,
    wallet: input.wallet,
    slippagePct: input.slippagePct,
    ...(input.rules === undefined ? {} : { rules: input.rules }),
    ...(input.flex === null ? {} : { flex: [input.flex] }),
    ...(input.history === undefined ? {} : { history: input.history }),
  });
  const markets = await exchange.markets();
  const problems = backtestStartupProblems(input.instances, input.market, markets);
  if (problems.length > 0) throw new ConfigError(problems);
  const rules = markets.find((m) => m.name === input.market);
  if (rules === undefined) throw new ConfigError([{ field: '--market', rule: `the backtest exchange has no rules for ${input.market}` }]);

  // In memory unless the user keeps the journal: the same rules (and contract tests) as the
  // SQLite file, with map lookups in place of statements, so a slot costs the same in year seven
  // as in week one.
  const memory = input.journalPath === undefined ? new MemoryJournal({ clock: () => clock.nowMs() }) : null;
  // A kept journal is a record of a replay, which running it again rebuilds: no sync at every commit
  // (that made a kept journal's run 10x slower, 1.5 ms a slot).
  const journal: Journal = memory ?? new SqliteJournal({ path: input.journalPath as string, clock: () => clock.nowMs(), synchronous: 'OFF' });
  const flexTicker = input.flex?.ticker ?? '';
  const toMs = lastMs + candles.intervalSec * 1000;
  // The report's figures folded as the run goes: memory stays flat however many slots it has.
  const facts = new RunFacts({ base: rules.base, quote: rules.quote, fromMs: firstMs, toMs });
  // The fill rule's candle: an order fills at the open of the first candle opening at or after it,
  // and belongs to that candle's period (a slot in a gap fills, and counts, when the data resumes).
  const fillTimeOf = (createdMs: number): number => {
    const index = candles.firstAtOrAfter(createdMs);
    return index < candles.length ? candles.timeSec(index) * 1000 : createdMs;
  };
  const fold = (entries: readonly JournalEntry[]): void => {
    for (let i = entries.length - 1; i >= 0; i -= 1) foldEntry(facts, entries[i] as JournalEntry, flexTicker, fillTimeOf, input.observer);
  };
  await journal.open();
  try {
    const run = await journal.startRun({ mode: 'backtest', pid: process.pid, version: 'backtest' });
    const enabled = input.instances.filter((i) => i.enabled);
    const engine = new Engine(
      {
        exchange,
        journal,
        mode: 'backtest',
        logger: input.logger ?? silentLogger,
        metrics: input.metrics ?? noEngineMetrics,
        // A backtest replays history: nobody is to be told about its fills.
        notifier: noNotifier,
        killSwitch: neverKilled,
        clock,
        sleep: async () => {},
        timing: INSTANT_TIMING,
        ...(input.accountCaps === undefined || input.accountCaps.size === 0 ? {} : { accounts: capRouting(input.instances, exchange, input.accountCaps) }),
      },
      enabled.map(toRuntime),
      { runId: run.runId },
    );

    const heap = input.heapCeiling ?? new HeapCeiling();
    // A strategy that fails is disabled, as live; the report says so instead of showing a quiet run.
    const failures = new Map<string, StrategyFailure>();
    const noteDisabled = async (instance: string, slotTimeMs: number): Promise<void> => {
      const known = failures.get(instance);
      if (known !== undefined) {
        known.slotsNotRun += 1;
        return;
      }
      const slot = await journal.getSlot({ instance, slotTimeMs });
      failures.set(instance, { instance, atMs: slotTimeMs, reason: slot?.reason ?? 'its strategy failed', slotsNotRun: 0 });
    };
    let firstSlot: { timeMs: number; price: Decimal } | null = null;
    let slotsInGaps: SlotRun | null = null;
    const chartCandles: Array<{ timeSec: number; close: Decimal }> = [];
    const step = Math.max(1, Math.ceil(candles.length / CHART_POINTS));
    const intervalMs = candles.intervalSec * 1000;
    let cursor = 0;
    // Pass the candles closed by a moment, in order, valuing the account at each close (balances
    // only change at slots and flex interest days, and a candle is passed only once the slots before its close have run,
    // so this is exact and in time order). Chart points (every `step`-th candle and the last) are
    // drawn; every close is walked for the drawdown, whose peak and trough can be any candle, as a
    // float unless it could be a new peak or a deeper drawdown.
    const last = candles.length - 1;
    const advanceTo = async (timeMs: number): Promise<void> => {
      let end = Number.isFinite(timeMs) ? firstAtLeast(candles.times, (timeMs - intervalMs) / 1000, candles.length) : candles.length;
      // Times are distinct: at most the one candle closing exactly at `timeMs` is left to pass.
      if (end < candles.length && candles.timeSec(end) * 1000 + intervalMs <= timeMs) end += 1;
      if (end <= cursor) return;
      let quoteF = roughNumber(exchange.sim.holding(rules.quote));
      let baseF = roughNumber(exchange.sim.holding(rules.base));
      // Nothing of the base held: every close until the holdings change values the account the same.
      let flat = exchange.sim.holding(rules.base).isZero();
      // Flex interest is the one change between slots: at each 00:00 it pays, the closes from
      // then on are valued with it (paid ahead of the clock, as the next slot would have paid it).
      const firstCloseFrom = (ms: number | null): number => (ms === null ? Number.POSITIVE_INFINITY : firstAtLeast(candles.times, (ms - intervalMs) / 1000, candles.length));
      let payAt = firstCloseFrom(exchange.sim.nextInterestMs());
      for (let i = cursor; i < end; ) {
        if (i >= payAt) {
          exchange.sim.payInterestTo(closeMs(i));
          quoteF = roughNumber(exchange.sim.holding(rules.quote));
          baseF = roughNumber(exchange.sim.holding(rules.base));
          flat = exchange.sim.holding(rules.base).isZero();
          payAt = firstCloseFrom(exchange.sim.nextInterestMs());
        }
        if (i % step === 0 || i === last) {
          samplePoint(i);
          i += 1;
          continue;
        }
        // The run of closes before the next chart point: ruled out together when its lowest and
        // highest cannot deepen the drawdown (holdings are fixed between slots), else one by one.
        const stop = Math.min(end, last, (Math.floor(i / step) + 1) * step, payAt);
        if (flat) {
          // An account holding only quote between two changes is worth the same at each close: the
          // first is walked, and the others, of its very value, can change nothing it did not.
          facts.offerClose(closeMs(i), quoteF, i, closeSample);
          if (stop - i > 1) facts.offerRepeats(stop - i - 1, closeMs(stop - 1));
          i = stop;
          continue;
        }
        const range = candles.closeEstimateRange(i, stop);
        if (range !== null) {
          const [lowF, highF] = baseF >= 0 ? [quoteF + baseF * range.low, quoteF + baseF * range.high] : [quoteF + baseF * range.high, quoteF + baseF * range.low];
          if (facts.offerCloses(stop - i, lowF, highF, closeMs(stop - 1))) {
            i = stop;
            continue;
          }
        }
        for (; i < stop; i += 1) facts.offerClose(closeMs(i), quoteF + baseF * candles.closeEstimate(i), i, closeSample);
      }
      // A month's value at its end is at its last close, which a chart point rarely is.
      for (const i of monthEndCandles(candles.times, candles.length, cursor, end)) facts.priceSeen(closeMs(i) - 1, candles.closeDecimal(i));
      if (input.onProgress !== undefined) for (let done = (Math.floor(cursor / 65_536) + 1) * 65_536; done <= end; done += 65_536) input.onProgress(done, candles.length);
      cursor = end;
    };
    const closeMs = (index: number): number => (candles.timeSec(index) + candles.intervalSec) * 1000;
    const closeSample = (index: number): EquityPoint => sampleAt(exchange, rules, closeMs(index), candles.closeDecimal(index));
    const samplePoint = (index: number): void => {
      const close = candles.closeDecimal(index);
      chartCandles.push({ timeSec: candles.timeSec(index), close });
      facts.priceSeen(closeMs(index) - 1, close);
      facts.addSample(closeSample(index));
    };

    // The walk starts where the report's initial value is taken, the wallet at the first open: a
    // starting wallet holding base can lose before the first slot or close, and that fall counts.
    facts.addSample(sampleAt(exchange, rules, firstMs, candles.openDecimal(0)));
    const scheduler = new VirtualScheduler({
      clock,
      fromMs: firstMs - 1,
      toMs: lastMs,
      beforeSlot: (slotMs: number) => advanceTo(slotMs),
    });
    const outcome = await scheduler.run(
      enabled.map((instance) => ({ instance: instance.instance, schedule: instance.schedule })),
      async (instance: string, slotTimeMs: number) => {
        if (firstSlot === null) {
          // The lump sum buys as the strategy's buys do: slippage and price precision in, or it would look better than it could be.
          const price = exchange.sim.bestAskAt(input.market, slotTimeMs);
          if (price !== null) firstSlot = { timeMs: slotTimeMs, price };
        }
        // In a gap: the open it fills at is a whole interval or more away (a slot between two opens is not).
        const inGap = fillTimeOf(slotTimeMs) - slotTimeMs >= intervalMs;
        if (inGap) slotsInGaps = slotsInGaps === null ? { count: 1, firstMs: slotTimeMs } : { count: slotsInGaps.count + 1, firstMs: slotsInGaps.firstMs };
        const outcome = await engine.runSlot(instance, slotTimeMs);
        if (outcome === 'disabled') await noteDisabled(instance, slotTimeMs);
        await engine.track();
        if (memory !== null) fold(await memory.retireSettled());
        // Valued at the last price known at the slot, as the strategy saw it, its buy (filled at
        // the next open) in. Not in a gap: the buys of its slots fill at the first open after it,
        // far from the last price before it, and there is no price of the gap's own time to value
        // them at; the first close after the gap values them (valued at the old price, a falling
        // market looked like a rising account through the gap, and a drawdown's peak fell in it).
        const price = inGap ? null : candles.priceKnownAt(slotTimeMs);
        if (price !== null) facts.addSample(sampleAt(exchange, rules, slotTimeMs, price));
        heap.slotRan();
      },
    );
    await advanceTo(Number.POSITIVE_INFINITY);
    if (input.flex !== null) {
      // Flex interest is paid as the sim reads its clock, which the slots do: the days after the
      // last slot, up to and including the period's end (money held to midnight earns that day),
      // are paid now, and the account valued with them.
      clock.set(Math.max(clock.nowMs(), toMs));
      exchange.sim.nowMs();
      facts.addSample(sampleAt(exchange, rules, toMs, candles.closeDecimal(candles.length - 1)));
    }
    facts.priceSeen(toMs - 1, candles.closeDecimal(candles.length - 1));
    input.onProgress?.(candles.length, candles.length);
    await journal.finishRun(run.runId, 'finished');
    fold(await journal.recentJournal({ limit: Number.MAX_SAFE_INTEGER }));

    return {
      schema: 'stacker.backtest/1',
      market: input.market,
      base: rules.base,
      quote: rules.quote,
      fromMs: firstMs,
      toMs,
      dataFile: basename(input.dataFile),
      candles: {
        count: candles.length,
        intervalSec: candles.intervalSec,
        firstTimeSec: candles.timeSec(0),
        lastTimeSec: candles.timeSec(candles.length - 1),
        firstOpen: candles.openDecimal(0),
        lastClose: candles.closeDecimal(candles.length - 1),
        gaps: candles.gaps.map((gap) => ({ afterTimeSec: gap.afterTimeSec, missing: gap.missing })),
        offGrid: candles.offGrid === null ? null : { count: candles.offGrid.count, firstTimeSec: candles.offGrid.firstTimeSec },
      },
      chartCandles,
      initialWallet: startingHoldings(input),
      finalBalances: await totals(exchange),
      instances: input.instances.map((i) => ({ instance: i.instance, strategy: i.strategy.name, schedule: i.schedule.expression, timezone: i.timezone })),
      facts,
      slots: outcome.slots,
      slotsInGaps,
      flexInterest: input.flex === null ? null : { ticker: input.flex.ticker, amount: exchange.sim.flexInterestPaid().get(input.flex.ticker) ?? ZERO },
      slotsAfterData: slotsBetween(enabled, lastMs, toMs),
      slotsSkippedByClockChange: skippedWallTimes(enabled, firstMs, toMs),
      firstSlot,
      settings: { slippagePct: input.slippagePct, flexAprPct: input.flex?.aprPct ?? null, ...(input.accountCaps === undefined ? {} : { accountCaps: input.accountCaps }) },
      rules: { values: rules, origin: input.rulesOrigin ?? { source: 'demo' } },
      strategyFailures: [...failures.values()],
    };
  } finally {
    await journal.close();
  }
}

/** The instances' slots after `afterMs` and before `beforeMs`, and the first of them; null when none. */
function slotsBetween(instances: readonly InstanceConfig[], afterMs: number, beforeMs: number): SlotRun | null {
  let count = 0;
  let firstMs = Number.POSITIVE_INFINITY;
  for (const instance of instances) {
    for (let at = instance.schedule.next(afterMs); at < beforeMs; at = instance.schedule.next(at)) {
      count += 1;
      firstMs = Math.min(firstMs, at);
    }
  }
  return count === 0 ? null : { count, firstMs };
}

/** The slots of the period whose wall time their zone skipped (clocks going forward), over every instance; null when none. */
function skippedWallTimes(instances: readonly InstanceConfig[], fromMs: number, toMs: number): SkippedWallTimes | null {
  let count = 0;
  let first: { text: string; sortMs: number } | null = null;
  for (const instance of instances) {
    const skipped = instance.schedule.skippedBetween(fromMs, toMs);
    if (skipped === null) continue;
    count += skipped.count;
    const w = skipped.first;
    const sortMs = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
    const text = `${wallTimeText(w, instance.schedule.hasSeconds)} ${instance.timezone}`;
    if (first === null || sortMs < first.sortMs) first = { text, sortMs };
  }
  return first === null ? null : { count, first: first.text };
}

/** What the account starts with, per asset: the wallet plus the seeded flex investment (PnL counts from there). */
function startingHoldings(input: BacktestInput): Record<string, Decimal> {
  const out = new Map(input.wallet);
  if (input.flex !== null) out.set(input.flex.ticker, (out.get(input.flex.ticker) ?? ZERO).add(input.flex.amount));
  return Object.fromEntries([...out].sort(([a], [b]) => a.localeCompare(b)));
}

/** Everything the account holds per asset: main + trade (available and frozen) + flex. */
async function totals(exchange: BacktestExchange): Promise<Record<string, Decimal>> {
  const out = new Map<string, Decimal>();
  const add = (asset: string, amount: Decimal): void => {
    out.set(asset, (out.get(asset) ?? ZERO).add(amount));
  };
  for (const [asset, amount] of await exchange.mainBalances()) add(asset, amount);
  for (const [asset, balance] of await exchange.tradeBalances()) add(asset, balance.available.add(balance.freeze));
  for (const investment of await exchange.flexInvestments()) add(investment.ticker, investment.invested);
  return Object.fromEntries([...out].sort(([a], [b]) => a.localeCompare(b)));
}

/** The account valued at a price: only the market's two assets are read (a sample is taken every slot), straight from the sim's books. */
function sampleAt(exchange: BacktestExchange, rules: MarketRules, timeMs: number, price: Decimal): EquityPoint {
  return { timeMs, price, value: exchange.sim.holding(rules.quote).add(exchange.sim.holding(rules.base).mul(price)) };
}

/** What the report reads of one journalled intent: its orders, the refusal it was, the flex operation it made. */
function foldEntry(facts: RunFacts, entry: JournalEntry, flexTicker: string, fillTimeOf: (createdMs: number) => number, observer: RunObserver | undefined): void {
  const { intent } = entry;
  const place: FactPlace = { slotTimeMs: intent.slotTimeMs, instance: intent.instance, index: intent.index };
  let refusal: ReportRefusal | null = null;
  if (intent.intent.kind === 'refusal') {
    refusal = { instance: intent.instance, slotTimeMs: intent.slotTimeMs, reason: intent.intent.reason, message: intent.intent.message };
  } else if (intent.status === 'refused' && intent.error !== null && intent.intent.kind !== 'flex-withdraw') {
    refusal = { instance: intent.instance, slotTimeMs: intent.slotTimeMs, reason: intent.error.code, message: intent.error.message };
  }
  if (refusal !== null) {
    facts.addRefusal(refusal, place);
    observer?.refusal?.(refusal, place);
  }
  for (const order of entry.orders) {
    const fact: ReportOrder = {
      instance: intent.instance,
      slotTimeMs: intent.slotTimeMs,
      clientOrderId: order.clientOrderId,
      market: order.market,
      status: order.status,
      amount: order.amount,
      filledBase: order.filledBase,
      filledQuote: order.filledQuote,
      fee: order.fee,
      feeAsset: order.feeAsset,
      fillTimeMs: fillTimeOf(order.createdAtSec * 1000),
    };
    facts.addOrder(fact, place);
    observer?.order?.(fact, place);
  }
  if (intent.intent.kind === 'flex-withdraw') {
    const status = intent.status === 'done' ? 'done' : intent.status === 'refused' ? 'refused' : 'failed';
    const op: ReportFlexOp = { instance: intent.instance, slotTimeMs: intent.slotTimeMs, plan: intent.intent.plan, ticker: flexTicker, amount: intent.intent.amount, status };
    facts.addFlex(op);
    observer?.flex?.(op, place);
  }
}
