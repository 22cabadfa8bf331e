import {
  Decimal,
  type InputProblem,
  type Intent,
  type Candle,
  type MarketRules,
  defineStrategy,
  formatDecimal,
  intent,
  marketAndPrice,
  param,
  roundBaseAmount,
  roundUp,
  takerFee,
  transferCovering,
} from './sdk.ts';

/**
 * Dollar-cost averaging: each slot buys one market at market price ("stock market" order),
 * either a fixed base quantity (AMOUNT) or about a fixed quote amount (AMOUNT_QUOTE: "50 USDT
 * every Monday"). The engine checks the buy against the market's rules, MAX_ORDER_QUOTE, the
 * budgets and the balances before anything is sent; dca only sizes the order and, when allowed,
 * the transfer that funds it (the two stand or fall together).
 */

const HUNDRED = new Decimal(100);
const ONE = new Decimal(1);

export const dca = defineStrategy({
  name: 'dca',
  describe: 'Buy one market at market price on every slot, a fixed base quantity (AMOUNT) or about a fixed quote amount (AMOUNT_QUOTE), funding the trade balance from main when allowed.',
  params: {
    MARKET: param.market({ description: 'The market to buy on; the base is what is bought, the quote what is spent.', example: 'BTC_USDT' }),
    AMOUNT: param.decimal({
      positive: true,
      optional: true,
      note: 'give AMOUNT or AMOUNT_QUOTE, not both',
      description: "Base quantity per slot, rounded down to the market's precision (BTC_USDT at 6 decimals: 0.00051234 buys 0.000512).",
      example: '0.0005',
    }),
    AMOUNT_QUOTE: param.decimal({
      positive: true,
      optional: true,
      note: 'give AMOUNT or AMOUNT_QUOTE, not both',
      exampleCommented: true,
      description: "Quote to spend per slot: the base bought is AMOUNT_QUOTE / price, rounded down to the market's precision, so the order's value never exceeds it at the slot's price (the taker fee comes on top).",
      example: '50',
    }),
    STP: param.stp({ default: 'no', description: 'Self-trade prevention mode sent with the order.', example: 'cn' }),
    CLIENT_ORDER_PREFIX: param.clientOrderPrefix({ description: "Start of the clientOrderId of every order; the engine appends a suffix derived from the slot and the instance's name, and knows its orders by that name, not by this prefix (two deployments on one key need instance names of their own). Default: chosen by the engine.", example: 'dca-btc' }),
    ALLOW_TRANSFER: param.boolean({ default: false, description: 'Move the shortfall from the main balance to the trade balance before buying when the trade balance cannot pay.', example: 'true' }),
    TRANSFER_BUFFER_PCT: param.decimal({ nonNegative: true, max: '50', default: '0', description: 'Transfer this percent more than the estimate (total + taker fee), as headroom for the price moving before the fill. Capped at the main balance.', example: '1' }),
    DIP_PCT: param.decimal({
      min: '0.1',
      max: '90',
      optional: true,
      exampleCommented: true,
      description: 'Buy the dip: when the price is at least this percent below its average over DIP_LOOKBACK (the mean of the hourly closes), buy DIP_MULTIPLIER times the amount. Unset: no dip buying.',
      example: '10',
    }),
    DIP_MULTIPLIER: param.decimal({ min: '1', max: '10', default: '2', description: 'How many times the amount a dip slot buys (AMOUNT or AMOUNT_QUOTE times this). Used with DIP_PCT.', example: '2' }),
    DIP_LOOKBACK: param.duration({ min: '1h', max: '60d', default: '30d', description: 'The window of the moving average a dip is measured against. Used with DIP_PCT.', example: '30d' }),
  },

  check(_params, problem, given) {
    if (given('AMOUNT') && given('AMOUNT_QUOTE')) problem('AMOUNT', 'give AMOUNT (base per slot) or AMOUNT_QUOTE (quote per slot), not both');
    if (!given('AMOUNT') && !given('AMOUNT_QUOTE')) problem('AMOUNT', 'is required unless AMOUNT_QUOTE is given: AMOUNT=0.0005 buys 0.0005 base per slot, AMOUNT_QUOTE=50 spends about 50 quote per slot');
  },

  checkParams(params, context, source) {
    const problems: InputProblem[] = [];
    const rules = context.market(params.MARKET);
    if (rules === undefined) {
      problems.push({ source, field: 'MARKET', rule: context.unlisted(params.MARKET) });
      return problems;
    }
    if (params.AMOUNT !== null) {
      const amount = roundBaseAmount(rules, params.AMOUNT);
      if (amount.lt(rules.minBaseAmount) || amount.isZero()) {
        problems.push({
          source,
          field: 'AMOUNT',
          rule: `${formatDecimal(params.AMOUNT)} rounds down to ${formatDecimal(amount)} at ${rules.name}'s ${rules.basePrecision} decimals, below its minimum ${formatDecimal(rules.minBaseAmount)} ${rules.base}`,
        });
      }
    }
    if (params.AMOUNT_QUOTE !== null && params.AMOUNT_QUOTE.lt(rules.minQuoteTotal)) {
      problems.push({ source, field: 'AMOUNT_QUOTE', rule: `${formatDecimal(params.AMOUNT_QUOTE)} ${rules.quote} is below ${rules.name}'s minimum order total ${formatDecimal(rules.minQuoteTotal)}` });
    } else if (params.AMOUNT_QUOTE !== null && params.AMOUNT_QUOTE.eq(rules.minQuoteTotal)) {
      // The base bought is rounded down to whole steps: at the minimum itself, nearly every buy
      // comes out a fraction below it and is refused, slot after slot.
      problems.push({
        source,
        field: 'AMOUNT_QUOTE',
        rule: `${formatDecimal(params.AMOUNT_QUOTE)} ${rules.quote} is ${rules.name}'s minimum order total itself: the ${rules.base} it buys is rounded down to ${rules.basePrecision} decimals, so the order comes out below the minimum at almost every price; give a little more (one ${rules.base} step, ${formatDecimal(new Decimal(1).div(new Decimal(10).pow(rules.basePrecision)))}, times the price)`,
      });
    }
    return problems;
  },

  reads: (params) => (params.DIP_PCT === null ? ['balances', 'markets', 'prices'] : ['balances', 'markets', 'prices', 'candles']),
  candleWindows: (params) => (params.DIP_PCT === null ? [] : [{ market: params.MARKET, lookbackSec: params.DIP_LOOKBACK / 1000 }]),

  // MARKET is BASE_QUOTE: budgets count what is spent, the quote.
  budgetAsset: (params) => params.MARKET.slice(params.MARKET.indexOf('_') + 1),

  async decide(view, params) {
    const found = marketAndPrice(view, params.MARKET);
    if ('kind' in found) return [found];
    const { rules, price } = found;

    const intents: Intent[] = [];
    const dip = params.DIP_PCT === null ? null : dipOf(view.candles(params.MARKET), price, params.DIP_PCT);
    if (dip !== null && dip.note !== null) intents.push(intent.note(dip.note, dip.data));
    const normal = params.AMOUNT ?? (params.AMOUNT_QUOTE as Decimal).div(price);
    const multiplied = dip?.isDip === true && !params.DIP_MULTIPLIER.eq(ONE);
    const wanted = multiplied ? normal.mul(params.DIP_MULTIPLIER) : normal;
    const amount = roundBaseAmount(rules, wanted);
    if (amount.isZero()) {
      return [intent.refuse('below-min-amount', `${sized(params, rules)} is less than the smallest ${rules.base} amount ${rules.name} takes (${rules.basePrecision} decimals)`, { market: rules.name, price: formatDecimal(price) })];
    }
    if (params.AMOUNT_QUOTE !== null && amount.mul(price).lt(rules.minQuoteTotal)) {
      // Said here, with the amount that would do at this price: the engine's refusal would only
      // give the rounded total, not why an AMOUNT_QUOTE at or above the minimum came out below it.
      const enough = roundUp(roundUp(rules.minQuoteTotal.div(price), rules.basePrecision).mul(price), rules.quotePrecision);
      return [
        ...intents,
        intent.refuse(
          'below-min-total',
          `${sized(params, rules)} buys ${formatDecimal(amount)} ${rules.base} (${rules.base} rounded down to ${rules.basePrecision} decimals), ${formatDecimal(amount.mul(price))} ${rules.quote}: below ${rules.name}'s minimum order total ${formatDecimal(rules.minQuoteTotal)}; at this price AMOUNT_QUOTE ${formatDecimal(enough)} or more buys`,
          { market: rules.name, price: formatDecimal(price), amount: formatDecimal(amount), minTotal: formatDecimal(rules.minQuoteTotal) },
        ),
      ];
    }
    if (params.AMOUNT !== null && !multiplied && !amount.eq(params.AMOUNT)) {
      intents.push(intent.note(`AMOUNT ${formatDecimal(params.AMOUNT)} rounded down to ${formatDecimal(amount)} (${rules.name} takes ${rules.basePrecision} decimals)`, { requested: formatDecimal(params.AMOUNT), amount: formatDecimal(amount) }));
    }

    const estimate = amount.mul(price);
    const need = estimate.add(takerFee(rules, estimate));
    const available = view.tradeBalance(rules.quote).available;
    if (params.ALLOW_TRANSFER && available.lt(need)) {
      const buffered = roundUp(need.mul(HUNDRED.add(params.TRANSFER_BUFFER_PCT)).div(HUNDRED).sub(available), rules.quotePrecision);
      const transfer = transferCovering(buffered, view.mainBalance(rules.quote));
      if (transfer.gt(0)) intents.push(intent.transfer(rules.quote, transfer));
    }
    intents.push(intent.buy(rules.name, amount, { stp: params.STP, tag: params.CLIENT_ORDER_PREFIX }));
    return intents;
  },
});

