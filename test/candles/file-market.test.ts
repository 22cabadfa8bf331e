import { describe, expect, it } from 'vitest';
import { marketInFileName } from '../../src/candles/file-market.ts';

describe('the market a candle file name says it holds', () => {
  it('reads the usual exchange export names, joined or separated, in any case', () => {
    expect(marketInFileName('data/BTCUSDT_1h_binance_2017-08-17_2024-04-21.csv')).toEqual({ base: 'BTC', quote: 'USDT' });
    expect(marketInFileName('/x/ETHUSDT_5m_binance_2022-01-01_2022-08-04.csv')).toEqual({ base: 'ETH', quote: 'USDT' });
    expect(marketInFileName('eth-usdt-5m.csv')).toEqual({ base: 'ETH', quote: 'USDT' });
    expect(marketInFileName('SOL_USDC.csv')).toEqual({ base: 'SOL', quote: 'USDC' });
    expect(marketInFileName('ethbtc-1d.csv')).toEqual({ base: 'ETH', quote: 'BTC' });
    expect(marketInFileName('BTCUSD.csv')).toEqual({ base: 'BTC', quote: 'USD' });
  });

  it('says nothing of a name that names no market', () => {
    for (const name of ['replay.csv', 'btc-1h-2021-03-01_14.csv', 'prices.csv', 'my-eth.csv', 'candles-2024.csv']) expect(marketInFileName(name), name).toBeNull();
  });
});
