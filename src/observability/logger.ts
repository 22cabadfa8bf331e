import type { DestinationStream, Logger, LoggerOptions } from 'pino';

/**
 * The pino logger factory. pino (and pino-pretty) are imported only when a logger is built, so
 * commands that never log do not pay for them at start-up.
 */

/** Every default in one place (pino's habit). */
export const LOGGER_DEFAULTS = {
  name: 'stacker',
  level: 'info',
  censor: '[redacted]',
  /**
   * Paths whose values never reach a log line: the secret under any of its names, signatures,
   * the payload header (base64 of the signed body) and the API key header, at the top level
   * and one level down (`{ credentials: { apiSecret } }`, `{ req: { headers } }`).
   */
  redactPaths: [
    'apiKey',
    'apiSecret',
    'secret',
    'signature',
    'payload',
    'password',
    'authorization',
    '*.apiKey',
    '*.apiSecret',
    '*.secret',
    '*.signature',
    '*.payload',
    '*.password',
    '*.authorization',
    'headers["x-txc-apikey"]',
    'headers["x-txc-payload"]',
    'headers["x-txc-signature"]',
    'headers["X-TXC-APIKEY"]',
    'headers["X-TXC-PAYLOAD"]',
    'headers["X-TXC-SIGNATURE"]',
    'headers.authorization',
    '*.headers["x-txc-apikey"]',
    '*.headers["x-txc-payload"]',
    '*.headers["x-txc-signature"]',
    '*.headers["X-TXC-APIKEY"]',
    '*.headers["X-TXC-PAYLOAD"]',
    '*.headers["X-TXC-SIGNATURE"]',
    '*.headers.authorization',
  ],
} as const;

export const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type Level = (typeof LEVELS)[number];

export interface LoggerSettings {
  readonly level?: Level;
  readonly name?: string;
  /** Where JSON lines go; default stderr (stdout belongs to the command's output). */
  readonly destination?: DestinationStream;
  /**
   * `json`: one JSON object a line, a terminal or not; `pretty`: human-readable lines. Absent
   * (or null): pretty when stderr is a terminal. Only without a destination, which takes JSON.
   */
  readonly format?: 'json' | 'pretty' | null;
  /** Pretty mode only: print the message without the fields under it (when the message already says it all). */
  readonly prettyMessageOnly?: boolean;
}

export type { Logger };

/** Whether a logger of this format, writing to stderr, writes JSON lines (a log shipper's) rather than pretty ones (a person's). */
export function writesJson(format: LoggerSettings['format']): boolean {
  return format === 'json' || ((format ?? null) === null && process.stderr.isTTY !== true);
}

/** Build a logger. Options are checked here, once, so a typo fails at start rather than mid-run. */
export async function createLogger(settings: LoggerSettings = {}): Promise<Logger> {
  const level = settings.level ?? LOGGER_DEFAULTS.level;
  if (!(LEVELS as readonly string[]).includes(level)) {
    throw new TypeError(`logger level must be one of ${LEVELS.join(', ')} (got ${JSON.stringify(level)})`);
  }
  const { pino } = await import('pino');
  const options: LoggerOptions = {
    name: settings.name ?? LOGGER_DEFAULTS.name,
    level,
    // pid and hostname add nothing to a one-machine CLI line; `name` is still added.
    base: {},
    redact: { paths: [...LOGGER_DEFAULTS.redactPaths], censor: LOGGER_DEFAULTS.censor },
  };
  if (settings.destination !== undefined) return pino(options, settings.destination);
  // Each line is written at once, in order with the command's own text on stderr; a reader that
  // stops reading (a log shipper's pipe, a terminal stopped) must not stop the daemon (log-stream.ts).
  const { LogStream } = await import('./log-stream.ts');
  const stream = new LogStream();
  let destination: DestinationStream = stream;
  if (!writesJson(settings.format)) {
    const { prettyFactory } = await import('pino-pretty');
    const pretty = prettyFactory({ colorize: true, ignore: 'name', translateTime: 'SYS:HH:MM:ss.l', hideObject: settings.prettyMessageOnly === true });
    destination = { write: (line: string) => stream.write(pretty(line)) };
  }
  const logger = pino(options, destination);
  stream.onDropped = (dropped) => {
    logger.warn({ event: 'log-lines-dropped', dropped }, `${dropped} log line${dropped === 1 ? ' was' : 's were'} dropped so far: stderr did not take them (a log reader that stopped reading, a full disk); trading went on`);
  };
  return logger;
}
