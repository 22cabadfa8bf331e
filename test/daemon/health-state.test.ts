import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DaemonHealth } from '../../src/daemon/health-state.ts';
import type { EngineHealth } from '../../src/engine/engine.ts';
import { FatalEngineError } from '../../src/engine/error-policy.ts';
import type { StuckOrder } from '../../src/engine/stuck-orders.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { TempWorld, buy } from '../store/helpers.ts';

// /healthz's sentences, from a real journal and the engine's reported state.
let world: TempWorld;
beforeEach(() => {
  world = new TempWorld();
});
afterEach(async () => {
  await world.cleanup();
});

const quiet: EngineHealth = { fatal: null, unresolved: { count: 0, oldestSentAtMs: null, pastWindow: [] }, ledgerCheckedAtMs: 1, ledgerProblem: null, stuckOrders: [] };

describe('the daemon health', () => {
  it('is healthy with nothing to report, and says so in the metrics', async () => {
    const journal = await world.opened();
    const metrics = new Metrics({ mode: 'live', nowMs: () => 10_000 });
    const health = new DaemonHealth({ journal, engine: () => quiet, sink: metrics });
    await health.refresh();
    expect(health.problems()).toEqual([]);
    const text = await metrics.render();
    expect(text).toMatch(/^stacker_unresolved_intents 0$/m);
    expect(text).toMatch(/^stacker_journal_writable 1$/m);
    expect(text).toMatch(/^stacker_unacknowledged_findings\{kind="foreign"\} 0$/m);
    expect(text).toMatch(/^stacker_stuck_orders 0$/m);
  });

  it('reports each kill switch turned on from the status API while it is on, as the controls say it, and nothing once it is off', async () => {
    const journal = await world.opened();
    let killed: string[] = ['the kill switch is on (…): nothing that moves money is sent until it is turned off', 'the kill switch of account kids was turned on …: nothing that moves money is sent on account kids until it is turned off; the other accounts trade on'];
    const health = new DaemonHealth({ journal, engine: () => quiet, killSwitches: () => killed });
    expect(health.problems()).toEqual(killed);
    killed = [];
    expect(health.problems()).toEqual([]);
  });

  it('names an instance whose buy its smallest budget limit refuses in every period, since which slot, until a slot no longer says so', async () => {
    const journal = await world.opened();
    const health = new DaemonHealth({ journal, engine: () => quiet });
    const slot = async (slotTimeMs: number, error: { code: string; message: string } | null): Promise<void> => {
      await journal.claimSlot({ instance: 'dca-btc', slotTimeMs, runId: null, intents: [{ index: 0, intent: buy('0.001'), ...(error === null ? {} : { refusal: error }) }] });
      await health.readSlot('dca-btc', slotTimeMs);
    };
    const never = { code: 'budget-too-small', message: 'estimated value 65 USDT is above the budget left for this slot, 10 USDT; that is above 10 USDT, the smallest limit configured (the instance file\'s BUDGET_QUOTE_PER_DAY), so no period lets it through: raise it or buy less' };
    await slot(Date.UTC(2026, 0, 2, 9), never);
    await slot(Date.UTC(2026, 0, 3, 9), never);
    expect(health.problems()).toEqual([`dca-btc: buys nothing since its slot of 2026-01-02T09:00:00.000Z, its buy refused in every period: ${never.message}`]);
    // A budget used up for now waits for its next period: not a problem.
    await slot(Date.UTC(2026, 0, 4, 9), { code: 'over-budget', message: 'estimated value 65 USDT is above the budget left for this slot, 35 USDT' });
    expect(health.problems()).toEqual([]);
  });

  it('names an instance whose buy was refused for its market (the exchange refusing it, the market gone) in each of its last 3 slots, while its slots end done; a slot done without such a refusal ends the run', async () => {
    const journal = await world.opened();
    const health = new DaemonHealth({ journal, engine: () => quiet });
    const slot = async (slotTimeMs: number, error: { code: string; message: string } | null): Promise<void> => {
      await journal.claimSlot({ instance: 'dca-btc', slotTimeMs, runId: null, intents: [{ index: 0, intent: buy('0.001'), ...(error === null ? {} : { refusal: error }) }] });
      await journal.finishSlot({ instance: 'dca-btc', slotTimeMs, status: 'done' });
      await health.readSlot('dca-btc', slotTimeMs);
    };
    const closed = { code: 'E_EXCHANGE_VALIDATION', message: '/api/v4/order/stock_market answered HTTP 422 code 31: Validation failed (market: Market is not available.)' };
    const day = (d: number): number => Date.UTC(2026, 0, d, 9);
    await slot(day(2), closed);
    await slot(day(3), closed);
    expect(health.problems()).toEqual([]);
    await slot(day(4), closed);
    expect(health.problems()).toEqual([
      `dca-btc: its buy was refused for its market in each of its last 3 slots, the latest at 2026-01-04T09:00:00.000Z (E_EXCHANGE_VALIDATION: ${closed.message}); it buys nothing meanwhile: the market may be closed or gone, its rules changed (\`stacker markets\`), or the amount is below its minimum`,
    ]);
    // Out of money is a wallet's state, said by its own alert, not the exchange refusing what the rules allow.
    await slot(day(5), { code: 'insufficient-funds', message: 'the exchange refused: Not enough balance.' });
    expect(health.problems()).toEqual([]);
    await slot(day(6), closed);
    await slot(day(7), closed);
    await slot(day(8), null);
    expect(health.problems()).toEqual([]);
    // Read again after the exchange's refusal, the rules no longer list the market: the guard's refusals continue the run.
    const gone = { code: 'unknown-market', message: 'the exchange does not list BTC_USDT' };
    await slot(day(9), closed);
    await slot(day(10), gone);
    await slot(day(11), gone);
    expect(health.problems()).toEqual([expect.stringMatching(/^dca-btc: its buy was refused for its market in each of its last 3 slots, the latest at 2026-01-11T09:00:00.000Z \(unknown-market: the exchange does not list BTC_USDT\)/)]);
    // The strategy's own refusal (the SDK refuses a market it cannot find before the guard sees it) counts alike.
    const refusedByStrategy = async (slotTimeMs: number): Promise<void> => {
      await journal.claimSlot({ instance: 'dca-eth', slotTimeMs, runId: null, intents: [{ index: 0, intent: { kind: 'refusal', reason: 'unknown-market', message: 'the exchange does not list ETH_USDT' } }] });
      await journal.finishSlot({ instance: 'dca-eth', slotTimeMs, status: 'done' });
      await health.readSlot('dca-eth', slotTimeMs);
    };
    for (const d of [12, 13, 14]) await refusedByStrategy(day(d));
    expect(health.problems()).toContainEqual(expect.stringMatching(/^dca-eth: its buy was refused for its market in each of its last 3 slots, .*\(unknown-market: the exchange does not list ETH_USDT\)/));
  });

  it('names an instance a failed strategy disabled, since when and why: its slots no longer run, which is not healthy', async () => {
    const journal = await world.opened();
    const engine: EngineHealth = { ...quiet, disabledInstances: [{ instance: 'dca-btc', slotTimeMs: Date.UTC(2026, 0, 2, 9), reason: 'strategy dca failed: oops' }] };
    const health = new DaemonHealth({ journal, engine: () => engine });
    expect(health.problems()).toEqual(['dca-btc is disabled since its slot of 2026-01-02T09:00:00.000Z: strategy dca failed: oops. Fix the strategy or its instance file and restart stacker']);
  });

  it('names an instance whose last 3 slots failed in a row; a slot done, or a failed one found done since, ends the run', async () => {
    const journal = await world.opened();
    const health = new DaemonHealth({ journal, engine: () => quiet });
    const hour = (h: number): number => Date.UTC(2026, 0, 2, h);
    health.slotEnded('dca-btc', hour(9), 'failed');
    health.slotEnded('dca-btc', hour(10), 'failed');
    // A paused or skipped slot sent nothing: it neither ends the run nor adds to it.
    health.slotEnded('dca-btc', hour(11), 'skipped');
    expect(health.problems()).toEqual([]);
    health.slotEnded('dca-btc', hour(12), 'failed');
    expect(health.problems()).toEqual(['dca-btc: its last 3 slots failed, the latest at 2026-01-02T12:00:00.000Z; `stacker journal --instance dca-btc` says why']);
    health.slotEnded('dca-btc', hour(12), 'failed', true);
    expect(health.problems()).toEqual([]);
    for (const h of [13, 14, 15]) health.slotEnded('dca-btc', hour(h), 'failed');
    health.slotEnded('dca-btc', hour(16), 'done');
    expect(health.problems()).toEqual([]);
  });

  it('names an instance whose last 3 slots were skipped with its exchange unreadable (it runs nothing, fails nothing); a slot that ran ends the run, a paused one does not', async () => {
    const journal = await world.opened();
    const health = new DaemonHealth({ journal, engine: () => quiet });
    const hour = (h: number): number => Date.UTC(2026, 0, 2, h);
    const skip = async (h: number, reason: string): Promise<void> => {
      await journal.skipSlot({ instance: 'dca-cee', slotTimeMs: hour(h), runId: null, status: 'skipped', reason });
      health.slotEnded('dca-cee', hour(h), 'skipped');
      await health.readSlot('dca-cee', hour(h));
    };
    const down = 'snapshot failed (E_NETWORK): /api/v4/trade-account/balance: connection refused (ECONNREFUSED) (3 attempts)';
    await skip(9, down);
    await skip(10, down);
    await skip(11, 'paused from the status API');
    expect(health.problems()).toEqual([]);
    await skip(12, down);
    expect(health.problems()).toEqual([`dca-cee: its last 3 slots were skipped, its exchange not read, the latest at 2026-01-02T12:00:00.000Z: ${down}`]);
    await journal.claimSlot({ instance: 'dca-cee', slotTimeMs: hour(13), runId: null });
    await journal.finishSlot({ instance: 'dca-cee', slotTimeMs: hour(13), status: 'done' });
    await health.readSlot('dca-cee', hour(13));
    expect(health.problems()).toEqual([]);
  });

  it('names an intent unknown past its settle window, with what to do; metrics show its age', async () => {
    const journal = await world.opened();
    const metrics = new Metrics({ mode: 'live', nowMs: () => 700_000 });
    const engine: EngineHealth = {
      ...quiet,
      unresolved: { count: 1, oldestSentAtMs: 100_000, pastWindow: [{ intentId: 'dca-btc-x-0', instance: 'dca-btc', kind: 'transfer', sentAtMs: 100_000 }] },
    };
    const health = new DaemonHealth({ journal, engine: () => engine, sink: metrics });
    await health.refresh();
    expect(health.problems()).toEqual([expect.stringMatching(/^1 intent\(s\) still unknown past their settle window: transfer of dca-btc .*stacker journal resolve --intent ID --as done\|failed/)]);
    expect(await metrics.render()).toMatch(/^stacker_oldest_unresolved_intent_age_seconds 600$/m);
  });

  it('names a market order open long after it should have ended and what to do, until it is final; metrics count it', async () => {
    const journal = await world.opened();
    const metrics = new Metrics({ mode: 'live', nowMs: () => 10_000 });
    const order: StuckOrder = {
      orderId: '4180284841',
      clientOrderId: 'dca-btc-7d16a56a1027-1767344400000-0',
      instance: 'dca-btc',
      market: 'BTC_USDT',
      status: 'NEW',
      sinceMs: Date.UTC(2026, 0, 2, 9),
      why: 'the exchange finds it neither in its order history nor among the active orders',
    };
    let engine: EngineHealth = { ...quiet, stuckOrders: [order] };
    const health = new DaemonHealth({ journal, engine: () => engine, sink: metrics });
    await health.refresh();
    expect(health.problems()).toEqual([
      '1 market order(s) still open long after a market order ends: dca-btc-7d16a56a1027-1767344400000-0 (order 4180284841 of dca-btc, BTC_USDT) NEW since 2026-01-02T09:00:00.000Z: ' +
        'the exchange finds it neither in its order history nor among the active orders. ' +
        'Check each at the exchange; stacker keeps following it; nothing is cancelled or sent again, and its budget stays counted',
    ]);
    expect(await metrics.render()).toMatch(/^stacker_stuck_orders 1$/m);

    // Trading stopped: tracking stops with it, and the sentence does not promise otherwise.
    engine = { ...engine, fatal: new FatalEngineError('x', null) };
    expect(health.problems()).toEqual([expect.stringContaining('it is not read while trading is stopped')]);

    engine = quiet;
    await health.refresh();
    expect(health.problems()).toEqual([]);
    expect(await metrics.render()).toMatch(/^stacker_stuck_orders 0$/m);
  });

  it('reports foreign and adopted orders until they are acknowledged', async () => {
    const journal = await world.opened();
    await journal.recordFinding({ kind: 'foreign', instance: 'dca-btc', clientOrderId: 'dca-btc-aaa-1-0', orderId: '1', market: 'BTC_USDT', detail: 'x' });
    await journal.recordFinding({ kind: 'adopted', instance: 'dca-btc', clientOrderId: 'dca-btc-aaa-2-0', orderId: '2', market: 'BTC_USDT', detail: 'y' });
    const health = new DaemonHealth({ journal, engine: () => quiet });
    await health.refresh();
    expect(health.problems()).toEqual([expect.stringContaining('another stacker uses this API key'), expect.stringContaining('stacker journal acknowledge')]);
    await journal.acknowledgeFindings();
    await health.refresh();
    expect(health.problems()).toEqual([]);
  });

  it('keeps why trading stopped, and says slots wait while the history is unreadable', async () => {
    const journal = await world.opened();
    const health = new DaemonHealth({ journal, engine: () => ({ ...quiet, fatal: new FatalEngineError('x', null), ledgerCheckedAtMs: null, ledgerProblem: 'reading the exchange\'s order history failed (E_UNAVAILABLE)' }) });
    health.stopped('the journal file was deleted');
    expect(health.problems()).toEqual(['trading stopped: the journal file was deleted', expect.stringMatching(/^slots wait: reading the exchange's order history failed/)]);
  });
});
