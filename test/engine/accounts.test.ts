import { afterEach, describe, expect, it } from 'vitest';
import { Decimal, formatDecimal } from '../../src/domain/money.ts';
import { Engine } from '../../src/engine/engine.ts';
import type { AccountRouting } from '../../src/engine/runtime.ts';
import { LiveExchange } from '../../src/exchange/live.ts';
import { ApiClient } from '../../src/api/client.ts';
import type { Sandbox } from '../../src/sandbox/server.ts';
import { startOtherExchange } from '../support/other-exchange.ts';
import { startSandbox } from '../../src/sandbox/server.ts';
import type { FatalEngineError } from '../../src/engine/error-policy.ts';
import { dca } from '../../strategies/dca.ts';
import { ENGINE_JOURNALS, type EngineWorld, TEST_SETTLE_WINDOW_MS, engineWorld, runtimeOf } from './harness.ts';

// The engine with two accounts against the sandbox serving two keys, on each journal the daemon
// uses: sends go to the instance's account, the account cap is reserved before the send, given
// back when the exchange refuses, settled at what a filled order spent, and refuses the buy that
// would cross it.

const SIDE = { apiKey: 'key-side-engine-test', apiSecret: 'secret-side-engine-test-0123456789' };
const DAY = Date.UTC(2026, 2, 2, 9);

let world: EngineWorld | null = null;

afterEach(async () => {
  await world?.close();
  world = null;
});

const instance = (name: string, amount: string) => runtimeOf({ instance: name, strategy: dca, env: { STRATEGY: 'dca', SCHEDULE: '0 9 * * *', MARKET: 'BTC_USDT', AMOUNT: amount } });

/** An engine whose instances trade on `main` (the harness's key, capped at 100 USDT a day) and `side` (the sandbox's second key). */
function routedEngine(w: EngineWorld, sideClient: ApiClient, instances: readonly ReturnType<typeof instance>[], ledger: boolean, capTimeZone = 'UTC', onFatal?: (error: FatalEngineError) => void): Engine {
  const base = w.deps();
  const exchanges = new Map([
    ['main', base.exchange],
    ['side', new LiveExchange(sideClient)],
  ]);
  const routing: AccountRouting = {
    accountOf: (name) => (name.endsWith('-side') ? 'side' : 'main'),
    exchangeOf: (account) => exchanges.get(account),
    capOf: (account) => (account === 'main' ? { limits: { day: new Decimal('100') }, asset: 'USDT', timeZone: capTimeZone } : null),
    names: ['main', 'side'],
  };
  const ledgerOptions = ledger
    ? {
        ledger: {
          adoptBeforeMs: Date.now(),
          firstLookBackMs: 86_400_000,
          acknowledgeAdoptions: false,
          intervalMs: 3_600_000,
          instances: instances.map((i) => ({ instance: i.instance, timezone: i.timezone, budgetAsset: i.budgetAsset, orderSettleWindowMs: i.orderSettleWindowMs })),
        },
      }
    : {};
  return new Engine({ ...base, accounts: routing }, instances, { runId: null, ...ledgerOptions, ...(onFatal === undefined ? {} : { onFatal }) });
}

/** side's account on an exchange of its own (another server), with a client on it; both stopped after `work`. */
async function onOtherExchange(work: (sideExchange: Sandbox, sideClient: ApiClient) => Promise<void>): Promise<void> {
  const sideExchange = await startOtherExchange({ ...SIDE });
  const sideClient = new ApiClient({ baseUrl: sideExchange.url, credentials: SIDE });
  try {
    await work(sideExchange, sideClient);
  } finally {
    await sideClient.close();
    await sideExchange.stop();
  }
}

