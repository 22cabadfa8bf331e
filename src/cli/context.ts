import type { ApiClient, RequestEvent } from '../api/client.ts';
import { type Settings, endpointSetting, readEnvLayers, requireCredentials, settingsFromLayers } from '../config/settings.ts';
import type { Io } from './output.ts';

/** The global flags every command accepts (commander's `optsWithGlobals()`). */
export interface GlobalFlags {
  readonly baseUrl?: string;
  readonly region?: string;
  readonly envFile?: string;
  readonly json?: boolean;
  /** The one-off commands' `--account NAME`: run on that account's key and endpoint. */
  readonly account?: string;
}

/** What a failed run needs to report itself; filled in as the command runs. */
export interface RunState {
  json: boolean;
  verbose: boolean;
  /** Set by a write before it is sent: how to find out whether it happened if the answer is lost. */
  lookupHint: string | undefined;
  /** A command that finished, printed its result and still failed in part (`run --once`: a slot failed). */
  exitCode?: number;
}

/**
 * What a command gets: its output, its settings and an ApiClient built on demand. Settings are
 * read only when a command asks (after it has checked its own flags), and the client module
 * (undici and all) is imported only then.
 */
export class CommandContext {
  readonly io: Io;
  readonly json: boolean;
  /** The command as typed, e.g. `flex withdraw`, for messages. */
  readonly command: string;
  readonly #flags: GlobalFlags;
  readonly #state: RunState;
  #settings: Promise<Settings> | undefined;
  /** The environment over the env file, read once for every question a command asks of it. */
  #layers: ReturnType<typeof readEnvLayers> | undefined;
  readonly #clients: ApiClient[] = [];

  constructor(command: string, flags: GlobalFlags, io: Io, state: RunState) {
    this.command = command;
    this.io = io;
    this.json = flags.json === true;
    this.#flags = flags;
    this.#state = state;
  }

  /** Leave with this code once the command returns (it printed why). */
  setExitCode(code: number): void {
    this.#state.exitCode = code;
  }

  /** The global flags as given (for commands that build their own configuration, like `run`). */
  get globalFlags(): GlobalFlags {
    return this.#flags;
  }

  settings(): Promise<Settings> {
    this.#settings ??= this.#loadSettings().then((settings) => {
      this.#state.verbose = settings.logLevel === 'debug' || settings.logLevel === 'trace';
      return settings;
    });
    return this.#settings;
  }

  async #loadSettings(): Promise<Settings> {
    const flags = { baseUrl: this.#flags.baseUrl, region: this.#flags.region };
    const layers = await this.envLayers();
    const settings = settingsFromLayers(flags, layers);
    if (this.#flags.account === undefined) return settings;
    const { settingsOnAccount } = await import('../config/accounts.ts');
    return settingsOnAccount(settings, layers, this.#flags.account, flags);
  }

  /** A client for public endpoints; credentials are passed when configured but not required. */
  publicClient(): Promise<ApiClient> {
    return this.#client(false);
  }

  /** A client for private endpoints: missing credentials fail here (exit 2) before anything is sent. */
  privateClient(): Promise<ApiClient> {
    return this.#client(true);
  }

  /**
   * Where an account's orders were placed, for commands that read several accounts' journalled
   * orders (`report` prices each at its own exchange): the account's endpoint by the daemon's
   * rules (STACKER_ACCOUNT_<NAME>_BASE_URL / _REGION, else the global one; `--base-url` and
   * `--region` win), resolved to an origin. An account the env no longer sets up is on the
   * global endpoint, and said so with `unknown`.
   */
  async endpointOf(account: string): Promise<{ readonly origin: string; readonly unknown: boolean }> {
    const { resolveBaseUrl } = await import('../api/client.ts');
    const flags = { baseUrl: this.#flags.baseUrl, region: this.#flags.region };
    const layers = await this.envLayers();
    const global = settingsFromLayers(flags, layers);
    const { DEFAULT_ACCOUNT, settingsOnAccount } = await import('../config/accounts.ts');
    if (account === DEFAULT_ACCOUNT) return { origin: resolveBaseUrl(global.endpoint), unknown: false };
    try {
      return { origin: resolveBaseUrl(settingsOnAccount(global, layers, account, flags).endpoint), unknown: false };
    } catch {
      return { origin: resolveBaseUrl(global.endpoint), unknown: true };
    }
  }

  /** The environment over the `--env-file` file (read on first use, then kept). */
  envLayers(): ReturnType<typeof readEnvLayers> {
    this.#layers ??= readEnvLayers(this.#flags.envFile);
    return this.#layers;
  }

  /** A client for the public endpoints of an origin endpointOf gave (closed with the others). */
  async publicClientAt(origin: string): Promise<ApiClient> {
    const { ApiClient } = await import('../api/client.ts');
    const client = new ApiClient({ baseUrl: origin });
    this.#clients.push(client);
    return client;
  }

  setLookupHint(hint: string): void {
    this.#state.lookupHint = hint;
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.#clients.map((client) => client.close()));
  }

  async #client(needsCredentials: boolean): Promise<ApiClient> {
    const settings = await this.settings();
    const credentials = needsCredentials ? requireCredentials(settings, this.command) : settings.credentials;
    const [{ ApiClient }, { resolveBaseUrl, resolveSignedBaseUrl }] = await Promise.all([import('../api/client.ts'), import('../api/base-url.ts')]);
    // A private command signs every request: not over plain http:// to another machine, unless allowed.
    const baseUrl = needsCredentials
      ? resolveSignedBaseUrl(settings.endpoint, { allowPlainHttp: settings.allowPlainHttp, setting: endpointSetting(settings.endpointSource) })
      : resolveBaseUrl(settings.endpoint);
    const onRequest = this.#state.verbose ? await requestLogger(settings) : undefined;
    const client = new ApiClient({
      baseUrl,
      ...(credentials === null ? {} : { credentials }),
      ...(onRequest === undefined ? {} : { onRequest }),
    });
    this.#clients.push(client);
    return client;
  }
}

/** With STACKER_LOG_LEVEL=debug, each HTTP attempt is logged to stderr (no headers, no bodies). */
async function requestLogger(settings: Settings): Promise<(event: RequestEvent) => void> {
  const { createLogger } = await import('../observability/logger.ts');
  const logger = await createLogger({ level: settings.logLevel, format: settings.logFormat });
  return (event) => {
    logger.debug(
      { method: event.method, path: event.path, scope: event.scope, attempt: event.attempt, status: event.status, ms: Math.round(event.durationMs), errorCode: event.errorCode },
      'request',
    );
  };
}
