import {
  ConfigError,
  EXIT,
  ExchangeError,
  InputError,
  NetworkError,
  OutputFileError,
  StackerError,
  TimeoutError,
  exitCodeFor,
  outcomeUnknown,
  type InputProblem,
} from '../domain/errors.ts';
import { accountOfError } from '../domain/error-account.ts';
import type { Io } from './output.ts';

/**
 * Turn a failure into stderr text (or one JSON line with `--json`) and an exit code
 * (domain/errors.ts `exitCodeFor`: 2 bad input, 3 refused by the exchange or a safety check, 4 transient,
 * and 4 for a write whose outcome is unknown).
 *
 * Only the error's own documented fields are printed, never the error object as a whole nor any
 * options object: those are the places a secret could hide. The ApiClient already keeps the
 * secret, signatures and payload out of its errors.
 */

export interface ReportContext {
  readonly json: boolean;
  /** For writes whose outcome is unknown: how to look the operation up before trying again. */
  readonly lookupHint?: string | undefined;
  /** Print stack traces of unexpected errors (log level debug or trace). */
  readonly verbose?: boolean;
}

export function reportError(error: unknown, io: Io, context: ReportContext): number {
  // Only a write can have happened unseen, and every write sets its lookup before it is sent: a
  // read (a balance, the codes, a 503 on the markets at a daemon's start) whose answer was lost
  // changed nothing, and is simply tried again.
  const unknown = outcomeUnknown(error) && context.lookupHint !== undefined;
  // A write whose outcome is unknown exits 4 whatever lost its answer: an HTTP 200 stacker cannot
  // read (E_PROTOCOL, otherwise 3) most likely means the order was placed, and 3 says "refused".
  const exitCode = unknown ? EXIT.transient : exitCodeFor(error);
  if (context.json) {
    io.err(`${JSON.stringify({ error: withLookup(describeForJson(error, unknown), unknown, context) })}\n`);
  } else {
    io.err(describeForHumans(error, unknown, context));
  }
  return exitCode;
}

/**
 * The ApiClient names request parameters (`offset`, `market`) in the InputErrors it raises
 * before sending; on the command line the user typed flags, so name the flag instead.
 */
const FLAG_FOR_FIELD: Readonly<Record<string, string>> = {
  market: '--market',
  ticker: '--ticker',
  amount: '--amount',
  plan: '--plan',
  limit: '--limit',
  offset: '--offset',
  pageSize: '--limit',
  clientOrderId: '--client-order-id',
  stp: '--stp',
  'base-url': '--base-url',
};

function problemLine(problem: InputProblem): string {
  const field = problem.source === undefined ? (FLAG_FOR_FIELD[problem.field] ?? problem.field) : problem.field;
  return `${problem.source ? `${problem.source}: ` : ''}${field}: ${problem.rule}`;
}

function describeForHumans(error: unknown, unknown: boolean, context: ReportContext): string {
  if (error instanceof InputError || error instanceof ConfigError) {
    return error.problems.map((p) => `error: ${problemLine(p)}\n`).join('');
  }
  const lines: string[] = [];
  const module = unloadable(error);
  if (error instanceof ExchangeError) {
    const where = error.httpStatus === null ? 'the simulated exchange refused' : `the exchange answered HTTP ${error.httpStatus} on ${error.path}`;
    const account = accountOfError(error);
    lines.push(`error: ${account === null ? '' : `account ${account}: `}${error.code} (${error.name}): ${where}`);
    const exchangeCode = error.exchangeCode === null ? 'none' : String(error.exchangeCode);
    lines.push(`  exchange code: ${exchangeCode}; message: ${error.exchangeMessage || '(none)'}`);
    for (const [field, messages] of Object.entries(error.fieldErrors)) {
      lines.push(`  ${field}: ${messages.join(' ')}`);
    }
  } else if (error instanceof NetworkError || error instanceof TimeoutError) {
    lines.push(`error: ${error.code} (${error.name}): ${error.message}`);
  } else if (error instanceof StackerError) {
    lines.push(`error: ${error.code} (${error.name}): ${error.message}`);
  } else if (module !== null) {
    lines.push(`error: a module could not be loaded: ${module.where}: ${module.message}`, ...module.excerpt.map((line) => `  ${line}`));
    if (module.stripOnly) lines.push('  Node runs the .ts files by stripping their types, which cannot strip enum, namespace or constructor parameter properties: `npm run typecheck` names each one');
  } else {
    const message = error instanceof Error ? error.message : String(error);
    lines.push(`error: unexpected failure: ${message}`);
    if (context.verbose && error instanceof Error && error.stack) lines.push(error.stack);
  }
  if (unknown) {
    // Never "try again" here: the write may have happened, and a second buy is a second buy.
    lines.push('  the request may have reached the exchange: the operation may or may not have happened');
    lines.push(`  check before repeating it: ${context.lookupHint}`);
  } else if (error instanceof StackerError && error.retryable) {
    lines.push('  this is usually temporary; try again later');
  }
  return lines.map((line) => `${line}\n`).join('');
}

