import { afterEach, describe, expect, it } from 'vitest';
import { ProtocolError, outcomeUnknown } from '../../src/domain/errors.ts';
import { Decimal, formatDecimal } from '../../src/domain/money.ts';
import type { Order } from '../../src/domain/order.ts';
import { parseDeals, parseOrder, parseOrderHistory } from '../../src/api/parse-order.ts';
import {
  parseCodePage,
  parseFlexInvestments,
  parseFlexPlans,
  parseFlexWithdraw,
  parseMainBalance,
  parseMainBalances,
  parseMarkets,
  parseTickers,
  parseTradeBalance,
  parseTradeBalances,
} from '../../src/api/parse.ts';
import { WireShapeError } from '../../src/api/read.ts';
import { decodeBody, jsonInteger } from '../../src/api/json.ts';
import { failure, harness, type Harness } from './helpers.ts';

const text = (order: Order): Record<string, string | null> => ({
  amount: formatDecimal(order.amount),
  left: formatDecimal(order.left),
  filledBase: formatDecimal(order.filledBase),
  filledQuote: formatDecimal(order.filledQuote),
  fee: formatDecimal(order.fee),
  price: order.price === null ? null : formatDecimal(order.price),
});

// docs/exchange-api.md §6, current docs
const FILLED_STOCK_MARKET = {
  orderId: 5123456789, clientOrderId: 'bot-eth-0001', market: 'ETH_USDT', side: 'buy', type: 'stock market',
  timestamp: 1760001234.123456, dealMoney: '6.30084', dealStock: '0.002', amount: '0.002', left: '0',
  dealFee: '0.00630084', feeAsset: 'USDT', ioc: false, status: 'FILLED', stp: 'no', rpi: false,
};
// G fixture (2022): no status, no stp, legacy fee fields
const LEGACY_STOCK_MARKET = {
  orderId: 3310696165, clientOrderId: '61', market: 'BTC_USDT', side: 'buy', type: 'stock market',
  timestamp: 1669333716.366427, dealMoney: '16.58143', dealStock: '0.001', amount: '0.001',
  takerFee: '0.001', makerFee: '0', left: '0', dealFee: '0.01658143',
};
// ccxt PR #22572 (2024): market buy by cost, unspent dust left, no status
const LEGACY_MARKET_BUY = {
  orderId: 1, clientOrderId: '', market: 'BTC_USDT', side: 'buy', type: 'market', timestamp: 1700000000.5,
  dealMoney: '7.03521156', dealStock: '0.00017', amount: '7.09', left: '0.05478844', dealFee: '0.007', ioc: false, postOnly: false,
};

