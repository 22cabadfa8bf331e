/**
 * Per-path fault injection, so tests and users can rehearse what a real exchange does on a bad
 * day (`stacker sandbox --fault`):
 * - `latency`: wait `latencyMs` before handling (the request is processed late; the client may
 *   have timed out or died meanwhile);
 * - `reset`: destroy the connection before anything is performed (nothing committed);
 * - `drop-after-commit`: perform the operation, then destroy the connection unanswered
 *   (the client sees a reset, the ledger shows the operation);
 * - `status`: answer `status`/`body` without performing, or after performing with `commit`;
 * - `commit-late`: answer `status` (a gateway's 504, say) at once and perform the operation
 *   `latencyMs` later, as an exchange whose backend took the request after its gateway gave up;
 * - `answer-late`: perform the operation at once and answer `latencyMs` later, as an exchange
 *   whose balances already show an order while its answer is still on the way;
 * - `status-word`: perform the request and answer as usual, but with `statusWord` as the status
 *   of every order record in the answer, as an exchange that added a status stacker does not know;
 * - `upper-ids`: perform the request and answer as usual, but with every order record's
 *   clientOrderId in capitals, as an exchange that keeps ids in another case than it was sent
 *   (the spec says they are case-sensitive; the lookup by clientOrderId still finds the order).
 * - `unfilled-answer`: perform the request, but answer its order records as an older exchange
 *   answered a market order it had not matched yet: no `status`, nothing filled (`dealStock`,
 *   `dealMoney`, `dealFee` 0, `left` its amount), while the order history shows the fill.
 * Each fault fires `times` times (default 1; Infinity allowed), on every `every`-th matching
 * request (default 1: each one), first injected first.
 *
 * Apart from per-request faults, `historyLagMs` makes orders show in the order history and the
 * active orders only that long after they were placed, as the real history may lag an order.
 */
export type FaultKind = 'drop-after-commit' | 'reset' | 'status' | 'latency' | 'commit-late' | 'answer-late' | 'status-word' | 'upper-ids' | 'unfilled-answer';

export interface FaultSpec {
  readonly path: string;
  readonly kind: FaultKind;
  /** `status` faults: the HTTP status to answer. */
  readonly status?: number;
  /** `status` faults: JSON-encoded unless it is a string, which is sent as is (text/plain). */
  readonly body?: unknown;
  /** `latency` faults. */
  readonly latencyMs?: number;
  readonly times?: number;
  /** `status` faults: perform the operation first, then answer the injected status. */
  readonly commit?: boolean;
  /** `status-word` faults: the status the answer's order records carry instead of their own. */
  readonly statusWord?: string;
  /** Fire on every n-th request of the path (1: each one). */
  readonly every?: number;
}

interface ArmedFault {
  readonly spec: FaultSpec;
  remaining: number;
  /** Matching requests seen, for `every`. */
  seen: number;
}

export class FaultInjector {
  #faults: ArmedFault[] = [];
  #historyLagMs = 0;
  #historyPageCap: number | null = null;

  /** The most orders an order history page holds whatever limit is asked (an exchange capping pages without saying so); null: as asked. */
  get historyPageCap(): number | null {
    return this.#historyPageCap;
  }

  set historyPageCap(cap: number | null) {
    if (cap !== null && !(Number.isSafeInteger(cap) && cap >= 1)) throw new RangeError('history page cap must be a whole number >= 1, or null');
    this.#historyPageCap = cap;
  }

  /** Orders appear in the history and active orders this long after they were placed (0: at once). */
  get historyLagMs(): number {
    return this.#historyLagMs;
  }

  set historyLagMs(ms: number) {
    if (!(ms >= 0) || !Number.isFinite(ms)) throw new RangeError('history lag must be a finite number of milliseconds >= 0');
    this.#historyLagMs = ms;
  }

  inject(spec: FaultSpec): void {
    const times = spec.times ?? 1;
    if (!(times >= 1)) throw new RangeError('fault times must be at least 1');
    if (!spec.path.startsWith('/')) throw new TypeError('fault path must start with /');
    if ((spec.kind === 'status' || spec.kind === 'commit-late') && (spec.status === undefined || !Number.isInteger(spec.status) || spec.status < 100 || spec.status > 599)) {
      throw new RangeError(`a ${spec.kind} fault needs an HTTP status (100–599)`);
    }
    if ((spec.kind === 'latency' || spec.kind === 'commit-late' || spec.kind === 'answer-late') && (spec.latencyMs === undefined || !(spec.latencyMs >= 0))) {
      throw new RangeError(`a ${spec.kind} fault needs latencyMs >= 0`);
    }
    if (spec.kind === 'status-word' && (typeof spec.statusWord !== 'string' || spec.statusWord === '')) throw new RangeError('a status-word fault needs a statusWord');
    if (spec.every !== undefined && (!Number.isSafeInteger(spec.every) || spec.every < 1)) throw new RangeError('fault every must be a whole number >= 1');
    this.#faults.push({ spec, remaining: times, seen: 0 });
  }

  clear(): void {
    this.#faults = [];
    this.#historyLagMs = 0;
    this.#historyPageCap = null;
  }

  /** Faults still armed (for assertions). */
  pending(): FaultSpec[] {
    return this.#faults.map((f) => f.spec);
  }

  /** Use up one firing of the first armed latency fault on this path. */
  takeLatency(path: string): FaultSpec | null {
    return this.#take(path, (kind) => kind === 'latency');
  }

  /**
   * Use up one firing of the first armed outcome fault (reset, status, drop-after-commit,
   * commit-late, answer-late, status-word, upper-ids) on this path: one request meets at most one of them, in the order they were injected.
   */
  takeOutcome(path: string): FaultSpec | null {
    return this.#take(path, (kind) => kind !== 'latency');
  }

  #take(path: string, accept: (kind: FaultKind) => boolean): FaultSpec | null {
    for (let index = 0; index < this.#faults.length; index += 1) {
      const fault = this.#faults[index] as ArmedFault;
      if (fault.spec.path !== path || !accept(fault.spec.kind)) continue;
      fault.seen += 1;
      if (fault.seen % (fault.spec.every ?? 1) !== 0) continue;
      fault.remaining -= 1;
      if (fault.remaining <= 0) this.#faults.splice(index, 1);
      return fault.spec;
    }
    return null;
  }
}
