import { existsSync } from 'node:fs';
import type { Logger } from 'pino';
import type { AccountConfig, DaemonConfig, InstanceConfig } from '../../config/daemon-config.ts';
import { DEFAULT_ACCOUNT } from '../../config/accounts.ts';
import { ConfigError, type InputProblem } from '../../domain/errors.ts';
import { type Decimal, formatDecimal } from '../../domain/money.ts';
import type { Strategy } from '../../engine/contract.ts';
import type { PreflightResult } from '../../engine/preflight.ts';
import type { SpendLeft } from '../../engine/runtime.ts';
import type { Exchange } from '../../exchange/port.ts';
import { CLOCK_WARN_MS, clockSide } from '../../daemon/clock-watch.ts';
import { offLoopbackWarning } from '../../observability/allowed-hosts.ts';
import type { CommandContext } from '../context.ts';
import { journalPath } from '../../store/open-store.ts';
import { JOURNAL_SCHEMAS } from '../../store/pg-schemas.ts';
import { SchemaOutdatedError, StoreError } from '../../store/errors.ts';
import type { StoredJournal } from '../../store/opened-store.ts';
import { fields, json } from '../output.ts';

/**
 * `stacker check`: load the daemon's configuration exactly as `stacker run` would (every problem
 * of every file at once, exit 2, nothing sent), show what would run and when, then check it
 * against the exchange: the start-up checks `stacker run` makes once it has the markets (the
 * market exists, the amount is above its minimum), and a pre-flight of each enabled instance
 * (the strategy decides on a real snapshot and the guards judge each intent, but nothing is
 * journalled or placed). Any problem found is exit 2. Heavy modules (config, strategies,
 * exchange, engine) are imported only when the command runs.
 */

export interface CheckFlags {
  readonly strategies?: string;
  readonly dataDir?: string;
  readonly live?: boolean;
  /** Global flags, merged in at registration. */
  readonly envFile?: string | undefined;
  readonly baseUrl?: string | undefined;
  readonly region?: string | undefined;
}

/** Replaceable parts, for tests; each defaults to the real thing. */
export interface CheckOverrides {
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly strategies?: ReadonlyMap<string, Strategy<unknown>>;
  readonly nowMs?: () => number;
  readonly createExchange?: (config: DaemonConfig, logger: Logger, options: { readonly account: string }) => Promise<Exchange>;
  readonly preflight?: (config: DaemonConfig, exchange: Exchange, nowMs: number) => Promise<readonly PreflightResult[]>;
  /** Skip the pre-flight (config validation only). */
  readonly configOnly?: boolean;
}

export async function check(ctx: CommandContext, flags: CheckFlags, overrides: CheckOverrides = {}): Promise<void> {
  const { loadDaemonConfig } = await import('../../config/daemon-config.ts');
  const config = await loadDaemonConfig(
    { envFile: flags.envFile, strategiesDir: flags.strategies, dataDir: flags.dataDir, live: flags.live === true, baseUrl: flags.baseUrl, region: flags.region },
    { ...(overrides.env === undefined ? {} : { env: overrides.env }), ...(overrides.strategies === undefined ? {} : { strategies: overrides.strategies }) },
  );
  const nowMs = (overrides.nowMs ?? Date.now)();
  const read = await readOperatorControls(config, nowMs);
  const summary: ConfigSummary = {
    ...describeConfig(config, nowMs),
    operator: read.summary,
    ...(read.withoutFile === undefined ? {} : { instancesWithoutFile: read.withoutFile }),
    ...(read.olderSchema === undefined ? {} : { journalSchema: read.olderSchema }),
    ...(read.lost === null ? {} : { journalLost: read.lost.message, journalState: JOURNAL_STATES[read.lost.reason] ?? 'cannot be read' }),
  };
  if (!ctx.json) ctx.io.out(renderConfig(summary));

  let outcome: PreflightOutcome | null = null;
  let clocks: readonly EndpointClock[] = [];
  if (overrides.configOnly !== true) {
    if (!ctx.json) ctx.io.err(`pre-flight: reading markets and ${config.mode === 'live' ? 'balances' : 'prices'} (nothing is placed)...\n`);
    clocks = await readClocks(config);
    outcome = await runPreflight(config, nowMs, overrides, heldBy(config, summary));
  }
  const notChecked = (outcome?.failed ?? []).map(({ account, error }) => ({ account, error: error instanceof Error ? error.message : String(error) }));
  const ok = outcome === null || (outcome.startup.length === 0 && outcome.reports.every(passes) && notChecked.length === 0);
  // `clock`: the one exchange's reading (the first one's, with accounts on several); `clocks`: each exchange's.
  const clock = clocks[0]?.reading ?? null;
  if (ctx.json) ctx.io.out(json({ ok, ...summary, clock, clocks, startupProblems: outcome?.startup ?? null, preflight: outcome?.reports ?? null, notChecked }));
  else if (outcome !== null) ctx.io.out(`${clocks.map((c) => `${renderClock(c.reading, clocks.length > 1 ? c : null)}\n`).join('')}${renderPreflight(outcome, config)}`);

  // An account whose exchange could not be read: its error (naming it) after the others' report.
  const unread = outcome?.failed?.[0];
  if (unread !== undefined) throw unread.error;
  if (outcome !== null && !ok) {
    throw new ConfigError([...outcome.startup, ...outcome.reports.flatMap((report) => preflightProblems(report, config))]);
  }
  // `stacker run` would refuse to start on it: so does the check, with run's own error (E_STORE: exit 3, or 4 for a database out of reach).
  if (read.lost !== null) throw read.lost;
  // Orders another client placed with this stacker's ids, not yet acknowledged: run refuses them (E_FOREIGN_ORDER, exit 3), and so does the check.
  if (read.foreign !== undefined && read.foreign !== null) throw read.foreign;
  // Intents left unsettled on an account taken out of the configuration: run refuses to start without it (exit 2), and so does the check.
  if (read.orphaned !== undefined && read.orphaned.length > 0) throw new ConfigError([...read.orphaned]);
}

