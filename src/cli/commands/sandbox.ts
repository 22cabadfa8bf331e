import { randomBytes } from 'node:crypto';
import { InputError } from '../../domain/errors.ts';
import { checkAll, integerIn, marketName, nonEmpty, optional } from '../args.ts';
import type { CommandContext } from '../context.ts';
import { describeFaults, parseFaultSpecs } from '../../sandbox/fault-spec.ts';
import { watchServedRequests } from './request-log.ts';
import { shellWord } from '../shell-word.ts';
import { existingFile } from '../file-flags.ts';
import { ACCOUNT_NAME, ACCOUNT_NAME_RULE, DEFAULT_ACCOUNT } from '../../config/accounts.ts';

export interface SandboxFlags {
  /** Commander fills in the defaults (program.ts). */
  readonly port: string;
  readonly host: string;
  readonly apiKey?: string;
  readonly apiSecret?: string;
  readonly prices?: string;
  readonly market?: string;
  readonly speed?: string;
  /** Commander collects repeated --fault flags (program.ts). */
  readonly fault?: readonly string[];
  readonly clockOffset?: string;
  /** Commander collects repeated --extra-account flags (program.ts). */
  readonly extraAccount?: readonly string[];
}

const SPEED = /^(?:0|[1-9]\d*)(?:\.\d+)?$/;
/** How long a clean stop may take before the process gives up on it. */
const STOP_TIMEOUT_MS = 5000;

/**
 * `stacker sandbox`: serve the simulated exchange until SIGINT/SIGTERM, then stop it and exit 0.
 * The sandbox's credentials are made up for it and are printed on purpose. The sandbox and the
 * price sources are imported here, lazily: no other command pays for them.
 */
