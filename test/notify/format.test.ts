import { describe, expect, it } from 'vitest';
import { Decimal } from '../../src/domain/money.ts';
import type { DailySummaryEvent, InstanceDay, NotifyEvent } from '../../src/domain/notification.ts';
import { messageOf, textOf } from '../../src/notify/format.ts';
import { payloadOf } from '../../src/notify/payload.ts';
import { AT_MS, filled, refusal, stopped, stuck } from './events.ts';

const refused: NotifyEvent = refusal();

const unknown: NotifyEvent = {
  kind: 'intent-unknown',
  atMs: AT_MS,
  mode: 'dry-run',
  instance: 'dca-btc',
  intent: 'buy-stock-market',
  clientOrderId: 'dca-btc-7d16a56a1027-1767344400000-0',
  code: 'E_TIMEOUT',
  message: 'answer lost (no response within 10000 ms); not in the order history yet',
};

const summary: DailySummaryEvent = {
  kind: 'daily-summary',
  atMs: AT_MS,
  mode: 'live',
  day: '2026-01-01',
  instances: [
    {
      instance: 'dca-btc',
      state: 'enabled',
      account: 'default',
      market: 'BTC_USDT',
      orders: 2,
      bought: new Decimal('0.002'),
      spent: new Decimal('130'),
      fees: new Map([['USDT', new Decimal('0.13')]]),
      averageCost: new Decimal('130.13').div('0.002'),
      budgetLeft: new Decimal('20'),
      budgetAsset: 'USDT',
      budgetTimeZone: 'UTC',
    },
    { instance: 'sweep', state: 'enabled', account: 'default', market: null, orders: 0, bought: new Decimal(0), spent: new Decimal(0), fees: new Map(), averageCost: null, budgetLeft: null, budgetAsset: null, budgetTimeZone: null },
    // Renamed since: its buys of the day still show, under the name they were made with.
    { instance: 'kids-eth', state: 'no-file', account: 'kids', market: 'ETH_USDT', orders: 1, bought: new Decimal('0.01'), spent: new Decimal('20'), fees: new Map([['USDT', new Decimal('0.02')]]), averageCost: new Decimal('20.02').div('0.01'), budgetLeft: null, budgetAsset: null, budgetTimeZone: null },
  ],
  accountCaps: [],
};

/** The same day on a daemon with an account whose instances share a cap. */
const withCap: DailySummaryEvent = { ...summary, accountCaps: [{ account: 'kids', capLeft: new Decimal('34.87'), capAsset: 'USDT', timeZone: 'Europe/Berlin' }] };

describe('the JSON payload', () => {
  it('is {event, at, mode, ...fields} with every amount a decimal string', () => {
    expect(payloadOf(filled({ averagePrice: new Decimal(65.12).div(0.003) }))).toEqual({
      event: 'order-filled',
      at: '2026-01-02T09:00:00.000Z',
      mode: 'live',
      instance: 'dca-btc',
      clientOrderId: 'dca-btc-7d16a56a1027-1767344400000-0',
      orderId: '4180284841',
      market: 'BTC_USDT',
      status: 'FILLED',
      filledBase: '0.001',
      filledQuote: '65.12',
      fee: '0.06512',
      feeAsset: 'USDT',
      averagePrice: '21706.66666667',
    });
  });

  it('a stuck order: which order, since when and why, the time as ISO-8601', () => {
    expect(payloadOf(stuck())).toEqual({
      event: 'order-stuck',
      at: '2026-01-02T09:00:00.000Z',
      mode: 'live',
      instance: 'dca-btc',
      clientOrderId: 'dca-btc-7d16a56a1027-1767344400000-0',
      orderId: '4180284841',
      market: 'BTC_USDT',
      status: 'NEW',
      since: '2026-01-02T08:40:00.000Z',
      why: 'the exchange answers status "ACCEPTED", which this stacker does not know (taken as NEW)',
    });
    expect(payloadOf(stuck({ instance: null }))['instance']).toBeNull();
  });

  it('sums a day up per instance, fees per asset, average cost with fees in', () => {
    expect(payloadOf(summary)).toEqual({
      event: 'daily-summary',
      at: '2026-01-02T09:00:00.000Z',
      mode: 'live',
      day: '2026-01-01',
      instances: [
        { instance: 'dca-btc', state: 'enabled', account: 'default', market: 'BTC_USDT', orders: 2, bought: '0.002', spent: '130', fees: { USDT: '0.13' }, averageCost: '65065', budgetLeft: '20', budgetAsset: 'USDT', budgetTimeZone: 'UTC' },
        { instance: 'sweep', state: 'enabled', account: 'default', market: null, orders: 0, bought: '0', spent: '0', fees: {}, averageCost: null, budgetLeft: null, budgetAsset: null, budgetTimeZone: null },
        { instance: 'kids-eth', state: 'no-file', account: 'kids', market: 'ETH_USDT', orders: 1, bought: '0.01', spent: '20', fees: { USDT: '0.02' }, averageCost: '2002', budgetLeft: null, budgetAsset: null, budgetTimeZone: null },
      ],
      accountCaps: [],
    });
    expect(payloadOf(withCap)['accountCaps']).toEqual([{ account: 'kids', capLeft: '34.87', capAsset: 'USDT', timeZone: 'Europe/Berlin' }]);
  });
});