describe('order parsing', () => {
  it('reads a current order record into domain names, money as Decimal', () => {
    const order = parseOrder(FILLED_STOCK_MARKET, 'order');
    expect(order).toMatchObject({ orderId: '5123456789', clientOrderId: 'bot-eth-0001', market: 'ETH_USDT', side: 'buy', type: 'stock market', status: 'FILLED', statusDerived: false, stp: 'no', feeAsset: 'USDT', stopActivated: null });
    expect(order.createdAtSec).toBe(1760001234.123456);
    expect(text(order)).toEqual({ amount: '0.002', left: '0', filledBase: '0.002', filledQuote: '6.30084', fee: '0.00630084', price: null });
  });

  it('refuses names that are not names: a market, fee asset or clientOrderId holding markup, a formula or an escape sequence', () => {
    // They reach the journal, the HTML report, the CSV export and the terminal: an exchange (or a
    // proxy in front of it) answering markup there must not get it run or typed out.
    for (const [field, value] of [
      ['market', 'ETH_USDT"><img src=x onerror=alert(1)>'],
      ['feeAsset', '=HYPERLINK("http://x")'],
      ['clientOrderId', 'bot\u001b]0;owned\u0007'],
    ] as const) {
      const error = (() => {
        try {
          parseOrder({ ...FILLED_STOCK_MARKET, [field]: value }, 'order');
        } catch (e) {
          return e;
        }
        return null;
      })();
      expect(error, field).toBeInstanceOf(WireShapeError);
      expect((error as Error).message).toMatch(new RegExp(`^order\\.${field}: expected an? (market name|asset name|clientOrderId) \\(letters, digits`));
    }
    // History rows take their market from the key they are listed under: checked the same.
    expect(() => parseOrderHistory({ 'BTC_USDT<script>': [{ ...FILLED_STOCK_MARKET, market: undefined, id: 1, ctime: 1 }] }, 'history')).toThrow(/expected a market name/);
  });

  it('derives FILLED for a record without status when nothing is left', () => {
    const order = parseOrder(LEGACY_STOCK_MARKET, 'order');
    expect(order.status).toBe('FILLED');
    expect(order.statusDerived).toBe(true);
    expect(order.stp).toBe('no');
    // No feeAsset before 2024: its dealFee (0.1 % of dealMoney) is in the quote asset.
    expect(order.feeAsset).toBe('USDT');
  });

  it('names no fee asset when there is no fee to name', () => {
    const order = parseOrder({ ...LEGACY_STOCK_MARKET, dealFee: '0' }, 'order');
    expect(order.feeAsset).toBeNull();
  });

  it('derives CANCELED_TAKER_BAND for a market order without status that filled in part', () => {
    const order = parseOrder(LEGACY_MARKET_BUY, 'order');
    expect(order.status).toBe('CANCELED_TAKER_BAND');
    expect(order.statusDerived).toBe(true);
    expect(formatDecimal(order.left)).toBe('0.05478844');
  });

  it('derives a market order without status that filled nothing NEW in an answer (it may come before the match) and CANCELED in the history (finished orders only)', () => {
    const unfilled = { ...LEGACY_STOCK_MARKET, dealStock: '0', dealMoney: '0', dealFee: '0', left: '0.001' };
    expect(parseOrder(unfilled, 'order').status).toBe('NEW');
    expect(parseOrder(unfilled, 'order', { finished: true }).status).toBe('CANCELED');
  });

  it('derives PARTIAL_FILLED and NEW only for orders that can rest', () => {
    const limit = { ...LEGACY_STOCK_MARKET, type: 'limit', price: '65000', amount: '0.002', left: '0.001' };
    expect(parseOrder(limit, 'order').status).toBe('PARTIAL_FILLED');
    expect(parseOrder({ ...limit, dealStock: '0', left: '0.002' }, 'order').status).toBe('NEW');
    expect(parseOrder({ ...limit, type: 'stop market', activated: 0, dealStock: '0', left: '0.002' }, 'order').status).toBe('NEW');
  });

  it('maps PARTIALLY_FILLED to PARTIAL_FILLED and folds unknown AUTO_CANCELED_* into CANCELED', () => {
    const unfilled = { ...FILLED_STOCK_MARKET, dealStock: '0', dealMoney: '0', dealFee: '0', left: '0.002' };
    expect(parseOrder({ ...FILLED_STOCK_MARKET, status: 'PARTIALLY_FILLED' }, 'order').status).toBe('PARTIAL_FILLED');
    expect(parseOrder({ ...unfilled, status: 'AUTO_CANCELED_MARGIN_EXCHANGE_BALANCE' }, 'order').status).toBe('CANCELED');
    expect(parseOrder({ ...FILLED_STOCK_MARKET, status: 'CANCELED_STP' }, 'order').status).toBe('CANCELED_STP');
  });

  it('reads a CANCELED order that has fills as cut short: CANCELED_TAKER_BAND for a market order, PARTIAL_CANCELED for one that rests', () => {
    const partly = { ...FILLED_STOCK_MARKET, status: 'CANCELED', dealStock: '0.001', dealMoney: '3.15042', left: '0.001' };
    expect(parseOrder(partly, 'order').status).toBe('CANCELED_TAKER_BAND');
    expect(parseOrder({ ...partly, type: 'limit', price: '3150.42' }, 'order').status).toBe('PARTIAL_CANCELED');
    expect(parseOrder({ ...partly, dealStock: '0', dealMoney: '0', dealFee: '0', left: '0.002' }, 'order').status).toBe('CANCELED');
  });

  it('keeps a status or STP mode it does not know as sent, and derives the order from its fills instead of refusing the answer', () => {
    const order = parseOrder({ ...FILLED_STOCK_MARKET, status: 'SETTLED_SOMEHOW', stp: 'cx' }, 'order');
    expect(order).toMatchObject({ status: 'FILLED', statusDerived: true, stp: 'no', unrecognized: { status: 'SETTLED_SOMEHOW', stp: 'cx' } });
    // Money stays strict.
    expect(() => parseOrder({ ...FILLED_STOCK_MARKET, status: 'SETTLED_SOMEHOW', dealMoney: 6.3 }, 'order')).toThrow(/dealMoney/);
  });

  describe('a status word it does not know', () => {
    const accepted = { ...FILLED_STOCK_MARKET, status: 'ACCEPTED', dealStock: '0', dealMoney: '0', dealFee: '0', left: '0.002' };

    it('is not final on a market order that filled nothing yet: NEW, followed, the word kept', () => {
      const order = parseOrder(accepted, 'order');
      expect(order).toMatchObject({ status: 'NEW', statusDerived: true, unrecognized: { status: 'ACCEPTED' } });
      expect(parseOrder({ ...LEGACY_MARKET_BUY, status: 'ACCEPTED', dealStock: '0', dealMoney: '0', dealFee: '0', left: '7.09' }, 'order').status).toBe('NEW');
    });

    it('is PARTIAL_FILLED, not cut short, on a market order with fills and something left; FILLED only once nothing is left', () => {
      expect(parseOrder({ ...LEGACY_MARKET_BUY, status: 'MATCHING' }, 'order')).toMatchObject({ status: 'PARTIAL_FILLED', unrecognized: { status: 'MATCHING' } });
      expect(parseOrder({ ...accepted, dealStock: '0.001', dealMoney: '3.15042', left: '0.001' }, 'order').status).toBe('PARTIAL_FILLED');
      expect(parseOrder({ ...FILLED_STOCK_MARKET, status: 'ACCEPTED' }, 'order')).toMatchObject({ status: 'FILLED', statusDerived: true, unrecognized: { status: 'ACCEPTED' } });
    });

    it('is final on a history row, which lists finished orders only, where the same order in an answer is open', () => {
      const row = { id: 5123456789, clientOrderId: 'bot-eth-0001', side: 'buy', type: 'stock market', amount: '0.002', price: '0', ctime: 1760001234.12, dealStock: '0', dealMoney: '0', dealFee: '0', status: 'ACCEPTED' };
      const [nothing, part] = parseOrderHistory({ ETH_USDT: [row, { ...row, id: 5123456790, dealStock: '0.001', dealMoney: '3.15042' }] }, 'history');
      expect(nothing).toMatchObject({ status: 'CANCELED', statusDerived: true, unrecognized: { status: 'ACCEPTED' } });
      expect(part).toMatchObject({ status: 'CANCELED_TAKER_BAND', statusDerived: true, unrecognized: { status: 'ACCEPTED' } });
      expect(parseOrder({ ...row, market: 'ETH_USDT' }, 'order').status).toBe('NEW');
    });

    it('is read apart from a missing status, which older answers leave out and which derives a market order still to match', () => {
      const { status: _, ...noStatus } = accepted;
      expect(parseOrder(noStatus, 'order')).toMatchObject({ status: 'NEW', statusDerived: true });
      expect(parseOrder(noStatus, 'order').unrecognized).toBeUndefined();
      expect(parseOrder(accepted, 'order').status).toBe('NEW');
    });
  });

  it('reads activated as 0/1 on live orders and as the trigger time in the order history', () => {
    const stop = { ...FILLED_STOCK_MARKET, type: 'stop market' };
    expect(parseOrder({ ...stop, activated: 0 }, 'order').stopActivated).toBe(0);
    expect(parseOrder({ ...stop, activated: 1 }, 'order').stopActivated).toBe(1);
    expect(parseOrder({ ...stop, activated: 1597486960 }, 'order').stopActivated).toBe(1);
    expect(parseOrder({ ...stop, activated: '1597486960' }, 'order').stopActivated).toBe(1);
    expect(() => parseOrder({ ...stop, activated: -3 }, 'order')).toThrow(/activated/);
  });

  it.each([
    ['no', 'no'],
    ['cb', 'cb'],
    ['cn', 'cn'],
    ['co', 'co'],
    ['cancel_new', 'cn'],
    ['cancel_both', 'cb'],
  ])('reads stp %s as %s', (wire, domain) => {
    expect(parseOrder({ ...FILLED_STOCK_MARKET, stp: wire }, 'order').stp).toBe(domain);
  });

  it('reads `activated` as stopActivated and a price, "0" price as null', () => {
    const stop = parseOrder({ ...FILLED_STOCK_MARKET, type: 'stop limit', price: '64000.5', activated: 1, activation_price: '64000' }, 'order');
    expect(stop.stopActivated).toBe(1);
    expect(stop.price?.toString()).toBe('64000.5');
    expect(parseOrder({ ...FILLED_STOCK_MARKET, price: '0' }, 'order').price).toBeNull();
  });

  it('reads history rows keyed by market: `id`, `ctime`, no `left`, no `market`', () => {
    const history = {
      ETH_USDT: [
        { id: 5123456789, clientOrderId: 'bot-eth-0001', side: 'buy', type: 'stock market', amount: '0.002', price: '0', ctime: 1760001234.12, ftime: 1760001234.13, dealStock: '0.002', dealMoney: '6.30084', dealFee: '0.00630084', feeAsset: 'USDT', postOnly: false, ioc: false, status: 'FILLED' },
        { id: 5123456790, side: 'buy', type: 'limit', amount: '0.01', price: '3000', ctime: 1760001300, dealStock: '0.004', dealMoney: '12', dealFee: '0.012' },
      ],
    };
    const [first, second] = parseOrderHistory(history, 'history');
    expect(first).toMatchObject({ orderId: '5123456789', market: 'ETH_USDT', createdAtSec: 1760001234.12, status: 'FILLED', clientOrderId: 'bot-eth-0001' });
    expect(formatDecimal(first!.left)).toBe('0');
    // A finished limit order without status that filled in part was cancelled for the rest.
    expect(second).toMatchObject({ orderId: '5123456790', status: 'PARTIAL_CANCELED', statusDerived: true, clientOrderId: '' });
    expect(formatDecimal(second!.left)).toBe('0.006');
  });

  it('reads `[]` as an empty order history (the empty-map quirk)', () => {
    expect(parseOrderHistory([], 'history')).toEqual([]);
  });

  it('keeps order ids above 2^53 exact through the client', async () => {
    const h = harness();
    try {
      h.pool.intercept({ path: '/api/v4/orders', method: 'POST' }).reply(200, `[${JSON.stringify({ ...FILLED_STOCK_MARKET, orderId: 1 }).replace('"orderId":1', '"orderId":18446744073709551615')}]`);
      const [order] = await h.client.activeOrders({ market: 'ETH_USDT' });
      expect(order?.orderId).toBe('18446744073709551615');
    } finally {
      await h.agent.close();
    }
  });

  it('reads deals of one order: role 1 maker, 2 taker; base, quote and fee as Decimal', () => {
    const deals = parseDeals(
      { records: [{ time: 1760001234.13, fee: '0.00630084', price: '3150.42', amount: '0.002', id: 149156519, dealOrderId: 5123456780, clientOrderId: 'bot-eth-0001', role: 2, deal: '6.30084', feeAsset: 'USDT' }], offset: 0, limit: 50 },
      'deals',
      '5123456789',
    );
    expect(deals).toHaveLength(1);
    expect(deals[0]).toMatchObject({ dealId: '149156519', orderId: '5123456789', role: 'taker', timeSec: 1760001234.13, feeAsset: 'USDT' });
    expect(formatDecimal(deals[0]!.quoteAmount)).toBe('6.30084');
    expect(() => parseDeals({ records: [{ time: 1, fee: '0', price: '1', amount: '1', id: 1, role: 3, deal: '1' }] }, 'deals', '1')).toThrow(/role/);
  });

  it('refuses a float on a money field, naming the field', () => {
    expect(() => parseOrder({ ...FILLED_STOCK_MARKET, dealMoney: 6.30084 }, 'order')).toThrow(WireShapeError);
    expect(() => parseOrder({ ...FILLED_STOCK_MARKET, dealMoney: 6.30084 }, 'order')).toThrow(/^order\.dealMoney: expected a decimal string, got a non-integer number$/);
  });
});