/** How the check names a journal `run` would refuse, by the store's reason. */
const JOURNAL_STATES: Partial<Record<StoreError['reason'], string>> = { 'journal-lost': 'LOST', 'no-privilege': 'cannot be created or migrated by this role' };

/**
 * What an operator switched from the status API, as the journal keeps it: a kill switch (for
 * every account or one) and paused instances stop trading as surely as the file does, so a
 * check that left them out would say "off" while nothing is sent. Read-only, beside a running
 * daemon too; no journal yet means nothing was switched.
 */
async function readOperatorControls(
  config: DaemonConfig,
  nowMs: number,
): Promise<{ readonly summary: OperatorSummary; readonly lost: StoreError | null; readonly foreign?: Error | null; readonly orphaned?: readonly InputProblem[]; readonly withoutFile?: readonly WithoutFileSummary[]; readonly olderSchema?: OlderSchema }> {
  let journal: StoredJournal | null = null;
  try {
    const opened = await openAsRunWill(config);
    journal = opened.journal;
    const controls = await journal.operatorControls();
    const iso = (ms: number): string => new Date(ms).toISOString();
    const [last] = await journal.listRuns(1);
    const summary = {
      killSwitchSince: controls.killSwitchSinceMs === null ? null : iso(controls.killSwitchSinceMs),
      accountKillSwitches: Object.fromEntries([...controls.accountKillSwitches].map(([account, ms]) => [account, iso(ms)])),
      paused: Object.fromEntries([...controls.paused].map(([instance, ms]) => [instance, iso(ms)])),
      // A daemon that stopped on a failure (a crash loop's) was checked "ok": the failure is said beside it.
      lastRunStopped: last !== undefined && last.exitReason !== null && /^(failed|trading stopped)/.test(last.exitReason) ? { at: iso(last.endedAtMs ?? last.startedAtMs), reason: last.exitReason } : null,
    };
    const [{ foreignOrdersError }, { orphanedIntentProblems }, { instancesWithoutFile }] = await Promise.all([
      import('../../daemon/foreign-findings.ts'),
      import('../../daemon/orphaned-intents.ts'),
      import('../../daemon/instances-without-file.ts'),
    ]);
    return {
      summary,
      lost: await pgAccessProblem(config),
      foreign: foreignOrdersError(await journal.listFindings({ unacknowledged: true })),
      orphaned: orphanedIntentProblems(await journal.unresolvedIntents(), config),
      // The daemon warns of them at start (instance-without-file): a rename is best caught before it.
      withoutFile: (await instancesWithoutFile(journal, config, nowMs)).map((found) => ({
        instance: found.instance,
        state: found.state,
        file: found.file,
        spent: found.spent.map((period) => ({ period: period.period, from: period.from, amount: period.amount, asset: period.asset, timeZone: period.timeZone })),
        unresolved: found.unresolved.map((intent) => intent.intentId),
        pausedSince: found.pausedSinceMs === null ? null : new Date(found.pausedSinceMs).toISOString(),
        message: found.message,
      })),
      ...(opened.olderSchema === null ? {} : { olderSchema: opened.olderSchema }),
    };
  } catch (error) {
    if (error instanceof StoreError && error.reason === 'not-found') return { summary: { killSwitchSince: null, accountKillSwitches: {}, paused: {} }, lost: await pgAccessProblem(config).catch(asStoreProblem) };
    // An older build's schema in PostgreSQL: `run` migrates it at its start (the role permitting), but what it holds cannot be read before.
    if (error instanceof SchemaOutdatedError) {
      return {
        summary: { unread: 'they cannot be read before the journal is migrated to this stacker\'s schema: `stacker journal upgrade` does it without trading, and the check reads them then' },
        lost: await pgAccessProblem(config).catch(asStoreProblem),
        olderSchema: { version: error.databaseVersion, current: error.knownVersion, read: 'not' },
      };
    }
    // Lost, moved, or out of reach (a database down, a password refused): `run` would not start on it, and the check does not pass.
    const lost = error instanceof StoreError ? error : null;
    return { summary: { unread: error instanceof Error ? error.message : String(error) }, lost };
  } finally {
    await journal?.close();
  }
}

/** A journal of an older build's schema, which `stacker run` migrates at its start: read from a migrated copy, or not read at all (PostgreSQL). */
export interface OlderSchema {
  readonly version: number;
  readonly current: number;
  readonly read: 'from-a-migrated-copy' | 'not';
}

