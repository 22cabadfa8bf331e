import { Decimal, TRANSFER_DECIMALS, defineStrategy, formatDecimal, intent, param, roundDown } from './sdk.ts';

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
    const amount = roundDown(Decimal.min(missing, view.mainBalance(params.TICKER)), TRANSFER_DECIMALS);
    if (amount.isZero()) return [intent.refuse('insufficient-funds', `the main balance has no ${params.TICKER} to move`)];
    return [intent.transfer(params.TICKER, amount)];
  },
});