describe('money on the wire through the client', () => {
  let h: Harness;
  afterEach(async () => {
    await h.agent.close();
  });

  it('reads money the exchange writes as a JSON number exactly as written, never through a float (the spec says strings; the client reads both)', async () => {
    h = harness();
    h.pool
      .intercept({ path: '/api/v4/order/stock_market', method: 'POST' })
      .reply(200, '{"orderId":4986126152,"clientOrderId":"","market":"ETH_USDT","side":"buy","type":"stock market","timestamp":1595792396.165973,"dealMoney":0.30000000000000004,"dealStock":0.002,"amount":0.002,"left":0,"dealFee":1e-8,"feeAsset":"USDT","status":"FILLED"}');
    const order = await h.client.buyStockMarket({ market: 'ETH_USDT', baseAmount: new Decimal('0.002') });
    expect([order.amount, order.filledBase, order.filledQuote, order.fee].map(formatDecimal)).toEqual(['0.002', '0.002', '0.30000000000000004', '0.00000001']);
  });

  it('reads a balance written as a number or in exponent notation, and still refuses a money field that is no number', async () => {
    h = harness();
    h.pool.intercept({ path: '/api/v4/main-account/balance', method: 'POST' }).reply(200, '{"USDT":{"main_balance":36.48},"SHIB":{"main_balance":"1.0E-8"}}');
    const balances = await h.client.mainBalances();
    expect([balances.get('USDT'), balances.get('SHIB')].map((v) => (v === undefined ? null : formatDecimal(v)))).toEqual(['36.48', '0.00000001']);
    h.pool.intercept({ path: '/api/v4/main-account/balance', method: 'POST' }).reply(200, { USDT: { main_balance: 'lots' } });
    const error = await failure(h.client.mainBalances());
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).exchangeMessage).toMatch(/balance\.USDT\.main_balance/);
  });
});