/**
 * The journal as `stacker run` will read it: the store's own, read-only, or for a file an older
 * build wrote (its schema not migrated yet) a migrated copy of it, so the check shows the kill
 * switch, pauses and budgets a start would find, and changes nothing. A PostgreSQL schema of an
 * older version is not copied: its SchemaOutdatedError passes.
 */
async function openAsRunWill(config: DaemonConfig): Promise<{ readonly journal: StoredJournal; readonly olderSchema: OlderSchema | null }> {
  const { journalPath, openMigratedCopy, openStoreForReading } = await import('../../store/open-store.ts');
  try {
    const journal = await openStoreForReading({
      dataDir: config.dataDir,
      mode: config.mode,
      ...(config.databaseUrl === null ? {} : { databaseUrl: config.databaseUrl.url, databaseTimeoutMs: config.databaseTimeoutMs }),
    });
    return { journal, olderSchema: null };
  } catch (error) {
    if (!(error instanceof SchemaOutdatedError) || config.databaseUrl !== null || error.databaseVersion === 0) throw error;
    const copy = await openMigratedCopy(journalPath(config.dataDir, config.mode));
    return { journal: copy, olderSchema: { version: copy.olderSchema, current: error.knownVersion, read: 'from-a-migrated-copy' } };
  }
}

/** A PostgreSQL role that may not create or migrate the journal: `run` would not start (the check creates nothing itself). */
async function pgAccessProblem(config: DaemonConfig): Promise<StoreError | null> {
  if (config.databaseUrl === null) return null;
  const { pgJournalAccessProblem } = await import('../../store/pg-store.ts');
  return pgJournalAccessProblem(config.databaseUrl.url, config.mode, config.databaseTimeoutMs);
}

function asStoreProblem(error: unknown): StoreError | null {
  return error instanceof StoreError ? error : null;
}

/**
 * What a slot now would be judged against that only the journal knows, as `stacker run` would
 * read it: the budget each instance has left (its own and its account's cap), the state its
 * strategy saved (a strategy that remembers its last buy decides on it), and a paper
 * account as the last run left it. From the journal when there is one (read-only, beside a
 * running daemon too), else fresh budgets and new paper accounts. A journal that cannot be read
 * leaves the budgets unjudged (the check says why elsewhere).
 */
async function journalNow(
  config: DaemonConfig,
  nowMs: number,
): Promise<{ leftOf(instance: string): Promise<SpendLeft | null>; stateOf(instance: string): Promise<ReadonlyMap<string, string>>; accountState(account: string): Promise<string | null>; close(): Promise<void> }> {
  const [{ MemoryJournal }, { toRuntime }, { accountCapOf }, { spendLeft }] = await Promise.all([
    import('../../store/memory-journal.ts'),
    import('../../config/instance-runtime.ts'),
    import('../../config/account-cap.ts'),
    import('../../engine/runtime.ts'),
  ]);
  let journal: import('../../store/journal.ts').Journal | null = null;
  try {
    journal = (await openAsRunWill(config)).journal;
  } catch (error) {
    if (error instanceof StoreError && error.reason === 'not-found') {
      const empty = new MemoryJournal();
      await empty.open();
      journal = empty;
    }
  }
  const reader = journal;
  return {
    async leftOf(name) {
      const instance = config.instances.find((i) => i.instance === name);
      if (instance === undefined || reader === null) return null;
      const account = config.accounts.get(instance.account);
      return spendLeft(reader, toRuntime(instance), instance.account, account === undefined ? null : accountCapOf(account), nowMs);
    },
    async stateOf(name) {
      return reader === null ? new Map() : reader.getState(name);
    },
    async accountState(account) {
      return reader === null ? null : reader.accountState(account);
    },
    async close() {
      await reader?.close();
    },
  };
}

/** The exchange's clock against this machine's: what signed requests are corrected by. */
type ClockReading = { readonly offsetMs: number } | { readonly unreadable: string };

/** One exchange's clock, and the accounts that trade there. */
interface EndpointClock {
  readonly endpoint: string;
  readonly accounts: readonly string[];
  readonly reading: ClockReading;
}

/** The clock of each exchange the instances trade on (their accounts' endpoints, each asked once): never one no instance uses. */
async function readClocks(config: DaemonConfig): Promise<EndpointClock[]> {
  const byEndpoint = new Map<string, string[]>();
  for (const account of config.accounts.values()) byEndpoint.set(account.endpoint, [...(byEndpoint.get(account.endpoint) ?? []), account.name]);
  if (byEndpoint.size === 0) byEndpoint.set(config.settings.endpoint, []);
  return Promise.all([...byEndpoint].map(async ([endpoint, accounts]) => ({ endpoint, accounts, reading: await readClock(endpoint) })));
}

async function readClock(endpoint: string): Promise<ClockReading> {
  const { ApiClient, resolveBaseUrl } = await import('../../api/client.ts');
  const client = new ApiClient({ baseUrl: resolveBaseUrl(endpoint), retry: false });
  try {
    return { offsetMs: (await client.clockOffsetMs()) ?? 0 };
  } catch (error) {
    return { unreadable: error instanceof Error ? error.message : String(error) };
  } finally {
    await client.close();
  }
}