/**
 * Whether the price is a dip: at least `pct` % below the mean of the window's hourly closes. A
 * window without candles (a new market, an exchange that keeps none) is no dip, and says so.
 */
function dipOf(candles: readonly Candle[], price: Decimal, pct: Decimal): { isDip: boolean; note: string | null; data: Readonly<Record<string, string>> } {
  if (candles.length === 0) return { isDip: false, note: 'no candles for the dip average: buying the normal amount', data: {} };
  const average = candles.reduce((sum, c) => sum.add(c.close), new Decimal(0)).div(candles.length);
  const below = average.sub(price).div(average).mul(HUNDRED);
  const data = { average: formatDecimal(average.toDecimalPlaces(8)), price: formatDecimal(price), belowPct: formatDecimal(below.toDecimalPlaces(2)), candles: String(candles.length) };
  if (below.lt(pct)) return { isDip: false, note: null, data };
  return { isDip: true, note: `dip: the price is ${data.belowPct} % below the average close of its last ${candles.length} candles, ${data.average}`, data };
}

function sized(params: { readonly AMOUNT: Decimal | null; readonly AMOUNT_QUOTE: Decimal | null }, rules: MarketRules): string {
  return params.AMOUNT !== null ? `AMOUNT ${formatDecimal(params.AMOUNT)} ${rules.base}` : `AMOUNT_QUOTE ${formatDecimal(params.AMOUNT_QUOTE as Decimal)} ${rules.quote} at this price`;
}
