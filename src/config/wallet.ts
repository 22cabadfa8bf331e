import { Decimal } from '../domain/money.ts';

/**
 * STACKER_DRY_RUN_WALLET: the paper wallet's starting balances, `TICKER=amount` pairs separated
 * by commas (`USDT=1000,BTC=0`). Blanks around commas and `=` are allowed; amounts are plain
 * decimals ≥ 0. Every bad pair is named in its own rule, so one look fixes them all.
 */

const TICKER = /^[A-Z0-9]{1,20}$/;
const PLAIN_DECIMAL = /^(?:0|[1-9]\d*)(?:\.\d+)?$/;

export type WalletParse = { readonly ok: true; readonly wallet: ReadonlyMap<string, Decimal> } | { readonly ok: false; readonly rules: readonly string[] };

export function parseWallet(text: string): WalletParse {
  const rules: string[] = [];
  const wallet = new Map<string, Decimal>();
  const items = text.split(',').map((item) => item.trim());
  items.forEach((item, index) => {
    if (item === '') {
      rules.push(`pair ${index + 1} is empty (a doubled or trailing comma?); write TICKER=amount pairs such as USDT=1000,BTC=0`);
      return;
    }
    const at = item.indexOf('=');
    if (at === -1) {
      rules.push(`pair ${JSON.stringify(item)} has no "="; write TICKER=amount such as USDT=1000`);
      return;
    }
    const ticker = item.slice(0, at).trim();
    const amount = item.slice(at + 1).trim();
    const broken: string[] = [];
    if (!TICKER.test(ticker)) {
      const hint = TICKER.test(ticker.toUpperCase()) ? ` (write it in capitals: ${ticker.toUpperCase()})` : '';
      broken.push(`the ticker must be capitals and digits such as USDT${hint}`);
    } else if (wallet.has(ticker)) {
      broken.push(`${ticker} is given twice`);
    }
    if (!PLAIN_DECIMAL.test(amount)) broken.push('the amount must be a plain decimal ≥ 0 such as 1000 or 0.5, without exponent or sign');
    if (broken.length > 0) {
      rules.push(`pair ${JSON.stringify(item)}: ${broken.join('; ')}`);
      return;
    }
    wallet.set(ticker, new Decimal(amount));
  });
  return rules.length > 0 ? { ok: false, rules } : { ok: true, wallet };
}