/** The clock line; `at` names the exchange and its accounts when the instances trade on several. */
export function renderClock(clock: ClockReading, at: { readonly endpoint: string; readonly accounts: readonly string[] } | null = null): string {
  const exchange = at === null ? 'the exchange' : `the exchange at ${at.endpoint} (account${at.accounts.length === 1 ? '' : 's'} ${at.accounts.join(', ')})`;
  if ('unreadable' in clock) return `clock: ${exchange}'s time could not be read (${clock.unreadable}); signed requests use this machine's clock`;
  const measured = `clock: this machine is ${clockSide(clock.offsetMs)} ${exchange} (measured to within half a second; signed requests are corrected by it)`;
  if (Math.abs(clock.offsetMs) < CLOCK_WARN_MS) return measured;
  return `${measured}\n  warning: schedules, budgets and slot times use this machine's clock: set it right (NTP)`;
}

/**
 * What fails the check: a problem on the way (the strategy threw, an invalid intent) or an order,
 * transfer or withdrawal the guards would refuse. A read the exchange refused or did not answer
 * fails the whole check with its own code instead (E_AUTH, E_UNAVAILABLE…). A refusal the strategy
 * returns itself ("no active investment", "main already holds the reserve") is a decision about
 * this moment, not a fault of the configuration: it is shown, and does not fail the check. Nor
 * does a buy that only waits for this period's budget to reset (`waits`): one above the smallest
 * limit, which no period would ever let through, does.
 */
function blockers(report: PreflightResult): string[] {
  const refused = report.intents.filter((intent) => intent.verdict === 'refused' && intent.kind !== 'refusal');
  return [...report.problems, ...refused.map((intent) => `${intent.summary} would be refused${intent.reason === undefined ? '' : `: ${intent.reason}`}`)];
}

function passes(report: PreflightResult): boolean {
  return blockers(report).length === 0;
}

interface PreflightOutcome {
  /** What `stacker run` would refuse at start once it has the markets (unknown market, amount below the minimum). */
  readonly startup: readonly InputProblem[];
  readonly reports: readonly PreflightResult[];
  /** Accounts whose exchange could not be read for the pre-flight, with why (the others are still judged). */
  readonly failed?: ReadonlyArray<{ readonly account: string; readonly error: unknown }>;
}

/**
 * What keeps an instance's money from being sent now, as its slot would find it: the kill switch
 * (the variable, the file, the status API's for every account or its account's) or a pause. The
 * pre-flight said "would-send" under a kill switch the header showed ON.
 */
function heldBy(config: DaemonConfig, summary: ConfigSummary): (instance: string) => string | null {
  const operator = operatorRead(summary);
  const [everyAccount] = killSwitchesOn(summary, operator);
  return (name) => {
    const account = config.instances.find((instance) => instance.instance === name)?.account ?? DEFAULT_ACCOUNT;
    if (everyAccount !== undefined) return `kill-switch: ${everyAccount}`;
    const own = operator?.accountKillSwitches[account];
    if (own !== undefined) return `kill-switch: account ${account}'s own, turned on from the status API at ${own}`;
    const paused = operator?.paused[name];
    return paused === undefined ? null : `paused: since ${paused}, from the status API; its slots are skipped until resumed`;
  };
}

async function runPreflight(config: DaemonConfig, nowMs: number, overrides: CheckOverrides, held: (instance: string) => string | null): Promise<PreflightOutcome> {
  const { createLogger } = await import('../../observability/logger.ts');
  // The report is the output; the exchange's info lines (connecting, markets loaded) would only
  // interleave with it on the terminal. Warnings and errors, or everything at debug, still show.
  const logger = await createLogger({ level: config.settings.logLevel === 'info' ? 'warn' : config.settings.logLevel, format: config.settings.logFormat });
  const createExchange = overrides.createExchange ?? (await import('../../daemon/exchange-factory.ts')).createExchange;
  const preflight = overrides.preflight ?? (await import('../../engine/preflight.ts')).preflight;
  const { startupProblems } = await import('../../config/instance-runtime.ts');
  const { ofAccount } = await import('../../daemon/start-markets.ts');
  const startup: InputProblem[] = [];
  const reports: PreflightResult[] = [];
  const failed: Array<{ account: string; error: unknown }> = [];
  const journal = await journalNow(config, nowMs);
  try {
    // Each account in turn: its instances are judged on its own markets and balances.
    for (const account of config.accounts.keys()) {
      const instances = config.instances.filter((instance) => instance.account === account);
      const exchange = await createExchange(config, logger, { account });
      try {
        // A paper account continues across runs: judged as the daemon would resume it, not as the wallet setting seeds a new one.
        const saved = exchange.keptAccount === undefined ? null : await journal.accountState(account);
        if (saved !== null) exchange.keptAccount?.resume(saved);
        const refused = startupProblems(instances, await exchange.markets());
        startup.push(...refused);
        // An instance `run` would not start with is not pre-flighted: its slot would never run,
        // and its reads can fail for what refused it (candles of a market the exchange does not
        // list), which would end the whole check with the exchange's error instead of the problem.
        const refusedFiles = new Set(refused.map((problem) => problem.source));
        for (const instance of instances.filter((i) => i.enabled && refusedFiles.has(i.file))) {
          reports.push({ instance: instance.instance, ok: false, intents: [], problems: [] });
        }
        reports.push(...(await preflight({ ...config, instances: instances.filter((i) => !refusedFiles.has(i.file)), budgetLeft: (name) => journal.leftOf(name), stateOf: (name) => journal.stateOf(name), heldBy: held }, exchange, nowMs)));
      } catch (error) {
        // One account's refused key or unreachable endpoint is its own: the others are still judged and shown.
        if (config.accounts.size === 1) throw error;
        failed.push({ account, error: ofAccount(error, account) });
      } finally {
        await exchange.close();
      }
    }
  } finally {
    await journal.close();
  }
  const order = new Map(config.instances.map((instance, index) => [instance.instance, index]));
  return { startup, reports: reports.sort((a, b) => (order.get(a.instance) ?? 0) - (order.get(b.instance) ?? 0)), failed };
}