describe('account and market parsing', () => {
  const market = {
    name: 'ETH_USDT', stock: 'ETH', money: 'USDT', stockPrec: '4', moneyPrec: '2', feePrec: '6', makerFee: '0.1', takerFee: '0.1',
    minAmount: '0.001', minTotal: '5', maxTotal: '0', tradesEnabled: true, isCollateral: true, type: 'spot', isTradFiFutures: false, delistedAt: null,
  };

  it('reads market rules: precisions as integers, fees as percent, maxTotal "0" or missing as no limit', () => {
    const [rules] = parseMarkets([market]);
    expect(rules).toMatchObject({ name: 'ETH_USDT', base: 'ETH', quote: 'USDT', basePrecision: 4, quotePrecision: 2, feePrecision: 6, maxQuoteTotal: null, tradesEnabled: true, type: 'spot' });
    expect(formatDecimal(rules!.takerFeePct)).toBe('0.1');
    expect(formatDecimal(rules!.minQuoteTotal)).toBe('5');
    const { maxTotal: _dropped, isTradFiFutures: _a, delistedAt: _b, ...older } = market;
    expect(parseMarkets([older])[0]!.maxQuoteTotal).toBeNull();
    expect(parseMarkets([{ ...market, maxTotal: '1000000' }])[0]!.maxQuoteTotal?.toString()).toBe('1000000');
  });

  it('leaves out a futures row that does not read as a market, reads a flag written as text, and still refuses a spot row it cannot read', () => {
    const futures = { name: 'BTC_PERP', stock: 'BTC', money: 'USDT', type: 'futures', makerFee: '0.01', takerFee: '0.055', minAmount: '0.0001', minTotal: '5', tradesEnabled: true };
    const rows = parseMarkets([market, futures, { ...market, name: 'SOL_USDT', stock: 'SOL', tradesEnabled: 'true' }, { ...market, name: 'XRP_USDT', stock: 'XRP', tradesEnabled: 'false' }]);
    expect(rows.map((r) => [r.name, r.tradesEnabled])).toEqual([
      ['ETH_USDT', true],
      ['SOL_USDT', true],
      ['XRP_USDT', false],
    ]);
    expect(() => parseMarkets([market, { ...market, name: 'NEW_USDT', stockPrec: undefined }])).toThrow(/markets\[1\]\.stockPrec/);
  });

  it('reads tickers keyed by market, and `[]` as none', () => {
    const tickers = parseTickers({ ETH_USDT: { base_id: 1027, quote_id: 825, last_price: '3150.42', quote_volume: '81234567.1', base_volume: '25811.3', isFrozen: false, change: '-1.25' } });
    expect(tickers.get('ETH_USDT')).toMatchObject({ market: 'ETH_USDT', frozen: false });
    expect(formatDecimal(tickers.get('ETH_USDT')!.changePct)).toBe('-1.25');
    expect(parseTickers([]).size).toBe(0);
  });

  it('reads balances keyed by ticker, `[]` as empty, and single-ticker answers wrapped or not', () => {
    expect(formatDecimal(parseMainBalances({ USDT: { main_balance: '36.48' } }).get('USDT')!)).toBe('36.48');
    expect(parseMainBalances([]).size).toBe(0);
    expect(formatDecimal(parseMainBalance({ main_balance: '36.48' }, 'USDT'))).toBe('36.48');
    expect(formatDecimal(parseMainBalance({ USDT: { main_balance: '1.5' } }, 'USDT'))).toBe('1.5');
    expect(formatDecimal(parseMainBalance({}, 'BTC'))).toBe('0');
    expect(formatDecimal(parseTradeBalance({ available: '128999.065109', freeze: '0' }, 'USDT').available)).toBe('128999.065109');
    expect(formatDecimal(parseTradeBalance({ USDT: { available: '2', freeze: '1' } }, 'USDT').freeze)).toBe('1');
    expect(formatDecimal(parseTradeBalance([], 'USDT').available)).toBe('0');
    expect(parseTradeBalances([]).size).toBe(0);
  });

  it('reads a code page, keeping the code text as is', () => {
    const page = parseCodePage({ total: 2, data: [{ amount: '25', code: 'WBxxxxxxxx-USDT', date: 1760000000, status: 'Activated', ticker: 'USDT', external_id: 'my-ext-1' }], limit: 30, offset: 0 }, { limit: 30, offset: 0 });
    expect(page).toMatchObject({ total: 2, limit: 30, offset: 0 });
    expect(page.codes[0]).toMatchObject({ code: 'WBxxxxxxxx-USDT', dateSec: 1760000000, status: 'Activated', ticker: 'USDT', externalId: 'my-ext-1' });
  });

  it('reads flex plans (bare or in `data`) and investments', () => {
    const plan = { id: '8c1a6e0e', ticker: 'USDT', minInvestment: '10', maxInvestment: '100000', maxRate: '5.5' };
    expect(parseFlexPlans([plan])[0]).toMatchObject({ planId: '8c1a6e0e', ticker: 'USDT' });
    expect(parseFlexPlans({ data: [plan] })).toHaveLength(1);
    const [investment] = parseFlexInvestments({ data: [{ id: '5f0c', planId: '8c1a6e0e', currency: 'USDT', invested: '150', withAutoReinvest: false, status: 1, createdAt: 1760000000, updatedAt: 1760003600 }], limit: 100, offset: 0 });
    expect(investment).toMatchObject({ investmentId: '5f0c', planId: '8c1a6e0e', ticker: 'USDT', active: true, autoReinvest: false, createdAtSec: 1760000000 });
    expect(formatDecimal(investment!.invested)).toBe('150');
  });

  it('reads the flex withdraw transaction id as transaction_id or transactionId', () => {
    expect(parseFlexWithdraw({ data: { transaction_id: 'c0ffee-1' } })).toEqual({ transactionId: 'c0ffee-1' });
    expect(parseFlexWithdraw({ data: { transactionId: 'c0ffee-2' } })).toEqual({ transactionId: 'c0ffee-2' });
    expect(parseFlexWithdraw({ data: { transaction_id: 42 } })).toEqual({ transactionId: '42' });
    expect(() => parseFlexWithdraw({ data: {} })).toThrow(/transaction_id/);
  });
});

