import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deriveClientOrderId } from '../../src/domain/client-order-id.ts';
import { ForeignOrderError } from '../../src/domain/errors.ts';
import { Decimal, formatDecimal } from '../../src/domain/money.ts';
import { dca } from '../../strategies/dca.ts';
import { ENGINE_JOURNALS, type EngineWorld, TEST_SETTLE_WINDOW_MS, engineWorld, runtimeOf } from './harness.ts';

// The exchange as the second ledger: the engine reads the sandbox's order history over HTTP and
// compares it with a real journal (SQLite, and PostgreSQL when the test run has a cluster).
const PAST_SLOT = Date.UTC(2026, 10, 22, 9, 0, 0);
const ORDER_PATH = '/api/v4/order/stock_market';
const HISTORY_PATH = '/api/v4/trade-account/order/history';

describe.each(ENGINE_JOURNALS)('the exchange as the second ledger (%s journal)', (kind) => {
  let world: EngineWorld;
  beforeEach(async () => {
    world = await engineWorld({}, kind);
  });
  afterEach(async () => {
    await world.close();
  });

  const dcaBtc = () => ({
    ...runtimeOf({ instance: 'dca-btc', strategy: dca, env: { STRATEGY: 'dca', SCHEDULE: '0 9 * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001' } }),
    budgets: { day: new Decimal('1000') },
  });

  /** An order placed at the exchange with an instance's id for (slot, index), as another run or another client would. */
  const placeAtExchange = (slotTimeMs: number, index = 0, instance = 'dca-btc') =>
    world.sandbox.exchange.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.001'), clientOrderId: deriveClientOrderId(instance, slotTimeMs, index) });

  /** A buy whose answer was lost (a reset) and whose lookups found nothing over its settle window: not-found, its budget held. */
  const notFoundBuy = async () => {
    world.sandbox.faults.inject({ path: ORDER_PATH, kind: 'reset' });
    const engine = world.engine([dcaBtc()], { ledger: {} });
    const slot = Date.now() + 60_000;
    expect(await engine.runSlot('dca-btc', slot)).toBe('failed');
    expect(await world.journal.heldBudgetReservations('dca-btc')).toHaveLength(1);
    world.advance(TEST_SETTLE_WINDOW_MS);
    await engine.track();
    expect((await world.journal.listIntents({ instance: 'dca-btc' }))[0]?.status).toBe('not-found');
    return { engine, slot };
  };

  describe('the exchange as the second ledger', () => {
    it('adopts an order of an earlier run that the journal lost: its slot, intent, order, transition and spend, with a finding', async () => {
      const lost = placeAtExchange(PAST_SLOT);
      const engine = world.engine([dcaBtc()], { ledger: {} });
      const report = await engine.checkLedger();
      expect(report?.adopted.map((o) => o.orderId)).toEqual([lost.orderId]);
      const [intent] = await world.journal.listIntents({ instance: 'dca-btc' });
      expect(intent).toMatchObject({ status: 'done', origin: 'adopted', slotTimeMs: PAST_SLOT, clientOrderId: lost.clientOrderId });
      expect(await world.journal.orderTransitions(lost.orderId)).toHaveLength(1);
      const spent = await world.journal.budgetSpent({ instance: 'dca-btc', asset: 'USDT', timeZone: 'UTC' }, PAST_SLOT);
      expect(formatDecimal(spent.day)).toBe(formatDecimal(lost.filledQuote));
      expect(await world.journal.listFindings({ unacknowledged: true })).toMatchObject([{ kind: 'adopted', orderId: lost.orderId }]);
      expect(world.logs.some((line) => line.fields['event'] === 'order-adopted' && line.level === 'warn')).toBe(true);
      // The adopted slot is journalled: nothing runs it again.
      expect(await engine.runSlot('dca-btc', PAST_SLOT)).toBe('already');
      expect(world.sandbox.exchange.orderHistory({})).toHaveLength(1);
      // Read again: nothing new.
      expect((await engine.checkLedger())?.adopted).toEqual([]);
    });

    it('records the order of a not-found buy that turns up after its window, and counts it', async () => {
      const { engine, slot } = await notFoundBuy();
      const late = placeAtExchange(slot);
      await engine.checkLedger();
      const [intent] = await world.journal.listIntents({ instance: 'dca-btc' });
      expect([intent?.status, intent?.origin]).toEqual(['done', 'engine']);
      expect((await world.journal.getOrder(late.orderId))?.intentId).toBe(intent?.intentId);
      expect(world.fatal).toEqual([]);
    });

    it('records the order of a not-found buy that turns up in the history under its clientOrderId in capitals, as the id it sent, and gives nothing back', async () => {
      const { engine, slot } = await notFoundBuy();
      world.sandbox.faults.inject({ path: HISTORY_PATH, kind: 'upper-ids', times: Number.POSITIVE_INFINITY });
      const late = placeAtExchange(slot);
      world.elapse(3_600_000);
      const report = await engine.checkLedger();
      expect(report?.linked.map((order) => order.orderId)).toEqual([late.orderId]);
      expect(report?.cleared).toEqual([]);
      const [intent] = await world.journal.listIntents({ instance: 'dca-btc' });
      expect(intent?.status).toBe('done');
      expect(await world.journal.getOrder(late.orderId)).toMatchObject({ intentId: intent?.intentId, clientOrderId: intent?.clientOrderId });
      expect(world.fatal).toEqual([]);
    });

    it('adopts an order the journal lost that the history shows under its clientOrderId in capitals', async () => {
      world.sandbox.faults.inject({ path: HISTORY_PATH, kind: 'upper-ids', times: Number.POSITIVE_INFINITY });
      const lost = placeAtExchange(PAST_SLOT);
      const engine = world.engine([dcaBtc()], { ledger: {} });
      expect((await engine.checkLedger())?.adopted.map((o) => o.orderId)).toEqual([lost.orderId]);
      expect(await engine.runSlot('dca-btc', PAST_SLOT)).toBe('already');
      // Journalled under the id its slot derives, as every other order of ours: one spelling in `orders` and the tax CSV.
      expect((await world.journal.getOrder(lost.orderId))?.clientOrderId).toBe(lost.clientOrderId);
      expect((await world.journal.listIntents({ instance: 'dca-btc' }))[0]?.clientOrderId).toBe(lost.clientOrderId);
    });

    it('follows a buy answered without a status and nothing filled (an answer before the match) until the history says it filled, its budget held meanwhile, never told as refused', async () => {
      world.sandbox.faults.inject({ path: ORDER_PATH, kind: 'unfilled-answer', times: 1 });
      const engine = world.engine([dcaBtc()], { ledger: {} });
      const slot = Date.now() + 60_000;
      expect(await engine.runSlot('dca-btc', slot)).toBe('done');
      const [placed] = world.sandbox.exchange.orderHistory({});
      if (placed === undefined) throw new Error('no order at the exchange');
      expect(await world.journal.getOrder(placed.orderId)).toMatchObject({ status: 'NEW' });
      expect(await world.journal.heldBudgetReservations('dca-btc')).toHaveLength(1);
      // However long the history takes to show it, its estimate stays counted: the next slots cannot spend it again.
      const scope = { instance: 'dca-btc', asset: 'USDT', timeZone: 'UTC' };
      expect(formatDecimal((await world.journal.budgetSpent(scope, slot)).day)).toBe('65');
      await engine.track();
      expect(await world.journal.getOrder(placed.orderId)).toMatchObject({ status: 'FILLED' });
      expect(formatDecimal((await world.journal.budgetSpent(scope, slot)).day)).toBe(formatDecimal(placed.filledQuote));
      expect(world.notifications.map((event) => event.kind)).toEqual(['order-filled']);
    });

    it('corrects a buy an older stacker journalled cancelled with nothing filled (an answer without a status) that the history shows filled: recorded, told, and counted against its budget', async () => {
      const engine = world.engine([dcaBtc()], { ledger: {} });
      const slot = Date.now() - 60_000;
      const placed = placeAtExchange(slot);
      // As an older build journalled the status-less answer: the slot done, its order CANCELED with nothing, its budget settled at nothing.
      await world.journal.claimSlot({ instance: 'dca-btc', slotTimeMs: slot, runId: null, intents: [{ index: 0, intent: { kind: 'buy-stock-market', market: 'BTC_USDT', amount: new Decimal('0.001') } }] });
      const [intent] = await world.journal.listIntents({ instance: 'dca-btc' });
      if (intent === undefined) throw new Error('no intent');
      await world.journal.reserveBudget({ reservationId: intent.intentId, instance: 'dca-btc', asset: 'USDT', timeZone: 'UTC', atMs: slot, amountQuote: new Decimal('65'), limits: {} });
      await world.journal.updateIntent(intent.intentId, { status: 'sent' });
      const zero = new Decimal('0');
      await world.journal.recordOrderSnapshot({ ...placed, status: 'CANCELED', filledBase: zero, filledQuote: zero, fee: zero, left: placed.amount }, { intentId: intent.intentId });
      await world.journal.settleBudget(intent.intentId, zero);
      await world.journal.updateIntent(intent.intentId, { status: 'done', result: { orderId: placed.orderId, status: 'CANCELED' } });
      await world.journal.finishSlot({ instance: 'dca-btc', slotTimeMs: slot, status: 'done' });

      await engine.checkLedger();
      const corrected = await world.journal.getOrder(placed.orderId);
      expect(corrected).toMatchObject({ status: 'FILLED', clientOrderId: placed.clientOrderId });
      expect([corrected?.filledBase, corrected?.filledQuote, corrected?.fee].map((value) => formatDecimal(value ?? zero))).toEqual([placed.filledBase, placed.filledQuote, placed.fee].map(formatDecimal));
      const scope = { instance: 'dca-btc', asset: 'USDT', timeZone: 'UTC' };
      expect(formatDecimal((await world.journal.budgetSpent(scope, slot)).day)).toBe(formatDecimal(placed.filledQuote));
      expect(world.notifications.map((event) => event.kind)).toEqual(['order-filled']);
      const line = world.logs.find((entry) => entry.fields['event'] === 'order-corrected');
      expect(line?.message).toMatch(new RegExp(`^order ${placed.orderId} \\(${placed.clientOrderId}\\) was journalled final as CANCELED, filled 0 for 0, fee 0; the exchange's history shows FILLED, filled 0\\.001 for \\d`));
      // Once: the next check finds the journal and the history agree.
      await engine.checkLedger();
      expect(world.logs.filter((entry) => entry.fields['event'] === 'order-corrected')).toHaveLength(1);
      expect(world.fatal).toEqual([]);
    });

    it('keeps a not-found buy counted for an hour after its send although the history shows nothing: a history may lag more than the settle window', async () => {
      const { engine, slot } = await notFoundBuy();
      expect((await engine.checkLedger())?.cleared).toEqual([]);
      expect(await world.journal.heldBudgetReservations('dca-btc')).toHaveLength(1);
      // The history shows the order now, 90 s late and past the window: it was never given back, so never spent twice.
      const late = placeAtExchange(slot);
      expect((await engine.checkLedger())?.linked.map((order) => order.orderId)).toEqual([late.orderId]);
      const scope = { instance: 'dca-btc', asset: 'USDT', timeZone: 'UTC' };
      expect(formatDecimal((await world.journal.budgetSpent(scope, slot)).day)).toBe(formatDecimal(late.filledQuote));
    });

    it('gives a not-found buy its budget back once two reads of the history minutes apart, from before its send, show no such order an hour on', async () => {
      const { engine } = await notFoundBuy();
      world.elapse(3_600_000);
      expect((await engine.checkLedger())?.cleared).toEqual([]);
      expect(await world.journal.heldBudgetReservations('dca-btc')).toHaveLength(1);
      // A second read seconds later is not enough: a history answering nothing for a while would answer both.
      world.elapse(10_000);
      expect((await engine.checkLedger())?.cleared).toEqual([]);
      world.elapse(5 * 60_000);
      const report = await engine.checkLedger();
      expect(report?.cleared).toHaveLength(1);
      expect(await world.journal.heldBudgetReservations('dca-btc')).toEqual([]);
      expect((await world.journal.listFindings()).map((f) => [f.kind, f.acknowledgedAtMs !== null])).toEqual([['cleared', true]]);
    });

    it("keeps a not-found buy counted when only this machine's clock says an hour has passed (stepped forward): the exchange's clock must say so too", async () => {
      const { engine, slot } = await notFoundBuy();
      world.advance(2 * 3_600_000);
      expect((await engine.checkLedger())?.cleared).toEqual([]);
      expect(await world.journal.heldBudgetReservations('dca-btc')).toHaveLength(1);
      // The exchange's history shows the order late: counted once, never given back and spent again.
      const late = placeAtExchange(slot);
      expect((await engine.checkLedger())?.linked.map((order) => order.orderId)).toEqual([late.orderId]);
    });

    it('keeps a not-found buy counted while the history answers nothing (an outage answered []) for longer than reads minutes apart, reads that miss the orders the journal knows', async () => {
      // A buy whose answer was lost and that the exchange never took; minutes later one it took, which the journal holds.
      const { engine } = await notFoundBuy();
      world.elapse(2 * 60_000);
      expect(await engine.runSlot('dca-btc', Date.now() + 3 * 60_000)).toBe('done');
      world.elapse(3_600_000);
      world.sandbox.faults.inject({ path: HISTORY_PATH, kind: 'status', status: 200, body: [], times: Number.POSITIVE_INFINITY });
      for (let read = 0; read < 3; read += 1) {
        expect((await engine.checkLedger())?.cleared).toEqual([]);
        world.elapse(10 * 60_000);
      }
      expect(await world.journal.heldBudgetReservations('dca-btc')).toHaveLength(1);
      // Once the history answers again, the order that was never taken is given back.
      world.sandbox.faults.clear();
      expect((await engine.checkLedger())?.cleared).toHaveLength(1);
    });

    it('keeps a not-found buy counted when one read of the history an hour on leaves its order out (rows moving between pages), and finds it in the next', async () => {
      const { engine, slot } = await notFoundBuy();
      const late = placeAtExchange(slot);
      world.elapse(3_600_000);
      // One read answers the page without it.
      world.sandbox.faults.inject({ path: HISTORY_PATH, kind: 'status', status: 200, body: [], times: 1 });
      expect((await engine.checkLedger())?.cleared).toEqual([]);
      expect(await world.journal.heldBudgetReservations('dca-btc')).toHaveLength(1);
      expect((await engine.checkLedger())?.linked.map((order) => order.orderId)).toEqual([late.orderId]);
      expect(await world.journal.listFindings()).toEqual([]);
    });

    it('counts against the budget an order that lands after its not-found buy was given its budget back (its backend took it later still)', async () => {
      const { engine, slot } = await notFoundBuy();
      world.elapse(3_600_000);
      await engine.checkLedger();
      world.elapse(5 * 60_000);
      expect((await engine.checkLedger())?.cleared).toHaveLength(1);
      const scope = { instance: 'dca-btc', asset: 'USDT', timeZone: 'UTC' };
      expect(formatDecimal((await world.journal.budgetSpent(scope, slot)).day)).toBe('0');
      // The exchange performs the order now, after the read that cleared it.
      const late = placeAtExchange(slot);
      expect((await engine.checkLedger())?.linked.map((order) => order.orderId)).toEqual([late.orderId]);
      expect(formatDecimal((await world.journal.budgetSpent(scope, slot)).day)).toBe(formatDecimal(late.filledQuote));
      expect(world.fatal).toEqual([]);
    });

    it('still finds, hours later, an order that shows in the history only after its budget was given back and later reads had moved on', async () => {
      world.sandbox.faults.inject({ path: ORDER_PATH, kind: 'reset' });
      const engine = world.engine([dcaBtc()], { ledger: {} });
      const slot = Date.now() + 60_000;
      expect(await engine.runSlot('dca-btc', slot)).toBe('failed');
      world.advance(TEST_SETTLE_WINDOW_MS);
      await engine.track();
      world.elapse(3_600_000);
      await engine.checkLedger();
      world.elapse(5 * 60_000);
      expect((await engine.checkLedger())?.cleared).toHaveLength(1);
      // Two hourly reads come and go before the exchange's history shows the order.
      for (let read = 0; read < 2; read += 1) {
        world.advance(2 * 3_600_000);
        expect((await engine.checkLedger())?.linked).toEqual([]);
      }
      const late = placeAtExchange(slot);
      world.advance(2 * 3_600_000);
      expect((await engine.checkLedger())?.linked.map((order) => order.orderId)).toEqual([late.orderId]);
      const scope = { instance: 'dca-btc', asset: 'USDT', timeZone: 'UTC' };
      expect(formatDecimal((await world.journal.budgetSpent(scope, slot)).day)).toBe(formatDecimal(late.filledQuote));
      expect(world.fatal).toEqual([]);
    });

    it('stops trading on an order of this run that the journal did not send: another client uses the key', async () => {
      const engine = world.engine([dcaBtc()], { ledger: {} });
      await engine.checkLedger();
      const slot = Date.now() + 3_600_000;
      const theirs = placeAtExchange(slot);
      expect(await engine.runSlot('dca-btc', slot)).toBe('skipped');
      expect(world.fatal).toHaveLength(1);
      const cause = world.fatal[0]?.cause;
      expect(cause).toBeInstanceOf(ForeignOrderError);
      expect(world.fatal[0]?.message).toContain(theirs.clientOrderId);
      expect(world.fatal[0]?.message).toMatch(/the exchange holds orders with this stacker's order ids that its journal did not send: .*, placed \d{4}-\d\d-\d\dT/);
      // Not a twin of an order it sent: no word of its own order sent twice.
      expect(world.fatal[0]?.message).not.toMatch(/nonce/);
      expect(await world.journal.listFindings({ unacknowledged: true })).toMatchObject([{ kind: 'foreign', orderId: theirs.orderId }]);
      // The slot was not bought by us: one order at the exchange, the foreign one.
      expect(world.sandbox.exchange.orderHistory({})).toHaveLength(1);
    });

    it('stopping on the order of a slot it journalled missed, says beside another client the history lagging past the settle window after a journal loss, and that nothing was bought twice then', async () => {
      const engine = world.engine([dcaBtc()], { ledger: {} });
      await engine.checkLedger();
      const slot = Date.now() - 60_000;
      await world.journal.skipSlot({ instance: 'dca-btc', slotTimeMs: slot, status: 'missed', reason: 'stacker was not running', runId: null });
      const shown = placeAtExchange(slot);
      await engine.checkLedger();
      expect(world.fatal[0]?.message).toContain(`${shown.clientOrderId}`);
      expect(world.fatal[0]?.message).toMatch(/\(missed\) without sending it/);
      expect(world.fatal[0]?.message).toMatch(/If no other stacker runs on the key and this journal was rebuilt, put back from a copy or lost lately, .*later than ORDER_SETTLE_WINDOW.*nothing was bought twice/);
      // And as the next start tells it, from the finding.
      const { foreignOrdersError } = await import('../../src/daemon/foreign-findings.ts');
      expect(foreignOrdersError(await world.journal.listFindings({ unacknowledged: true }))?.message).toMatch(/later than ORDER_SETTLE_WINDOW/);
    });

    it('stops trading when a clientOrderId this journal placed was placed again by someone else (the slot bought twice)', async () => {
      const engine = world.engine([dcaBtc()], { ledger: {} });
      const slot = Date.now() + 60_000;
      expect(await engine.runSlot('dca-btc', slot)).toBe('done');
      const twin = placeAtExchange(slot);
      await engine.checkLedger();
      expect(world.fatal[0]?.message).toContain(twin.clientOrderId);
      expect(world.fatal[0]?.message).toMatch(/twice/);
      // With no other stacker on the key, the twin is its own order sent again after a nonce refusal the exchange did not keep to.
      expect(world.fatal[0]?.message).toMatch(/If no other stacker runs on the key, the exchange took an order it answered as refused for its nonce/);
      expect(world.fatal[0]?.message).toMatch(/^the exchange holds orders with this stacker's order ids that its journal did not send \(a second order of an intent it sent\): /);
      // Kept as a finding: the next start refuses on it, and says when it was found (it does not know when it was placed).
      const { foreignOrdersError } = await import('../../src/daemon/foreign-findings.ts');
      const again = foreignOrdersError(await world.journal.listFindings({ unacknowledged: true }));
      expect(again?.message).toMatch(/, found \d{4}-\d\d-\d\dT.*If no other stacker runs on the key/);
    });

    it("counts a second order of its own intent at once against that intent's instance (budget, orders, report), stops trading until acknowledged, and never counts it twice", async () => {
      const engine = world.engine([dcaBtc()], { ledger: {} });
      const slot = Date.now() + 60_000;
      expect(await engine.runSlot('dca-btc', slot)).toBe('done');
      const [intent] = await world.journal.listIntents({ instance: 'dca-btc' });
      const first = (await world.journal.listOrders({ instance: 'dca-btc' }))[0];
      const twin = placeAtExchange(slot);
      await engine.checkLedger();
      expect(world.fatal[0]?.message).toContain('A second order of an intent of this journal is recorded against its instance and counted in its budgets and reports.');
      const spent = await world.journal.budgetSpent({ instance: 'dca-btc', asset: 'USDT', timeZone: 'UTC' }, slot);
      expect(formatDecimal(spent.day)).toBe(formatDecimal(twin.filledQuote.add(first?.filledQuote ?? 0)));
      expect((await world.journal.getOrder(twin.orderId))?.intentId).toBe(intent?.intentId);
      expect((await world.journal.listOrders({ instance: 'dca-btc' })).map((o) => o.orderId).sort()).toEqual([first?.orderId, twin.orderId].sort());
      expect(await world.journal.listFindings({ unacknowledged: true })).toMatchObject([{ kind: 'foreign', orderId: twin.orderId, instance: 'dca-btc' }]);
      expect(world.logs.some((line) => line.fields['event'] === 'order-second' && line.fields['orderId'] === twin.orderId)).toBe(true);

      await world.journal.acknowledgeFindings();
      const after = world.engine([dcaBtc()], { ledger: {} });
      await after.checkLedger();
      expect(world.fatal).toHaveLength(1);
      expect(formatDecimal((await world.journal.budgetSpent({ instance: 'dca-btc', asset: 'USDT', timeZone: 'UTC' }, slot)).day)).toBe(formatDecimal(spent.day));
    });

    it('counts, at the next history read, a second order a stacker before this one reported and left uncounted', async () => {
      const engine = world.engine([dcaBtc()], { ledger: {} });
      const slot = Date.now() + 60_000;
      expect(await engine.runSlot('dca-btc', slot)).toBe('done');
      const first = (await world.journal.listOrders({ instance: 'dca-btc' }))[0];
      const twin = placeAtExchange(slot);
      // As a stacker before this one left it: the finding written, acknowledged, the order nowhere.
      await world.journal.recordFinding({ kind: 'foreign', instance: 'dca-btc', clientOrderId: twin.clientOrderId, orderId: twin.orderId, market: 'BTC_USDT', detail: 'placed another order with the same id: the slot was bought twice', acknowledged: true });
      await engine.checkLedger();
      expect(world.fatal).toEqual([]);
      expect((await world.journal.getOrder(twin.orderId))?.intentId).not.toBeNull();
      expect(formatDecimal((await world.journal.budgetSpent({ instance: 'dca-btc', asset: 'USDT', timeZone: 'UTC' }, slot)).day)).toBe(formatDecimal(twin.filledQuote.add(first?.filledQuote ?? 0)));
    });

    it.skipIf(kind !== 'sqlite')('names the cause when the journal shows the intent sent more than once: an older stacker resent it, not a second stacker on the key', async () => {
      const engine = world.engine([dcaBtc()], { ledger: {} });
      const slot = Date.now() + 60_000;
      expect(await engine.runSlot('dca-btc', slot)).toBe('done');
      const [intent] = await world.journal.listIntents({ instance: 'dca-btc' });
      // What a stacker from before exactly-once left: its lost answer's order sent again, the intent marked sent twice.
      const { DatabaseSync } = await import('node:sqlite');
      const { SqliteJournal } = await import('../../src/store/sqlite-journal.ts');
      const db = new DatabaseSync((world.journal as InstanceType<typeof SqliteJournal>).path);
      db.prepare('UPDATE intents SET attempts = 2 WHERE intent_id = ?').run(intent?.intentId ?? '');
      db.close();
      placeAtExchange(slot);
      await engine.checkLedger();
      const message = world.fatal[0]?.message ?? '';
      expect(message).toMatch(/^the exchange holds a second order of an intent this journal sent more than once: .*it was sent 2 times, a resend by an older stacker/);
      expect(message).toContain("An older stacker, which sent a lost answer's order again, bought that slot twice before this one took the journal over; this one never resends.");
      expect(message).not.toMatch(/Two stackers on one key|nonce/);
      const { foreignOrdersError } = await import('../../src/daemon/foreign-findings.ts');
      expect(foreignOrdersError(await world.journal.listFindings({ unacknowledged: true }))?.message).toMatch(/^the exchange holds a second order of an intent this journal sent more than once/);
    });

    it('records and counts, and trades on, an order the exchange placed after all although its answer was journalled a refusal; also one a stacker before this one reported as foreign', async () => {
      const engine = world.engine([dcaBtc()], { ledger: {} });
      const slot = Date.now() + 60_000;
      // The exchange takes the order, then answers a validation refusal.
      world.sandbox.faults.inject({ path: ORDER_PATH, kind: 'status', status: 422, body: { code: 32, message: 'Validation failed', errors: { amount: ['Amount too small.'] } }, commit: true });
      expect(await engine.runSlot('dca-btc', slot)).toBe('done');
      const [intent] = await world.journal.listIntents({ instance: 'dca-btc' });
      expect(intent?.status).toBe('refused');
      const [placed] = world.sandbox.exchange.orderHistory({});
      if (placed === undefined) throw new Error('the exchange took the order');
      await engine.checkLedger();
      expect(world.fatal).toEqual([]);
      expect((await world.journal.getOrder(placed.orderId))?.intentId).toBe(intent?.intentId);
      expect(formatDecimal((await world.journal.budgetSpent({ instance: 'dca-btc', asset: 'USDT', timeZone: 'UTC' }, slot)).day)).toBe(formatDecimal(placed.filledQuote));
      expect(world.logs.find((line) => line.fields['event'] === 'order-placed-after-all')).toMatchObject({ level: 'error', fields: { orderId: placed.orderId, was: 'refused (E_EXCHANGE_VALIDATION)' } });
      expect(await world.journal.listFindings({ unacknowledged: true })).toEqual([]);
      // Read again: recorded once, counted once.
      await engine.checkLedger();
      expect(formatDecimal((await world.journal.budgetSpent({ instance: 'dca-btc', asset: 'USDT', timeZone: 'UTC' }, slot)).day)).toBe(formatDecimal(placed.filledQuote));

      // As a stacker before this one left such an order: reported foreign, acknowledged, counted nowhere.
      const later = slot + 86_400_000;
      world.sandbox.faults.inject({ path: ORDER_PATH, kind: 'status', status: 422, body: { code: 32, message: 'Validation failed', errors: { amount: ['Amount too small.'] } }, commit: true });
      expect(await engine.runSlot('dca-btc', later)).toBe('done');
      const second = world.sandbox.exchange.orderHistory({}).find((order) => order.orderId !== placed.orderId);
      if (second === undefined) throw new Error('the exchange took the second order');
      await world.journal.recordFinding({ kind: 'foreign', instance: 'dca-btc', clientOrderId: second.clientOrderId, orderId: second.orderId, market: 'BTC_USDT', detail: 'this journal never sent it', acknowledged: true });
      await engine.checkLedger();
      expect(world.fatal).toEqual([]);
      expect(formatDecimal((await world.journal.budgetSpent({ instance: 'dca-btc', asset: 'USDT', timeZone: 'UTC' }, later)).day)).toBe(formatDecimal(second.filledQuote));
    });

    it('stops trading on an order under the id of an intent refused before it was sent, saying so', async () => {
      const engine = world.engine([{ ...dcaBtc(), budgets: { day: new Decimal('1') } }], { ledger: {} });
      const slot = Date.now() + 60_000;
      expect(await engine.runSlot('dca-btc', slot)).toBe('done');
      expect((await world.journal.listIntents({ instance: 'dca-btc' }))[0]).toMatchObject({ status: 'refused', sentAtMs: null });
      placeAtExchange(slot);
      await engine.checkLedger();
      expect(world.fatal[0]?.message).toMatch(/this journal never sent it \(its intent \S+ was refused before it was sent\)/);
    });

    it('ignores orders without an instance id scheme of ours, and orders of instances it does not run', async () => {
      world.sandbox.exchange.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.001'), clientOrderId: 'my-hand-order-1' });
      placeAtExchange(PAST_SLOT, 0, 'someone-else');
      const report = await world.engine([dcaBtc()], { ledger: {} }).checkLedger();
      expect(report).toMatchObject({ ours: 0, adopted: [], linked: [] });
    });

    it('waits with slots while the history cannot be read, and runs them once it can', async () => {
      world.sandbox.faults.inject({ path: HISTORY_PATH, kind: 'status', status: 503, body: 'maintenance', times: 4 });
      const engine = world.engine([dcaBtc()], { ledger: {} });
      const slot = Date.now() + 60_000;
      expect(await engine.runSlot('dca-btc', slot)).toBe('skipped');
      expect((await world.journal.getSlot({ instance: 'dca-btc', slotTimeMs: slot }))?.reason).toMatch(/order history could not be read/);
      expect(engine.health().ledgerProblem).toMatch(/E_UNAVAILABLE/);
      expect(world.sandbox.exchange.orderHistory({})).toHaveLength(0);
      world.sandbox.faults.clear();
      expect(await engine.runSlot('dca-btc', slot + 1000)).toBe('done');
    });

    it('finds the order of a lost answer that the exchange keeps under its clientOrderId in capitals, records it once, and trades on', async () => {
      world.sandbox.faults.inject({ path: ORDER_PATH, kind: 'drop-after-commit' });
      for (const path of [HISTORY_PATH, '/api/v4/orders']) world.sandbox.faults.inject({ path, kind: 'upper-ids', times: Number.POSITIVE_INFINITY });
      const engine = world.engine([dcaBtc()], { ledger: {} });
      const slot = Date.now() + 60_000;
      expect(await engine.runSlot('dca-btc', slot)).toBe('done');
      const [placed] = world.sandbox.exchange.orderHistory({});
      const [intent] = await world.journal.listIntents({ instance: 'dca-btc' });
      expect(intent).toMatchObject({ status: 'done', clientOrderId: placed?.clientOrderId });
      expect(await world.journal.getOrder(placed?.orderId ?? '')).toMatchObject({ clientOrderId: placed?.clientOrderId });
      // The history, read before the next slot, shows it in capitals: known, neither adopted nor foreign.
      expect(await engine.runSlot('dca-btc', slot + 1000)).toBe('done');
      expect(world.sandbox.exchange.orderHistory({})).toHaveLength(2);
      expect(world.fatal).toEqual([]);
    });

    it('reads the history up to now when the journal marks it checked in the future (this machine\'s clock was ahead, since set right): slots run, not skipped for hours', async () => {
      const now = Date.now();
      await world.journal.setLedgerCheckedThrough(now + 8 * 3_600_000);
      const engine = world.engine([dcaBtc()], { ledger: {} });
      expect((await engine.checkLedger())?.unreadable).toEqual([]);
      expect(world.logs.some((line) => line.fields['event'] === 'ledger-mark-ahead')).toBe(true);
      expect(await engine.runSlot('dca-btc', now + 60_000)).toBe('done');
      expect(world.sandbox.exchange.orderHistory({})).toHaveLength(1);
    });

    it('reads the history once more before giving a slot up for one answer it could not read: a one-off garbled answer does not cost the slot', async () => {
      const engine = world.engine([dcaBtc()], { ledger: {} });
      expect((await engine.checkLedger())?.accounts).toEqual(['default']);
      world.sandbox.faults.inject({ path: HISTORY_PATH, kind: 'status', status: 200, body: '{"unexpected":"form"}', times: 1 });
      expect(await engine.runSlot('dca-btc', Date.now() + 60_000)).toBe('done');
      expect(world.sandbox.exchange.orderHistory({})).toHaveLength(1);
    });

    it('sends nothing while the history answers in a form it cannot read, after it was read: a lost answer could not be looked up; it trades again once it reads', async () => {
      const engine = world.engine([dcaBtc()], { ledger: {} });
      expect((await engine.checkLedger())?.accounts).toEqual(['default']);
      // The exchange changed its format: its order answers and its history are both unreadable.
      world.sandbox.faults.inject({ path: HISTORY_PATH, kind: 'status', status: 200, body: '{"BTC_USDT":[{"amount":"lots"}]}', times: Number.POSITIVE_INFINITY });
      world.sandbox.faults.inject({ path: ORDER_PATH, kind: 'status', status: 200, body: 'garbage', commit: true, times: Number.POSITIVE_INFINITY });
      const slot = Date.now() + 60_000;
      for (const at of [slot, slot + 1000, slot + 2000]) expect(await engine.runSlot('dca-btc', at)).toBe('skipped');
      expect(world.sandbox.exchange.orderHistory({})).toHaveLength(0);
      expect((await world.journal.getSlot({ instance: 'dca-btc', slotTimeMs: slot }))?.reason).toMatch(
        /^not run: the exchange's order history could not be read: it answers in a form stacker cannot read \(.*HTTP 200: unexpected answer: history\.BTC_USDT\[0\].*\), so an order whose answer was lost could not be looked up; nothing is sent until it reads again$/,
      );
      world.sandbox.faults.clear();
      expect(await engine.runSlot('dca-btc', slot + 3000)).toBe('done');
      expect(world.sandbox.exchange.orderHistory({})).toHaveLength(1);
    });
  });
});