/** What `check` reports about the configuration, JSON-ready (decimals stay Decimal until printed). */
export interface ConfigSummary {
  readonly mode: DaemonConfig['mode'];
  readonly modeNote: string | null;
  readonly endpoint: string;
  readonly endpointSource: string;
  readonly credentials: 'set' | 'not set';
  readonly dataDir: string;
  /** Where the journal is: the data dir's SQLite file, or the PostgreSQL database (password as ***) and schema. */
  readonly journal: string;
  readonly strategiesDir: string;
  readonly metrics: string | null;
  /** Said when the status page would listen off loopback: plain HTTP, the controls' token, the allowed hosts. */
  readonly metricsWarning: string | null;
  /** The notification channels (never a URL's path, a secret or a token) and the events they get; empty when none. */
  readonly notifications: { readonly channels: readonly string[]; readonly events: readonly string[] };
  readonly killSwitch: { readonly env: boolean; readonly file: string | null; readonly active: boolean };
  readonly dryRun: { readonly wallet: ReadonlyMap<string, Decimal>; readonly slippagePct: Decimal } | null;
  /** The accounts the instances trade on: endpoint, whether a key is set (never the key), cap, paper wallet. */
  readonly accounts: readonly AccountSummary[];
  readonly instances: readonly InstanceSummary[];
  /** What the status API switched, read from the journal; absent when not read (describeConfig alone). */
  readonly operator?: OperatorSummary;
  /** Why the journal is lost (its identity file outlived it, or another journal took its place): `stacker run` refuses to start. */
  readonly journalLost?: string;
  /** How the journal failed: LOST (gone, emptied, replaced) or `cannot be read` (damaged, moved, a database out of reach or refusing). */
  readonly journalState?: string;
  /** Instances the journal holds that will not run (no file, or disabled) and that spent in a current budget period or have an intent unresolved. */
  readonly instancesWithoutFile?: readonly WithoutFileSummary[];
  /** The journal is of an older build's schema: `stacker run` migrates it at its start. */
  readonly journalSchema?: OlderSchema;
}

/** An instance without a file (or disabled) whose budget a new name would not carry over. */
export interface WithoutFileSummary {
  readonly instance: string;
  readonly state: 'no-file' | 'disabled';
  readonly file: string;
  readonly spent: readonly { readonly period: string; readonly from: string; readonly amount: Decimal; readonly asset: string; readonly timeZone: string }[];
  /** The ids of its intents not resolved yet. */
  readonly unresolved: readonly string[];
  /** Paused from the status API since; null when not paused. */
  readonly pausedSince: string | null;
  readonly message: string;
}

/** Times are ISO 8601 UTC; `unread` when the journal could not be read (and why). */
export type OperatorSummary =
  | {
      readonly killSwitchSince: string | null;
      readonly accountKillSwitches: Readonly<Record<string, string>>;
      readonly paused: Readonly<Record<string, string>>;
      /** The newest run of the journal, when it stopped on a failure: what a restart may meet again (null otherwise). */
      readonly lastRunStopped?: { readonly at: string; readonly reason: string } | null;
    }
  | { readonly unread: string };

export interface AccountSummary {
  readonly name: string;
  readonly endpoint: string;
  readonly credentials: 'set' | 'not set';
  readonly budgets: AccountConfig['budgets'];
  readonly budgetAsset: string | null;
  /** The zone whose days, weeks and months the caps count. */
  readonly budgetTimeZone: string;
  readonly wallet: ReadonlyMap<string, Decimal>;
  readonly instances: readonly string[];
}

export interface InstanceSummary {
  readonly instance: string;
  readonly file: string;
  readonly strategy: string;
  readonly enabled: boolean;
  readonly schedule: string;
  readonly timezone: string;
  /** In the instance's time zone, with its UTC offset; null when disabled or the schedule never fires again. */
  readonly nextSlot: string | null;
  readonly nextSlotMs: number | null;
  readonly catchUp: string;
  /** The account it trades on (`default`: STACKER_API_KEY). */
  readonly account: string;
  readonly budgets: InstanceConfig['budgets'];
  readonly maxOrderQuote: Decimal | null;
}