describe('body decoding', () => {
  it('keeps non-JSON and empty bodies for the error map instead of throwing', () => {
    expect(decodeBody('<html>503</html>')).toEqual({ kind: 'text', text: '<html>503</html>' });
    expect(decodeBody('Too Many Requests')).toEqual({ kind: 'text', text: 'Too Many Requests' });
    expect(decodeBody('  \n')).toEqual({ kind: 'empty' });
    expect(decodeBody('{"a":')).toEqual({ kind: 'text', text: '{"a":' });
  });

  it('keeps integers beyond 2^53 and numbers with a fraction or an exponent as the text written; safe integers stay numbers', () => {
    expect(decodeBody('{"id":18446744073709551615,"t":1760001234.123456,"n":9007199254740991,"f":1e-8,"z":-0.5}')).toEqual({
      kind: 'json',
      value: { id: '18446744073709551615', t: '1760001234.123456', n: 9007199254740991, f: '1e-8', z: '-0.5' },
    });
    // Wherever a number stands: in an array, after spaces or a line break; a number in a string stays that string.
    expect(decodeBody('{"a": [ 0.1,\n  2, 3E2 ], "s": "x:1.5"}')).toEqual({ kind: 'json', value: { a: ['0.1', 2, 300], s: 'x:1.5' } });
  });

  it('writes order ids as exact JSON integers and refuses anything but digits', () => {
    expect(JSON.stringify({ orderId: jsonInteger('18446744073709551615') })).toBe('{"orderId":18446744073709551615}');
    expect(JSON.stringify({ orderId: jsonInteger('42') })).toBe('{"orderId":42}');
    expect(() => jsonInteger('4e3')).toThrow(RangeError);
  });
});
