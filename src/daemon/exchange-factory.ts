import type { Logger } from 'pino';
import type { RequestEvent } from '../api/client.ts';
import type { AccountConfig, DaemonConfig } from '../config/daemon-config.ts';
import { endpointSetting } from '../config/settings.ts';
import { ConfigError } from '../domain/errors.ts';
import { formatDecimal } from '../domain/money.ts';
import type { Exchange } from '../exchange/port.ts';
import type { SequentialIds } from '../sim/ids.ts';

export interface ExchangeFactoryOptions {
  /** Every HTTP request made (metrics); never carries secrets or bodies. */
  readonly onRequest?: (event: RequestEvent & { readonly account: string }) => void;
  /** Aborted when the daemon stops: its clients then try a failed read no more (ApiClientOptions.stop). */
  readonly stop?: AbortSignal;
}

/**
 * The composition root's one choice of world, once per account: live trades through the signed
 * API, one ApiClient per account (its own nonce source, rate limiters and server-clock offset,
 * since each key is its own nonce sequence and its own rate-limit budget at the exchange);
 * dry-run reads public market data from the account's endpoint and trades on a paper account of
 * its own (no key is read, so a dry-run cannot move money even by mistake), so the balances of
 * two accounts never mix.
 */
export async function createExchanges(config: DaemonConfig, logger: Logger, options: ExchangeFactoryOptions = {}): Promise<ReadonlyMap<string, Exchange>> {
  const exchanges = new Map<string, Exchange>();
  // One id source for every paper account: each resumes its saved counters into it (they only grow), so no two accounts' orders share an id in the journal.
  const paperIds = config.mode === 'live' ? undefined : (await import('../sim/ids.ts')).sequentialIds();
  for (const account of config.accounts.values()) exchanges.set(account.name, await accountExchange(config, account, logger, { ...options, ...(paperIds === undefined ? {} : { paperIds }) }));
  return exchanges;
}

/** The exchange of one account (`stacker check` reads each account's markets and balances in turn); the first when none is named. */
export async function createExchange(config: DaemonConfig, logger: Logger, options: ExchangeFactoryOptions & { readonly account?: string } = {}): Promise<Exchange> {
  const account = options.account === undefined ? config.accounts.values().next().value : config.accounts.get(options.account);
  if (account === undefined) throw new Error(`the daemon config has no account ${options.account ?? ''}`);
  return accountExchange(config, account, logger, options);
}

async function accountExchange(config: DaemonConfig, account: AccountConfig, logger: Logger, options: ExchangeFactoryOptions & { readonly paperIds?: SequentialIds }): Promise<Exchange> {
  const [{ ApiClient }, { resolveBaseUrl, resolveSignedBaseUrl }] = await Promise.all([import('../api/client.ts'), import('../api/base-url.ts')]);
  // loadDaemonConfig refuses a live account's plain http:// to another machine; this is the last line before a signed send.
  const baseUrl =
    config.mode === 'live'
      ? resolveSignedBaseUrl(account.endpoint, { allowPlainHttp: config.settings.allowPlainHttp, setting: endpointSetting(account.endpointSource) })
      : resolveBaseUrl(account.endpoint);
  const report = options.onRequest;
  // What every client of this account is given: the request hook (metrics) and the daemon's stop.
  const clientOptions = {
    ...(report === undefined ? {} : { onRequest: (event: RequestEvent) => report({ ...event, account: account.name }) }),
    ...(options.stop === undefined ? {} : { stop: options.stop }),
  };
  if (config.mode === 'live') {
    const credentials = account.credentials;
    // loadDaemonConfig refuses a live account without keys; this is the last line before a send.
    if (credentials === null) throw new ConfigError([{ field: 'ACCOUNT', rule: `account ${account.name} has no API key; live mode needs one` }]);
    const { LiveExchange } = await import('../exchange/live.ts');
    const warnings = logger.child({ mode: config.mode, ...(config.accounts.size > 1 ? { account: account.name } : {}) });
    return new LiveExchange(new ApiClient({ baseUrl, credentials, ...clientOptions }), { warn: (fields, message) => warnings.warn(fields, message) });
  }
  const [{ ApiMarketData }, { PaperExchange }] = await Promise.all([import('../exchange/market-data.ts'), import('../sim/paper-exchange.ts')]);
  logger.child({ mode: config.mode }).info(
    { event: 'paper-account', account: account.name, wallet: Object.fromEntries([...account.dryRunWallet].map(([asset, amount]) => [asset, formatDecimal(amount)])), marketData: baseUrl },
    `dry-run: prices and market rules from the exchange, orders filled on a paper account (${account.name})`,
  );
  return new PaperExchange({
    marketData: new ApiMarketData(new ApiClient({ baseUrl, ...clientOptions })),
    wallet: account.dryRunWallet,
    slippagePct: config.dryRunSlippagePct,
    ...(options.paperIds === undefined ? {} : { ids: options.paperIds }),
  });
}