export function describeConfig(config: DaemonConfig, nowMs: number, fileExists: (path: string) => boolean = defaultExists): ConfigSummary {
  return {
    mode: config.mode,
    modeNote: config.modeNote,
    endpoint: config.settings.endpoint,
    endpointSource: config.settings.endpointSource,
    credentials: config.settings.credentials === null ? 'not set' : 'set',
    dataDir: config.dataDir,
    journal: config.databaseUrl === null ? journalPath(config.dataDir, config.mode) : `${config.databaseUrl.shown} (schema ${JOURNAL_SCHEMAS[config.mode]})`,
    strategiesDir: config.strategiesDir,
    metrics: config.metricsPort === null ? null : `http://${hostForUrl(config.metricsHost)}:${config.metricsPort}/metrics`,
    metricsWarning:
      config.metricsPort === null
        ? null
        : offLoopbackWarning({
            host: config.metricsHost,
            ...(config.metricsAllowedHosts === null ? {} : { allowedHosts: config.metricsAllowedHosts }),
            listening: `${hostForUrl(config.metricsHost)}:${config.metricsPort}`,
            controls: config.controlToken !== null,
          }),
    notifications: notificationChannels(config.notify),
    killSwitch: {
      env: config.killSwitchEnv,
      file: config.killSwitchFile,
      active: config.killSwitchEnv || (config.killSwitchFile !== null && fileExists(config.killSwitchFile)),
    },
    dryRun: config.mode === 'dry-run' ? { wallet: config.dryRunWallet, slippagePct: config.dryRunSlippagePct } : null,
    accounts: [...config.accounts.values()].map(describeAccount),
    instances: config.instances.map((instance) => describeInstance(instance, nowMs)),
  };
}

function notificationChannels(notify: DaemonConfig['notify']): ConfigSummary['notifications'] {
  const channels = [
    ...(notify.webhook === null ? [] : [`webhook to ${notify.webhook.url.origin}${notify.webhook.secret === null ? '' : ' (signed)'}`]),
    ...(notify.telegram === null ? [] : [`telegram chat ${notify.telegram.chatId}`]),
    ...(notify.ntfy === null ? [] : [`ntfy at ${notify.ntfy.url.origin}`]),
  ];
  return { channels, events: channels.length === 0 ? [] : [...notify.events] };
}

function describeAccount(account: AccountConfig): AccountSummary {
  return {
    name: account.name,
    endpoint: account.endpoint,
    credentials: account.credentials === null ? 'not set' : 'set',
    budgets: account.budgets,
    budgetAsset: account.budgetAsset,
    budgetTimeZone: account.budgetTimeZone,
    wallet: account.dryRunWallet,
    instances: account.instances,
  };
}

function describeInstance(instance: InstanceConfig, nowMs: number): InstanceSummary {
  const next = instance.enabled ? nextSlot(instance, nowMs) : null;
  return {
    instance: instance.instance,
    file: instance.file,
    strategy: instance.strategy.name,
    enabled: instance.enabled,
    schedule: instance.schedule.expression,
    timezone: instance.timezone,
    nextSlot: next === null ? null : zonedTime(next, instance.timezone),
    nextSlotMs: next,
    catchUp: instance.catchUp.policy === 'skip' ? 'skip' : `last, within ${duration(instance.catchUp.windowMs)}`,
    account: instance.account,
    budgets: instance.budgets,
    maxOrderQuote: instance.maxOrderQuote,
  };
}

/** null when the schedule has no slot in the years ahead (cronProblems already refuses one that never fires). */
function nextSlot(instance: InstanceConfig, nowMs: number): number | null {
  try {
    return instance.schedule.next(nowMs);
  } catch {
    return null;
  }
}

/** The status API's switches as the journal holds them; null when it could not be read. */
function operatorRead(summary: ConfigSummary): Exclude<NonNullable<ConfigSummary['operator']>, { readonly unread: string }> | null {
  return summary.operator !== undefined && !('unread' in summary.operator) ? summary.operator : null;
}

/** Why the kill switch for every account is on, each way it is (the variable, the file, the status API); empty when off. */
function killSwitchesOn(summary: ConfigSummary, operator: ReturnType<typeof operatorRead>): string[] {
  return [
    ...(summary.killSwitch.active ? [summary.killSwitch.env ? 'STACKER_KILL_SWITCH is set' : `${summary.killSwitch.file} exists`] : []),
    ...(operator?.killSwitchSince == null ? [] : [`turned on from the status API at ${operator.killSwitchSince}`]),
  ];
}