describe.each(ENGINE_JOURNALS)('accounts in the engine (%s journal)', (kind) => {
  it('routes each instance to its account and keeps the account cap by the money rule', async () => {
    const w = await engineWorld({ moreAccounts: [SIDE] }, kind);
    world = w;
    const sideClient = new ApiClient({ baseUrl: w.sandbox.url, credentials: SIDE });
    const engine = routedEngine(w, sideClient, [instance('a1-main', '0.001'), instance('a2-main', '0.001'), instance('a3-main', '0.002'), instance('b1-side', '0.002')], false);
    try {
      // The exchange refuses a1's first buy: the cap's reservation is given back.
      w.sandbox.faults.inject({ path: '/api/v4/order/stock_market', kind: 'status', status: 422, body: { code: 32, message: 'Validation failed', errors: { amount: ['Amount is invalid.'] } }, times: 1 });
      expect(await engine.runSlot('a1-main', DAY - 86_400_000)).toBe('done');
      const refused = (await w.journal.listIntents({ instance: 'a1-main' }))[0];
      expect(refused).toMatchObject({ account: 'main', status: 'refused', attempts: 1 });
      expect(await w.journal.heldBudgetReservations()).toEqual([]);
      expect(formatDecimal((await w.journal.budgetSpent({ instance: 'account:main', asset: 'USDT', timeZone: 'UTC' }, DAY - 86_400_000)).day)).toBe('0');

      // a1 buys on main; a2 would cross main's cap; b1 buys on side, which has none.
      expect(await engine.runSlot('a1-main', DAY)).toBe('done');
      expect(await engine.runSlot('a2-main', DAY)).toBe('done');
      expect(await engine.runSlot('b1-side', DAY)).toBe('done');
      const mainOrders = w.sandbox.accountOf(w.sandbox.apiKey)?.orderHistory({}) ?? [];
      const sideOrders = w.sandbox.accountOf(SIDE.apiKey)?.orderHistory({}) ?? [];
      expect(mainOrders.map((order) => formatDecimal(order.amount))).toEqual(['0.001']);
      expect(sideOrders.map((order) => formatDecimal(order.amount))).toEqual(['0.002']);
      const spent = await w.journal.budgetSpent({ instance: 'account:main', asset: 'USDT', timeZone: 'UTC' }, DAY);
      expect(formatDecimal(spent.day)).toBe(formatDecimal(mainOrders[0]?.filledQuote ?? new Decimal(-1)));
      const a2 = (await w.journal.listIntents({ instance: 'a2-main' }))[0];
      expect(a2).toMatchObject({ account: 'main', status: 'refused', attempts: 0 });
      expect(a2?.error?.code).toBe('over-budget');
      // The cap, not a2's own budget (it has none), is what it crossed: the refusal says which.
      expect(a2?.error?.message).toContain('(what the cap of account main leaves)');
      // A buy above the cap itself can never pass: the refusal names the env key to raise, not the instance file.
      expect(await engine.runSlot('a1-main', DAY + 86_400_000)).toBe('done');
      expect(await engine.runSlot('a3-main', DAY + 86_400_000)).toBe('done');
      expect((await w.journal.listIntents({ instance: 'a3-main' }))[0]?.error?.message).toContain(
        'that is above 100 USDT, the smallest limit configured (STACKER_ACCOUNT_main_BUDGET_QUOTE_PER_DAY), so no period lets it through: raise it or buy less',
      );
      expect((await w.journal.listIntents({ instance: 'b1-side' })).map((intent) => [intent.account, intent.status])).toEqual([['side', 'done']]);
      expect(await w.journal.heldBudgetReservations()).toEqual([]);
    } finally {
      await sideClient.close();
    }
  }, 60_000);

  it('reserves the cap for a buy before the transfer that funds it: instances in the same second move money only for the buy the cap lets through', async () => {
    const w = await engineWorld({ moreAccounts: [SIDE] }, kind);
    world = w;
    const sideClient = new ApiClient({ baseUrl: w.sandbox.url, credentials: SIDE });
    try {
      // The trade balance empty: each buy (0.001 BTC, 65 USDT) needs a transfer; the cap (100 a day) lets one through.
      const spot = w.sandbox.accountOf(w.sandbox.apiKey)?.tradeBalances().get('USDT')?.available ?? new Decimal(0);
      w.sandbox.exchange.transfer({ ticker: 'USDT', amount: spot, from: 'spot', to: 'main' });
      const funded = (name: string) => runtimeOf({ instance: name, strategy: dca, env: { STRATEGY: 'dca', SCHEDULE: '0 9 * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001', ALLOW_TRANSFER: 'true' } });
      const engine = routedEngine(w, sideClient, [funded('a1-main'), funded('a2-main'), funded('a3-main')], false);
      await Promise.all(['a1-main', 'a2-main', 'a3-main'].map((name) => engine.runSlot(name, DAY)));
      const transfers = w.sandbox.exchange.ledger().filter((entry) => entry.reason === 'transfer' && entry.account === 'spot' && entry.delta.isPositive());
      expect(transfers).toHaveLength(1);
      expect(w.sandbox.accountOf(w.sandbox.apiKey)?.orderHistory({})).toHaveLength(1);
      const intents = await w.journal.listIntents({});
      // An instance that reads the balances after the first transfer landed plans no transfer of
      // its own; one that reads them before plans one, refused with the buy it was to fund.
      const transferIntents = intents.filter((i) => i.intent.kind === 'transfer');
      expect(transferIntents.filter((i) => i.status === 'done')).toHaveLength(1);
      expect(transferIntents.filter((i) => i.status !== 'done').map((i) => [i.status, i.error?.code])).toEqual(
        Array.from({ length: transferIntents.length - 1 }, () => ['refused', 'group-refused']),
      );
      expect(intents.filter((i) => i.intent.kind === 'buy-stock-market' && i.status === 'refused').map((i) => i.error?.code)).toEqual(['over-budget', 'over-budget']);
      expect(await w.journal.heldBudgetReservations()).toEqual([]);
    } finally {
      await sideClient.close();
    }
  }, 60_000);

  it("counts the cap's days in the account's time zone: 22:30 and 23:30 UTC are one day in UTC, two in Berlin", async () => {
    const w = await engineWorld({ moreAccounts: [SIDE] }, kind);
    world = w;
    const sideClient = new ApiClient({ baseUrl: w.sandbox.url, credentials: SIDE });
    // 2 March 2026, winter time: 22:30 UTC is 23:30 in Berlin, 23:30 UTC is 00:30 on the 3rd.
    const late = Date.UTC(2026, 2, 2, 22, 30);
    const later = Date.UTC(2026, 2, 2, 23, 30);
    try {
      const berlin = routedEngine(w, sideClient, [instance('a1-main', '0.001'), instance('a2-main', '0.001')], false, 'Europe/Berlin');
      expect(await berlin.runSlot('a1-main', late)).toBe('done');
      expect(await berlin.runSlot('a2-main', later)).toBe('done');
      expect((await w.journal.listIntents({})).map((intent) => [intent.instance, intent.status])).toEqual([
        ['a2-main', 'done'],
        ['a1-main', 'done'],
      ]);
      const berlinDays = await Promise.all([late, later].map((at) => w.journal.budgetSpent({ instance: 'account:main', asset: 'USDT', timeZone: 'Europe/Berlin' }, at)));
      expect(berlinDays.map((spent) => spent.day.gt(50) && spent.day.lt(100))).toEqual([true, true]);

      // The same two slots, a day on, against a cap counted in UTC: the second crosses it.
      const utc = routedEngine(w, sideClient, [instance('a1-main', '0.001'), instance('a2-main', '0.001')], false, 'UTC');
      expect(await utc.runSlot('a1-main', late + 86_400_000)).toBe('done');
      expect(await utc.runSlot('a2-main', later + 86_400_000)).toBe('done');
      const [second] = await w.journal.listIntents({ instance: 'a2-main', slotTimeMs: later + 86_400_000 });
      expect(second?.error?.code).toBe('over-budget');
      expect(second?.error?.message).toContain('is above the budget left for this slot, 35 USDT (what the cap of account main leaves)');
    } finally {
      await sideClient.close();
    }
  }, 60_000);

  it("stops trading, naming both orders, when another exchange answers an order under an id the journal holds for this one's: it could record neither its fill nor its budget", async () => {
    const w = await engineWorld({}, kind);
    world = w;
    // A second exchange counting its order ids from where the first one does.
    const sameIds = await startSandbox({ ...SIDE });
    const sideClient = new ApiClient({ baseUrl: sameIds.url, credentials: SIDE });
    const stopped: FatalEngineError[] = [];
    try {
      const engine = routedEngine(w, sideClient, [instance('a1-main', '0.001'), instance('b1-side', '0.002')], false, 'UTC', (error) => void stopped.push(error));
      expect(await engine.runSlot('a1-main', DAY)).toBe('done');
      const [mainOrder] = w.sandbox.exchange.orderHistory({});
      expect(await engine.runSlot('b1-side', DAY)).toBe('failed');
      const [sideOrder] = sameIds.exchange.orderHistory({});
      expect(sideOrder?.orderId).toBe(mainOrder?.orderId);
      expect(stopped).toHaveLength(1);
      expect(stopped[0]).toMatchObject({ code: 'E_STORE', message: expect.stringContaining(`order id ${mainOrder?.orderId} is journalled for BTC_USDT`) });
      expect(stopped[0]?.message).toContain('run them in daemons of their own');
      expect(engine.fatal).toBe(stopped[0]);
      // Nothing more is sent by either account.
      expect(await engine.runSlot('a1-main', DAY + 86_400_000)).toBe('skipped');
      expect(w.sandbox.exchange.orderHistory({})).toHaveLength(1);
    } finally {
      await sideClient.close();
      await sameIds.stop();
    }
  }, 60_000);

  it("gives the cap back for a buy that was never placed, once the history shows no such order (an instance without a budget of its own)", async () => {
    const w = await engineWorld({ moreAccounts: [SIDE] }, kind);
    world = w;
    const sideClient = new ApiClient({ baseUrl: w.sandbox.url, credentials: SIDE });
    try {
      const engine = routedEngine(w, sideClient, [instance('a1-main', '0.001')], true);
      w.sandbox.faults.inject({ path: '/api/v4/order/stock_market', kind: 'reset' });
      const slot = Date.now() + 60_000;
      expect(await engine.runSlot('a1-main', slot)).toBe('failed');
      // The operator hears of it with the account it was sent on: where to check it.
      expect(w.notifications).toContainEqual(expect.objectContaining({ kind: 'intent-unknown', instance: 'a1-main', account: 'main' }));
      // The answer was lost: the cap stays reserved while the order may exist (and the instance's own count, kept without a budget too).
      expect((await w.journal.heldBudgetReservations()).map((reservation) => reservation.instance).sort()).toEqual(['a1-main', 'account:main']);
      w.advance(TEST_SETTLE_WINDOW_MS);
      await engine.track();
      expect((await w.journal.listIntents({ instance: 'a1-main' }))[0]).toMatchObject({ account: 'main', status: 'not-found' });
      // Given back once two reads of the history have shown nothing an hour after the send.
      w.elapse(3_600_000);
      await engine.checkLedger();
      w.elapse(5 * 60_000);
      expect((await engine.checkLedger())?.cleared).toHaveLength(1);
      expect(await w.journal.heldBudgetReservations()).toEqual([]);
      expect(formatDecimal((await w.journal.budgetSpent({ instance: 'account:main', asset: 'USDT', timeZone: 'UTC' }, slot)).day)).toBe('0');
    } finally {
      await sideClient.close();
    }
  }, 60_000);

  it("keeps only the instances of an account whose history cannot be read waiting: the other account's slots run, and its own run once it can be read", async () => {
    const w = await engineWorld({}, kind);
    world = w;
    // side's exchange is another server, down for history reads while main's answers.
    await onOtherExchange(async (sideExchange, sideClient) => {
      sideExchange.faults.inject({ path: '/api/v4/trade-account/order/history', kind: 'status', status: 503, body: 'maintenance', times: Number.POSITIVE_INFINITY });
      const engine = routedEngine(w, sideClient, [instance('a1-main', '0.001'), instance('b1-side', '0.002')], true);
      const slot = Date.now() + 60_000;
      expect(await engine.runSlot('a1-main', slot)).toBe('done');
      expect(await engine.runSlot('b1-side', slot)).toBe('skipped');
      expect(w.sandbox.exchange.orderHistory({}).map((order) => formatDecimal(order.amount))).toEqual(['0.001']);
      expect(sideExchange.exchange.orderHistory({})).toEqual([]);
      const skipped = await w.journal.getSlot({ instance: 'b1-side', slotTimeMs: slot });
      expect(skipped?.reason).toMatch(/^not run: the exchange's order history could not be read since stacker started \(.*account side: .*503/);
      expect(engine.health()).toMatchObject({ ledgerCheckedAtMs: null, ledgerProblem: expect.stringContaining('account side: ') });

      sideExchange.faults.clear();
      expect(await engine.runSlot('b1-side', slot + 1000)).toBe('done');
      expect(sideExchange.exchange.orderHistory({}).map((order) => formatDecimal(order.amount))).toEqual(['0.002']);
      expect(engine.health()).toMatchObject({ ledgerCheckedAtMs: expect.any(Number), ledgerProblem: null });
    });
  }, 60_000);

  /** Both accounts' histories read once, then side's exchange hangs on its history (a minute per read). */
  async function whileSideHistoryHangs(work: (w: EngineWorld, engine: Engine, sideExchange: Sandbox) => Promise<void>): Promise<void> {
    const w = await engineWorld({}, kind);
    world = w;
    await onOtherExchange(async (sideExchange, sideClient) => {
      const engine = routedEngine(w, sideClient, [instance('a1-main', '0.001'), instance('b1-side', '0.002')], true);
      expect((await engine.checkLedger())?.accounts).toEqual(['main', 'side']);
      sideExchange.faults.inject({ path: '/api/v4/trade-account/order/history', kind: 'latency', latencyMs: 60_000, times: Number.POSITIVE_INFINITY });
      await work(w, engine, sideExchange);
    });
  }

  it("does not hold a slot for another account's history read: one account's exchange hanging delays only its own instances", async () => {
    // Both accounts were read once: from here on a slot reads its own account's history only.
    await whileSideHistoryHangs(async (w, engine, sideExchange) => {
      const slot = Date.now() + 60_000;
      let sideEnded = false;
      const sideSlot = engine.runSlot('b1-side', slot).finally(() => {
        sideEnded = true;
      });
      // The hourly check of every account is under way too, stuck on side's history.
      const everyAccount = engine.checkLedger();
      expect(await engine.runSlot('a1-main', slot)).toBe('done');
      expect(sideEnded).toBe(false);
      expect(w.sandbox.exchange.orderHistory({}).map((order) => formatDecimal(order.amount))).toEqual(['0.001']);
      // The hung exchange goes away: side's read fails; its slot goes on (side's history was read
      // this run) and is skipped only because its snapshot cannot be read either.
      await sideExchange.stop();
      expect(await sideSlot).toBe('skipped');
      expect((await w.journal.getSlot({ instance: 'b1-side', slotTimeMs: slot }))?.reason).toMatch(/^snapshot failed/);
      expect((await everyAccount)?.unreadable.map((failure) => failure.account)).toEqual(['side']);
      expect(engine.health().ledgerProblem).toMatch(/^account side: reading the exchange's order history failed/);
    });
  }, 60_000);

  it("keeps tracking while another account's history hangs: the periodic check runs beside the tracking pass, not in it", async () => {
    await whileSideHistoryHangs(async (w, engine, sideExchange) => {
      // An hour on: both accounts' histories are due again.
      w.advance(3_600_000);
      await engine.track();
      // The pass is over while side's read still hangs: nothing has failed yet.
      expect(engine.health().ledgerProblem).toBeNull();
      // The hung exchange goes away; the check it held ends, and says which account failed.
      await sideExchange.stop();
      await engine.idle();
      expect(engine.health().ledgerProblem).toMatch(/^account side: reading the exchange's order history failed/);
    });
  }, 60_000);

  it("asks again for a failing account's history once a minute, and leaves a readable account's until its hour is up", async () => {
    let mainReads = 0;
    const w = await engineWorld({ onRequest: (request) => void (request.path.endsWith('/order/history') && (mainReads += 1)) }, kind);
    world = w;
    await onOtherExchange(async (sideExchange, sideClient) => {
      const engine = routedEngine(w, sideClient, [instance('a1-main', '0.001'), instance('b1-side', '0.002')], true);
      sideExchange.faults.inject({ path: '/api/v4/trade-account/order/history', kind: 'status', status: 503, body: 'maintenance', times: Number.POSITIVE_INFINITY });
      const sideFailures = (): number => w.logs.filter((line) => line.fields['event'] === 'ledger-check-failed' && line.fields['account'] === 'side').length;
      expect((await engine.checkLedger())?.unreadable.map((failure) => failure.account)).toEqual(['side']);
      expect([mainReads, sideFailures()]).toEqual([1, 1]);
      // Three passes within a minute: side is asked once, main (read just now) not at all.
      for (let pass = 0; pass < 3; pass += 1) {
        await engine.track();
        await engine.idle();
      }
      expect([mainReads, sideFailures()]).toEqual([1, 2]);
      w.advance(61_000);
      await engine.track();
      await engine.idle();
      expect([mainReads, sideFailures()]).toEqual([1, 3]);
      // main's hour is up: its history is read again; side's, back, is read and its problem cleared.
      sideExchange.faults.clear();
      w.advance(3_600_000);
      await engine.track();
      await engine.idle();
      expect([mainReads, sideFailures()]).toEqual([2, 3]);
      expect(engine.health().ledgerProblem).toBeNull();
    });
  }, 60_000);
});
