import type { FaultSpec } from './faults.ts';

/**
 * `stacker sandbox --fault SPEC`: the outages a real exchange has, on demand. SPEC is a kind,
 * an optional `=value`, and optional `,key=value` options:
 *
 *   accept-then-5xx[=STATUS]   perform the request, then answer STATUS (default 502)
 *   5xx[=STATUS]               answer STATUS (default 503) without performing it
 *   drop-answer                perform the request, then cut the connection unanswered
 *   reset                      cut the connection before performing anything
 *   slow=DURATION              perform the request DURATION late, then answer
 *   commit-late=DURATION       answer 504 at once (status=… to change), perform DURATION later
 *   answer-late=DURATION       perform the request at once, answer it DURATION later
 *   history-lag=DURATION       orders show in the order history and active orders only DURATION
 *                              after they were placed (applies to every lookup; no path)
 *   unknown-status[=WORD]      perform the request, answer its order records with status WORD
 *                              (default ACCEPTED), one stacker does not know; order paths only
 *   upper-ids                  perform the request, answer its order records with their
 *                              clientOrderId in capitals; order paths only
 *   unfilled-answer            perform the request, answer its order records without a status
 *                              and with nothing filled, as an older exchange answered an order
 *                              before matching it (the history shows the fill); order paths only
 *   history-page=N             the order history answers at most N orders a page, whatever
 *                              limit it is asked for, and does not say so (no path)
 *
 * Options: path=/api/v4/… (default the market order endpoint), every=N (every N-th request of
 * the path; default each), times=N (how many firings; default unlimited), status=NNN.
 * DURATION: seconds (8, 1.5) or with a unit (8s, 500ms). `stacker sandbox --help` says the same
 * (src/cli/sandbox-help.ts).
 */

export const DEFAULT_FAULT_PATH = '/api/v4/order/stock_market';

export interface ParsedFaults {
  readonly faults: readonly FaultSpec[];
  readonly historyLagMs: number;
  /** The most orders an order history page holds whatever its limit (history-page=N); null: the limit asked. */
  readonly historyPageCap: number | null;
}

/** Every spec, or every problem found (one line each, naming the spec and the rule). */
export function parseFaultSpecs(specs: readonly string[]): { readonly ok: ParsedFaults } | { readonly problems: readonly string[] } {
  const faults: FaultSpec[] = [];
  const problems: string[] = [];
  let historyLagMs = 0;
  let historyPageCap: number | null = null;
  // A request meets at most one outcome fault of its path, the first armed: one that fires on
  // every request for ever leaves none after it on that path a request to fire on.
  const takesEvery = new Map<string, string>();
  for (const spec of specs) {
    const parsed = parseOne(spec);
    if ('problem' in parsed) problems.push(`${JSON.stringify(spec)}: ${parsed.problem}`);
    else if ('historyLagMs' in parsed) historyLagMs = parsed.historyLagMs;
    else if ('historyPageCap' in parsed) historyPageCap = parsed.historyPageCap;
    else {
      const { fault } = parsed;
      const outcome = fault.kind !== 'latency';
      const before = outcome ? takesEvery.get(fault.path) : undefined;
      if (before !== undefined) {
        problems.push(`${JSON.stringify(spec)}: would never fire: ${JSON.stringify(before)} before it fires on every request of ${fault.path}, and a request meets one fault; give that one every=N or times=N`);
        continue;
      }
      if (outcome && fault.every === undefined && fault.times === Number.POSITIVE_INFINITY) takesEvery.set(fault.path, spec);
      faults.push(fault);
    }
  }
  return problems.length > 0 ? { problems } : { ok: { faults, historyLagMs, historyPageCap } };
}

type One = { readonly fault: FaultSpec } | { readonly historyLagMs: number } | { readonly historyPageCap: number } | { readonly problem: string };

const KINDS = ['accept-then-5xx', '5xx', 'drop-answer', 'reset', 'slow', 'commit-late', 'answer-late', 'history-lag', 'unknown-status', 'upper-ids', 'unfilled-answer', 'history-page'] as const;