export function renderConfig(summary: ConfigSummary): string {
  const operator = operatorRead(summary);
  const onBecause = killSwitchesOn(summary, operator);
  const accountsOn = Object.entries(operator?.accountKillSwitches ?? {}).map(([account, since]) => `account ${account}'s own is ON (turned on from the status API at ${since})`);
  // The journal's switches unread (an older schema, before the start migrates it): "off" first would read as a verdict.
  const unread = summary.operator !== undefined && 'unread' in summary.operator && summary.journalLost === undefined ? summary.operator.unread : null;
  const killSwitch = [
    onBecause.length > 0
      ? `ON: nothing that moves money would be sent (${onBecause.join('; ')})`
      : unread !== null
        ? `UNKNOWN: the status API's switches could not be read from the journal (${unread}); STACKER_KILL_SWITCH and the switch file are off`
        : summary.killSwitch.file === null
          ? 'off'
          : `off (trading stops while ${summary.killSwitch.file} exists)`,
    ...accountsOn,
    ...(unread !== null && onBecause.length > 0 ? [`the status API's switches could not be read from the journal (${unread})`] : []),
  ].join('; ');
  const head: Array<[string, string]> = [
    ['mode', summary.modeNote === null ? summary.mode : `${summary.mode} (${summary.modeNote})`],
    [
      'exchange',
      `${summary.endpoint}, ${summary.endpointSource === 'default' ? 'the default' : `set by ${summary.endpointSource}`}${summary.mode === 'live' ? `; credentials ${summary.credentials}` : ''}` +
        // Every instance names an account of its own: this endpoint and key trade nothing.
        (summary.accounts.length > 0 && !summary.accounts.some((account) => account.name === DEFAULT_ACCOUNT) ? ' (no instance trades on it: each names an account, below)' : ''),
    ],
    ['data dir', summary.dataDir],
    ['journal', summary.journalLost === undefined ? `${summary.journal}${olderSchemaNote(summary)}` : `${summary.journal}: ${summary.journalState ?? 'LOST'}, \`stacker run\` will not start: ${summary.journalLost}`],
    ...(operator?.lastRunStopped == null
      ? []
      : [['last run', `STOPPED at ${operator.lastRunStopped.at}: ${operator.lastRunStopped.reason}; a start may stop the same way until its cause is gone (its log and \`stacker journal\` say more)`] as [string, string]]),
    ['strategies', `${summary.strategiesDir} (${summary.instances.length} instance${summary.instances.length === 1 ? '' : 's'})`],
    ['kill switch', killSwitch],
    ['metrics', summary.metrics === null ? 'off' : `${summary.metrics}${summary.metricsWarning === null ? '' : `\n  warning: ${summary.metricsWarning}`}`],
    ['notifications', summary.notifications.channels.length === 0 ? 'off' : `${summary.notifications.channels.join(', ')}; events: ${summary.notifications.events.join(', ')}`],
  ];
  if (summary.dryRun !== null) {
    const wallet = [...summary.dryRun.wallet].map(([ticker, amount]) => `${ticker}=${text(amount)}`).join(', ');
    head.push(['paper wallet', wallet === '' ? 'empty (set STACKER_DRY_RUN_WALLET)' : wallet]);
    head.push(['paper slippage', `${text(summary.dryRun.slippagePct)}%`]);
  }
  const blocks = [fields(head)];
  for (const found of summary.instancesWithoutFile ?? []) blocks.push(`warning: ${found.message}`);
  // Said when some instance names an account, or an account has a cap (the default one's too: a
  // cap edited is verified here); a configuration of one key and no cap reads as before.
  const capped = (account: AccountSummary): boolean => account.budgets.day !== null || account.budgets.week !== null || account.budgets.month !== null;
  if (summary.accounts.some((account) => account.name !== 'default' || capped(account))) {
    for (const account of summary.accounts) {
      const cap = (['day', 'week', 'month'] as const).filter((period) => account.budgets[period] !== null).map((period) => `${text(account.budgets[period])} ${account.budgetAsset ?? ''} per ${period} (${account.budgetTimeZone})`);
      const wallet = [...account.wallet].map(([ticker, amount]) => `${ticker}=${text(amount)}`).join(', ');
      blocks.push(
        `account ${account.name}\n` +
          indent(
            fields([
              ['endpoint', account.endpoint],
              ...(summary.mode === 'live' ? [['credentials', account.credentials] as [string, string]] : [['paper wallet', wallet === '' ? 'empty' : wallet] as [string, string]]),
              ['cap', cap.length === 0 ? 'none' : cap.join('; ')],
              ['instances', account.instances.join(', ')],
            ]),
          ),
      );
    }
  }
  for (const instance of summary.instances) {
    const budgets = (['day', 'week', 'month'] as const).filter((period) => instance.budgets[period] !== null).map((period) => `${text(instance.budgets[period])} per ${period}`);
    if (instance.maxOrderQuote !== null) budgets.push(`max ${text(instance.maxOrderQuote)} per order`);
    blocks.push(
      `${instance.instance} (${instance.file})\n` +
        indent(
          fields([
            ['strategy', instance.strategy],
            ['account', instance.account],
            ['enabled', instance.enabled ? 'yes' : 'no (ENABLED=false: checked, never scheduled)'],
            ...(operator?.paused[instance.instance] === undefined ? [] : [['paused', `since ${operator.paused[instance.instance]} (from the status API; its slots are skipped until resumed)`] as [string, string]]),
            ['schedule', `${instance.schedule} (${instance.timezone})`],
            ['next slot', instance.nextSlot ?? (instance.enabled ? 'never (the schedule has no future time)' : '-')],
            ['catch-up', instance.catchUp],
            ['budgets', budgets.length === 0 ? 'none' : budgets.join('; ')],
          ]),
        ),
    );
  }
  return `${blocks.join('\n')}\n`;
}

/** What the journal line says of a journal an older build wrote: what a start does to it, and how the check read it. */
function olderSchemaNote(summary: ConfigSummary): string {
  const older = summary.journalSchema;
  if (older === undefined) return '';
  const copy = older.read === 'from-a-migrated-copy' ? `, keeping a copy of the file as it was (${summary.journal}.schema-${older.version}.bak)` : '';
  const read = older.read === 'from-a-migrated-copy' ? 'what follows is read from a migrated copy of it, as the start will find it' : 'what it holds (switches, pauses, budgets) cannot be read before';
  return `: schema ${older.version}, older than this stacker's ${older.current} (an older stacker wrote it): \`stacker run\` migrates it at its start${copy}, one-way; \`stacker journal upgrade\` migrates it now without trading; ${read}`;
}

