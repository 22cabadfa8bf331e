import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deriveClientOrderId } from '../../src/domain/client-order-id.ts';
import { Decimal, formatDecimal } from '../../src/domain/money.ts';
import { defineStrategy, param } from '../../strategies/sdk.ts';
import { killSwitch } from '../../src/engine/kill-switch.ts';
import { Engine } from '../../src/engine/engine.ts';
import { noEngineMetrics } from '../../src/engine/observer.ts';
import { DEMO_EMPTY_FLEX_PLAN_ID, DEMO_FLEX_PLAN_ID, DEMO_PRICES } from '../../src/sim/seed.ts';
import { fixedPrices } from '../../src/sim/prices.ts';
import { dca } from '../../strategies/dca.ts';
import { flexSweep } from '../../strategies/flex-sweep.ts';
import { balanceReport } from '../../strategies/balance-report.ts';
import { ENGINE_JOURNALS, type EngineWorld, TEST_SETTLE_WINDOW_MS, engineWorld, runtimeOf, transferThenBuy } from './harness.ts';

// The engine against the real sandbox over HTTP with a real journal (SQLite, and PostgreSQL when
// the test run has a cluster): each case checks the journal against the sandbox's own books, so
// "0 duplicates, 0 lost" is counted, not assumed.
const SLOT = Date.UTC(2026, 10, 22, 9, 0, 0);
const ORDER_PATH = '/api/v4/order/stock_market';
const TRANSFER_PATH = '/api/v4/main-account/transfer';
const WITHDRAW_PATH = '/api/v4/main-account/smart-flex/investments/withdraw';

