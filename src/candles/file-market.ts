import { basename } from 'node:path';

/** Quote assets a market name ends with, longest first, so BTCUSDT is BTC/USDT, not BTCUSD/T. */
const QUOTES = ['FDUSD', 'USDT', 'USDC', 'BUSD', 'TUSD', 'DAI', 'USD', 'EUR', 'GBP', 'TRY', 'UAH', 'BTC', 'ETH', 'BNB'];
const ASSET = /^[A-Z][A-Z0-9]{1,9}$/;

/**
 * The market a candle file's name says it holds (`BTCUSDT_1h_binance_….csv`, `eth-usdt-5m.csv`):
 * a CSV of candles has no market column, and its name is the one word on it. null when the name
 * names none.
 */
export function marketInFileName(path: string): { readonly base: string; readonly quote: string } | null {
  const tokens = basename(path)
    .replace(/\.[^.]*$/, '')
    .toUpperCase()
    .split(/[^A-Z0-9]+/)
    .filter((token) => token !== '');
  for (let i = 0; i < tokens.length; i += 1) {
    const token = tokens[i] as string;
    const next = tokens[i + 1];
    // Separated (ETH_USDT, eth-btc): a base of three letters or more, so that words (my-eth) are not read as one.
    if (next !== undefined && QUOTES.includes(next) && ASSET.test(token) && token.length >= 3) return { base: token, quote: next };
    for (const quote of QUOTES) {
      const base = token.slice(0, -quote.length);
      if (token.endsWith(quote) && ASSET.test(base)) return { base, quote };
    }
  }
  return null;
}
