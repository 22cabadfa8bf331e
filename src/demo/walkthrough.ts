/**
 * `stacker demo`: the README's first command. Starts the sandbox exchange on 127.0.0.1, then
 * drives it with the real client over real HTTP, the way the daemon will: read the rules, fund
 * the trade balance, buy with a client order id, find the order again by that id, sweep a flex
 * investment, and prove the books balance. No account, no network beyond loopback.
 */
import { ApiClient } from '../api/client.ts';
import { maskCode } from '../domain/account.ts';
import { Decimal, formatDecimal } from '../domain/money.ts';
import { roundBaseAmount } from '../domain/market.ts';
import { startSandbox } from '../sandbox/server.ts';

export interface DemoOptions {
  readonly out: (line: string) => void;
  /** Fixed so two runs print the same ids; the sandbox accepts any id of the allowed charset. */
  readonly clientOrderId?: string;
}

export async function runDemo({ out, clientOrderId = 'demo-dca-btc-0001' }: DemoOptions): Promise<void> {
  const sandbox = await startSandbox();
  const client = new ApiClient({
    baseUrl: sandbox.url,
    credentials: { apiKey: sandbox.apiKey, apiSecret: sandbox.apiSecret },
  });
  const step = (title: string): void => out(`\n== ${title}`);
  try {
    out(`sandbox exchange listening on ${sandbox.url} (API key ${sandbox.apiKey}; the secret stays in this process)`);

    step('ping');
    out(`  ${await client.ping()}`);

    step('market rules');
    const btc = await client.market('BTC_USDT');
    out(`  ${btc.name}: base precision ${btc.basePrecision}, quote precision ${btc.quotePrecision}, min amount ${formatDecimal(btc.minBaseAmount)} ${btc.base}, min total ${formatDecimal(btc.minQuoteTotal)} ${btc.quote}, taker fee ${formatDecimal(btc.takerFeePct)} %`);
    const price = (await client.ticker('BTC_USDT')).lastPrice;
    out(`  last price ${formatDecimal(price)} ${btc.quote}`);

    step('balances before');
    const mainBefore = await client.mainBalances();
    out(`  main: ${[...mainBefore].map(([t, v]) => `${t} ${formatDecimal(v)}`).join(', ')}`);
    const spotBefore = await client.tradeBalance('USDT');
    out(`  spot USDT available ${formatDecimal(spotBefore.available)}`);

    step('codes (values masked: they are secret-like)');
    const page = await client.codes({ limit: 3 });
    for (const code of page.codes) out(`  ${code.ticker} ${formatDecimal(code.amount)} ${code.status} ${maskCode(code.code)}`);
    out(`  ${page.codes.length} of ${page.total}`);

    step('fund the trade balance: transfer 200 USDT main -> spot');
    await client.transferToSpot({ ticker: 'USDT', amount: new Decimal('200') });
    out(`  spot USDT available ${formatDecimal((await client.tradeBalance('USDT')).available)}`);

    step(`buy-stock-market: 0.00123456789 BTC asked, rounded down to ${btc.basePrecision} decimals`);
    const amount = roundBaseAmount(btc, new Decimal('0.00123456789'));
    const order = await client.buyStockMarket({ market: 'BTC_USDT', baseAmount: amount, clientOrderId, stp: 'cn' });
    out(`  order ${order.orderId} ${order.status}: got ${formatDecimal(order.filledBase)} BTC for ${formatDecimal(order.filledQuote)} USDT, fee ${formatDecimal(order.fee)} ${order.feeAsset ?? ''}`);

    step(`look the order up by clientOrderId ${clientOrderId} (how a lost response is resolved)`);
    const found = await client.orderHistory({ market: 'BTC_USDT', clientOrderId });
    out(`  history has ${found.length} order(s) with that id: ${found.map((o) => `${o.orderId} ${o.status}`).join(', ')}`);

    step('sweep flex: withdraw 100 USDT of the active investment back to main');
    const investment = (await client.flexInvestments({ active: true })).find((i) => i.ticker === 'USDT');
    if (!investment) throw new Error('the demo account has no active USDT flex investment');
    const withdrawal = await client.flexWithdraw({ plan: investment.planId, amount: new Decimal('100') });
    out(`  transaction ${withdrawal.transactionId}; invested was ${formatDecimal(investment.invested)} USDT`);

    step('balances after');
    const mainAfter = await client.mainBalances();
    out(`  main: ${[...mainAfter].map(([t, v]) => `${t} ${formatDecimal(v)}`).join(', ')}`);
    const spotAfter = await client.tradeBalances();
    out(`  spot: ${[...spotAfter].map(([t, b]) => `${t} ${formatDecimal(b.available)}`).join(', ')}`);

    step('the books');
    const ledger = sandbox.exchange.ledger();
    out(`  ${ledger.length} ledger entries; balances equal the ledger sums: ${sandbox.exchange.verifyLedger() ? 'yes' : 'NO'}`);
  } finally {
    await client.close();
    await sandbox.stop();
  }
}