describe.each(ENGINE_JOURNALS)('the money rule (%s journal)', (kind) => {
  let world: EngineWorld;
  beforeEach(async () => {
    world = await engineWorld({}, kind);
  });
  afterEach(async () => {
    await world.close();
  });

  const dcaBtc = (env: Record<string, string> = {}) =>
    runtimeOf({ instance: 'dca-btc', strategy: dca, env: { STRATEGY: 'dca', SCHEDULE: '0 9 * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001', STP: 'cancel_new', ...env } });

  const sandboxOrders = () => world.sandbox.exchange.orderHistory({ market: 'BTC_USDT' });

  describe('a buy slot', () => {
    it('journals the intent, places one order with the derived clientOrderId, and logs its transition', async () => {
      const engine = world.engine([dcaBtc()]);
      expect(await engine.runSlot('dca-btc', SLOT)).toBe('done');

      const orders = sandboxOrders();
      expect(orders).toHaveLength(1);
      const clientOrderId = deriveClientOrderId('dca-btc', SLOT, 0);
      expect(orders[0]?.clientOrderId).toBe(clientOrderId);
      expect(formatDecimal(orders[0]?.amount ?? new Decimal(0))).toBe('0.001');
      expect(orders[0]?.stp).toBe('cn');

      const [intent] = await world.journal.listIntents({ instance: 'dca-btc' });
      expect(intent?.status).toBe('done');
      expect(intent?.clientOrderId).toBe(clientOrderId);
      const stored = await world.journal.getOrder(orders[0]?.orderId ?? '');
      expect(stored?.status).toBe('FILLED');
      expect(formatDecimal(stored?.filledBase ?? new Decimal(0))).toBe('0.001');
      const transitions = await world.journal.orderTransitions(orders[0]?.orderId ?? '');
      expect(transitions.map((t) => t.toStatus)).toEqual(['FILLED']);
      const logged = world.logs.filter((line) => line.fields['event'] === 'order-transition');
      expect(logged).toHaveLength(1);
      expect(logged[0]?.fields).toMatchObject({ to: 'FILLED', filledBase: '0.001', filledQuote: '65', clientOrderId });
    });

    it('never runs a journalled slot twice, whatever asks for it', async () => {
      const engine = world.engine([dcaBtc()]);
      expect(await engine.runSlot('dca-btc', SLOT)).toBe('done');
      expect(await engine.runSlot('dca-btc', SLOT)).toBe('already');
      const again = world.engine([dcaBtc()]);
      expect(await again.runSlot('dca-btc', SLOT)).toBe('already');
      expect(sandboxOrders()).toHaveLength(1);
    });

    it('runs two overlapping calls of one slot once', async () => {
      const engine = world.engine([dcaBtc()]);
      const outcomes = await Promise.all([engine.runSlot('dca-btc', SLOT), engine.runSlot('dca-btc', SLOT)]);
      expect(outcomes.sort()).toEqual(['already', 'done']);
      expect(sandboxOrders()).toHaveLength(1);
    });

    it('funds the trade balance from main first when allowed, and buys after the transfer shows', async () => {
      world.sandbox.exchange.transfer({ ticker: 'USDT', amount: new Decimal('1000'), from: 'spot', to: 'main' });
      const engine = world.engine([dcaBtc({ ALLOW_TRANSFER: 'true' })]);
      expect(await engine.runSlot('dca-btc', SLOT)).toBe('done');
      const intents = await world.journal.listIntents({ instance: 'dca-btc' });
      expect(intents.map((i) => [i.intent.kind, i.status]).sort()).toEqual([
        ['buy-stock-market', 'done'],
        ['transfer', 'done'],
      ]);
      expect(sandboxOrders()).toHaveLength(1);
    });
  });

  describe('market rules that change under a running daemon', () => {
    it('are read again at the next slot after the exchange refused a buy built with them: the guard then refuses what the exchange would, and nothing more is sent', async () => {
      const engine = world.engine([dcaBtc()]);
      expect(await engine.runSlot('dca-btc', SLOT)).toBe('done');
      // The exchange raises its minimum total above what the buy comes to (65 USDT); the engine's copy of the rules is minutes old.
      const btc = (await world.sandbox.exchange.markets()).find((rules) => rules.name === 'BTC_USDT');
      if (btc === undefined) throw new Error('the sandbox lists BTC_USDT');
      world.sandbox.exchange.addMarket({ ...btc, minQuoteTotal: new Decimal('100') });
      expect(await engine.runSlot('dca-btc', SLOT + 86_400_000)).toBe('done');
      const [, refusedByExchange] = await world.journal.listIntents({ instance: 'dca-btc' }).then((all) => all.sort((a, b) => a.slotTimeMs - b.slotTimeMs));
      expect(refusedByExchange?.error?.code).toBe('E_EXCHANGE_VALIDATION');
      expect(refusedByExchange?.sentAtMs).not.toBeNull();
      expect(await engine.runSlot('dca-btc', SLOT + 2 * 86_400_000)).toBe('done');
      const third = (await world.journal.listIntents({ instance: 'dca-btc', slotTimeMs: SLOT + 2 * 86_400_000 }))[0];
      expect(third).toMatchObject({ status: 'refused', sentAtMs: null, error: { code: 'below-min-total' } });
      expect(sandboxOrders()).toHaveLength(1);
    });

    it('are read again at the next slot while the strategy refuses its market as not listed: a market listed since is bought on at once', async () => {
      const sol = await engineWorld({ prices: fixedPrices({ ...DEMO_PRICES, SOL_USDT: '150' }) }, kind);
      try {
        const dcaSol = runtimeOf({ instance: 'dca-sol', strategy: dca, env: { STRATEGY: 'dca', SCHEDULE: '0 9 * * *', MARKET: 'SOL_USDT', AMOUNT: '0.1' } });
        const engine = sol.engine([dcaSol]);
        expect(await engine.runSlot('dca-sol', SLOT)).toBe('done');
        expect((await sol.journal.listIntents({ instance: 'dca-sol', slotTimeMs: SLOT }))[0]).toMatchObject({ status: 'refused', intent: { kind: 'refusal', reason: 'unknown-market' } });
        const btc = (await sol.sandbox.exchange.markets()).find((rules) => rules.name === 'BTC_USDT');
        if (btc === undefined) throw new Error('the sandbox lists BTC_USDT');
        sol.sandbox.exchange.addMarket({ ...btc, name: 'SOL_USDT', base: 'SOL' });
        sol.sandbox.exchange.seedSpot('USDT', new Decimal('1000'));
        expect(await engine.runSlot('dca-sol', SLOT + 86_400_000)).toBe('done');
        expect((await sol.journal.listIntents({ instance: 'dca-sol', slotTimeMs: SLOT + 86_400_000 }))[0]?.status).toBe('done');
      } finally {
        await sol.close();
      }
    });

    it('are read again at the next slot while they say the market is not trading: a market opened again is bought on at once, not ten minutes on', async () => {
      const engine = world.engine([dcaBtc()]);
      const btc = (await world.sandbox.exchange.markets()).find((rules) => rules.name === 'BTC_USDT');
      if (btc === undefined) throw new Error('the sandbox lists BTC_USDT');
      world.sandbox.exchange.addMarket({ ...btc, tradesEnabled: false });
      expect(await engine.runSlot('dca-btc', SLOT)).toBe('done');
      expect((await world.journal.listIntents({ instance: 'dca-btc', slotTimeMs: SLOT }))[0]).toMatchObject({ status: 'refused', error: { code: 'trading-disabled' } });
      world.sandbox.exchange.addMarket(btc);
      expect(await engine.runSlot('dca-btc', SLOT + 86_400_000)).toBe('done');
      expect((await world.journal.listIntents({ instance: 'dca-btc', slotTimeMs: SLOT + 86_400_000 }))[0]?.status).toBe('done');
      expect(sandboxOrders()).toHaveLength(1);
    });
  });

  describe('all or nothing: the guards run on every money intent before anything is sent', () => {
    // Found on main before contract 2: [transfer 10 USDT, buy] with MAX_ORDER_QUOTE=1 moved the
    // 10 USDT, then refused the buy, and the slot ended done (transferThenBuy, in the harness).
    it('sends neither the transfer nor the buy when MAX_ORDER_QUOTE refuses the buy, and journals which refusal stopped which', async () => {
      const mainBefore = formatDecimal(world.sandbox.exchange.mainBalance('USDT'));
      const tradeBefore = formatDecimal(world.sandbox.exchange.tradeBalance('USDT').available);
      const engine = world.engine([runtimeOf({ instance: 'tb', strategy: transferThenBuy, env: { MARKET: 'BTC_USDT' }, maxOrderQuote: new Decimal('1') })]);
      await engine.runSlot('tb', SLOT);
      expect(formatDecimal(world.sandbox.exchange.mainBalance('USDT'))).toBe(mainBefore);
      expect(sandboxOrders()).toEqual([]);
      expect(formatDecimal(world.sandbox.exchange.tradeBalance('USDT').available)).toBe(tradeBefore);
      const intents = await world.journal.listIntents({ instance: 'tb' });
      expect(intents.map((i) => [i.index, i.intent.kind, i.status, i.error?.code]).sort()).toEqual([
        [0, 'transfer', 'refused', 'group-refused'],
        [1, 'buy-stock-market', 'refused', 'above-max-order'],
      ]);
      expect(intents.find((i) => i.index === 0)?.error?.message).toMatch(/intent #1 \(buy-stock-market\)/);
    });
  });

  describe('a lost answer is looked up, never blindly resent', () => {
    it('response dropped after the order committed: finds the order, places no second one', async () => {
      world.sandbox.faults.inject({ path: ORDER_PATH, kind: 'drop-after-commit' });
      expect(await world.engine([dcaBtc()]).runSlot('dca-btc', SLOT)).toBe('done');
      expect(sandboxOrders()).toHaveLength(1);
      const [intent] = await world.journal.listIntents({ instance: 'dca-btc' });
      expect(intent?.status).toBe('done');
      expect(await world.journal.openOrders()).toHaveLength(0);
    });

    it('5xx after the order committed: finds it, no second order', async () => {
      world.sandbox.faults.inject({ path: ORDER_PATH, kind: 'status', status: 503, body: { message: 'maintenance' }, commit: true });
      expect(await world.engine([dcaBtc()]).runSlot('dca-btc', SLOT)).toBe('done');
      expect(sandboxOrders()).toHaveLength(1);
    });

    it("5xx after the order committed, its body worded as a nonce refusal: still a lost answer, found, never signed again and resent", async () => {
      // A nonce refusal is a 4xx from the exchange's door and is resent; a 5xx never is, whatever it says.
      world.sandbox.faults.inject({ path: ORDER_PATH, kind: 'status', status: 503, body: { code: 0, errors: {}, message: 'Too many requests.' }, commit: true });
      expect(await world.engine([dcaBtc()]).runSlot('dca-btc', SLOT)).toBe('done');
      expect(sandboxOrders()).toHaveLength(1);
      const [intent] = await world.journal.listIntents({ instance: 'dca-btc' });
      expect([intent?.status, intent?.attempts]).toEqual(['done', 1]);
    });

    it('5xx before anything happened: never sent again; looked up over the settle window, then not-found with its budget still counted', async () => {
      world.sandbox.faults.inject({ path: ORDER_PATH, kind: 'status', status: 502, body: { message: 'bad gateway' } });
      const budgeted = { ...dcaBtc(), budgets: { day: new Decimal('1000') } };
      const engine = world.engine([budgeted]);
      expect(await engine.runSlot('dca-btc', SLOT)).toBe('failed');
      const intent = async () => (await world.journal.listIntents({ instance: 'dca-btc' }))[0];
      expect([(await intent())?.status, (await intent())?.attempts]).toEqual(['unknown', 1]);
      // What is still to come, said as such: a stop before the window ends leaves it to the next start.
      expect((await intent())?.error?.message).toMatch(/; not in the order history yet; to be looked up again for \d+ s from the send \(by the next start if stacker stops first\), never sent again; its budget stays counted meanwhile$/);
      // An empty lookup seconds later is no proof: still unknown within the window.
      await engine.track();
      expect((await intent())?.status).toBe('unknown');
      world.advance(TEST_SETTLE_WINDOW_MS);
      await engine.track();
      expect([(await intent())?.status, (await intent())?.error?.code, (await intent())?.attempts]).toEqual(['not-found', 'E_NOT_FOUND', 1]);
      expect(sandboxOrders()).toHaveLength(0);
      expect(await world.journal.heldBudgetReservations('dca-btc')).toHaveLength(1);
    });

    it('5xx after the order committed while the history lags: the settle-window lookups find it; nothing is sent twice', async () => {
      world.sandbox.faults.inject({ path: ORDER_PATH, kind: 'status', status: 502, body: { message: 'bad gateway' }, commit: true });
      world.sandbox.faults.historyLagMs = 600;
      const engine = world.engine([dcaBtc()]);
      expect(await engine.runSlot('dca-btc', SLOT)).toBe('failed');
      expect((await world.journal.listIntents({ instance: 'dca-btc' }))[0]?.status).toBe('unknown');
      await new Promise((resolve) => setTimeout(resolve, 700));
      await engine.track();
      const [intent] = await world.journal.listIntents({ instance: 'dca-btc' });
      expect([intent?.status, intent?.attempts]).toEqual(['done', 1]);
      expect(sandboxOrders()).toHaveLength(1);
      expect((await world.journal.listOrders())[0]?.orderId).toBe(sandboxOrders()[0]?.orderId);
    });

    it('an answer committed late (504 now, the order a moment later) is found, not sent again, and counted as placed when found', async () => {
      world.sandbox.faults.inject({ path: ORDER_PATH, kind: 'commit-late', status: 504, body: 'Gateway Time-out', latencyMs: 300 });
      const placed: string[] = [];
      const engine = new Engine({ ...world.deps(), metrics: { ...noEngineMetrics, orderPlaced: (instance) => void placed.push(instance) } }, [dcaBtc()], { runId: null });
      expect(await engine.runSlot('dca-btc', SLOT)).toBe('failed');
      expect(placed).toEqual([]);
      await new Promise((resolve) => setTimeout(resolve, 400));
      await engine.track();
      expect((await world.journal.listIntents({ instance: 'dca-btc' }))[0]?.status).toBe('done');
      expect(sandboxOrders()).toHaveLength(1);
      // stacker_orders_placed_total counts the order the lookup found, as it counts one answered.
      expect(placed).toEqual(['dca-btc']);
    });

    it('a reset before anything happened stays unknown over the window, then is not-found, never resent', async () => {
      world.sandbox.faults.inject({ path: ORDER_PATH, kind: 'reset' });
      const engine = world.engine([dcaBtc()]);
      expect(await engine.runSlot('dca-btc', SLOT)).toBe('failed');
      expect((await world.journal.listIntents({ instance: 'dca-btc' }))[0]?.status).toBe('unknown');
      await engine.track();
      expect((await world.journal.listIntents({ instance: 'dca-btc' }))[0]?.status).toBe('unknown');
      world.advance(TEST_SETTLE_WINDOW_MS);
      await engine.track();
      const [intent] = await world.journal.listIntents({ instance: 'dca-btc' });
      expect([intent?.status, intent?.error?.code]).toEqual(['not-found', 'E_NOT_FOUND']);
      expect(sandboxOrders()).toHaveLength(0);
    });

    it('a slow answer past the timeout is resolved by the lookup once it lands', async () => {
      world.sandbox.faults.inject({ path: ORDER_PATH, kind: 'latency', latencyMs: 2500 });
      const engine = world.engine([dcaBtc()]);
      await engine.runSlot('dca-btc', SLOT);
      await new Promise((resolve) => setTimeout(resolve, 800));
      await engine.track();
      expect(sandboxOrders()).toHaveLength(1);
      expect((await world.journal.listIntents({ instance: 'dca-btc' }))[0]?.status).toBe('done');
    });

    it('a rate-limit 429 means nothing happened: the slot fails, no order, trading goes on', async () => {
      world.sandbox.faults.inject({ path: ORDER_PATH, kind: 'status', status: 429, body: { code: 0, message: 'Too many attempts', errors: {} }, times: 5 });
      const engine = world.engine([dcaBtc()]);
      expect(await engine.runSlot('dca-btc', SLOT)).toBe('failed');
      expect(sandboxOrders()).toHaveLength(0);
      expect(world.fatal).toHaveLength(0);
      expect(engine.fatal).toBeNull();
    });

    it('a nonce 429 ("Too many requests.") that comes back on all three signings of a read stops trading, naming another client on the key', async () => {
      world.sandbox.faults.inject({ path: '/api/v4/trade-account/balance', kind: 'status', status: 429, body: { code: 0, errors: {}, message: 'Too many requests.' }, times: 3 });
      const engine = world.engine([dcaBtc()]);
      await engine.runSlot('dca-btc', SLOT);
      expect(world.fatal).toHaveLength(1);
      expect(world.fatal[0]?.code).toBe('E_NONCE');
      expect(world.fatal[0]?.message).toMatch(/another client is using this API key/);
      expect(await engine.runSlot('dca-btc', SLOT + 60_000)).toBe('skipped');
      expect(sandboxOrders()).toHaveLength(0);
    });

    it('an order refused in those words is looked up, and not found is a lost answer, never signed and sent again: a throttle says the same after the fact', async () => {
      world.sandbox.faults.inject({ path: ORDER_PATH, kind: 'status', status: 429, body: { code: 0, errors: {}, message: 'Too many requests.' } });
      const engine = world.engine([dcaBtc()]);
      expect(await engine.runSlot('dca-btc', SLOT)).toBe('failed');
      expect(sandboxOrders()).toHaveLength(0);
      const [intent] = await world.journal.listIntents({ instance: 'dca-btc' });
      expect([intent?.status, intent?.error?.code]).toEqual(['unknown', 'E_UNAVAILABLE']);
      expect(world.fatal).toEqual([]);
      // The next slot buys.
      expect(await engine.runSlot('dca-btc', SLOT + 86_400_000)).toBe('done');
      expect(sandboxOrders()).toHaveLength(1);
    });

    it('an order taken and answered in those words is found by the lookup and recorded: one order', async () => {
      world.sandbox.faults.inject({ path: ORDER_PATH, kind: 'status', status: 429, body: { code: 0, errors: {}, message: 'Too many requests.' }, commit: true });
      expect(await world.engine([dcaBtc()]).runSlot('dca-btc', SLOT)).toBe('done');
      expect(sandboxOrders()).toHaveLength(1);
      expect(world.fatal).toEqual([]);
    });

    it('refused credentials stop trading before anything is sent', async () => {
      const engine = world.engine([dcaBtc()], { credentials: { apiKey: world.sandbox.apiKey, apiSecret: 'not-the-secret' } });
      await engine.runSlot('dca-btc', SLOT);
      expect(world.fatal[0]?.code).toBe('E_AUTH');
      expect(sandboxOrders()).toHaveLength(0);
      expect(JSON.stringify(world.logs)).not.toContain('not-the-secret');
    });
  });

  describe("a gateway's 403 page in front of the exchange (Cloudflare's \"Attention Required!\")", () => {
    const BLOCKED = '<html><head><title>Attention Required! | Cloudflare</title></head><body>Sorry, you have been blocked. Ray ID: 8a1b</body></html>';

    it('on a read is waited out: trading goes on, the slot buys', async () => {
      world.sandbox.faults.inject({ path: '/api/v4/trade-account/balance', kind: 'status', status: 403, body: BLOCKED });
      expect(await world.engine([dcaBtc()]).runSlot('dca-btc', SLOT)).toBe('done');
      expect(world.fatal).toEqual([]);
      expect(sandboxOrders()).toHaveLength(1);
    });

    it("on an order it may have let through is a lost answer: looked up and found, trading goes on", async () => {
      world.sandbox.faults.inject({ path: ORDER_PATH, kind: 'status', status: 403, body: BLOCKED, commit: true });
      expect(await world.engine([dcaBtc()]).runSlot('dca-btc', SLOT)).toBe('done');
      expect(world.fatal).toEqual([]);
      expect(sandboxOrders()).toHaveLength(1);
      const [intent] = await world.journal.listIntents({ instance: 'dca-btc' });
      expect(intent?.status).toBe('done');
    });
  });

  describe('a 429 that came after the exchange took the order', () => {
    it('is a lost answer: the order is looked up, found, recorded and counted, never called not sent nor foreign', async () => {
      world.sandbox.faults.inject({ path: ORDER_PATH, kind: 'status', status: 429, body: 'Too Many Requests', commit: true });
      const engine = world.engine([dcaBtc({ AMOUNT: '0.001' })]);
      expect(await engine.runSlot('dca-btc', SLOT)).toBe('done');
      expect(sandboxOrders()).toHaveLength(1);
      const [intent] = await world.journal.listIntents({ instance: 'dca-btc' });
      expect(intent?.status).toBe('done');
      expect(await world.journal.getOrder(sandboxOrders()[0]?.orderId ?? '')).not.toBeNull();
    });
  });

  describe("the exchange's own throttle", () => {
    it('a buy it turned away (HTTP 400 "Too Many Attempts.") was not placed: not looked up, journalled failed, its budget given back, bought at the next slot', async () => {
      world.sandbox.faults.inject({ path: ORDER_PATH, kind: 'status', status: 400, body: { message: 'Too Many Attempts.', code: 0 } });
      const budgeted = runtimeOf({ instance: 'dca-btc', strategy: dca, env: { STRATEGY: 'dca', SCHEDULE: '0 9 * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001' }, budgets: { day: new Decimal('1000') } });
      const engine = world.engine([budgeted]);
      expect(await engine.runSlot('dca-btc', SLOT)).toBe('failed');
      expect(sandboxOrders()).toHaveLength(0);
      const [intent] = await world.journal.listIntents({ instance: 'dca-btc', slotTimeMs: SLOT });
      expect([intent?.status, intent?.error?.code]).toEqual(['failed', 'E_RATE_LIMIT']);
      expect(world.logs.some((line) => line.fields['event'] === 'order-answer-lost')).toBe(false);
      expect(await world.journal.heldBudgetReservations()).toEqual([]);
      expect(await engine.runSlot('dca-btc', SLOT + 3_600_000)).toBe('done');
      expect(sandboxOrders()).toHaveLength(1);
    });
  });

  describe('transfers and flex withdrawals', () => {
    it('a transfer whose answer was lost is confirmed by the trade balance, and the buy goes ahead', async () => {
      world.sandbox.exchange.transfer({ ticker: 'USDT', amount: new Decimal('1000'), from: 'spot', to: 'main' });
      world.sandbox.faults.inject({ path: TRANSFER_PATH, kind: 'drop-after-commit' });
      expect(await world.engine([dcaBtc({ ALLOW_TRANSFER: 'true' })]).runSlot('dca-btc', SLOT)).toBe('done');
      const transfers = world.sandbox.exchange.ledger().filter((entry) => entry.reason === 'transfer' && entry.account === 'spot');
      expect(transfers).toHaveLength(2); // the seed's spot→main, then exactly one main→spot
      expect(sandboxOrders()).toHaveLength(1);
    });

    it('a transfer whose answer was lost is not taken for done because other money moved from main to spot in the same seconds: it stays unknown, said at warn, and nothing is bought with money moved for something else', async () => {
      world.sandbox.exchange.transfer({ ticker: 'USDT', amount: new Decimal('1000'), from: 'spot', to: 'main' });
      // Refused before it was performed; the answer looks like any lost one (a 503).
      world.sandbox.faults.inject({ path: TRANSFER_PATH, kind: 'status', status: 503, body: 'Service Unavailable' });
      const slot = world.engine([dcaBtc({ ALLOW_TRANSFER: 'true' })]).runSlot('dca-btc', SLOT);
      // The operator moves money of their own to spot by hand, as the engine watches the balances.
      await expect.poll(() => world.logs.some((line) => line.fields['event'] === 'transfer-send')).toBe(true);
      world.sandbox.exchange.transfer({ ticker: 'USDT', amount: new Decimal('777.77'), from: 'main', to: 'spot' });
      expect(await slot).toBe('failed');
      const intents = await world.journal.listIntents({ instance: 'dca-btc', slotTimeMs: SLOT });
      expect(intents.map((i) => [i.intent.kind, i.status])).toEqual([
        ['transfer', 'unknown'],
        ['buy-stock-market', 'refused'],
      ]);
      expect(intents[0]?.error?.message).toContain('do not show exactly this transfer');
      expect(sandboxOrders()).toHaveLength(0);
      expect(world.logs.filter((line) => line.fields['event'] === 'intent-unknown').map((line) => [line.level, line.fields['intent']])).toEqual([['warn', 'transfer']]);
    });

    it('a transfer that provably did not happen stops the buy it was funding', async () => {
      world.sandbox.exchange.transfer({ ticker: 'USDT', amount: new Decimal('1000'), from: 'spot', to: 'main' });
      world.sandbox.faults.inject({ path: TRANSFER_PATH, kind: 'reset' });
      expect(await world.engine([dcaBtc({ ALLOW_TRANSFER: 'true' })]).runSlot('dca-btc', SLOT)).toBe('failed');
      const intents = await world.journal.listIntents({ instance: 'dca-btc' });
      const buy = intents.find((i) => i.intent.kind === 'buy-stock-market');
      expect(buy?.status).toBe('refused');
      expect(buy?.error?.code).toBe('earlier-intent-stopped');
      expect(sandboxOrders()).toHaveLength(0);
    });

    it('sends no second transfer of an asset while one is unknown (answer lost, the balance not showing it): the buy it was to fund waits with it', async () => {
      world.sandbox.exchange.transfer({ ticker: 'USDT', amount: new Decimal('1000'), from: 'spot', to: 'main' });
      // Answered 504 at once, booked 2 s later: past the engine's settle time, so `unknown`.
      world.sandbox.faults.inject({ path: TRANSFER_PATH, kind: 'commit-late', status: 504, body: 'Gateway Time-out', latencyMs: 2_000 });
      const engine = world.engine([dcaBtc({ ALLOW_TRANSFER: 'true' })]);
      await engine.runSlot('dca-btc', SLOT);
      const [first] = (await world.journal.listIntents({ instance: 'dca-btc', slotTimeMs: SLOT })).filter((i) => i.intent.kind === 'transfer');
      expect(first?.status).toBe('unknown');
      expect(await engine.runSlot('dca-btc', SLOT + 3_600_000)).toBe('done');
      const next = await world.journal.listIntents({ instance: 'dca-btc', slotTimeMs: SLOT + 3_600_000 });
      expect(next.map((i) => [i.intent.kind, i.status, i.error?.code])).toEqual([
        ['transfer', 'refused', 'transfer-unresolved'],
        ['buy-stock-market', 'refused', 'earlier-intent-stopped'],
      ]);
      expect(next[0]?.error?.message).toContain(`stacker journal resolve --intent ${first?.intentId ?? ''}`);
      await new Promise((resolve) => setTimeout(resolve, 2_200));
      // One transfer reached spot (the late one), none after it; nothing was bought.
      const transfers = world.sandbox.exchange.ledger().filter((entry) => entry.reason === 'transfer' && entry.account === 'spot' && entry.delta.isPositive());
      expect(transfers).toHaveLength(1);
      expect(sandboxOrders()).toHaveLength(0);
    });

    it("a transfer the exchange's throttle turned away (HTTP 400 \"Too Many Attempts.\") did not happen: journalled failed with a warning at the time, and the next slot transfers and buys", async () => {
      world.sandbox.exchange.transfer({ ticker: 'USDT', amount: new Decimal('1000'), from: 'spot', to: 'main' });
      const mainBefore = formatDecimal(world.sandbox.exchange.mainBalance('USDT'));
      world.sandbox.faults.inject({ path: TRANSFER_PATH, kind: 'status', status: 400, body: { message: 'Too Many Attempts.', code: 0 } });
      const engine = world.engine([dcaBtc({ ALLOW_TRANSFER: 'true' })]);
      expect(await engine.runSlot('dca-btc', SLOT)).toBe('failed');
      expect(formatDecimal(world.sandbox.exchange.mainBalance('USDT'))).toBe(mainBefore);
      const first = await world.journal.listIntents({ instance: 'dca-btc', slotTimeMs: SLOT });
      expect(first.map((i) => [i.intent.kind, i.status, i.error?.code])).toEqual([
        ['transfer', 'failed', 'E_RATE_LIMIT'],
        ['buy-stock-market', 'refused', 'earlier-intent-stopped'],
      ]);
      const warned = world.logs.filter((line) => line.level === 'warn' && line.fields['event'] === 'send-failed');
      expect(warned.map((line) => line.message)).toEqual([expect.stringMatching(/^not sent, skipping this tick: .*transfer answered HTTP 400 code 0: Too Many Attempts\.$/)]);
      expect(world.logs.some((line) => line.fields['event'] === 'intent-unknown' || /answer lost/.test(line.message))).toBe(false);

      expect(await engine.runSlot('dca-btc', SLOT + 3_600_000)).toBe('done');
      const next = await world.journal.listIntents({ instance: 'dca-btc', slotTimeMs: SLOT + 3_600_000 });
      expect(next.map((i) => [i.intent.kind, i.status])).toEqual([
        ['transfer', 'done'],
        ['buy-stock-market', 'done'],
      ]);
      expect(sandboxOrders()).toHaveLength(1);
    });

    it("moves one transfer of an asset at a time: a transfer refused unperformed is not confirmed by another instance's arriving in the same second", async () => {
      // The second transfer request is answered 503 and not performed.
      world.sandbox.faults.inject({ path: TRANSFER_PATH, kind: 'status', status: 503, body: 'Service Unavailable', every: 2 });
      const engine = world.engine([runtimeOf({ instance: 'a', strategy: transferThenBuy, env: { MARKET: 'BTC_USDT' } }), runtimeOf({ instance: 'b', strategy: transferThenBuy, env: { MARKET: 'BTC_USDT' } })]);
      await Promise.all([engine.runSlot('a', SLOT), engine.runSlot('b', SLOT)]);
      const transfers = world.sandbox.exchange.ledger().filter((entry) => entry.reason === 'transfer' && entry.account === 'spot' && entry.delta.isPositive());
      expect(transfers).toHaveLength(1);
      const outcomes = (await world.journal.listIntents({})).filter((i) => i.intent.kind === 'transfer').map((i) => i.status).sort();
      expect(outcomes).toEqual(['done', 'unknown']);
      // Only the instance whose transfer arrived bought.
      expect(sandboxOrders()).toHaveLength(1);
    });

    it("sizes a transfer after the buys of the account's other instances in the same second: each sees the trade balance the one before it left, and both buy", async () => {
      // 100 USDT on the trade balance, two buys of 65 USDT each at 09:00: enough for one, not both.
      const spot = world.sandbox.exchange.tradeBalances().get('USDT')?.available ?? new Decimal(0);
      world.sandbox.exchange.transfer({ ticker: 'USDT', amount: spot.sub(100), from: 'spot', to: 'main' });
      const funded = (instance: string) =>
        runtimeOf({ instance, strategy: dca, env: { STRATEGY: 'dca', SCHEDULE: '0 9 * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001', ALLOW_TRANSFER: 'true' } });
      const engine = world.engine([funded('a'), funded('b')]);
      expect(await Promise.all([engine.runSlot('a', SLOT), engine.runSlot('b', SLOT)])).toEqual(['done', 'done']);
      expect(sandboxOrders()).toHaveLength(2);
      // The second moved only its shortfall from what the first left: 65 USDT and its 0.13 taker fee, less 35.
      const transfers = world.sandbox.exchange.ledger().filter((entry) => entry.reason === 'transfer' && entry.account === 'spot' && entry.delta.isPositive());
      expect(transfers.map((entry) => formatDecimal(entry.delta))).toEqual(['30.13']);
    });

    it("has a slot that read while another slot's buy was in flight read again in its turn: the exchange had spent it and the journal still held it, counted twice", async () => {
      // 100 USDT on the trade balance; the first buy is taken at once and answered 400 ms later.
      const spot = world.sandbox.exchange.tradeBalances().get('USDT')?.available ?? new Decimal(0);
      world.sandbox.exchange.transfer({ ticker: 'USDT', amount: spot.sub(100), from: 'spot', to: 'main' });
      world.sandbox.faults.inject({ path: ORDER_PATH, kind: 'answer-late', latencyMs: 400, times: 1 });
      const funded = (instance: string) =>
        runtimeOf({ instance, strategy: dca, env: { STRATEGY: 'dca', SCHEDULE: '0 9 * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001', ALLOW_TRANSFER: 'true' } });
      const engine = world.engine([funded('a'), funded('b')]);
      const first = engine.runSlot('a', SLOT);
      // b reads once a's order is taken and its answer is still on the way.
      while (sandboxOrders().length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      const second = engine.runSlot('b', SLOT);
      expect(await Promise.all([first, second])).toEqual(['done', 'done']);
      // b moved its own shortfall from what a left (65 USDT and its fee, less 35), not a's cost again.
      const transfers = world.sandbox.exchange.ledger().filter((entry) => entry.reason === 'transfer' && entry.account === 'spot' && entry.delta.isPositive());
      expect(transfers.map((entry) => formatDecimal(entry.delta))).toEqual(['30.13']);
    });

    it("holds back the funds of a buy whose answer was lost: the account's next slot moves its own shortfall instead of spending them, and both buys are paid when the first lands late", async () => {
      // The trade balance empty; the BTC buy's gateway answers 504 at once and its backend takes the order 1.5 s later.
      const spot = world.sandbox.exchange.tradeBalances().get('USDT')?.available ?? new Decimal(0);
      world.sandbox.exchange.transfer({ ticker: 'USDT', amount: spot, from: 'spot', to: 'main' });
      world.sandbox.faults.inject({ path: ORDER_PATH, kind: 'commit-late', status: 504, body: 'Gateway Time-out', latencyMs: 1_500, times: 1 });
      const funded = (instance: string, market: string, amount: string) =>
        runtimeOf({ instance, strategy: dca, env: { STRATEGY: 'dca', SCHEDULE: '0 9 * * *', MARKET: market, AMOUNT: amount, ALLOW_TRANSFER: 'true' } });
      const engine = world.engine([funded('dca-btc', 'BTC_USDT', '0.001'), funded('dca-eth', 'ETH_USDT', '0.01')]);
      await engine.runSlot('dca-btc', SLOT);
      expect((await world.journal.listIntents({ instance: 'dca-btc', slotTimeMs: SLOT })).map((i) => i.status)).toEqual(['done', 'unknown']);
      await engine.runSlot('dca-eth', SLOT);
      // dca-eth saw the 65.07 USDT dca-btc had moved as held, and moved its own 31.54 (0.01 ETH and its fee).
      const moved = world.sandbox.exchange.ledger().filter((entry) => entry.reason === 'transfer' && entry.account === 'spot' && entry.delta.isPositive());
      expect(moved.map((entry) => formatDecimal(entry.delta))).toEqual(['65.07', '31.54']);
      await new Promise((resolve) => setTimeout(resolve, 1_800));
      expect(world.sandbox.exchange.orderHistory({}).map((order) => order.market).sort()).toEqual(['BTC_USDT', 'ETH_USDT']);
    });

    it("holds up no other instance of the account while a strategy takes its time to decide; one whose reads went stale meanwhile reads and decides again before it sends", async () => {
      let answer: (() => void) | null = null;
      let decisions = 0;
      const slow = defineStrategy({
        name: 'slow-buy',
        describe: 'buys 0.001 BTC once told to',
        params: { MARKET: param.market({ description: 'Where to buy.', example: 'BTC_USDT' }) },
        reads: () => ['balances', 'markets', 'prices'],
        budgetAsset: () => 'USDT',
        decide: async (_view, params) => {
          decisions += 1;
          if (decisions === 1) await new Promise<void>((resolve) => (answer = resolve));
          return [{ kind: 'buy-stock-market', market: params.MARKET, amount: new Decimal('0.001') }];
        },
      });
      const engine = world.engine([dcaBtc(), runtimeOf({ instance: 'slow', strategy: slow, env: { MARKET: 'BTC_USDT' } })]);
      const slowSlot = engine.runSlot('slow', SLOT);
      await expect.poll(() => answer).not.toBeNull();
      // dca-btc buys while slow is still deciding.
      expect(await engine.runSlot('dca-btc', SLOT)).toBe('done');
      expect(sandboxOrders()).toHaveLength(1);
      (answer as unknown as () => void)();
      expect(await slowSlot).toBe('done');
      // Its first reads were from before dca-btc's buy: it read and decided again, then bought.
      expect(decisions).toBe(2);
      expect(sandboxOrders()).toHaveLength(2);
    });

    it("lets a slot that sends nothing (a balance report) finish while another instance of the account waits on its order's answer", async () => {
      world.sandbox.faults.inject({ path: ORDER_PATH, kind: 'latency', latencyMs: 1_500, times: 1 });
      const report = runtimeOf({ instance: 'report', strategy: balanceReport, env: { STRATEGY: 'balance-report', SCHEDULE: '0 9 * * *' } });
      const engine = world.engine([dcaBtc(), report]);
      const ended: string[] = [];
      const buying = engine.runSlot('dca-btc', SLOT).then((outcome) => ended.push(`dca-btc ${outcome}`));
      await expect.poll(() => world.sandbox.exchange.orderHistory({}).length + world.logs.filter((line) => line.fields['event'] === 'order-send').length).toBeGreaterThan(0);
      await engine.runSlot('report', SLOT).then((outcome) => ended.push(`report ${outcome}`));
      await buying;
      expect(ended).toEqual(['report done', 'dca-btc done']);
    });

    it('sends no second withdrawal from a flex plan while one is unknown: one shortfall is not withdrawn twice', async () => {
      const main = world.sandbox.exchange.mainBalances().get('USDT') ?? new Decimal(0);
      // Answered 504 at once, booked 2 s later: past the engine's settle time, so `unknown`.
      world.sandbox.faults.inject({ path: WITHDRAW_PATH, kind: 'commit-late', status: 504, body: 'Gateway Time-out', latencyMs: 2_000 });
      const sweep = runtimeOf({ instance: 'sweep', strategy: flexSweep, env: { STRATEGY: 'flex-sweep', SCHEDULE: '0 9 * * *', PLAN: DEMO_FLEX_PLAN_ID, MODE: 'reserve', RESERVE: formatDecimal(main.add(100)) } });
      const engine = world.engine([sweep]);
      await engine.runSlot('sweep', SLOT);
      const [first] = await world.journal.listIntents({ instance: 'sweep', slotTimeMs: SLOT });
      expect(first?.status).toBe('unknown');
      await engine.runSlot('sweep', SLOT + 3_600_000);
      const [second] = await world.journal.listIntents({ instance: 'sweep', slotTimeMs: SLOT + 3_600_000 });
      expect([second?.status, second?.error?.code]).toEqual(['refused', 'withdraw-unresolved']);
      await new Promise((resolve) => setTimeout(resolve, 2_200));
      const withdrawals = world.sandbox.exchange.ledger().filter((entry) => entry.reason === 'flex-withdraw' && entry.account === 'main');
      expect(withdrawals.map((entry) => formatDecimal(entry.delta))).toEqual(['100']);
    });

    it('sweeps a flex investment; a lost answer is confirmed by the investment shrinking, never resent', async () => {
      world.sandbox.faults.inject({ path: WITHDRAW_PATH, kind: 'drop-after-commit' });
      const sweep = runtimeOf({ instance: 'sweep', strategy: flexSweep, env: { STRATEGY: 'flex-sweep', SCHEDULE: '0 9 * * *', PLAN: DEMO_FLEX_PLAN_ID, MODE: 'all' } });
      expect(await world.engine([sweep]).runSlot('sweep', SLOT)).toBe('done');
      const withdrawals = world.sandbox.exchange.ledger().filter((entry) => entry.reason === 'flex-withdraw' && entry.account === 'main');
      expect(withdrawals).toHaveLength(1);
      expect(formatDecimal(withdrawals[0]?.delta ?? new Decimal(0))).toBe('1500');
      const [intent] = await world.journal.listIntents({ instance: 'sweep' });
      expect(intent?.status).toBe('done');
      // Said, as a transfer confirmed by its balance is: the operator sees the answer was lost.
      expect(world.logs.filter((line) => line.fields['event'] === 'withdraw-resolved').map((line) => line.fields['plan'])).toEqual([DEMO_FLEX_PLAN_ID]);
    });

    it('a withdrawal whose answer was lost is not taken for done because a withdrawal by hand of another amount shrank the same investment in the same seconds', async () => {
      world.sandbox.faults.inject({ path: WITHDRAW_PATH, kind: 'status', status: 503, body: 'Service Unavailable' });
      const main = world.sandbox.exchange.mainBalances().get('USDT') ?? new Decimal(0);
      const sweep = runtimeOf({ instance: 'sweep', strategy: flexSweep, env: { STRATEGY: 'flex-sweep', SCHEDULE: '0 9 * * *', PLAN: DEMO_FLEX_PLAN_ID, MODE: 'reserve', RESERVE: formatDecimal(main.add(100)) } });
      const slot = world.engine([sweep]).runSlot('sweep', SLOT);
      await expect.poll(() => world.logs.some((line) => line.fields['event'] === 'flex-withdraw-send')).toBe(true);
      world.sandbox.exchange.flexWithdraw(DEMO_FLEX_PLAN_ID, new Decimal('150'));
      await slot;
      const [intent] = await world.journal.listIntents({ instance: 'sweep', slotTimeMs: SLOT });
      expect([intent?.status, intent?.error?.message]).toEqual(['unknown', expect.stringContaining('does not show exactly this withdrawal')]);
      expect(world.logs.some((line) => line.fields['event'] === 'withdraw-resolved')).toBe(false);
    });

    it('a withdraw answered 504 at once and performed a moment later is confirmed by the investment shrinking within the settle time, never resent', async () => {
      world.sandbox.faults.inject({ path: WITHDRAW_PATH, kind: 'commit-late', status: 504, body: 'Gateway Time-out', latencyMs: 150 });
      const sweep = runtimeOf({ instance: 'sweep', strategy: flexSweep, env: { STRATEGY: 'flex-sweep', SCHEDULE: '0 9 * * *', PLAN: DEMO_FLEX_PLAN_ID, MODE: 'all' } });
      expect(await world.engine([sweep]).runSlot('sweep', SLOT)).toBe('done');
      const withdrawals = world.sandbox.exchange.ledger().filter((entry) => entry.reason === 'flex-withdraw' && entry.account === 'main');
      expect(withdrawals).toHaveLength(1);
      const [intent] = await world.journal.listIntents({ instance: 'sweep' });
      expect([intent?.status, intent?.result?.['confirmedBy']]).toEqual(['done', 'investment']);
    });

    it('a withdraw raced by the investment closing is a refusal with its reason, not a crash', async () => {
      const racing = defineStrategy({
        name: 'racing',
        describe: 'withdraws from the plan with no investment',
        params: {},
        reads: () => [],
        decide: async () => [{ kind: 'flex-withdraw', plan: DEMO_EMPTY_FLEX_PLAN_ID, amount: new Decimal('10') }],
      });
      const engine = world.engine([runtimeOf({ instance: 'race', strategy: racing, env: {} })]);
      expect(await engine.runSlot('race', SLOT)).toBe('done');
      const [intent] = await world.journal.listIntents({ instance: 'race' });
      expect(intent?.status).toBe('refused');
      expect(intent?.error?.code).toBe('no-active-investment');
    });
  });

  describe('guards', () => {
    it('the kill switch file stops the next order at once', async () => {
      const file = join(world.dir, 'STOP');
      writeFileSync(file, '');
      const engine = world.engine([dcaBtc()], { killSwitch: killSwitch({ file, env: false }) });
      expect(await engine.runSlot('dca-btc', SLOT)).toBe('done');
      const [intent] = await world.journal.listIntents({ instance: 'dca-btc' });
      expect([intent?.status, intent?.error?.code]).toEqual(['refused', 'kill-switch']);
      expect(sandboxOrders()).toHaveLength(0);
    });

    it('a budget holds across engines (restarts): the buy that would cross it is refused', async () => {
      const withBudget = () => ({ ...dcaBtc(), budgets: { day: new Decimal('100') } });
      expect(await world.engine([withBudget()]).runSlot('dca-btc', SLOT)).toBe('done'); // 65 of 100
      expect(await world.engine([withBudget()]).runSlot('dca-btc', SLOT + 3_600_000)).toBe('done');
      const intents = await world.journal.listIntents({ instance: 'dca-btc' });
      const refused = intents.filter((i) => i.status === 'refused' || i.intent.kind === 'refusal');
      expect(refused.length).toBeGreaterThan(0);
      expect(sandboxOrders()).toHaveLength(1);
    });

    it('a budget holds across a TIMEZONE change between restarts: the day that began in the new zone still counts the earlier buy', async () => {
      const withBudget = (timezone: string) => ({ ...dcaBtc(), timezone, budgets: { day: new Decimal('100') } });
      expect(await world.engine([withBudget('UTC')]).runSlot('dca-btc', SLOT)).toBe('done'); // 65 of 100, at 09:00 UTC
      // 10:00 UTC is 19:00 in Tokyo, whose day began at 15:00 UTC the day before: the 09:00 buy is in it.
      expect(await world.engine([withBudget('Asia/Tokyo')]).runSlot('dca-btc', SLOT + 3_600_000)).toBe('done');
      const refusals = (await world.journal.listIntents({ instance: 'dca-btc' })).filter((i) => i.status === 'refused' || i.intent.kind === 'refusal');
      expect(refusals.map((i) => i.error?.code ?? (i.intent.kind === 'refusal' ? i.intent.reason : null))).toEqual(['over-budget']);
      expect(sandboxOrders()).toHaveLength(1);
    });

    it("names the buy the budget refused as what stopped the slot, not the transfer refused with it", async () => {
      const spot = world.sandbox.exchange.tradeBalances().get('USDT')?.available ?? new Decimal(0);
      world.sandbox.exchange.transfer({ ticker: 'USDT', amount: spot, from: 'spot', to: 'main' });
      const funded = { ...dcaBtc({ ALLOW_TRANSFER: 'true' }), budgets: { day: new Decimal('50') } }; // a buy is 65
      expect(await world.engine([funded]).runSlot('dca-btc', SLOT)).toBe('done');
      expect((await world.journal.listIntents({ instance: 'dca-btc' })).map((i) => [i.intent.kind, i.error?.code])).toEqual([
        ['transfer', 'group-refused'],
        ['buy-stock-market', 'budget-too-small'],
      ]);
      expect((await world.journal.getSlot({ instance: 'dca-btc', slotTimeMs: SLOT }))?.reason).toBe('intent #1 (buy-stock-market) was refused (budget-too-small)');
    });

    it('a buy above the smallest budget limit is refused saying no period will let it through, unlike a budget used up for now', async () => {
      const tooSmall = { ...dcaBtc(), budgets: { day: new Decimal('50'), week: new Decimal('1000') } }; // a buy is 65
      expect(await world.engine([tooSmall]).runSlot('dca-btc', SLOT)).toBe('done');
      const [never] = await world.journal.listIntents({ instance: 'dca-btc' });
      // Its own reason (what /healthz and the refusals metric count), not a budget used up for now.
      expect(never?.error?.code).toBe('budget-too-small');
      expect(never?.error?.message).toBe(
        "estimated value 65 USDT is above the budget left for this slot, 50 USDT (what the instance's own budget leaves); that is above 50 USDT, the smallest limit configured (the instance file's BUDGET_QUOTE_PER_DAY), so no period lets it through: raise it or buy less",
      );
      const roomy = { ...dcaBtc(), budgets: { day: new Decimal('100') } };
      expect(await world.engine([roomy]).runSlot('dca-btc', SLOT + 3_600_000)).toBe('done'); // 65 of 100
      expect(await world.engine([roomy]).runSlot('dca-btc', SLOT + 7_200_000)).toBe('done');
      const latest = (await world.journal.listIntents({ instance: 'dca-btc', slotTimeMs: SLOT + 7_200_000 }))[0];
      expect(latest?.error?.message).toBe("estimated value 65 USDT is above the budget left for this slot, 35 USDT (what the instance's own budget leaves)");
      expect(latest?.error?.code).toBe('over-budget');
      expect(sandboxOrders()).toHaveLength(1);
    });

    it('MAX_ORDER_QUOTE is enforced by the engine even when a strategy ignores it', async () => {
      const reckless = defineStrategy({
        name: 'reckless',
        describe: 'buys 1 BTC',
        params: { MARKET: param.market({ description: 'Where to buy.', example: 'BTC_USDT' }) },
        reads: () => ['markets', 'prices'],
        decide: async (_view, params) => [{ kind: 'buy-stock-market', market: params.MARKET, amount: new Decimal('0.01') }],
      });
      const instance = { ...runtimeOf({ instance: 'reckless', strategy: reckless, env: { MARKET: 'BTC_USDT' } }), maxOrderQuote: new Decimal('100') };
      expect(await world.engine([instance]).runSlot('reckless', SLOT)).toBe('done');
      const [intent] = await world.journal.listIntents({ instance: 'reckless' });
      expect([intent?.status, intent?.error?.code]).toEqual(['refused', 'above-max-order']);
      expect(sandboxOrders()).toHaveLength(0);
    });

    it('a strategy that throws is disabled; the others keep running', async () => {
      const broken = defineStrategy({
        name: 'broken',
        describe: 'throws',
        params: {},
        reads: () => [],
        decide: async () => {
          throw new TypeError('oops');
        },
      });
      const engine = world.engine([runtimeOf({ instance: 'broken', strategy: broken, env: {} }), dcaBtc()]);
      expect(await engine.runSlot('broken', SLOT)).toBe('disabled');
      expect(engine.isEnabled('broken')).toBe(false);
      expect(await engine.runSlot('broken', SLOT + 60_000)).toBe('disabled');
      expect(await engine.runSlot('dca-btc', SLOT)).toBe('done');
      expect((await world.journal.getSlot({ instance: 'broken', slotTimeMs: SLOT }))?.status).toBe('failed');
      // What /healthz names: which instance, since which slot, and the journal's reason.
      expect(engine.health().disabledInstances).toEqual([{ instance: 'broken', slotTimeMs: SLOT, reason: 'strategy broken failed: oops' }]);
    });

    it('a strategy whose decide never answers is failed at the time limit and disabled, nothing sent; the others keep running', async () => {
      const hung = defineStrategy({
        name: 'hung',
        describe: 'never answers',
        params: {},
        reads: () => [],
        decide: () => new Promise<never>(() => {}),
      });
      const engine = world.engine([runtimeOf({ instance: 'hung', strategy: hung, env: {} }), dcaBtc()]);
      expect(await engine.runSlot('hung', SLOT)).toBe('disabled');
      expect(engine.isEnabled('hung')).toBe(false);
      expect(engine.isRunning('hung')).toBe(false);
      expect(await world.journal.getSlot({ instance: 'hung', slotTimeMs: SLOT })).toMatchObject({ status: 'failed', reason: expect.stringContaining('decide did not answer within 1 s') });
      expect(await engine.runSlot('dca-btc', SLOT)).toBe('done');
      expect(sandboxOrders()).toHaveLength(1);
    });
  });

  describe('reconciliation on start', () => {
    it('resolves a buy a crash left "sent": found at the exchange → done, with its transition', async () => {
      const instance = dcaBtc();
      const clientOrderId = deriveClientOrderId('dca-btc', SLOT, 0);
      // What a crash right after the send leaves: the slot claimed, the intent sent, the order placed.
      await world.journal.claimSlot({ instance: 'dca-btc', slotTimeMs: SLOT, runId: null, intents: [{ index: 0, intent: { kind: 'buy-stock-market', market: 'BTC_USDT', amount: new Decimal('0.001'), stp: 'no' } }] });
      const [pending] = await world.journal.listIntents({ instance: 'dca-btc' });
      await world.journal.updateIntent(pending?.intentId ?? '', { status: 'sent' });
      world.sandbox.exchange.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.001'), clientOrderId });

      const engine = world.engine([instance]);
      const summary = await engine.reconcile();
      expect(summary).toEqual({ resolved: 1, unresolved: 0, slotsClosed: 1 });
      const [intent] = await world.journal.listIntents({ instance: 'dca-btc' });
      expect(intent?.status).toBe('done');
      expect((await world.journal.getSlot({ instance: 'dca-btc', slotTimeMs: SLOT }))?.status).toBe('done');
      expect(await engine.runSlot('dca-btc', SLOT)).toBe('already');
      expect(sandboxOrders()).toHaveLength(1);
    });

    it('an intent journalled but never sent is failed, not sent late', async () => {
      await world.journal.claimSlot({ instance: 'dca-btc', slotTimeMs: SLOT, runId: null, intents: [{ index: 0, intent: { kind: 'buy-stock-market', market: 'BTC_USDT', amount: new Decimal('0.001') } }] });
      await world.engine([dcaBtc()]).reconcile();
      const [intent] = await world.journal.listIntents({ instance: 'dca-btc' });
      expect([intent?.status, intent?.error?.code]).toEqual(['failed', 'E_INTERRUPTED']);
      expect(intent?.error?.message).toBe('the stacker that journalled it stopped, or lost the journal, before sending it; not sent (its slot has passed)');
      expect(sandboxOrders()).toHaveLength(0);
    });

    it('one a slot of this daemon left pending (its journal write failed) is failed while it runs, saying so rather than that stacker stopped', async () => {
      const engine = world.engine([dcaBtc()]);
      await engine.reconcile();
      await world.journal.claimSlot({ instance: 'dca-btc', slotTimeMs: SLOT, runId: null, intents: [{ index: 0, intent: { kind: 'buy-stock-market', market: 'BTC_USDT', amount: new Decimal('0.001') } }] });
      await engine.track();
      const [intent] = await world.journal.listIntents({ instance: 'dca-btc' });
      expect([intent?.status, intent?.error?.message]).toEqual(['failed', 'its slot ended before sending it (a journal write failed or did not answer in time); not sent (its slot has passed)']);
      expect(world.logs.some((line) => line.message === 'an intent whose slot ended early was never sent; marked failed')).toBe(true);
      expect(sandboxOrders()).toHaveLength(0);
    });

    it('a buy a crash left "sent" with no order yet is not concluded at restart: the window counts from the send, and an order landing late is found', async () => {
      await world.journal.claimSlot({ instance: 'dca-btc', slotTimeMs: SLOT, runId: null, intents: [{ index: 0, intent: { kind: 'buy-stock-market', market: 'BTC_USDT', amount: new Decimal('0.001') } }] });
      const [pending] = await world.journal.listIntents({ instance: 'dca-btc' });
      await world.journal.updateIntent(pending?.intentId ?? '', { status: 'sent' });
      const engine = world.engine([dcaBtc()]);
      expect(await engine.reconcile()).toEqual({ resolved: 0, unresolved: 1, slotsClosed: 1 });
      expect((await world.journal.listIntents({ instance: 'dca-btc' }))[0]?.status).toBe('unknown');
      // The exchange processes the request late (after the restart).
      world.sandbox.exchange.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('0.001'), clientOrderId: deriveClientOrderId('dca-btc', SLOT, 0) });
      await engine.track();
      expect((await world.journal.listIntents({ instance: 'dca-btc' }))[0]?.status).toBe('done');
      expect(sandboxOrders()).toHaveLength(1);
    });
  });
});