export async function sandbox(ctx: CommandContext, flags: SandboxFlags): Promise<void> {
  const args = checkAll({
    port: () => integerIn(flags.port, '--port', { min: 0, max: 65_535 }),
    host: () => nonEmpty(flags.host, '--host', 'a host name or IP address'),
    apiKey: () => optional(flags.apiKey, (key) => nonEmpty(key, '--api-key', 'a key')),
    apiSecret: () => optional(flags.apiSecret, (secret) => nonEmpty(secret, '--api-secret', 'a secret')),
    prices: () => {
      return optional(flags.prices, (text) => existingFile(text, '--prices'));
    },
    market: () => {
      if (flags.prices !== undefined && flags.market === undefined) throw InputError.one('--market', 'is required with --prices (the market the candles belong to, e.g. BTC_USDT)');
      if (flags.prices === undefined && flags.market !== undefined) throw InputError.one('--market', 'only applies with --prices');
      return optional(flags.market, (m) => marketName(m));
    },
    clockOffsetMs: () => {
      if (flags.clockOffset === undefined) return 0;
      const seconds = /^-?\d+(\.\d+)?$/.test(flags.clockOffset) ? Number(flags.clockOffset) : Number.NaN;
      if (!Number.isFinite(seconds) || Math.abs(seconds) > 86_400) throw InputError.one('--clock-offset', `must be seconds from -86400 to 86400, such as 30 or -7.5 (got ${JSON.stringify(flags.clockOffset)})`);
      return Math.round(seconds * 1000);
    },
    faults: () => {
      const parsed = parseFaultSpecs(flags.fault ?? []);
      if ('problems' in parsed) throw new InputError(parsed.problems.map((rule) => ({ field: '--fault', rule })));
      return parsed.ok;
    },
    accounts: () => {
      const names = flags.extraAccount ?? [];
      for (const name of names) {
        if (!ACCOUNT_NAME.test(name)) throw InputError.one('--extra-account', `must be ${ACCOUNT_NAME_RULE} (got ${JSON.stringify(name)})`);
        if (name === DEFAULT_ACCOUNT) throw InputError.one('--extra-account', `"${DEFAULT_ACCOUNT}" is the sandbox's first account (--api-key, --api-secret); name another`);
      }
      const twice = names.find((name, i) => names.indexOf(name) !== i);
      if (twice !== undefined) throw InputError.one('--extra-account', `${JSON.stringify(twice)} is given twice`);
      return names.map((name) => ({ name, apiKey: randomBytes(16).toString('hex'), apiSecret: randomBytes(32).toString('hex') }));
    },
    speed: () => {
      if (flags.speed === undefined) return 1;
      if (flags.prices === undefined) throw InputError.one('--speed', 'only applies with --prices');
      const speed = SPEED.test(flags.speed) ? Number(flags.speed) : Number.NaN;
      if (!(speed > 0) || !Number.isFinite(speed)) throw InputError.one('--speed', `must be a positive number such as 1 or 60 (got ${JSON.stringify(flags.speed)})`);
      return speed;
    },
  });

  const settings = await ctx.settings();
  const [{ startSandbox }, { candleReplay, firstOf, fixedPrices }, { DEMO_MARKETS, DEMO_PRICES }, { createLogger }, { idsCountedFromClock }] = await Promise.all([
    import('../../sandbox/server.ts'),
    import('../../sim/prices.ts'),
    import('../../sim/seed.ts'),
    import('../../observability/logger.ts'),
    import('../../sim/ids.ts'),
  ]);
  // Request lines carry their fields in the message too, so a terminal shows one short line each.
  const logger = await createLogger({ level: settings.logLevel, format: settings.logFormat, prettyMessageOnly: true });

  const known = DEMO_MARKETS.map((m) => m.name);
  if (args.market !== undefined && !known.includes(args.market)) {
    throw InputError.one('--market', `the sandbox trades ${known.join(' and ')}; replay candles of one of them (got ${JSON.stringify(args.market)})`);
  }
  // The replayed market follows the file; the other demo markets keep their fixed prices.
  let prices: ReturnType<typeof firstOf> | undefined;
  if (args.prices !== undefined && args.market !== undefined) {
    try {
      prices = firstOf(candleReplay({ market: args.market, csvPath: args.prices, speed: args.speed }), fixedPrices(DEMO_PRICES));
    } catch (error) {
      throw InputError.one('--prices', `cannot replay ${args.prices}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  let port: number | null = null;
  const stopWatching = watchServedRequests(
    () => port,
    (served) => logger.info({ method: served.method, path: served.path, status: served.status, ms: served.ms }, `${served.method} ${served.path} ${served.status} ${served.ms} ms`),
  );
  let running: Awaited<ReturnType<typeof startSandbox>>;
  try {
    running = await startSandbox({
      host: args.host,
      port: args.port,
      ...(args.apiKey === undefined ? {} : { apiKey: args.apiKey }),
      ...(args.apiSecret === undefined ? {} : { apiSecret: args.apiSecret }),
      ...(args.accounts.length === 0 ? {} : { moreAccounts: args.accounts }),
      ...(prices === undefined ? {} : { prices }),
      // Its state starts afresh at each start; its order ids must not, or a daemon's journal kept from
      // an earlier start meets a second order under an id it holds (and stops, that order unrecorded).
      ids: idsCountedFromClock(Date.now() + args.clockOffsetMs),
      // The exchange's clock, off this machine's by --clock-offset: nonces, order times and /public/time follow it.
      ...(args.clockOffsetMs === 0 ? {} : { clock: { nowMs: () => Date.now() + args.clockOffsetMs } }),
    });
  } catch (error) {
    stopWatching();
    throw listenError(error, args.host, args.port);
  }
  port = Number(new URL(running.url).port);
  for (const fault of args.faults.faults) running.faults.inject(fault);
  running.faults.historyLagMs = args.faults.historyLagMs;
  running.faults.historyPageCap = args.faults.historyPageCap;
  const faultLines = describeFaults(args.faults);

  const example = args.market ?? 'BTC_USDT';
  const priceText = args.prices === undefined ? 'fixed demo prices' : `${args.market} replayed from ${args.prices} at ${args.speed}x`;
  if (ctx.json) {
    ctx.io.out(
      JSON.stringify({
        url: running.url,
        apiKey: running.apiKey,
        apiSecret: running.apiSecret,
        prices: priceText,
        faults: faultLines,
        clockOffsetMs: args.clockOffsetMs,
        accounts: Object.fromEntries(args.accounts.map((account) => [account.name, { apiKey: account.apiKey, apiSecret: account.apiSecret }])),
        env: { STACKER_BASE_URL: running.url, STACKER_API_KEY: running.apiKey, STACKER_API_SECRET: running.apiSecret, ...accountEnv(args.accounts) },
      }) + '\n',
    );
  } else {
    const clockLines = args.clockOffsetMs === 0 ? [] : [`its clock is ${args.clockOffsetMs / 1000} s off this machine's (--clock-offset)`];
    ctx.io.out(banner(running.url, running.apiKey, running.apiSecret, priceText, example, [...clockLines, ...faultLines], args.accounts));
  }

  const signal = await waitForSignal();
  logger.info({ signal }, `${signal} received, stopping the sandbox`);
  stopWatching();
  await stopWithin(running.stop(), STOP_TIMEOUT_MS);
  logger.info('sandbox stopped');
}

interface MoreAccount {
  readonly name: string;
  readonly apiKey: string;
  readonly apiSecret: string;
}

/** The daemon's settings of the accounts beside the first: `STACKER_ACCOUNT_<NAME>_API_KEY` and its secret (README "Several accounts"). */
function accountEnv(accounts: readonly MoreAccount[]): Record<string, string> {
  return Object.fromEntries(accounts.flatMap((a) => [[`STACKER_ACCOUNT_${a.name}_API_KEY`, a.apiKey], [`STACKER_ACCOUNT_${a.name}_API_SECRET`, a.apiSecret]]));
}

function banner(url: string, apiKey: string, apiSecret: string, prices: string, market: string, faults: readonly string[], accounts: readonly MoreAccount[]): string {
  const more = accounts.length === 0 ? [] : ['', `More accounts of this exchange (an instance names one with ACCOUNT=NAME; the settings for the daemon's .env):`, '', ...Object.entries(accountEnv(accounts)).map(([key, value]) => `  ${key}=${shellWord(value)}`)];
  return [
    `stacker sandbox: a simulated exchange on ${url}`,
    '(made-up money and made-up credentials: nothing here touches a real account)',
    '',
    `  base URL    ${url}`,
    `  API key     ${apiKey}`,
    `  API secret  ${apiSecret}`,
    `  prices      ${prices}`,
    ...(faults.length === 0 ? [] : ['  faults      ' + faults.join('\n              ')]),
    '',
    'In another shell, in the stacker folder:',
    '',
    `  export STACKER_BASE_URL=${shellWord(url)} STACKER_API_KEY=${shellWord(apiKey)} STACKER_API_SECRET=${shellWord(apiSecret)}`,
    '  npx stacker ping',
    '  npx stacker balance',
    '  npx stacker balance --trade',
    `  npx stacker ticker --market ${market}`,
    `  npx stacker buy --market ${market} --amount 0.001`,
    '  npx stacker codes',
    '  npx stacker flex investments',
    ...more,
    '',
    'Requests are logged to stderr. Stop with Ctrl-C.',
    '',
  ].join('\n');
}

function listenError(error: unknown, host: string, port: number): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EADDRINUSE') return InputError.one('--port', `${host}:${port} is already in use; choose another port, or --port 0 for a free one`);
  if (code === 'EACCES') return InputError.one('--port', `not allowed to listen on ${host}:${port} (ports below 1024 need privileges); choose another port`);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') return InputError.one('--host', `cannot listen on ${JSON.stringify(host)} (${code})`);
  return error;
}

function waitForSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals): void => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      // A second signal while stopping means "now": leave without waiting for the clean stop.
      const force = (): void => process.exit(1);
      process.once('SIGINT', force);
      process.once('SIGTERM', force);
      resolve(signal);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}

async function stopWithin(stopping: Promise<void>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the sandbox did not stop within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([stopping, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
