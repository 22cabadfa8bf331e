import type { Logger } from 'pino';
import type { RequestEvent } from '../api/client.ts';
import type { DaemonConfig } from '../config/daemon-config.ts';
import { requireCredentials } from '../config/settings.ts';
import { formatDecimal } from '../domain/money.ts';
import type { Exchange } from '../exchange/port.ts';

export interface ExchangeFactoryOptions {
  /** Every HTTP request made (metrics); never carries secrets or bodies. */
  readonly onRequest?: (event: RequestEvent) => void;
}

/**
 * The composition root's one choice of world: live trades through the signed API; dry-run
 * reads public market data from the same endpoint and trades on a paper account (no key is
 * read, so a dry-run cannot move money even by mistake).
 */
export async function createExchange(config: DaemonConfig, logger: Logger, options: ExchangeFactoryOptions = {}): Promise<Exchange> {
  const [{ ApiClient, resolveBaseUrl }] = await Promise.all([import('../api/client.ts')]);
  const baseUrl = resolveBaseUrl(config.settings.endpoint);
  const onRequest = options.onRequest === undefined ? {} : { onRequest: options.onRequest };
  if (config.mode === 'live') {
    const credentials = requireCredentials(config.settings, 'run --live');
    const { LiveExchange } = await import('../exchange/live.ts');
    return new LiveExchange(new ApiClient({ baseUrl, credentials, ...onRequest }));
  }
  const [{ ApiMarketData }, { PaperExchange }] = await Promise.all([import('../exchange/market-data.ts'), import('../sim/paper-exchange.ts')]);
  logger.child({ mode: config.mode }).info(
    { event: 'paper-account', wallet: Object.fromEntries([...config.dryRunWallet].map(([asset, amount]) => [asset, formatDecimal(amount)])), marketData: baseUrl },
    'dry-run: prices and market rules from the exchange, orders filled on a paper account',
  );
  return new PaperExchange({
    marketData: new ApiMarketData(new ApiClient({ baseUrl, ...onRequest })),
    wallet: config.dryRunWallet,
    slippagePct: config.dryRunSlippagePct,
  });
}