export function renderPreflight(outcome: PreflightOutcome, config: Pick<DaemonConfig, 'mode'> & { readonly instances?: DaemonConfig['instances'] }): string {
  const lines: string[] = [];
  if (outcome.startup.length > 0) {
    lines.push('start-up checks against the exchange (stacker run would refuse to start):');
    for (const problem of outcome.startup) lines.push(`  ${problem.source === undefined ? '' : `${problem.source}: `}${problem.field}: ${problem.rule}`);
  }
  lines.push(`pre-flight against ${config.mode === 'live' ? 'the account' : 'the paper account (as the last run left it, else as the wallet seeds it)'} (nothing was placed):`);
  // An instance a start-up check refused is not pre-flighted (runPreflight) and not ok.
  const refusedAtStart = new Set(outcome.startup.map((problem) => problem.source));
  for (const report of outcome.reports) {
    const declines = report.intents.some((intent) => intent.kind === 'refusal');
    const waits = report.intents.some((intent) => intent.verdict === 'waits');
    const held = report.intents.find((intent) => intent.verdict === 'held')?.reason;
    const file = config.instances?.find((instance) => instance.instance === report.instance)?.file;
    const verdict =
      file !== undefined && refusedAtStart.has(file)
        ? 'PROBLEMS (the start-up checks above)'
        : !passes(report)
          ? 'PROBLEMS'
          : held !== undefined
            ? `ok, but nothing is sent now (${held})`
            : waits
              ? "ok (this period's budget is used up: the buy waits for it to reset)"
              : declines
                ? 'ok (the strategy declines to act now)'
                : 'ok';
    lines.push(`${report.instance}: ${verdict}`);
    if (report.budgetLeft !== undefined) lines.push(`  budget left now: ${report.budgetLeft.amount} ${report.budgetLeft.asset} (what ${report.budgetLeft.limitedBy} leaves)`);
    if (file !== undefined && refusedAtStart.has(file)) lines.push('  not pre-flighted: stacker run would not start with it');
    else if (report.intents.length === 0 && report.problems.length === 0) lines.push('  nothing that moves money now (notes only, or nothing to do)');
    const kindWidth = Math.max(0, ...report.intents.map((intent) => intent.kind.length));
    for (const intent of report.intents) {
      const reason = intent.reason === undefined ? '' : ` (${intent.reason})`;
      const verdict = intent.kind === 'refusal' ? 'declines' : intent.verdict;
      lines.push(`  ${verdict.padEnd(10)}  ${intent.kind.padEnd(kindWidth)}  ${intent.summary}${reason}`);
    }
    for (const problem of report.problems) lines.push(`  problem: ${problem}`);
  }
  for (const { account } of outcome.failed ?? []) {
    const names = (config.instances ?? []).filter((instance) => instance.account === account).map((instance) => instance.instance);
    lines.push(`account ${account}${names.length === 0 ? '' : ` (${names.join(', ')})`}: NOT CHECKED: its exchange could not be read (the error below)`);
  }
  return `${lines.join('\n')}\n`;
}

function preflightProblems(report: PreflightResult, config: DaemonConfig): InputProblem[] {
  const file = config.instances.find((instance) => instance.instance === report.instance)?.file;
  const at = (rule: string): InputProblem => (file === undefined ? { field: report.instance, rule } : { source: file, field: report.instance, rule });
  return blockers(report).map((problem) => at(`pre-flight: ${problem}`));
}

/** `2025-01-02 09:00 Europe/Berlin (UTC+01:00)`; `2025-01-02 09:00 UTC`. */
export function zonedTime(ms: number, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
    timeZoneName: 'longOffset',
  }).formatToParts(new Date(ms));
  const part = (type: Intl.DateTimeFormatPartTypes): string => parts.find((p) => p.type === type)?.value ?? '';
  const seconds = part('second') === '00' ? '' : `:${part('second')}`;
  const local = `${part('year')}-${part('month')}-${part('day')} ${part('hour')}:${part('minute')}${seconds}`;
  const offset = part('timeZoneName').replace(/^GMT$/, 'UTC+00:00').replace(/^GMT/, 'UTC');
  return timeZone === 'UTC' || timeZone === 'Etc/UTC' ? `${local} UTC` : `${local} ${timeZone} (${offset})`;
}

function duration(ms: number): string {
  const units: Array<[number, string]> = [
    [86_400_000, 'd'],
    [3_600_000, 'h'],
    [60_000, 'm'],
    [1_000, 's'],
  ];
  for (const [size, unit] of units) if (ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

function text(value: Decimal | null): string {
  return value === null ? '-' : formatDecimal(value);
}

function indent(block: string): string {
  return block
    .split('\n')
    .map((line) => (line === '' ? line : `  ${line}`))
    .join('\n');
}

function hostForUrl(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

function defaultExists(path: string): boolean {
  return existsSync(path);
}