/** The answers that carry order records: the two market order endpoints, active orders, order history. */
const ORDER_RECORD_PATHS = ['/api/v4/order/stock_market', '/api/v4/order/market', '/api/v4/orders', '/api/v4/trade-account/order/history'] as const;
const DEFAULT_STATUS_WORD = 'ACCEPTED';
const OPTIONS = ['path', 'every', 'times', 'status'] as const;

function parseOne(spec: string): One {
  const [head = '', ...rest] = spec.split(',');
  const eq = head.indexOf('=');
  const kind = (eq < 0 ? head : head.slice(0, eq)).trim();
  const value = eq < 0 ? undefined : head.slice(eq + 1).trim();
  if (!(KINDS as readonly string[]).includes(kind)) return { problem: `unknown fault ${JSON.stringify(kind)}; the faults are ${KINDS.join(', ')}` };
  const options: Record<string, string> = {};
  for (const part of rest) {
    const at = part.indexOf('=');
    const key = at < 0 ? part.trim() : part.slice(0, at).trim();
    if (!(OPTIONS as readonly string[]).includes(key) || at < 0) return { problem: `unknown option ${JSON.stringify(part)}; options are ${OPTIONS.map((o) => `${o}=…`).join(', ')}` };
    options[key] = part.slice(at + 1).trim();
  }
  const path = options['path'] ?? DEFAULT_FAULT_PATH;
  if (!path.startsWith('/api/')) return { problem: `path must be an API path such as ${DEFAULT_FAULT_PATH} (got ${JSON.stringify(path)})` };
  const every = options['every'] === undefined ? undefined : wholeNumber(options['every']);
  if (every === null) return { problem: 'every must be a whole number >= 1' };
  const times = options['times'] === undefined ? Number.POSITIVE_INFINITY : wholeNumber(options['times']);
  if (times === null) return { problem: 'times must be a whole number >= 1' };
  const base = { path, times, ...(every === undefined ? {} : { every }) };

  const status = (fallback: number): number | null => {
    const text = value ?? options['status'];
    if (text === undefined) return fallback;
    const n = /^\d{3}$/.test(text) ? Number(text) : Number.NaN;
    return n >= 400 && n <= 599 ? n : null;
  };
  const duration = (): number | null => (value === undefined ? null : parseDurationMs(value));

  switch (kind) {
    case 'accept-then-5xx':
    case '5xx': {
      const code = status(kind === '5xx' ? 503 : 502);
      if (code === null) return { problem: 'the status must be an HTTP status from 400 to 599, such as 502' };
      return { fault: { ...base, kind: 'status', status: code, body: { message: 'stacker sandbox: injected fault' }, commit: kind === 'accept-then-5xx' } };
    }
    case 'drop-answer':
    case 'reset':
      if (value !== undefined) return { problem: `${kind} takes no value` };
      return { fault: { ...base, kind: kind === 'reset' ? 'reset' : 'drop-after-commit' } };
    case 'slow':
    case 'answer-late':
    case 'commit-late': {
      const ms = duration();
      if (ms === null) return { problem: `${kind} needs a duration, such as ${kind}=4s` };
      if (kind === 'slow') return { fault: { ...base, kind: 'latency', latencyMs: ms } };
      if (kind === 'answer-late') {
        if (options['status'] !== undefined) return { problem: 'answer-late answers as usual, only late: status=… does not apply' };
        return { fault: { ...base, kind: 'answer-late', latencyMs: ms } };
      }
      const text = options['status'];
      const code = text === undefined ? 504 : /^\d{3}$/.test(text) && Number(text) >= 400 && Number(text) <= 599 ? Number(text) : null;
      if (code === null) return { problem: 'status must be an HTTP status from 400 to 599' };
      return { fault: { ...base, kind: 'commit-late', status: code, body: 'Gateway Time-out', latencyMs: ms } };
    }
    case 'unknown-status': {
      const word = value ?? DEFAULT_STATUS_WORD;
      if (!/^[A-Za-z][A-Za-z0-9_]{0,63}$/.test(word)) return { problem: 'the status word must be a letter then letters, digits or _ (at most 64), such as ACCEPTED' };
      if (!(ORDER_RECORD_PATHS as readonly string[]).includes(path)) return { problem: `unknown-status applies to the answers that carry orders: path must be one of ${ORDER_RECORD_PATHS.join(', ')}` };
      if (options['status'] !== undefined) return { problem: 'unknown-status answers 200 as usual: status=… does not apply' };
      return { fault: { ...base, kind: 'status-word', statusWord: word } };
    }
    case 'upper-ids':
    case 'unfilled-answer': {
      if (value !== undefined) return { problem: `${kind} takes no value` };
      if (!(ORDER_RECORD_PATHS as readonly string[]).includes(path)) return { problem: `${kind} applies to the answers that carry orders: path must be one of ${ORDER_RECORD_PATHS.join(', ')}` };
      if (options['status'] !== undefined) return { problem: `${kind} answers 200 as usual: status=… does not apply` };
      return { fault: { ...base, kind } };
    }
    case 'history-page': {
      const cap = value === undefined ? null : wholeNumber(value);
      if (cap === null || cap > 500) return { problem: 'history-page needs the most orders a page holds, a whole number from 1 to 500, such as history-page=10' };
      if (rest.length > 0) return { problem: 'history-page takes no options: it applies to every order history page' };
      return { historyPageCap: cap };
    }
    default: {
      const ms = duration();
      if (ms === null) return { problem: 'history-lag needs a duration, such as history-lag=8s' };
      if (rest.length > 0) return { problem: 'history-lag takes no options: it applies to every order lookup' };
      return { historyLagMs: ms };
    }
  }
}

