import type { Logger } from 'pino';

/**
 * Node's own voice in a daemon's log. Left to Node, a warning (a deprecation, a listener leak, a
 * certificate file it could not read when TLS first needs it) and a crash print plain text on
 * stderr, in between the JSON lines a log shipper parses, and a crash's line carries no `event`
 * an alert can match. Routed here they are lines like any other: `node-warning` (warn) and
 * `crashed` (fatal, with the stack), the crash still ending the process with exit 1 as Node's
 * own would. What Node prints before any JavaScript runs (NODE_EXTRA_CA_CERTS naming a file that
 * cannot be read, a bad NODE_OPTIONS) cannot be routed: it comes first, as text.
 */

/** The process, as far as this needs it (tests pass a plain emitter). */
export interface ProcessEvents {
  listeners(event: 'warning'): Array<(warning: Error) => void>;
  on(event: 'warning', listener: (warning: Error) => void): unknown;
  on(event: 'uncaughtException', listener: (error: unknown, origin: string) => void): unknown;
  off(event: 'warning' | 'uncaughtException', listener: (...args: never[]) => void): unknown;
  exit(code: number): never;
}

/**
 * Route the process's warnings and uncaught failures (thrown, or a promise rejected with nothing
 * to handle it) into `logger`. Returns what puts Node's own handling back.
 */
export function logProcessEvents(logger: Pick<Logger, 'warn' | 'fatal'>, target: ProcessEvents = process as unknown as ProcessEvents): () => void {
  // Node prints warnings through a listener of its own: without it, the log's line is the only one.
  const nodes = target.listeners('warning');
  for (const listener of nodes) target.off('warning', listener);
  const warned = (warning: Error): void => {
    const code = (warning as { code?: unknown }).code;
    logger.warn({ event: 'node-warning', name: warning.name, ...(typeof code === 'string' ? { code } : {}), warning: warning.message }, `Node.js ${warning.name}: ${warning.message}`);
  };
  const crashed = (error: unknown, origin: string): void => {
    const message = error instanceof Error ? error.message : String(error);
    const what = origin === 'unhandledRejection' ? 'a promise was rejected and nothing handled it' : 'an exception was thrown and nothing caught it';
    logger.fatal(
      { event: 'crashed', origin, error: message, ...(error instanceof Error && error.stack !== undefined ? { stack: error.stack } : {}) },
      `stacker crashed (${what}): ${message}; exiting with 1, and the journal settles the slot in flight at the next start`,
    );
    target.exit(1);
  };
  target.on('warning', warned);
  target.on('uncaughtException', crashed);
  return () => {
    target.off('warning', warned);
    target.off('uncaughtException', crashed);
    for (const listener of nodes) target.on('warning', listener);
  };
}
