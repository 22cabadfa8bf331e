import { Decimal, type Intent, defineStrategy, formatDecimal, intent, marketAndPrice, param, roundBaseAmount } from './sdk.ts';

/**
 * Value averaging: the position's value should grow by TARGET_STEP_QUOTE every slot. Each slot
 * buys what brings it up to that path (more after a fall, less after a rise), at most
 * MAX_ORDER_QUOTE; above the path it buys nothing and says so. stacker only buys, so a position
 * above its path is left as it is, never sold down.
 *
 * The position is the account's whole base balance (main and trade, what is in orders too): run
 * one value-avg instance per asset, not beside another strategy buying the same asset. The slot
 * count lives in the instance's state, so the path continues across restarts.
 */

const SLOT_KEY = 'slots';

export const valueAvg = defineStrategy({
  name: 'value-avg',
  describe: 'Value averaging: buy what brings the position up to a target value that grows by TARGET_STEP_QUOTE every slot, capped by MAX_ORDER_QUOTE; never sells.',
  params: {
    MARKET: param.market({ description: 'The market to buy on; the position is the account\'s balance of its base.', example: 'BTC_USDT' }),
    TARGET_STEP_QUOTE: param.decimal({ positive: true, description: 'How much the target value of the position grows every slot, in quote: after n slots it is n x TARGET_STEP_QUOTE.', example: '50' }),
    STP: param.stp({ default: 'no', description: 'Self-trade prevention mode sent with the order.', example: 'cn' }),
    CLIENT_ORDER_PREFIX: param.clientOrderPrefix({ description: 'Start of the clientOrderId of every order. Default: chosen by the engine.' }),
  },

  reads: () => ['balances', 'markets', 'prices'],
  budgetAsset: (params) => params.MARKET.slice(params.MARKET.indexOf('_') + 1),

  async decide(view, params) {
    const found = marketAndPrice(view, params.MARKET);
    if ('kind' in found) return [found];
    const { rules, price } = found;

    const slot = slotNumber(view.state.get(SLOT_KEY));
    const trade = view.tradeBalance(rules.base);
    const held = view.mainBalance(rules.base).add(trade.available).add(trade.freeze);
    const value = held.mul(price);
    const target = params.TARGET_STEP_QUOTE.mul(slot);
    const data = { slot: String(slot), target: formatDecimal(target), value: formatDecimal(value.toDecimalPlaces(rules.quotePrecision)), price: formatDecimal(price) };
    const next: Intent = intent.setState(SLOT_KEY, String(slot));
    if (value.gte(target)) {
      // The plan working, not a buy it wanted and could not make: a note, so that reports count
      // as refusals only the buys that were refused (a comparison showed 840 "refusals" for the best run).
      return [next, intent.note(`the position is worth ${data.value} ${rules.quote}, at or above its target ${data.target} for slot ${slot}: nothing to buy (stacker never sells)`, data)];
    }
    const max = view.budget.maxOrderQuote();
    const gap = target.sub(value);
    const spend = max !== null && gap.gt(max) ? max : gap;
    const amount = roundBaseAmount(rules, spend.div(price));
    if (amount.isZero()) {
      return [next, intent.refuse('below-min-amount', `the ${formatDecimal(spend)} ${rules.quote} to buy is less than the smallest ${rules.base} amount ${rules.name} takes`, data)];
    }
    const notes: Intent[] = max !== null && gap.gt(max) ? [intent.note(`the gap to the target is ${formatDecimal(gap)} ${rules.quote}; buying MAX_ORDER_QUOTE ${formatDecimal(max)} of it`, data)] : [];
    return [next, ...notes, intent.buy(rules.name, amount, { stp: params.STP, tag: params.CLIENT_ORDER_PREFIX })];
  },
});

/** The slot about to run: one more than the slots journalled so far (state `slots`). */
function slotNumber(stored: string | undefined): Decimal {
  const done = stored !== undefined && /^\d{1,12}$/.test(stored) ? Number(stored) : 0;
  return new Decimal(done + 1);
}
