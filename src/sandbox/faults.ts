/**
 * Per-path fault injection for tests of the client and the engine's money rule:
 * - `latency`: wait `latencyMs` before handling (the request still happens afterwards);
 * - `reset`: destroy the connection before anything is performed (nothing committed);
 * - `drop-after-commit`: perform the operation, then destroy the connection unanswered
 *   (the client sees a reset, the ledger shows the operation);
 * - `status`: answer `status`/`body` without performing, or after performing with `commit`.
 * Each fault fires `times` times (default 1; Infinity allowed), first injected first.
 */
export type FaultKind = 'drop-after-commit' | 'reset' | 'status' | 'latency';

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
}

interface ArmedFault {
  readonly spec: FaultSpec;
  remaining: number;
}

export class FaultInjector {
  #faults: ArmedFault[] = [];

  inject(spec: FaultSpec): void {
    const times = spec.times ?? 1;
    if (!(times >= 1)) throw new RangeError('fault times must be at least 1');
    if (!spec.path.startsWith('/')) throw new TypeError('fault path must start with /');
    if (spec.kind === 'status' && (spec.status === undefined || !Number.isInteger(spec.status) || spec.status < 100 || spec.status > 599)) {
      throw new RangeError('a status fault needs an HTTP status (100–599)');
    }
    if (spec.kind === 'latency' && (spec.latencyMs === undefined || !(spec.latencyMs >= 0))) {
      throw new RangeError('a latency fault needs latencyMs >= 0');
    }
    this.#faults.push({ spec, remaining: times });
  }

  clear(): void {
    this.#faults = [];
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
   * Use up one firing of the first armed outcome fault (reset, status, drop-after-commit) on
   * this path: one request meets at most one of them, in the order they were injected.
   */
  takeOutcome(path: string): FaultSpec | null {
    return this.#take(path, (kind) => kind !== 'latency');
  }

  #take(path: string, accept: (kind: FaultKind) => boolean): FaultSpec | null {
    const index = this.#faults.findIndex((f) => f.spec.path === path && accept(f.spec.kind));
    if (index < 0) return null;
    const fault = this.#faults[index] as ArmedFault;
    fault.remaining -= 1;
    if (fault.remaining <= 0) this.#faults.splice(index, 1);
    return fault.spec;
  }
}
