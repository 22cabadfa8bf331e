import { defineStrategy, formatDecimal, intent, param, transferCovering } from './sdk.ts';

/** Keep the trade balance of one asset at TARGET or more, moving what is missing from the main balance. */
export const topUp = defineStrategy({
  name: 'top-up',
  describe: 'Move funds from the main balance to the trade balance whenever the trade balance of an asset is below TARGET.',
  params: {
    TICKER: param.ticker({ description: 'The asset to top up.', example: 'USDT' }),
    TARGET: param.decimal({ positive: true, description: 'The trade balance to keep, at least.', example: '100' }),
  },
  reads: () => ['balances'],
  async decide(view, params) {
    const trade = view.tradeBalance(params.TICKER).available;
    if (trade.gte(params.TARGET)) return [intent.note(`${params.TICKER} trade balance ${formatDecimal(trade)} is at TARGET or above`)];
    const missing = params.TARGET.sub(trade);
    const main = view.mainBalance(params.TICKER);
    const amount = transferCovering(missing, main);
    if (amount.isZero()) return [intent.refuse('insufficient-funds', main.isZero() ? `the main balance has no ${params.TICKER} to move` : `the main balance's ${formatDecimal(main)} ${params.TICKER} is less than the smallest transfer`)];
    return [intent.transfer(params.TICKER, amount)];
  },
});