/**
 * A script reading --json has the same need as a person: a buy whose answer was lost may have
 * happened, and the client order id it was sent with (generated when none was given) is only
 * known here, so the command that looks it up travels with the error.
 */
function withLookup(described: Record<string, unknown>, unknown: boolean, context: ReportContext): Record<string, unknown> {
  return unknown ? { ...described, lookup: context.lookupHint } : described;
}

function describeForJson(error: unknown, unknown: boolean): Record<string, unknown> {
  const described = describedForJson(error, unknown);
  const account = accountOfError(error);
  return account === null ? described : { ...described, account };
}

function describedForJson(error: unknown, unknown: boolean): Record<string, unknown> {
  if (error instanceof InputError || error instanceof ConfigError) {
    return {
      code: error.code,
      problems: error.problems.map((p) => (p.source === undefined ? { ...p, field: FLAG_FOR_FIELD[p.field] ?? p.field } : { ...p })),
    };
  }
  if (error instanceof ExchangeError) {
    return {
      code: error.code,
      name: error.name,
      retryable: error.retryable,
      outcomeUnknown: unknown,
      httpStatus: error.httpStatus,
      path: error.path,
      exchangeCode: error.exchangeCode,
      exchangeMessage: error.exchangeMessage,
      fieldErrors: error.fieldErrors,
    };
  }
  if (error instanceof OutputFileError) {
    return { code: error.code, name: error.name, retryable: error.retryable, outcomeUnknown: unknown, message: error.message, flag: error.flag, path: error.path, osCode: error.osCode };
  }
  if (error instanceof StackerError) {
    return { code: error.code, name: error.name, retryable: error.retryable, outcomeUnknown: unknown, message: error.message };
  }
  const module = unloadable(error);
  if (module !== null) return { code: 'E_UNEXPECTED', message: module.message, module: module.where };
  return { code: 'E_UNEXPECTED', message: error instanceof Error ? error.message : String(error) };
}

interface UnloadableModule {
  /** `file:line` of the syntax Node refused. */
  readonly where: string;
  readonly message: string;
  /** The source line and Node's marker under it. */
  readonly excerpt: readonly string[];
  /** TypeScript that type stripping cannot remove (an enum, a namespace). */
  readonly stripOnly: boolean;
}

/**
 * A module Node refused to load (a syntax error in a strategy module someone wrote): its message
 * alone ("Expected ',', got 'ident'") names no file, but the stack begins with `file:line`, the
 * line and a marker, as Node prints them.
 */
function unloadable(error: unknown): UnloadableModule | null {
  if (!(error instanceof SyntaxError) || typeof error.stack !== 'string') return null;
  const [where, ...rest] = error.stack.split('\n');
  if (where === undefined || !/^(?:file:\/\/|\/|[A-Za-z]:\\).*:\d+$/.test(where)) return null;
  const excerpt: string[] = [];
  for (const line of rest) {
    if (line.trim() === '' || excerpt.length === 2) break;
    excerpt.push(line);
  }
  const code = (error as { code?: unknown }).code;
  return { where, message: error.message, excerpt, stripOnly: code === 'ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX' };
}