describe('the phone-readable message', () => {
  it('a fill: what was bought and for how much in the title; price, fee and order below', () => {
    expect(textOf(messageOf(filled()))).toBe(['Bought 0.001 BTC for 65.12 USDT', 'dca-btc · BTC_USDT', 'Average price 65120 USDT, fee 0.06512 USDT', 'Order 4180284841 (dca-btc-7d16a56a1027-1767344400000-0)'].join('\n'));
  });

  it('a fill that ended cancelled after a partial fill says so', () => {
    expect(messageOf(filled({ status: 'PARTIAL_CANCELED' })).body).toContain('Ended PARTIAL_CANCELED: filled only in part');
  });

  it('a refusal: the instance and the reason first, the explanation below', () => {
    const message = messageOf(refused);
    expect(message.title).toBe('Not bought: dca-btc (over-budget)');
    expect(message.body.split('\n')[0]).toBe('estimated value 65 USDT is over budget (day: 100 spent + 65 > 150 USDT)');
  });

  it('a refusal sent after others like it were held back says how many, and since when', () => {
    const again = refusal({ atMs: AT_MS + 86_400_000, withheld: { count: 86_399, sinceMs: AT_MS } });
    expect(messageOf(again).body.split('\n').at(-1)).toBe('86399 more like it since 2026-01-02T09:00:00.000Z not sent (one a day while nothing changes)');
    expect(payloadOf(again)).toMatchObject({ event: 'order-refused', withheld: 86_399, withheldSince: '2026-01-02T09:00:00.000Z' });
    expect(payloadOf(refusal())).not.toHaveProperty('withheld');
  });

  it('a lost answer asks for a look at the exchange and says it is never resent; not live is marked', () => {
    const message = messageOf(unknown);
    expect(message.title).toBe('Answer lost: dca-btc - check the exchange [dry-run]');
    expect(message.body).toContain('never sends it again');
    // With named accounts, the account it was sent on: where to check it.
    expect(messageOf({ ...unknown, account: 'kids' }).title).toBe('Answer lost: dca-btc (account kids) - check the exchange [dry-run]');
  });

  it('a stuck order asks for a look at the exchange, names the order, since when and why, and says nothing is cancelled or resent', () => {
    expect(textOf(messageOf(stuck()))).toBe(
      [
        'Order stuck: dca-btc - check the exchange',
        'dca-btc · BTC_USDT: order 4180284841 (dca-btc-7d16a56a1027-1767344400000-0) still NEW since 2026-01-02T08:40:00.000Z; a market order ends in seconds.',
        'the exchange answers status "ACCEPTED", which this stacker does not know (taken as NEW)',
        'Check it at the exchange. stacker keeps following it, cancels and resends nothing; its budget stays counted.',
      ].join('\n'),
    );
    expect(messageOf(stuck({ instance: null, mode: 'dry-run' })).title).toBe('Order stuck: BTC_USDT - check the exchange [dry-run]');
  });

  it('a disabled strategy names the instance, the strategy, the slot and the error, and what it takes to resume; its payload carries the same', () => {
    const disabled = { kind: 'strategy-disabled', atMs: AT_MS, mode: 'live', instance: 'dca-btc', strategy: 'dca', slotTimeMs: AT_MS, error: 'decide did not answer within 30 s' } as const;
    expect(messageOf(disabled)).toEqual({
      title: 'Strategy failed: dca-btc stopped buying',
      body:
        'dca-btc (dca), slot 2026-01-02T09:00:00.000Z: decide did not answer within 30 s\n' +
        'This instance runs no more slots until stacker is restarted; the others go on. Fix the strategy or its file, check it with `stacker check`, then restart.',
    });
    expect(payloadOf(disabled)).toEqual({ event: 'strategy-disabled', at: '2026-01-02T09:00:00.000Z', mode: 'live', instance: 'dca-btc', strategy: 'dca', slot: '2026-01-02T09:00:00.000Z', error: 'decide did not answer within 30 s' });
  });

  it('a stop names the code and what it takes to resume', () => {
    expect(messageOf(stopped)).toEqual({ title: 'Trading stopped (E_AUTH)', body: 'the exchange refused the key\nNo order is sent until a person fixes this and restarts stacker.' });
  });

  it('a daemon stopped as asked names the signal and says nothing trades until it is started again; its payload carries the signal', () => {
    const daemonStopped = { kind: 'daemon-stopped', atMs: AT_MS, mode: 'live', reason: 'SIGTERM' } as const;
    expect(messageOf(daemonStopped)).toEqual({ title: 'stacker stopped (SIGTERM)', body: 'Stopped as asked: no slot runs until stacker is started again.' });
    expect(payloadOf(daemonStopped)).toEqual({ event: 'daemon-stopped', at: new Date(AT_MS).toISOString(), mode: 'live', reason: 'SIGTERM' });
  });

  it('a second stacker refused the lock says the running one was not touched, not that trading stopped', () => {
    const refusedStart = { ...stopped, code: 'E_LOCKED', reason: 'a second stacker was refused start: the data dir is in use by stacker pid 26735 on host-a (lock /data/stacker.run-lock); the running one trades on' };
    expect(messageOf(refusedStart)).toEqual({ title: 'Second stacker refused (E_LOCKED)', body: `${refusedStart.reason}\nThe stacker already running was not touched.` });
  });

  it("a daily summary: one short block per instance, its budget left as at the day's end, an instance without a file said so", () => {
    expect(textOf(messageOf(summary))).toBe(
      [
        'Daily summary 2026-01-01',
        'dca-btc · BTC_USDT',
        'Bought 0.002 BTC for 130 USDT in 2 orders',
        'Average cost 65065 USDT (fees in: 0.13 USDT)',
        "Budget left 20 USDT at the day's end",
        '',
        'sweep',
        'Bought nothing',
        '',
        'kids-eth · ETH_USDT · account kids (no file any more)',
        'Bought 0.01 ETH for 20 USDT in 1 order',
        'Average cost 2002 USDT (fees in: 0.02 USDT)',
      ].join('\n'),
    );
  });

  it("a daily summary on a daemon with account caps ends with what each cap leaves", () => {
    expect(textOf(messageOf(withCap)).split('\n\n').at(-1)).toBe('Account kids: cap left 34.87 USDT on 2026-01-01 in its Europe/Berlin calendar (all its instances together)');
    const utcCap: DailySummaryEvent = { ...summary, accountCaps: [{ account: 'kids', capLeft: new Decimal('34.87'), capAsset: 'USDT', timeZone: 'UTC' }] };
    expect(textOf(messageOf(utcCap)).split('\n\n').at(-1)).toBe("Account kids: cap left 34.87 USDT at the day's end (all its instances together)");
  });

  it('says which local date a budget counted in another zone than UTC is left on: the summary covers a UTC day', () => {
    const [dca] = summary.instances;
    const berlin: DailySummaryEvent = { ...summary, instances: [{ ...(dca as InstanceDay), budgetLeft: new Decimal('7'), budgetTimeZone: 'Europe/Berlin' }] };
    expect(textOf(messageOf(berlin)).split('\n').at(-1)).toBe('Budget left 7 USDT on 2026-01-01 in Europe/Berlin');
  });

  it('keeps every title plain ASCII (ntfy sends it as a header)', () => {
    for (const event of [filled(), refused, unknown, stuck(), stopped, summary]) expect(messageOf(event).title).toMatch(/^[\x20-\x7e]+$/);
  });
});