function wholeNumber(text: string): number | null {
  return /^[1-9]\d{0,8}$/.test(text) ? Number(text) : null;
}

/** 8, 1.5, 8s, 500ms → milliseconds; null when not a duration (at most a day). */
export function parseDurationMs(text: string): number | null {
  const match = /^(\d+(?:\.\d+)?)(ms|s)?$/.exec(text);
  if (match === null) return null;
  const ms = Number(match[1]) * (match[2] === 'ms' ? 1 : 1000);
  return Number.isFinite(ms) && ms <= 86_400_000 ? Math.round(ms) : null;
}

/** One line per fault, for the banner. */
export function describeFaults(parsed: ParsedFaults): string[] {
  const lines = parsed.faults.map((f) => {
    const when = `${f.every === undefined ? 'every request' : `every ${ordinal(f.every)} request`}${f.times === undefined || f.times === Number.POSITIVE_INFINITY ? '' : `, ${f.times} times`}`;
    switch (f.kind) {
      case 'status':
        return `${f.path}: ${f.commit === true ? 'performed, then answered' : 'answered'} ${f.status} (${when})`;
      case 'drop-after-commit':
        return `${f.path}: performed, then the connection is cut unanswered (${when})`;
      case 'reset':
        return `${f.path}: the connection is cut before anything happens (${when})`;
      case 'latency':
        return `${f.path}: performed ${f.latencyMs} ms late (${when})`;
      case 'commit-late':
        return `${f.path}: answered ${f.status} at once, performed ${f.latencyMs} ms later (${when})`;
      case 'answer-late':
        return `${f.path}: performed at once, answered ${f.latencyMs} ms later (${when})`;
      case 'status-word':
        return `${f.path}: performed, its orders answered with status ${f.statusWord ?? ''} (${when})`;
      case 'upper-ids':
        return `${f.path}: performed, its orders answered with their clientOrderId in capitals (${when})`;
      case 'unfilled-answer':
        return `${f.path}: performed, its orders answered without a status and with nothing filled (${when})`;
    }
  });
  if (parsed.historyLagMs > 0) lines.push(`order history and active orders lag ${parsed.historyLagMs} ms behind each order`);
  if (parsed.historyPageCap !== null) lines.push(`order history pages hold at most ${parsed.historyPageCap} orders, whatever limit is asked`);
  return lines;
}

/** 2 → 2nd, 3 → 3rd, 11 → 11th, 21 → 21st. */
export function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}
