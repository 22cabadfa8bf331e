import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deriveClientOrderId } from '../../src/domain/client-order-id.ts';
import { Decimal } from '../../src/domain/money.ts';
import { JOURNAL_KINDS, SLOT, TempWorld, buy, claimWithBuy, order } from './helpers.ts';

let world: TempWorld;
beforeEach(() => {
  world = new TempWorld();
});
afterEach(async () => {
  await world.cleanup();
});

describe.each(JOURNAL_KINDS)('intents (%s journal)', (kind) => {
  beforeEach(() => {
    world.kind = kind;
  });

  it('records the account an intent is sent on; null when none is given; never an empty name', async () => {
    const journal = await world.openJournal();
    await journal.claimSlot({ ...SLOT, runId: null });
    const [onMain, none] = await journal.addIntents(SLOT, [
      { index: 0, intent: buy('1'), account: 'main' },
      { index: 1, intent: buy('2') },
    ]);
    expect(onMain?.account).toBe('main');
    expect(none?.account).toBeNull();
    expect((await journal.getIntent(onMain?.intentId ?? ''))?.account).toBe('main');
    expect((await journal.listIntents({ instance: SLOT.instance })).map((intent) => intent.account)).toEqual(['main', null]);
    await expect(journal.addIntents({ ...SLOT }, [{ index: 2, intent: buy('3'), account: '' }])).rejects.toMatchObject({ reason: 'invalid-argument' });
  });

  it('keeps a paper account per account name: the default one under its old key, a named one apart', async () => {
    const journal = await world.openJournal();
    await journal.saveAccountState('{"default":1}');
    await journal.saveAccountState('{"side":2}', 'side');
    expect(await journal.accountState()).toBe('{"default":1}');
    expect(await journal.accountState('default')).toBe('{"default":1}');
    expect(await journal.accountState('side')).toBe('{"side":2}');
    expect(await journal.accountState('other')).toBeNull();
  });

  it('journals a buy as pending with the clientOrderId derived from instance, slot time and index', async () => {
    const journal = await world.openJournal();
    const intentId = await claimWithBuy(journal, '0.0005');
    const record = await journal.getIntent(intentId);
    expect(record).toMatchObject({
      instance: SLOT.instance,
      slotTimeMs: SLOT.slotTimeMs,
      index: 0,
      status: 'pending',
      attempts: 0,
      clientOrderId: deriveClientOrderId(SLOT.instance, SLOT.slotTimeMs, 0),
      result: null,
      error: null,
    });
    expect(record?.intent).toEqual(buy('0.0005'));
  });

  it('prefixes the clientOrderId with the intent tag, else the configured prefix', async () => {
    const journal = await world.openJournal();
    await journal.claimSlot({ ...SLOT, runId: null });
    const [tagged, prefixed] = await journal.addIntents(SLOT, [
      { index: 0, intent: { ...buy('1'), tag: 'weekly' }, clientOrderIdPrefix: 'stk' },
      { index: 1, intent: buy('1'), clientOrderIdPrefix: 'stk' },
    ]);
    expect(tagged?.clientOrderId).toBe(deriveClientOrderId(SLOT.instance, SLOT.slotTimeMs, 0, 'weekly'));
    expect(prefixed?.clientOrderId).toBe(deriveClientOrderId(SLOT.instance, SLOT.slotTimeMs, 1, 'stk'));
    expect(await journal.findIntentByClientOrderId(prefixed?.clientOrderId ?? '')).toMatchObject({ index: 1 });
  });

  it('settles notes, refusals and set-state when journalled, and applies set-state in the same transaction', async () => {
    const journal = await world.openJournal();
    await journal.setState(SLOT.instance, { stale: 'yes' });
    await journal.claimSlot({
      ...SLOT,
      runId: null,
      intents: [
        { index: 0, intent: { kind: 'note', level: 'info', message: 'price is 97000', data: { price: '97000.5' } } },
        { index: 1, intent: { kind: 'refusal', reason: 'below-min-total', message: 'total 4 is below 5' } },
        { index: 2, intent: { kind: 'set-state', key: 'lastBuyMs', value: '1735689600000' } },
        { index: 3, intent: { kind: 'set-state', key: 'stale', value: null } },
        { index: 4, intent: buy('0.1'), refusal: { code: 'over-budget', message: 'day budget 100 USDT is spent' } },
      ],
    });
    const statuses = (await journal.listIntents(SLOT)).map((i) => [i.intent.kind, i.status, i.error?.code ?? null, i.clientOrderId === null]);
    expect(statuses).toEqual([
      ['note', 'done', null, true],
      ['refusal', 'refused', 'below-min-total', true],
      ['set-state', 'done', null, true],
      ['set-state', 'done', null, true],
      ['buy-stock-market', 'refused', 'over-budget', false],
    ]);
    expect(await journal.getState(SLOT.instance)).toEqual(new Map([['lastBuyMs', '1735689600000']]));
    expect((await journal.listIntents(SLOT))[0]?.intent).toEqual({ kind: 'note', level: 'info', message: 'price is 97000', data: { price: '97000.5' } });
  });

  it('follows pending → sent → unknown → done, recording when it was sent and counting one attempt', async () => {
    const journal = await world.openJournal();
    const id = await claimWithBuy(journal);
    const sentAt = world.nowMs;
    expect(await journal.updateIntent(id, { status: 'sent' })).toMatchObject({ status: 'sent', attempts: 1, sentAtMs: sentAt, origin: 'engine' });
    world.nowMs += 500;
    expect(await journal.updateIntent(id, { status: 'unknown', error: { code: 'E_TIMEOUT', message: 'no response within 10000 ms' } })).toMatchObject({
      status: 'unknown',
      sentAtMs: sentAt,
      error: { code: 'E_TIMEOUT', message: 'no response within 10000 ms' },
    });
    world.nowMs += 1;
    expect(await journal.updateIntent(id, { status: 'done', result: { orderId: '5123456789' } })).toMatchObject({
      status: 'done',
      attempts: 1,
      sentAtMs: sentAt,
      result: { orderId: '5123456789' },
      error: null,
      updatedAtMs: world.nowMs,
    });
  });

  it('never lets an intent whose answer was lost be sent again: unknown leads to done, not-found or a verdict, never to sent', async () => {
    const journal = await world.openJournal();
    const id = await claimWithBuy(journal);
    await journal.updateIntent(id, { status: 'sent' });
    await journal.updateIntent(id, { status: 'unknown', error: { code: 'E_UNAVAILABLE', message: '502' } });
    await expect(journal.updateIntent(id, { status: 'sent' })).rejects.toMatchObject({ reason: 'illegal-transition' });
    expect(await journal.updateIntent(id, { status: 'not-found', error: { code: 'E_NOT_FOUND', message: 'no order after 10 min' } })).toMatchObject({ status: 'not-found' });
    // An order that turns up after the window still makes it done; nothing else does.
    await expect(journal.updateIntent(id, { status: 'failed', error: { code: 'E_X', message: 'x' } })).rejects.toMatchObject({ reason: 'illegal-transition' });
    expect(await journal.updateIntent(id, { status: 'done', result: { orderId: '7' } })).toMatchObject({ status: 'done' });
  });

  it('refuses to reopen a finished intent: a done buy is never sent again', async () => {
    const journal = await world.openJournal();
    const id = await claimWithBuy(journal);
    await journal.updateIntent(id, { status: 'sent' });
    await journal.updateIntent(id, { status: 'done', result: { orderId: '1' } });
    await expect(journal.updateIntent(id, { status: 'sent' })).rejects.toMatchObject({ code: 'E_STORE', reason: 'illegal-transition' });
    await expect(journal.updateIntent(id, { status: 'failed', error: { code: 'E_X', message: 'x' } })).rejects.toMatchObject({ reason: 'illegal-transition' });
    await expect(journal.updateIntent('missing', { status: 'sent' })).rejects.toMatchObject({ reason: 'not-found' });
  });

  it('lists pending, sent and unknown intents, oldest first, for reconciliation on start', async () => {
    const journal = await world.openJournal();
    await journal.claimSlot({
      ...SLOT,
      runId: null,
      intents: [0, 1, 2, 3].map((index) => ({ index, intent: buy(`0.${index + 1}`) })),
    });
    const [a, b, c, d] = (await journal.listIntents(SLOT)).map((i) => i.intentId);
    await journal.updateIntent(b ?? '', { status: 'sent' });
    await journal.updateIntent(c ?? '', { status: 'unknown', error: { code: 'E_NETWORK', message: 'reset' } });
    await journal.updateIntent(d ?? '', { status: 'refused', error: { code: 'E_EXCHANGE_REFUSED', message: 'Not enough balance.' } });
    expect((await journal.unresolvedIntents()).map((i) => [i.intentId, i.status])).toEqual([
      [a, 'pending'],
      [b, 'sent'],
      [c, 'unknown'],
    ]);
    expect(await journal.listIntents({ statuses: ['refused'] })).toHaveLength(1);
  });

  it('has open work while a slot is claimed, an intent unresolved or an order not terminal, and none once all are settled', async () => {
    const journal = await world.openJournal();
    expect(await journal.hasOpenWork()).toBe(false);
    const intentId = await claimWithBuy(journal, '0.0005');
    expect(await journal.hasOpenWork()).toBe(true); // claimed slot, pending buy
    await journal.updateIntent(intentId, { status: 'sent' });
    await journal.finishSlot({ ...SLOT, status: 'done' });
    expect(await journal.hasOpenWork()).toBe(true); // the buy is still `sent`
    const clientOrderId = deriveClientOrderId(SLOT.instance, SLOT.slotTimeMs, 0);
    await journal.recordOrderSnapshot(order({ clientOrderId, status: 'NEW' }), { intentId });
    await journal.updateIntent(intentId, { status: 'done', result: { orderId: '5123456789', status: 'NEW' } });
    expect(await journal.hasOpenWork()).toBe(true); // the order is not terminal yet
    await journal.recordOrderSnapshot(
      order({ clientOrderId, status: 'FILLED', left: new Decimal('0'), filledBase: new Decimal('0.0005'), filledQuote: new Decimal('48.5'), fee: new Decimal('0.0485'), feeAsset: 'USDT' }),
      { intentId },
    );
    expect(await journal.hasOpenWork()).toBe(false);
  });

  it('journals a slot with its intents all or nothing: a conflict in the last intent leaves no slot, no state and no intent', async () => {
    const journal = await world.openJournal();
    const claim = journal.claimSlot({
      ...SLOT,
      runId: null,
      intents: [
        { index: 0, intent: { kind: 'set-state', key: 'k', value: 'v' } },
        { index: 1, intent: buy('0.0001') },
        { index: 1, intent: buy('0.0002') },
      ],
    });
    await expect(claim).rejects.toMatchObject({ reason: 'conflict' });
    expect(await journal.getSlot(SLOT)).toBeNull();
    expect(await journal.getState(SLOT.instance)).toEqual(new Map());
    expect(await journal.listIntents({ instance: SLOT.instance })).toEqual([]);
    expect(await journal.hasOpenWork()).toBe(false);
    // Nothing half-made stands in the way of the slot done right.
    expect(await journal.claimSlot({ ...SLOT, runId: null, intents: [{ index: 0, intent: buy('0.0001') }] })).toBe(true);
  });

  it('keeps strategy state per instance; null deletes', async () => {
    const journal = await world.openJournal();
    await journal.setState('a', { k1: 'v1', k2: 'v2' });
    await journal.setState('b', { k1: 'other' });
    await journal.setState('a', { k1: null, k2: 'v2b' });
    expect(await journal.getState('a')).toEqual(new Map([['k2', 'v2b']]));
    expect(await journal.getState('b')).toEqual(new Map([['k1', 'other']]));
  });

  it('records a flex withdrawal and a transfer per intent; recording again updates without losing the transaction id', async () => {
    const journal = await world.openJournal();
    await journal.claimSlot({
      ...SLOT,
      runId: null,
      intents: [
        { index: 0, intent: { kind: 'flex-withdraw', plan: '3b4c', amount: new Decimal('12.5') } },
        { index: 1, intent: { kind: 'transfer', ticker: 'USDT', amount: new Decimal('12.5'), from: 'main', to: 'spot' } },
        { index: 2, intent: buy('0.0001') },
      ],
    });
    const [flexId, transferId, buyId] = (await journal.listIntents(SLOT)).map((i) => i.intentId);
    await journal.recordFlexOperation({ intentId: flexId ?? '', plan: '3b4c', amount: new Decimal('12.5'), transactionId: 'tx-1', status: 'sent' });
    world.nowMs += 10;
    const flex = await journal.recordFlexOperation({ intentId: flexId ?? '', plan: '3b4c', amount: new Decimal('12.5'), transactionId: null, status: 'done' });
    expect(flex).toMatchObject({ transactionId: 'tx-1', status: 'done', createdAtMs: world.nowMs - 10, updatedAtMs: world.nowMs });
    const transfer = await journal.recordTransfer({ intentId: transferId ?? '', ticker: 'USDT', amount: new Decimal('12.5'), from: 'main', to: 'spot', status: 'done' });
    expect(transfer.amount.eq('12.5')).toBe(true);
    await expect(
      journal.recordTransfer({ intentId: buyId ?? '', ticker: 'USDT', amount: new Decimal('1'), from: 'main', to: 'spot', status: 'done' }),
    ).rejects.toMatchObject({ reason: 'invalid-argument' });

    await journal.recordOrderSnapshot(order({ clientOrderId: deriveClientOrderId(SLOT.instance, SLOT.slotTimeMs, 2) }));
    const entries = await journal.recentJournal({ instance: SLOT.instance });
    expect(entries.map((e) => [e.intent.index, e.flexOperation?.transactionId ?? null, e.transfer?.status ?? null, e.orders.map((o) => o.orderId)])).toEqual([
      [0, 'tx-1', null, []],
      [1, null, 'done', []],
      [2, null, null, ['5123456789']],
    ]);
  });
});
